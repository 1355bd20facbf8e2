package local_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestPortalEmailVerification: sign-up mails a verification link; until it
// is followed the portal says so, creates test keys and refuses live ones;
// the link is sent again on request (throttled), works once, and afterwards
// live keys are created. A password reset verifies too.
func TestPortalEmailVerification(t *testing.T) {
	for _, withDB := range []bool{false, true} {
		name := map[bool]string{false: "memory", true: "postgres"}[withDB]
		t.Run(name, func(t *testing.T) {
			st := stack(t, withDB)
			b := newBrowser(t, st.URL)
			keys := b.signUp("new@verify.example", pw, "Verify Ltd")
			if !strings.Contains(keys.body, "Confirm your e-mail address") {
				t.Fatal("no verification notice on the keys page")
			}
			if p := b.post("/portal/keys", url.Values{"csrf": {keys.csrf(t)}, "name": {"live"}, "mode": {"live"}, "scope": {"convert"}}); p.status != 400 ||
				!strings.Contains(p.errorText(), "confirm your e-mail address") {
				t.Fatalf("a live key before verification: %d %q", p.status, p.errorText())
			}
			if secret, _ := b.createKey("test", "test"); !strings.HasPrefix(secret, "ak_test_") {
				t.Fatalf("test key %q", secret)
			}
			first := mailToken(t, st.Mail, "new@verify.example", verifyLink)

			// Send again: a second link; the third request in the hour is the
			// limit (sign-up sent the first).
			if p := b.post("/portal/verify/send", url.Values{"csrf": {keys.csrf(t)}}); p.status != 200 {
				t.Fatalf("send again: %d %s", p.status, p.body)
			}
			if p := b.post("/portal/verify/send", url.Values{"csrf": {keys.csrf(t)}}); p.status != 200 {
				t.Fatalf("send again: %d", p.status)
			}
			if p := b.post("/portal/verify/send", url.Values{"csrf": {keys.csrf(t)}}); p.status != http.StatusTooManyRequests {
				t.Fatalf("fourth mail in the hour: %d", p.status)
			}
			if p := b.post("/portal/verify/send", url.Values{}); p.status != 403 {
				t.Fatalf("send without CSRF: %d", p.status)
			}
			second := mailToken(t, st.Mail, "new@verify.example", verifyLink, first)

			// The confirmation is a form: the GET alone (a mail scanner) uses
			// nothing up; CSRF is required.
			anon := newBrowser(t, st.URL)
			form := anon.get("/portal/verify?t=" + second)
			if form.status != 200 || !strings.Contains(form.body, `id="confirm-email"`) {
				t.Fatalf("verify page: %d", form.status)
			}
			if p := anon.post("/portal/verify", url.Values{"verify": {second}}); p.status != 403 {
				t.Fatalf("verify without CSRF: %d", p.status)
			}
			if p := anon.post("/portal/verify", url.Values{"csrf": {form.csrf(t)}, "verify": {second}}); p.status != 200 {
				t.Fatalf("verify: %d %s", p.status, p.body)
			}
			if p := anon.post("/portal/verify", url.Values{"csrf": {form.csrf(t)}, "verify": {second}}); p.status != 404 {
				t.Fatalf("the link twice: %d", p.status)
			}
			keys = b.get("/portal/keys")
			if strings.Contains(keys.body, "Confirm your e-mail address") {
				t.Fatal("the notice stays after verification")
			}
			if secret, _ := b.createKey("live", "live"); !strings.HasPrefix(secret, "ak_live_") {
				t.Fatalf("live key %q", secret)
			}
			// The first link still works but changes nothing more.
			if p := anon.post("/portal/verify", url.Values{"csrf": {form.csrf(t)}, "verify": {first}}); p.status != 200 {
				t.Fatalf("the first link: %d", p.status)
			}
		})
	}
}
