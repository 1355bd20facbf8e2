package local_test

import (
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

var (
	sandboxMFAForm  = regexp.MustCompile(`action="/portal/sandbox/links/([0-9a-f-]{36})/mfa"`)
	sandboxGrant    = regexp.MustCompile(`name="user_id" value="([0-9a-f-]{36})">\s*<input type="hidden" name="grant_id" value="([0-9a-f-]{36})">`)
	sandboxSecret   = regexp.MustCompile(`id="new-secret" type="text" readonly value="(at_test_[a-z2-7]+)"`)
	sandboxCurl     = regexp.MustCompile(`(?s)<pre id="try-curl"[^>]*><code>(.*?)</code></pre>`)
	sandboxUserOpts = regexp.MustCompile(`<option value="([0-9a-f-]{36})" selected>`)
)

// TestPortalFinanceSandbox: the Finance sandbox page, as a new account
// (its address not yet confirmed) uses it: create a user, refuse wrong
// credentials, link the MFA institution with a wrong and then the right
// code, see the accounts, issue a test finance credential (shown once,
// with a ready command) and read the generated transactions with it.
// Another account can answer neither the link's MFA step nor issue a
// credential on its grant, and a form without the CSRF token is refused.
func TestPortalFinanceSandbox(t *testing.T) {
	st := stack(t, false)
	b := newBrowser(t, st.URL)
	b.signUp("sam@example.com", pw, "Sandbox Ltd")
	p := b.get("/portal/sandbox")
	if p.status != 200 || !strings.Contains(p.body, "Quokka Credit Union") || !strings.Contains(p.body, "user_good") {
		t.Fatalf("sandbox page: %d %s", p.status, p.body)
	}
	tok := p.csrf(t)
	if p := b.post("/portal/sandbox/users", url.Values{"name": {"Sam"}}); p.status != http.StatusForbidden {
		t.Fatalf("a form without its token: %d", p.status)
	}
	p = b.post("/portal/sandbox/users", url.Values{"csrf": {tok}, "name": {"Sam Sandbox"}})
	m := sandboxUserOpts.FindStringSubmatch(p.body)
	if p.status != 200 || m == nil {
		t.Fatalf("create user: %d %s", p.status, p.body)
	}
	user := m[1]
	link := func(password string) page {
		return b.post("/portal/sandbox/links", url.Values{"csrf": {tok}, "user_id": {user}, "institution_id": {"ins_quokka"},
			"username": {"user_good"}, "password": {password}})
	}
	p = link("wrong")
	if p.status != 422 || !strings.Contains(p.errorText(), "refused the username or password") || strings.Contains(p.body, `value="wrong"`) {
		t.Fatalf("wrong password: %d %q", p.status, p.errorText())
	}
	p = link("pass_good")
	mfa := sandboxMFAForm.FindStringSubmatch(p.body)
	if p.status != 200 || mfa == nil {
		t.Fatalf("start: %d %s", p.status, p.body)
	}
	linkID := mfa[1]
	p = b.post("/portal/sandbox/links/"+linkID+"/mfa", url.Values{"csrf": {tok}, "code": {"4321"}})
	if p.status != 422 || !strings.Contains(p.errorText(), "2 attempts left") || !sandboxMFAForm.MatchString(p.body) {
		t.Fatalf("wrong code: %d %q", p.status, p.errorText())
	}

	// Another account: the link and the grant are not its own.
	other := newBrowser(t, st.URL)
	other.signUp("eve@example.com", pw, "Eve Ltd")
	otherTok := other.get("/portal/sandbox").csrf(t)
	if p := other.post("/portal/sandbox/links/"+linkID+"/mfa", url.Values{"csrf": {otherTok}, "code": {"1234"}}); p.status != 404 {
		t.Fatalf("another account answers the MFA step: %d %q", p.status, p.errorText())
	}

	p = b.post("/portal/sandbox/links/"+linkID+"/mfa", url.Values{"csrf": {tok}, "code": {"1234"}})
	g := sandboxGrant.FindStringSubmatch(p.body)
	if p.status != 200 || g == nil || !strings.Contains(p.body, "Quokka Rewards Visa") || !strings.Contains(p.body, "linked") {
		t.Fatalf("linked: %d %s", p.status, p.body)
	}
	if g[1] != user {
		t.Fatalf("the credential form names user %s, want %s", g[1], user)
	}
	grant := g[2]
	if p := other.post("/portal/sandbox/credentials", url.Values{"csrf": {otherTok}, "user_id": {user}, "grant_id": {grant}, "kind": {"at"}}); p.status != 400 {
		t.Fatalf("another account issues a credential on the grant: %d %q", p.status, p.errorText())
	}

	p = b.post("/portal/sandbox/credentials", url.Values{"csrf": {tok}, "user_id": {user}, "grant_id": {grant}, "kind": {"at"},
		"institution": {"Quokka Credit Union"}})
	s, cmd := sandboxSecret.FindStringSubmatch(p.body), sandboxCurl.FindStringSubmatch(p.body)
	if p.status != 200 || s == nil || cmd == nil {
		t.Fatalf("credential: %d %s", p.status, p.body)
	}
	secret := s[1]
	if c := html.UnescapeString(cmd[1]); !strings.Contains(c, "Bearer "+secret) || !strings.Contains(c, st.URL+"/v1/transactions?page_size=5") {
		t.Fatalf("the command: %s", c)
	}
	if !strings.Contains(p.body, `data-copy="new-secret"`) || !strings.Contains(p.body, `data-copy="try-curl"`) {
		t.Fatal("no copy buttons")
	}
	if again := b.get("/portal/sandbox"); strings.Contains(again.body, secret) {
		t.Fatal("the secret is shown twice")
	}
	c := client{t: t, base: st.URL, keys: map[string]string{"fin": secret}}
	r := c.call("GET", "/v1/transactions?page_size=5", "fin", "")
	if r.status != 200 || len(r.json["data"].([]any)) != 5 {
		t.Fatalf("a first finance read: %d %s", r.status, r.body)
	}
}
