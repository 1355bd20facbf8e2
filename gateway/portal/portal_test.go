package portal

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestParseMoney(t *testing.T) {
	for in, want := range map[string]int32{"0": 0, "12": 1200, "12.5": 1250, "12.50": 1250, "0.01": 1, "21474836.47": 2147483647} {
		if got, ok := parseMoney(in); !ok || got != want {
			t.Errorf("parseMoney(%q) = %d, %v; want %d", in, got, ok, want)
		}
	}
	for _, in := range []string{"", ".5", "1.234", "-1", "1e3", "12,50", "99999999.99", "21474836.48", " 1"} {
		if got, ok := parseMoney(in); ok {
			t.Errorf("parseMoney(%q) = %d, accepted", in, got)
		}
	}
}

func TestMoney(t *testing.T) {
	for cents, want := range map[int64]string{0: "0.00 USD", 5: "0.05 USD", 2900: "29.00 USD", -150: "-1.50 USD"} {
		if got := money(cents, "usd"); got != want {
			t.Errorf("money(%d) = %q, want %q", cents, got, want)
		}
	}
}

// TestHeadersAndPreSessionCSRF needs no backend: the pages before sign-in
// and the refusals happen in the portal itself.
func TestHeadersAndPreSessionCSRF(t *testing.T) {
	p := newTestPortal(t)
	rec := httptest.NewRecorder()
	p.ServeHTTP(rec, httptest.NewRequest("GET", "/portal/signin", nil))
	res := rec.Result()
	if res.StatusCode != 200 {
		t.Fatalf("sign-in page: %d", res.StatusCode)
	}
	for h, want := range map[string]string{"X-Frame-Options": "DENY", "Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"} {
		if got := res.Header.Get(h); got != want {
			t.Errorf("%s = %q, want %q", h, got, want)
		}
	}
	if csp := res.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "script-src 'self';") || strings.Contains(csp, "unsafe") {
		t.Errorf("CSP %q", csp)
	}
	var pre *http.Cookie
	for _, c := range res.Cookies() {
		if c.Name == PreCookie {
			pre = c
		}
	}
	if pre == nil || !pre.HttpOnly || pre.SameSite != http.SameSiteStrictMode || pre.Secure {
		t.Fatalf("pre-session cookie %+v", pre)
	}
	// Over TLS the cookie is Secure.
	req := httptest.NewRequest("GET", "https://example.com/portal/signin", nil)
	rec = httptest.NewRecorder()
	p.ServeHTTP(rec, req)
	for _, c := range rec.Result().Cookies() {
		if c.Name == PreCookie && !c.Secure {
			t.Fatal("pre-session cookie not Secure over TLS")
		}
	}
	// A post without the matching token is refused before any backend call
	// (the client is nil: a call would panic).
	for _, body := range []string{"email=a%40b.c&password=x", "csrf=wrong&email=a%40b.c"} {
		req := httptest.NewRequest("POST", "/portal/signin", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.AddCookie(pre)
		rec := httptest.NewRecorder()
		p.ServeHTTP(rec, req)
		if rec.Code != http.StatusForbidden {
			t.Fatalf("%q: %d", body, rec.Code)
		}
	}
	// Assets are embedded and served.
	rec = httptest.NewRecorder()
	p.ServeHTTP(rec, httptest.NewRequest("GET", "/portal/assets/portal.css", nil))
	if rec.Code != 200 || !strings.Contains(rec.Header().Get("Content-Type"), "text/css") {
		t.Fatalf("stylesheet: %d %q", rec.Code, rec.Header().Get("Content-Type"))
	}
}

// A form field that is not UTF-8, or holds a NUL, is a 400 before any
// backend call (the client is nil: a call would panic), whatever the page.
func TestFormWithOddBytesIsRefused(t *testing.T) {
	p := newTestPortal(t)
	for _, tt := range []struct{ path, body string }{
		{"/portal/signin", "email=%FF%FE&password=x&csrf=t"},
		{"/portal/signup", "email=a%40b.c&password=%00&csrf=t"},
		{"/portal/keys", "name=%C3&csrf=t"},
		{"/portal/signin", "email=%zz"},
	} {
		req := httptest.NewRequest("POST", tt.path, strings.NewReader(tt.body))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		rec := httptest.NewRecorder()
		p.ServeHTTP(rec, req)
		if rec.Code != http.StatusBadRequest {
			t.Errorf("%s %q: %d", tt.path, tt.body, rec.Code)
		}
	}
}
