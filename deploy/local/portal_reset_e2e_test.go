package local_test

import (
	"io"
	"mime/quotedprintable"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ledgerlane/platform/deploy/local"
	"github.com/ledgerlane/platform/services/metering/mailsink"
)

var (
	resetLink  = regexp.MustCompile(`http://[^\s]+/portal/reset\?t=(pr_[a-z2-7]+)`)
	verifyLink = regexp.MustCompile(`http://[^\s]+/portal/verify\?t=(pv_[a-z2-7]+)`)
)

// mailToken waits up to 15 s for a mail to addr whose text link matches
// and returns the token of the newest one (links of earlier mails are
// skipped).
func mailToken(t *testing.T, sink *mailsink.Sink, addr string, link *regexp.Regexp, skip ...string) string {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		var token string
		for _, m := range sink.Messages() {
			decoded, _ := io.ReadAll(quotedprintable.NewReader(strings.NewReader(string(m.Data))))
			if got := link.FindStringSubmatch(string(decoded)); got != nil && m.To[0] == addr && !slices.Contains(skip, got[1]) {
				token = got[1]
			}
		}
		if token != "" {
			return token
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("no mail to %s with a link like %s", addr, link)
	return ""
}

// signUpVerified signs up and follows the verification link mailed to the
// address, as a person would: live keys need it.
func (b *browser) signUpVerified(sink *mailsink.Sink, email, password, account string) page {
	b.t.Helper()
	b.signUp(email, password, account)
	b.verify(sink, email)
	return b.get("/portal/keys")
}

func (b *browser) verify(sink *mailsink.Sink, email string) {
	b.t.Helper()
	token := mailToken(b.t, sink, email, verifyLink)
	form := b.get("/portal/verify?t=" + token)
	if p := b.post("/portal/verify", url.Values{"csrf": {form.csrf(b.t)}, "verify": {token}}); p.status != 200 || !strings.Contains(p.body, "confirmed") {
		b.t.Fatalf("verify: %d %s", p.status, p.body)
	}
}

// TestPortalPasswordReset: the request answers alike for a known and an
// unknown address (and mails only the known one); the mailed link sets a new
// password once, signs every session of the person out, and the new password
// signs in; requests are throttled per address; CSRF is required.
func TestPortalPasswordReset(t *testing.T) {
	st := stack(t, false, func(c *local.Config) { c.BillingInterval = 200 * time.Millisecond })
	ann := newBrowser(t, st.URL)
	ann.signUp("ann@reset.example", pw, "Reset Ltd")
	other := newBrowser(t, st.URL) // a second device, signed in
	if p := other.signIn("ann@reset.example", pw); p.status != http.StatusSeeOther {
		t.Fatalf("second sign-in: %d", p.status)
	}

	anon := newBrowser(t, st.URL)
	if p := anon.get("/portal/signin"); !strings.Contains(p.body, `href="/portal/forgot"`) {
		t.Fatal("no link to the reset form on the sign-in page")
	}
	form := anon.get("/portal/forgot")
	if p := anon.post("/portal/forgot", url.Values{"email": {"ann@reset.example"}}); p.status != 403 {
		t.Fatalf("without a CSRF token: %d", p.status)
	}
	if p := anon.post("/portal/forgot", url.Values{"csrf": {form.csrf(t)}, "email": {"not an address"}}); p.status != 400 {
		t.Fatalf("malformed address: %d", p.status)
	}
	known := anon.post("/portal/forgot", url.Values{"csrf": {form.csrf(t)}, "email": {"ann@reset.example"}})
	unknown := anon.post("/portal/forgot", url.Values{"csrf": {form.csrf(t)}, "email": {"nobody@reset.example"}})
	if known.status != 200 || unknown.status != 200 || known.body != unknown.body {
		t.Fatalf("the answers differ: %d %d", known.status, unknown.status)
	}
	token := mailToken(t, st.Mail, "ann@reset.example", resetLink)
	time.Sleep(300 * time.Millisecond) // a mail to the unknown address would have been sent by now
	for _, m := range st.Mail.Messages() {
		if m.To[0] == "nobody@reset.example" {
			t.Fatal("a mail went to an address without a portal user")
		}
	}

	b := newBrowser(t, st.URL)
	rf := b.get("/portal/reset?t=" + token)
	if rf.status != 200 || !strings.Contains(rf.body, "ann@reset.example") {
		t.Fatalf("reset form: %d %s", rf.status, rf.body)
	}
	if p := b.post("/portal/reset", url.Values{"reset": {token}, "password": {"a brand new passphrase"}}); p.status != 403 {
		t.Fatalf("without a CSRF token: %d", p.status)
	}
	if p := b.post("/portal/reset", url.Values{"csrf": {rf.csrf(t)}, "reset": {token}, "password": {"short"}}); p.status != 400 {
		t.Fatalf("short password: %d", p.status)
	}
	const newPW = "a brand new passphrase"
	if p := b.post("/portal/reset", url.Values{"csrf": {rf.csrf(t)}, "reset": {token}, "password": {newPW}}); p.status != 200 || !strings.Contains(p.body, "password is changed") {
		t.Fatalf("reset: %d %s", p.status, p.body)
	}
	// Every session is over; the link works once; the old password is gone.
	for _, br := range []*browser{ann, other} {
		if p := br.get("/portal/keys"); p.status != http.StatusSeeOther {
			t.Fatalf("a session survived the reset: %d", p.status)
		}
	}
	if p := newBrowser(t, st.URL).get("/portal/reset?t=" + token); p.status != 404 {
		t.Fatalf("used link: %d", p.status)
	}
	if p := newBrowser(t, st.URL).signIn("ann@reset.example", pw); p.status != 401 {
		t.Fatalf("old password: %d", p.status)
	}
	fresh := newBrowser(t, st.URL)
	if p := fresh.signIn("ann@reset.example", newPW); p.status != http.StatusSeeOther {
		t.Fatalf("new password: %d", p.status)
	}
	// The reset link reached the address: it counts as verified.
	if p := fresh.get("/portal/keys"); strings.Contains(p.body, "Confirm your e-mail address") {
		t.Fatal("still unverified after a password reset")
	}

	// Throttled: three requests per address an hour (one done above), for
	// unknown addresses alike.
	for _, addr := range []string{"ann@reset.example", "nobody@reset.example"} {
		var last page
		for range 3 {
			last = anon.post("/portal/forgot", url.Values{"csrf": {form.csrf(t)}, "email": {addr}})
		}
		if last.status != http.StatusTooManyRequests || last.header.Get("Retry-After") == "" {
			t.Fatalf("%s: the fourth request answers %d", addr, last.status)
		}
	}
}
