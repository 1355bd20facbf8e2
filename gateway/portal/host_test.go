package portal

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// newTestPortal is a portal without a backend whose public URL is the host
// httptest.NewRequest uses.
func newTestPortal(t *testing.T) *Portal {
	t.Helper()
	p, err := New(nil, Options{PublicURL: "http://example.com"})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPublicURLIsRequiredAndARoot(t *testing.T) {
	for _, bad := range []string{"", "example.com", "/portal", "ftp://example.com", "https://", "https://u:p@example.com",
		"https://example.com/portal", "https://example.com/?x=1", "https://example.com/#f", "https://:443"} {
		if _, err := New(nil, Options{PublicURL: bad}); err == nil {
			t.Errorf("public URL %q accepted", bad)
		}
	}
	for in, want := range map[string]string{"https://api.example.com": "https://api.example.com",
		"https://api.example.com/": "https://api.example.com", "http://127.0.0.1:8080": "http://127.0.0.1:8080"} {
		p, err := New(nil, Options{PublicURL: in})
		if err != nil || p.link("/portal/reset?t=") != want+"/portal/reset?t=" {
			t.Errorf("%q: %v %v", in, err, p)
		}
	}
}

// TestHostGuard: a portal request for another host never reaches a page:
// GET is sent to the same path under the public URL, whatever the Host
// said, and a POST (a reset request, a sign-in) is refused with 421 before
// it does anything. Equal hosts in another spelling pass.
func TestHostGuard(t *testing.T) {
	p, err := New(nil, Options{PublicURL: "https://api.example.com"})
	if err != nil {
		t.Fatal(err)
	}
	serve := func(method, host, target, body string) *http.Response {
		r := httptest.NewRequest(method, target, strings.NewReader(body))
		r.Host = host
		if body != "" {
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		rec := httptest.NewRecorder()
		p.ServeHTTP(rec, r) // the nil backend panics if a handler runs past the guard
		return rec.Result()
	}
	for _, host := range []string{"api.example.com", "API.Example.com", "api.example.com:443"} {
		if res := serve("GET", host, "/portal/forgot", ""); res.StatusCode != 200 {
			t.Errorf("GET with Host %q: %d", host, res.StatusCode)
		}
	}
	for _, host := range []string{"attacker.example", "api.example.com.attacker.example", "api.example.com:8443", "", "127.0.0.1"} {
		res := serve("GET", host, "/portal/reset?t=abc", "")
		if loc := res.Header.Get("Location"); res.StatusCode != http.StatusPermanentRedirect || loc != "https://api.example.com/portal/reset?t=abc" {
			t.Errorf("GET with Host %q: %d %q", host, res.StatusCode, loc)
		}
		res = serve("GET", host, "//attacker.example/portal/", "")
		if loc := res.Header.Get("Location"); !strings.HasPrefix(loc, "https://api.example.com/") {
			t.Errorf("GET // with Host %q: %q", host, loc)
		}
		if res := serve("POST", host, "/portal/forgot", "email=victim%40example.com&csrf=x"); res.StatusCode != http.StatusMisdirectedRequest {
			t.Errorf("POST with Host %q: %d", host, res.StatusCode)
		}
	}
}

// TestAssetsAndTransportHeaders: the assets folder serves its files but no
// listing; HSTS goes out behind TLS (SecureCookies), not on plain HTTP.
func TestAssetsAndTransportHeaders(t *testing.T) {
	for _, secure := range []bool{false, true} {
		p, err := New(nil, Options{PublicURL: "http://example.com", SecureCookies: secure})
		if err != nil {
			t.Fatal(err)
		}
		get := func(path string) *http.Response {
			rec := httptest.NewRecorder()
			p.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
			return rec.Result()
		}
		for path, want := range map[string]int{"/portal/assets/": 404, "/portal/assets/portal.css": 200} {
			if res := get(path); res.StatusCode != want {
				t.Errorf("%s: %d, want %d", path, res.StatusCode, want)
			}
		}
		if hsts := get("/portal/signin").Header.Get("Strict-Transport-Security"); (hsts != "") != secure {
			t.Errorf("secure=%v: HSTS %q", secure, hsts)
		}
	}
}
