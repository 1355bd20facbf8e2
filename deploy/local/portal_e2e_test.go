package local_test

import (
	"encoding/json"
	"html"
	"io"
	"mime/quotedprintable"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ledgerlane/platform/deploy/local"
	"github.com/ledgerlane/platform/services/metering"
	"github.com/ledgerlane/platform/services/metering/identity"
)

// browser is a cookie-keeping HTTP client that does not follow redirects,
// standing in for a person's browser on the portal.
type browser struct {
	t    *testing.T
	base string
	hc   *http.Client
}

func newBrowser(t *testing.T, base string) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: t, base: base, hc: &http.Client{Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

type page struct {
	status int
	header http.Header
	body   string
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// csrf is the first form token on the page.
func (p page) csrf(t *testing.T) string {
	t.Helper()
	m := csrfField.FindStringSubmatch(p.body)
	if m == nil {
		t.Fatalf("no csrf field in %d page:\n%s", p.status, p.body)
	}
	return m[1]
}

var (
	errorPara = regexp.MustCompile(`(?s)<p class="error" role="alert"[^>]*>(.*?)</p>`)
	htmlTag   = regexp.MustCompile(`<[^>]*>`)
)

// errorText is the text of the page's error paragraph (a link in it
// reads as its text).
func (p page) errorText() string {
	m := errorPara.FindStringSubmatch(p.body)
	if m == nil {
		return ""
	}
	return html.UnescapeString(htmlTag.ReplaceAllString(m[1], ""))
}

func (b *browser) do(method, path string, form url.Values, hdr ...string) page {
	b.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, b.base+path, body)
	if err != nil {
		b.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
		if hdr[i] == "Host" {
			req.Host = hdr[i+1] // the client sends req.Host, not the header
		}
	}
	res, err := b.hc.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	return page{status: res.StatusCode, header: res.Header, body: string(raw)}
}

func (b *browser) get(path string) page { return b.do("GET", path, nil) }

func (b *browser) post(path string, form url.Values, hdr ...string) page {
	return b.do("POST", path, form, hdr...)
}

// signUp creates an account through the forms and lands on the keys page.
func (b *browser) signUp(email, password, account string) page {
	b.t.Helper()
	tok := b.get("/portal/signup").csrf(b.t)
	p := b.post("/portal/signup", url.Values{"csrf": {tok}, "email": {email}, "password": {password}, "account_name": {account}})
	if p.status != http.StatusSeeOther || p.header.Get("Location") != "/portal/keys" {
		b.t.Fatalf("sign-up: %d %s", p.status, p.body)
	}
	return b.get("/portal/keys")
}

func (b *browser) signIn(email, password string) page {
	b.t.Helper()
	tok := b.get("/portal/signin").csrf(b.t)
	return b.post("/portal/signin", url.Values{"csrf": {tok}, "email": {email}, "password": {password}})
}

func (b *browser) cookie(name string) *http.Cookie {
	u, _ := url.Parse(b.base + "/portal/")
	for _, c := range b.hc.Jar.Cookies(u) {
		if c.Name == name {
			return c
		}
	}
	return nil
}

var secretField = regexp.MustCompile(`id="new-secret" type="text" readonly value="(ak_[a-z]+_[a-z2-7]+)"`)

// createKey creates a key through the form and returns its secret and the
// page's id for it.
func (b *browser) createKey(name, mode string, scopes ...string) (string, string) {
	b.t.Helper()
	keys := b.get("/portal/keys")
	form := url.Values{"csrf": {keys.csrf(b.t)}, "name": {name}, "mode": {mode}}
	if len(scopes) == 0 {
		scopes = metering.DefaultConversionScopes()
	}
	form["scope"] = scopes
	p := b.post("/portal/keys", form)
	m := secretField.FindStringSubmatch(p.body)
	if p.status != 200 || m == nil {
		b.t.Fatalf("create key: %d %s", p.status, p.body)
	}
	id := regexp.MustCompile(`action="/portal/keys/([0-9a-f-]{36})/revoke"`).FindStringSubmatch(p.body)
	if id == nil {
		b.t.Fatalf("no revoke form: %s", p.body)
	}
	return m[1], id[1]
}

func formats(t *testing.T, base, secret string) int {
	t.Helper()
	req, _ := http.NewRequest("GET", base+"/v1/formats", nil)
	req.Header.Set("Authorization", "Bearer "+secret)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	return res.StatusCode
}

// waitFormats polls /v1/formats until it answers want, within the
// revocation lag (the gateway's credential cache, 5s) and a margin.
func waitFormats(t *testing.T, base, secret string, want int) {
	t.Helper()
	deadline := time.Now().Add(8 * time.Second)
	for {
		got := formats(t, base, secret)
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("/v1/formats = %d, want %d", got, want)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

const pw = "correct horse battery staple"

// TestPortalEndToEnd signs up, creates a key (its secret shown once), uses
// it, revokes it and sees it refused, signs out and in, on both stores.
func TestPortalEndToEnd(t *testing.T) {
	for _, withDB := range []bool{false, true} {
		name := map[bool]string{false: "memory", true: "postgres"}[withDB]
		t.Run(name, func(t *testing.T) {
			st := stack(t, withDB)
			b := newBrowser(t, st.URL)
			if p := b.get("/portal/"); p.status != http.StatusSeeOther || p.header.Get("Location") != "/portal/signin" {
				t.Fatalf("/portal/ signed out: %d %v", p.status, p.header)
			}
			keys := b.signUpVerified(st.Mail, "founder@example.com", pw, "Founder Ltd")
			if !strings.Contains(keys.body, "founder@example.com") || !strings.Contains(keys.body, "No keys yet") {
				t.Fatalf("keys page: %s", keys.body)
			}
			// Cookie attributes, as the browser got them.
			c := b.cookie(local.PortalSessionCookie)
			if c == nil {
				t.Fatal("no session cookie")
			}
			// Reserved scopes are never offered, and refused when forged.
			for _, reserved := range []string{metering.ScopeKeysManage, metering.ScopeUsageRead} {
				if strings.Contains(keys.body, `value="`+reserved+`"`) {
					t.Fatalf("the form offers %s", reserved)
				}
				p := b.post("/portal/keys", url.Values{"csrf": {keys.csrf(t)}, "name": {"x"}, "mode": {"live"}, "scope": {"convert", reserved}})
				if p.status != 400 || !strings.Contains(p.errorText(), reserved) {
					t.Fatalf("forged %s: %d %q", reserved, p.status, p.errorText())
				}
			}
			secret, id := b.createKey("server", "live")
			if !strings.HasPrefix(secret, "ak_live_") {
				t.Fatalf("secret %q", secret)
			}
			if l := b.get("/portal/keys"); !strings.Contains(l.body, `<td data-label="Last used">never</td>`) {
				t.Fatalf("a new key's last use is not \"never\": %s", l.body)
			}
			if got := formats(t, st.URL, secret); got != 200 {
				t.Fatalf("/v1/formats with the new key: %d", got)
			}
			again := b.get("/portal/keys")
			if strings.Contains(again.body, secret) || !strings.Contains(again.body, secret[:12]) {
				t.Fatal("the secret is shown twice, or the prefix not at all")
			}
			if !regexp.MustCompile(`<td data-label="Last used">20\d\d-\d\d-\d\d \d\d:\d\d UTC</td>`).MatchString(again.body) {
				t.Fatalf("the key's use is not shown: %s", again.body)
			}
			// A live key is not revoked by one click: the form's box must be ticked.
			if !strings.Contains(again.body, `name="confirm" value="1" required`) {
				t.Fatalf("the live key's revoke form has no confirmation: %s", again.body)
			}
			p := b.post("/portal/keys/"+id+"/revoke", url.Values{"csrf": {again.csrf(t)}})
			if p.status != http.StatusBadRequest || !strings.Contains(p.errorText(), "Tick") || formats(t, st.URL, secret) != 200 {
				t.Fatalf("revoke without confirmation: %d %q", p.status, p.errorText())
			}
			p = b.post("/portal/keys/"+id+"/revoke", url.Values{"csrf": {again.csrf(t)}, "confirm": {"1"}})
			if p.status != http.StatusSeeOther {
				t.Fatalf("revoke: %d %s", p.status, p.body)
			}
			waitFormats(t, st.URL, secret, 401)
			if l := b.get("/portal/keys"); !strings.Contains(l.body, "revoked 20") {
				t.Fatalf("the listing does not show the revocation: %s", l.body)
			}
			// Sign out, and back in.
			if p := b.post("/portal/signout", url.Values{"csrf": {again.csrf(t)}}); p.status != 200 || !strings.Contains(p.body, "signed out") {
				t.Fatalf("sign-out: %d %s", p.status, p.body)
			}
			if p := b.get("/portal/keys"); p.status != http.StatusSeeOther {
				t.Fatalf("keys after sign-out: %d", p.status)
			}
			if p := b.signIn("founder@example.com", pw); p.status != http.StatusSeeOther || p.header.Get("Location") != "/portal/keys" {
				t.Fatalf("sign-in: %d %s", p.status, p.body)
			}
			if p := b.get("/portal/keys"); p.status != 200 || !strings.Contains(p.body, "server") {
				t.Fatalf("keys after sign-in: %d", p.status)
			}
		})
	}
}

// TestPortalCookies: HttpOnly, SameSite and Path always; Secure when the
// gateway is told it is behind TLS, and not on local plain HTTP.
func TestPortalCookies(t *testing.T) {
	for _, secure := range []bool{false, true} {
		st := stack(t, false, func(c *local.Config) { c.PortalSecureCookies = secure })
		b := newBrowser(t, st.URL)
		tok := b.get("/portal/signup").csrf(t)
		p := b.post("/portal/signup", url.Values{"csrf": {tok}, "email": {"a@example.com"}, "password": {pw}, "account_name": {"A"}})
		var sess *http.Cookie
		for _, line := range p.header.Values("Set-Cookie") {
			c, err := http.ParseSetCookie(line)
			if err == nil && c.Name == local.PortalSessionCookie {
				sess = c
			}
		}
		if sess == nil || !sess.HttpOnly || sess.SameSite != http.SameSiteLaxMode || sess.Path != "/portal/" || sess.Secure != secure {
			t.Fatalf("secure=%v: session cookie %+v", secure, sess)
		}
		if sess.Expires.IsZero() || sess.Expires.After(time.Now().Add(identity.DefaultSessionTTL+time.Minute)) {
			t.Fatalf("cookie expiry %v", sess.Expires)
		}
	}
}

// TestPortalCSRF: every form refuses a missing, wrong or foreign token, and
// a cross-site post.
func TestPortalCSRF(t *testing.T) {
	st := stack(t, false)
	b := newBrowser(t, st.URL)
	// Pre-session forms (double submit).
	b.get("/portal/signin")
	for _, f := range []url.Values{
		{"email": {"a@example.com"}, "password": {pw}},
		{"csrf": {"forged"}, "email": {"a@example.com"}, "password": {pw}},
	} {
		for _, path := range []string{"/portal/signin", "/portal/signup"} {
			if p := b.post(path, f); p.status != 403 {
				t.Fatalf("%s without a good token: %d", path, p.status)
			}
		}
	}
	keys := b.signUpVerified(st.Mail, "csrf@example.com", pw, "CSRF Ltd")
	good := keys.csrf(t)
	other := newBrowser(t, st.URL)
	otherTok := other.signUp("other@example.com", pw, "Other Ltd").csrf(t)
	for name, tok := range map[string]string{"missing": "", "wrong": "x", "another session's": otherTok} {
		for _, path := range []string{"/portal/keys", "/portal/signout", "/portal/keys/00000000-0000-0000-0000-000000000000/revoke"} {
			f := url.Values{"name": {"k"}, "mode": {"live"}}
			if tok != "" {
				f.Set("csrf", tok)
			}
			if p := b.post(path, f); p.status != 403 {
				t.Fatalf("%s token on %s: %d", name, path, p.status)
			}
		}
	}
	// A cross-site post with the right token is refused by origin.
	if p := b.post("/portal/keys", url.Values{"csrf": {good}, "name": {"k"}, "mode": {"live"}}, "Sec-Fetch-Site", "cross-site"); p.status != 403 {
		t.Fatalf("cross-site post: %d", p.status)
	}
	if p := b.post("/portal/keys", url.Values{"csrf": {good}, "name": {"k"}, "mode": {"live"}}, "Origin", "https://evil.example"); p.status != 403 {
		t.Fatalf("foreign Origin post: %d", p.status)
	}
	// Nothing was created; the right token works.
	if strings.Contains(b.get("/portal/keys").body, "/revoke") {
		t.Fatal("a refused form created a key")
	}
	if p := b.post("/portal/keys", url.Values{"csrf": {good}, "name": {"k"}, "mode": {"live"}, "scope": {"convert"}}); p.status != 200 {
		t.Fatalf("good token: %d", p.status)
	}
}

// TestPortalNoEnumeration: an unknown address and a wrong password read the
// same; signing up with an address in use says nothing about it.
func TestPortalNoEnumeration(t *testing.T) {
	st := stack(t, false)
	b := newBrowser(t, st.URL)
	b.signUp("known@example.com", pw, "Known Ltd")
	v := newBrowser(t, st.URL)
	unknown := v.signIn("unknown@example.com", pw)
	wrong := v.signIn("known@example.com", pw+"!")
	demo := v.signIn(local.DemoUserEmail, pw) // a portal user without a password
	if unknown.status != 401 || wrong.status != 401 || demo.status != 401 {
		t.Fatalf("statuses %d %d %d", unknown.status, wrong.status, demo.status)
	}
	if unknown.errorText() == "" || unknown.errorText() != wrong.errorText() || wrong.errorText() != demo.errorText() {
		t.Fatalf("messages differ: %q %q %q", unknown.errorText(), wrong.errorText(), demo.errorText())
	}
	// Same address again: a new account, and no word about the first.
	again := newBrowser(t, st.URL).signUp("known@example.com", pw+"2", "Known Two")
	if strings.Contains(strings.ToLower(again.body), "already") {
		t.Fatalf("sign-up tells the address is in use: %s", again.body)
	}
}

// TestPortalThrottling: after five failures for an address, the sixth try is
// 429 with Retry-After even with the right password.
func TestPortalThrottling(t *testing.T) {
	st := stack(t, false)
	newBrowser(t, st.URL).signUp("slow@example.com", pw, "Slow Ltd")
	b := newBrowser(t, st.URL)
	for i := range identity.SignInFailures {
		if p := b.signIn("slow@example.com", "wrong password "); p.status != 401 {
			t.Fatalf("attempt %d: %d", i+1, p.status)
		}
	}
	p := b.signIn("slow@example.com", pw)
	if p.status != 429 || p.header.Get("Retry-After") == "" || !strings.Contains(p.errorText(), "too many") {
		t.Fatalf("after %d failures: %d %q %q", identity.SignInFailures, p.status, p.header.Get("Retry-After"), p.errorText())
	}
}

// TestPortalSessionFixationAndExpiry: a session token planted before sign-in
// is never kept; sessions end at their expiry (the injectable clock) and
// everywhere on request.
func TestPortalSessionFixationAndExpiry(t *testing.T) {
	clock := newStepClock()
	st := stack(t, false, func(c *local.Config) { c.Now = clock.Now })
	attacker := newBrowser(t, st.URL)
	attacker.signUp("fix@example.com", pw, "Fix Ltd")
	planted := attacker.cookie(local.PortalSessionCookie).Value

	victim := newBrowser(t, st.URL)
	u, _ := url.Parse(st.URL + "/portal/")
	victim.hc.Jar.SetCookies(u, []*http.Cookie{{Name: local.PortalSessionCookie, Value: planted, Path: "/portal/"}})
	if p := victim.signIn("fix@example.com", pw); p.status != http.StatusSeeOther {
		t.Fatalf("sign-in: %d", p.status)
	}
	if got := victim.cookie(local.PortalSessionCookie).Value; got == planted || got == "" {
		t.Fatal("sign-in kept the planted session token")
	}
	if p := attacker.get("/portal/keys"); p.status != http.StatusSeeOther {
		t.Fatalf("the planted session still works after the sign-in: %d", p.status)
	}

	// Two devices; sign out everywhere from one ends both.
	phone := newBrowser(t, st.URL)
	if p := phone.signIn("fix@example.com", pw); p.status != http.StatusSeeOther {
		t.Fatal(p.status)
	}
	tok := victim.get("/portal/keys").csrf(t)
	if p := victim.post("/portal/signout", url.Values{"csrf": {tok}, "everywhere": {"1"}}); p.status != 200 {
		t.Fatal(p.status)
	}
	if p := phone.get("/portal/keys"); p.status != http.StatusSeeOther {
		t.Fatalf("the phone's session survived sign-out everywhere: %d", p.status)
	}

	// Expiry.
	if p := phone.signIn("fix@example.com", pw); p.status != http.StatusSeeOther {
		t.Fatal(p.status)
	}
	clock.Add(identity.DefaultSessionTTL - time.Minute)
	if p := phone.get("/portal/keys"); p.status != 200 {
		t.Fatalf("before expiry: %d", p.status)
	}
	clock.Add(time.Minute)
	if p := phone.get("/portal/keys"); p.status != http.StatusSeeOther || p.header.Get("Location") != "/portal/signin" {
		t.Fatalf("after expiry: %d", p.status)
	}
}

// TestPortalTenants: a person of account A can never see or act on account
// B's keys, whatever id they send.
func TestPortalTenants(t *testing.T) {
	st := stack(t, false)
	a := newBrowser(t, st.URL)
	a.signUp("a@example.com", pw, "A Ltd")
	bb := newBrowser(t, st.URL)
	bb.signUp("b@example.com", pw, "B Ltd")
	secretB, idB := bb.createKey("b key", "test")
	if p := a.get("/portal/keys"); strings.Contains(p.body, idB) || strings.Contains(p.body, "b key") {
		t.Fatal("A sees B's key")
	}
	tok := a.get("/portal/keys").csrf(t)
	if p := a.post("/portal/keys/"+idB+"/revoke", url.Values{"csrf": {tok}}); p.status != 404 {
		t.Fatalf("A revoking B's key: %d", p.status)
	}
	time.Sleep(50 * time.Millisecond)
	if got := formats(t, st.URL, secretB); got != 200 {
		t.Fatalf("B's key after A's attempt: %d", got)
	}
}

// TestPortalSessionIsNoAPIKey: the session cookie is a credential of the
// web row only. Its token sent to the /v1 API as a bearer or an X-API-Key is
// refused (401) like any unknown secret, even on the routes whose scope the
// session holds; the cookie itself sent to /v1 authenticates nothing.
func TestPortalSessionIsNoAPIKey(t *testing.T) {
	st := stack(t, false)
	b := newBrowser(t, st.URL)
	b.signUp("a@example.com", pw, "A Ltd")
	sess := b.cookie(local.PortalSessionCookie)
	if sess == nil || !strings.HasPrefix(sess.Value, "ps_") {
		t.Fatalf("session cookie %+v", sess)
	}
	for _, hdr := range [][2]string{{"Authorization", "Bearer " + sess.Value}, {"X-API-Key", sess.Value}, {"Cookie", local.PortalSessionCookie + "=" + sess.Value}} {
		for _, req := range [][2]string{{"GET", "/v1/usage"}, {"POST", "/v1/portal/billing/limits"}, {"GET", "/v1/formats"}} {
			r, _ := http.NewRequest(req[0], st.URL+req[1], strings.NewReader(`{"hard_stop":true}`))
			r.Header.Set(hdr[0], hdr[1])
			r.Header.Set("Content-Type", "application/json")
			res, err := http.DefaultClient.Do(r)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != http.StatusUnauthorized {
				t.Errorf("%s %s with the session in %s: %d, want 401", req[0], req[1], hdr[0], res.StatusCode)
			}
		}
	}
	// And the page still works with it.
	if p := b.get("/portal/usage"); p.status != 200 {
		t.Fatalf("usage page: %d", p.status)
	}
}

var tryCurl = regexp.MustCompile(`(?s)<pre id="try-curl"[^>]*><code>(.*?)</code></pre>`)

// TestPortalQuickstart: a new account's keys page says where to start; a
// new key's page shows a command that works as shown, run by a shell: it
// converts a statement with that key.
func TestPortalQuickstart(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed: the shown command cannot be run")
	}
	st := stack(t, false)
	b := newBrowser(t, st.URL)
	b.signUp("quick@example.com", pw, "Quick Ltd")
	if p := b.get("/portal/keys"); !strings.Contains(p.body, `id="next-title"`) || !strings.Contains(p.body, `href="/docs"`) {
		t.Fatalf("no next steps on a new account's keys page:\n%s", p.body)
	}
	keys := b.get("/portal/keys")
	p := b.post("/portal/keys", url.Values{"csrf": {keys.csrf(t)}, "name": {"first"}, "mode": {"test"}, "scope": metering.DefaultConversionScopes()})
	m := tryCurl.FindStringSubmatch(p.body)
	if p.status != 200 || m == nil || !strings.Contains(p.body, `data-copy="try-curl"`) {
		t.Fatalf("no command after creating a key: %d\n%s", p.status, p.body)
	}
	cmd := html.UnescapeString(m[1])
	out, err := exec.Command("bash", "-c", cmd).CombinedOutput()
	var res struct {
		Result string `json:"result"`
		Meta   struct {
			TargetType string `json:"targetType"`
		} `json:"meta"`
	}
	if err != nil || json.Unmarshal(out, &res) != nil || res.Meta.TargetType != "camt.053" || !strings.Contains(res.Result, `<Amt Ccy="EUR">25</Amt>`) {
		t.Fatalf("the shown command: %v\n%s\n%s", err, cmd, out)
	}
	if p := b.get("/portal/keys"); strings.Contains(p.body, `id="next-title"`) {
		t.Fatal("next steps still shown once a key exists")
	}

	// A new OAuth client's page: a token by the client-credentials grant,
	// then a call with it, run as shown.
	pg := b.get("/portal/oauth")
	p = b.post("/portal/oauth", url.Values{"csrf": {pg.csrf(t)}, "name": {"ci"}, "scope": {"convert", "formats:read"}})
	m = tryToken.FindStringSubmatch(p.body)
	if p.status != 200 || m == nil {
		t.Fatalf("no commands after creating an OAuth client: %d\n%s", p.status, p.body)
	}
	cmd = html.UnescapeString(m[1])
	out, err = exec.Command("bash", "-c", cmd).CombinedOutput()
	var formats struct {
		Formats []any `json:"formats"`
	}
	if err != nil || json.Unmarshal(out, &formats) != nil || len(formats.Formats) == 0 {
		t.Fatalf("the shown commands: %v\n%s\n%s", err, cmd, out)
	}
}

var tryToken = regexp.MustCompile(`(?s)<pre id="try-token"[^>]*><code>(.*?)</code></pre>`)

var usedCount = regexp.MustCompile(`<span id="used">(\d+)</span>`)

// TestPortalUsageAndBilling: the usage page moves with a conversion; the
// spend cap is set, refused when malformed and cleared; an upgrade shows its
// charge before it is confirmed; a downgrade is scheduled and canceled.
func TestPortalUsageAndBilling(t *testing.T) {
	st := stack(t, false)
	b := newBrowser(t, st.URL)
	b.signUpVerified(st.Mail, "billing@example.com", pw, "Billing Ltd")
	secret, _ := b.createKey("conv", "live")
	u := b.get("/portal/usage")
	if u.status != 200 || usedCount.FindStringSubmatch(u.body)[1] != "0" || !strings.Contains(u.body, "Plan <strong>free</strong>") {
		t.Fatalf("usage page: %d %s", u.status, u.body)
	}
	req, _ := http.NewRequest("POST", st.URL+"/v1/convert?to=camt.053", strings.NewReader(":20:X"))
	req.Header.Set("Authorization", "Bearer "+secret)
	req.Header.Set("Content-Type", "text/plain")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	if got := usedCount.FindStringSubmatch(b.get("/portal/usage").body)[1]; got != "1" {
		t.Fatalf("used after one conversion: %s (convert answered %d)", got, res.StatusCode)
	}

	tok := u.csrf(t)
	// Free has no overage: no spend controls are offered for it.
	if p := b.get("/portal/usage").body; strings.Contains(p, `id="cap"`) || !strings.Contains(p, "it has no overage") {
		t.Fatalf("spend controls on the free plan: %s", p)
	}
	// Scale is billed by direct debit only: without one the refusal links
	// the page where one is added.
	if p := b.post("/portal/plan", url.Values{"csrf": {tok}, "plan": {"scale"}, "confirm": {"1"}}); p.status != http.StatusConflict || !strings.Contains(p.body, `<a href="/portal/payments">`) {
		t.Fatalf("scale without direct debit: %d %s", p.status, p.body)
	}
	// Upgrade: the charge is shown first, nothing changes until confirmed.
	c := b.post("/portal/plan", url.Values{"csrf": {tok}, "plan": {"starter"}})
	if c.status != 200 || !strings.Contains(c.body, "29.00 USD") || !strings.Contains(c.body, `name="confirm" value="1"`) {
		t.Fatalf("confirmation: %d %s", c.status, c.body)
	}
	// Without a payment method the review says where the charge goes
	// instead of promising a collection; Scale's review offers no Confirm
	// that would only be refused, and links where to add a direct debit.
	if !strings.Contains(c.body, "none is set up yet") || !strings.Contains(c.body, `<a href="/portal/payments">add one</a>`) ||
		strings.Contains(c.body, "collected now from") {
		t.Fatalf("confirmation without a payment method: %s", c.body)
	}
	if sc := b.post("/portal/plan", url.Values{"csrf": {tok}, "plan": {"scale"}}); sc.status != 200 || strings.Contains(sc.body, `id="confirm-change"`) ||
		!strings.Contains(sc.body, `<a href="/portal/payments">Add a direct debit`) {
		t.Fatalf("scale review without a direct debit: %d %s", sc.status, sc.body)
	}
	if !strings.Contains(b.get("/portal/usage").body, "Plan <strong>free</strong>") {
		t.Fatal("the plan changed before confirmation")
	}
	if p := b.post("/portal/plan", url.Values{"csrf": {tok}, "plan": {"starter"}, "confirm": {"1"}}); p.status != http.StatusSeeOther {
		t.Fatalf("upgrade: %d %s", p.status, p.body)
	}
	if p := b.get("/portal/usage?done=upgrade"); !strings.Contains(p.body, "Plan <strong>starter</strong>") || !strings.Contains(p.body, "upgraded") {
		t.Fatalf("after upgrade: %s", p.body)
	}
	// Spend cap.
	if p := b.post("/portal/usage/limits", url.Values{"csrf": {tok}, "cap": {"12.5x"}}); p.status != 400 {
		t.Fatalf("malformed cap: %d", p.status)
	}
	if p := b.post("/portal/usage/limits", url.Values{"csrf": {tok}, "cap": {"12.50"}}); p.status != http.StatusSeeOther {
		t.Fatalf("set cap: %d %s", p.status, p.body)
	}
	if p := b.get("/portal/usage"); !strings.Contains(p.body, "Now 12.50 USD") || !strings.Contains(p.body, `value="12.50"`) {
		t.Fatalf("cap not shown: %s", p.body)
	}
	if p := b.post("/portal/usage/limits", url.Values{"csrf": {tok}, "cap": {""}, "hard_stop": {"1"}}); p.status != http.StatusSeeOther {
		t.Fatalf("clear cap: %d", p.status)
	}
	if p := b.get("/portal/usage"); strings.Contains(p.body, "Now 12.50") || !strings.Contains(p.body, `name="hard_stop" value="1" checked`) {
		t.Fatalf("cap not cleared or hard stop not shown: %s", p.body)
	}
	// Downgrade, scheduled; then canceled by choosing the current plan.
	if p := b.post("/portal/plan", url.Values{"csrf": {tok}, "plan": {"free"}}); !strings.Contains(p.body, "at the end of the period") {
		t.Fatalf("downgrade confirmation: %s", p.body)
	}
	if p := b.post("/portal/plan", url.Values{"csrf": {tok}, "plan": {"free"}, "confirm": {"1"}}); p.status != http.StatusSeeOther {
		t.Fatalf("downgrade: %d %s", p.status, p.body)
	}
	if p := b.get("/portal/usage"); !strings.Contains(p.body, "A downgrade to <strong>free</strong> is scheduled") {
		t.Fatalf("no scheduled downgrade: %s", p.body)
	}
	if p := b.post("/portal/plan", url.Values{"csrf": {tok}, "plan": {"starter"}, "confirm": {"1"}}); p.status != http.StatusSeeOther {
		t.Fatalf("cancel downgrade: %d %s", p.status, p.body)
	}
	if p := b.get("/portal/usage"); strings.Contains(p.body, "is scheduled") {
		t.Fatal("the downgrade is still scheduled")
	}
	// Another account's session sees its own usage only.
	o := newBrowser(t, st.URL)
	o.signUp("other-billing@example.com", pw, "Other")
	if p := o.get("/portal/usage"); usedCount.FindStringSubmatch(p.body)[1] != "0" || !strings.Contains(p.body, "Plan <strong>free</strong>") {
		t.Fatal("another account sees this account's usage")
	}
}

var inviteLink = regexp.MustCompile(`http://[^\s]+/portal/invite\?t=(pi_[a-z2-7]+)`)

// TestPortalInvitations: a person invites another by e-mail through the mail
// outbox; the link lets them choose a password and join the same account,
// once.
func TestPortalInvitations(t *testing.T) {
	st := stack(t, false, func(c *local.Config) { c.BillingInterval = 200 * time.Millisecond })
	ann := newBrowser(t, st.URL)
	keys := ann.signUp("ann@team.example", pw, "Team Ltd")
	_, keyID := ann.createKey("shared", "test")
	tok := keys.csrf(t)
	// Only people who confirmed their own address invite.
	if p := ann.post("/portal/people", url.Values{"csrf": {tok}, "email": {"bob@team.example"}}); p.status != 400 ||
		!strings.Contains(p.errorText(), "verified address") {
		t.Fatalf("an unverified inviter: %d %q", p.status, p.errorText())
	}
	ann.verify(st.Mail, "ann@team.example")
	tok = ann.get("/portal/people").csrf(t)
	if p := ann.post("/portal/people", url.Values{"csrf": {tok}, "email": {"not an address"}}); p.status != 400 {
		t.Fatalf("bad address: %d", p.status)
	}
	p := ann.post("/portal/people", url.Values{"csrf": {tok}, "email": {"Bob@Team.example"}})
	if p.status != 200 || !strings.Contains(p.body, "invitation is on its way") || !strings.Contains(p.body, "invited, not joined yet") {
		t.Fatalf("invite: %d %s", p.status, p.body)
	}
	if p := ann.post("/portal/people", url.Values{"csrf": {tok}, "email": {"bob@team.example"}}); p.status != 400 {
		t.Fatalf("second invitation of the same person: %d", p.status)
	}
	var link, token string
	// Ann's verification mail and Bob's invitation.
	for _, m := range waitMail(t, st.Mail, 2) {
		decoded, _ := io.ReadAll(quotedprintable.NewReader(strings.NewReader(string(m.Data))))
		if got := inviteLink.FindStringSubmatch(string(decoded)); got != nil && m.To[0] == "bob@team.example" {
			link, token = got[0], got[1]
		}
	}
	if link == "" {
		for _, m := range st.Mail.Messages() {
			t.Logf("mail to %v:\n%s", m.To, m.Data)
		}
		t.Fatal("no invitation mail with a link")
	}
	if !strings.HasPrefix(link, st.URL+"/portal/invite?t=") {
		t.Fatalf("link %q does not point at the portal", link)
	}
	bob := newBrowser(t, st.URL)
	form := bob.get("/portal/invite?t=" + token)
	if form.status != 200 || !strings.Contains(form.body, "Team Ltd") || !strings.Contains(form.body, "bob@team.example") {
		t.Fatalf("invitation page: %d %s", form.status, form.body)
	}
	if p := bob.post("/portal/invite", url.Values{"invitation": {token}, "password": {pw}}); p.status != 403 {
		t.Fatalf("without a CSRF token: %d", p.status)
	}
	if p := bob.post("/portal/invite", url.Values{"csrf": {form.csrf(t)}, "invitation": {token}, "password": {"short"}}); p.status != 400 {
		t.Fatalf("short password: %d", p.status)
	}
	if p := bob.post("/portal/invite", url.Values{"csrf": {form.csrf(t)}, "invitation": {token}, "password": {pw}, "name": {"Bob"}}); p.status != http.StatusSeeOther {
		t.Fatalf("accept: %d %s", p.status, p.body)
	}
	// Bob is in Ann's account: he sees its key.
	if k := bob.get("/portal/keys"); !strings.Contains(k.body, keyID) || !strings.Contains(k.body, "Team Ltd") {
		t.Fatalf("Bob's keys page: %s", k.body)
	}
	// The link works once.
	if p := newBrowser(t, st.URL).get("/portal/invite?t=" + token); p.status != 404 {
		t.Fatalf("used invitation: %d", p.status)
	}
	// Bob signs in with his own password.
	if p := newBrowser(t, st.URL).signIn("bob@team.example", pw); p.status != http.StatusSeeOther {
		t.Fatalf("Bob's sign-in: %d", p.status)
	}
	if p := ann.get("/portal/people"); !strings.Contains(p.body, "Bob") || strings.Contains(p.body, "not joined yet") {
		t.Fatalf("people after joining: %s", p.body)
	}
}

// TestPortalAlertMails: the usage page lists the period's alert e-mails,
// and says so when one could not be delivered (issue 27, 5: a mail the
// server refuses for good is given up at once and shown, not retried
// forever).
func TestPortalAlertMails(t *testing.T) {
	t.Run("sent", func(t *testing.T) { portalAlertMails(t, false) })
	t.Run("refused for good", func(t *testing.T) { portalAlertMails(t, true) })
}

func portalAlertMails(t *testing.T, refused bool) {
	st := stack(t, false, func(c *local.Config) { c.BillingInterval = 200 * time.Millisecond })
	b := newBrowser(t, st.URL)
	b.signUpVerified(st.Mail, "alerts@example.com", pw, "Alerts Ltd")
	if refused {
		st.Mail.Refuse("alerts@example.com")
	}
	if p := b.get("/portal/usage"); !strings.Contains(p.body, "None so far") || !strings.Contains(p.body, "No invoice yet") {
		t.Fatalf("usage page before: %s", p.body)
	}
	secret, _ := b.createKey("batch", "live")
	items := make([]string, 750) // free includes 1,000: 75 %
	for i := range items {
		items[i] = `{"message":":20:X"}`
	}
	req, _ := http.NewRequest("POST", st.URL+"/v1/convert/batch", strings.NewReader(`{"to":"camt.053","items":[`+strings.Join(items, ",")+`]}`))
	req.Header.Set("Authorization", "Bearer "+secret)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	if res.StatusCode != 202 {
		t.Fatalf("batch: %d", res.StatusCode)
	}
	deadline := time.Now().Add(15 * time.Second)
	want := "to alerts@example.com, sent 20"
	if refused {
		want = "to alerts@example.com, <strong>not delivered</strong>: "
	}
	for {
		p := b.get("/portal/usage")
		if strings.Contains(p.body, want) {
			if refused && !strings.Contains(p.body, "550") {
				t.Fatalf("the refusal's reason is not shown: %s", p.body)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no sent alert listed: %s", p.body)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
