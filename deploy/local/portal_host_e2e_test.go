package local_test

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ledgerlane/platform/deploy/local"
	"github.com/ledgerlane/platform/services/metering/identity"
)

// TestPortalLinksNeverFollowTheHost (issue 27, 1): an attacker who asks
// for a victim's password reset with a Host header of their own gets no
// mail sent at all (421), pages asked for under another host are
// redirected to the configured public URL, and X-Forwarded-Host changes
// nothing: the link a victim receives always leads to the public URL.
func TestPortalLinksNeverFollowTheHost(t *testing.T) {
	st := stack(t, false, func(c *local.Config) { c.BillingInterval = 100 * time.Millisecond })
	newBrowser(t, st.URL).signUp("victim@host.example", pw, "Victim Ltd")
	const evil = "attacker.example"

	a := newBrowser(t, st.URL)
	if p := a.do("GET", "/portal/forgot?x=1", nil, "Host", evil); p.status != http.StatusPermanentRedirect ||
		p.header.Get("Location") != st.URL+"/portal/forgot?x=1" {
		t.Fatalf("a page under another host: %d %q", p.status, p.header.Get("Location"))
	}
	tok := a.get("/portal/forgot").csrf(t)
	for _, host := range []string{evil, evil + ":80", strings.TrimPrefix(st.URL, "http://") + "." + evil} {
		p := a.post("/portal/forgot", url.Values{"csrf": {tok}, "email": {"victim@host.example"}}, "Host", host)
		if p.status != http.StatusMisdirectedRequest || strings.Contains(p.body, "on its way") {
			t.Fatalf("a reset asked with Host %q: %d %s", host, p.status, p.body)
		}
	}
	// Through the right host, with a forged forwarding header: the link
	// still starts with the public URL.
	if p := a.post("/portal/forgot", url.Values{"csrf": {tok}, "email": {"victim@host.example"}},
		"X-Forwarded-Host", evil, "X-Forwarded-Proto", "https"); p.status != 200 {
		t.Fatalf("reset: %d %s", p.status, p.body)
	}
	link := regexp.MustCompile(regexp.QuoteMeta(st.URL) + `/portal/reset\?t=(pr_[a-z2-7]+)`)
	mailToken(t, st.Mail, "victim@host.example", link)
	time.Sleep(300 * time.Millisecond) // a mail for a refused request would have gone by now
	resets := 0
	for _, m := range st.Mail.Messages() {
		if strings.Contains(string(m.Data), evil) {
			t.Fatalf("a mail names the attacker's host:\n%s", m.Data)
		}
		if m.To[0] == "victim@host.example" && strings.Contains(string(m.Data), "/portal/reset") {
			resets++
		}
	}
	if resets != 1 {
		t.Fatalf("%d reset mails, want the one asked through the public host", resets)
	}
}

// TestPortalSignUpThrottle (issue 27, 5): sign-ups with one address are
// throttled (identity.SignUps an hour); the one over answers 429 with
// Retry-After and the form again, not 500.
func TestPortalSignUpThrottle(t *testing.T) {
	st := stack(t, false)
	for i := range identity.SignUps + 1 {
		b := newBrowser(t, st.URL)
		tok := b.get("/portal/signup").csrf(t)
		p := b.post("/portal/signup", url.Values{"csrf": {tok}, "email": {"many@throttle.example"}, "password": {pw},
			"account_name": {fmt.Sprintf("Throttle %d", i)}})
		switch {
		case i < identity.SignUps && p.status != http.StatusSeeOther:
			t.Fatalf("sign-up %d: %d %s", i+1, p.status, p.errorText())
		case i == identity.SignUps && (p.status != http.StatusTooManyRequests || p.header.Get("Retry-After") == "" ||
			!strings.Contains(p.errorText(), "too many sign-ups")):
			t.Fatalf("sign-up %d over the throttle: %d Retry-After %q %q", i+1, p.status, p.header.Get("Retry-After"), p.errorText())
		}
	}
}

// TestUnverifiedCannotReachThirdParties (issue 27, 2): before confirming
// the address a person may create test keys, but not with
// connections:manage, which sends people to third-party accounting
// platforms; after confirming, they may.
func TestUnverifiedCannotReachThirdParties(t *testing.T) {
	st := stack(t, false, func(c *local.Config) { c.BillingInterval = 100 * time.Millisecond })
	b := newBrowser(t, st.URL)
	tok := b.signUp("new@verify.example", pw, "New Ltd").csrf(t)
	create := func(scopes ...string) page {
		return b.post("/portal/keys", url.Values{"csrf": {tok}, "name": {"k"}, "mode": {"test"}, "scope": scopes})
	}
	if p := create("convert"); p.status != http.StatusOK && p.status != http.StatusSeeOther {
		t.Fatalf("a plain test key: %d %q", p.status, p.errorText())
	}
	if p := create("convert", "connections:manage"); p.status != http.StatusBadRequest || !strings.Contains(p.errorText(), "verified address") {
		t.Fatalf("connections:manage before verifying: %d %q", p.status, p.errorText())
	}
	b.verify(st.Mail, "new@verify.example")
	tok = b.get("/portal/keys").csrf(t)
	if p := create("convert", "connections:manage"); p.status != http.StatusOK && p.status != http.StatusSeeOther {
		t.Fatalf("connections:manage after verifying: %d %q", p.status, p.errorText())
	}
}
