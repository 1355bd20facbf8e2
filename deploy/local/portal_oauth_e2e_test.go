package local_test

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

var (
	clientIDField     = regexp.MustCompile(`id="new-client-id" type="text" readonly value="(oc_test_[a-z2-7]+)"`)
	clientSecretField = regexp.MustCompile(`id="new-secret" type="text" readonly value="(cs_test_[a-z2-7]+)"`)
	clientRevokeForm  = regexp.MustCompile(`action="/portal/oauth/([0-9a-f-]{36})/revoke"`)
)

// createOAuthClient creates a test OAuth client through the portal form and
// returns its client id, secret and the page's id for it.
func (b *browser) createOAuthClient(name string, scopes ...string) (string, string, string) {
	b.t.Helper()
	pg := b.get("/portal/oauth")
	if pg.status != 200 {
		b.t.Fatalf("oauth page: %d %s", pg.status, pg.body)
	}
	p := b.post("/portal/oauth", url.Values{"csrf": {pg.csrf(b.t)}, "name": {name}, "scope": scopes})
	id, secret, rid := clientIDField.FindStringSubmatch(p.body), clientSecretField.FindStringSubmatch(p.body), clientRevokeForm.FindStringSubmatch(p.body)
	if p.status != 200 || id == nil || secret == nil || rid == nil {
		b.t.Fatalf("create oauth client: %d %s", p.status, p.body)
	}
	return id[1], secret[1], rid[1]
}

func basic(id, secret string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(url.QueryEscape(id)+":"+url.QueryEscape(secret)))
}

// TestPortalOAuthClients: a client created in the portal (secret shown once)
// gets an at_test_ token by the client-credentials grant, with HTTP Basic or
// form fields; the token converts in test mode; the token route's refusals
// are RFC 6749 JSON; failed authentications are throttled; revoking the
// client refuses its token within the revocation lag. On both stores.
func TestPortalOAuthClients(t *testing.T) {
	for _, withDB := range []bool{false, true} {
		name := map[bool]string{false: "memory", true: "postgres"}[withDB]
		t.Run(name, func(t *testing.T) {
			st := stack(t, withDB)
			c := client{t: t, base: st.URL}
			b := newBrowser(t, st.URL)
			b.signUp("oauth@example.com", pw, "OAuth Ltd")

			// Reserved scopes are refused when forged; CSRF is required.
			pg := b.get("/portal/oauth")
			if strings.Contains(pg.body, `value="usage:read"`) || strings.Contains(pg.body, `value="keys:manage"`) {
				t.Fatal("the form offers a reserved scope")
			}
			if p := b.post("/portal/oauth", url.Values{"csrf": {pg.csrf(t)}, "name": {"x"}, "scope": {"convert", "usage:read"}}); p.status != 400 {
				t.Fatalf("forged reserved scope: %d", p.status)
			}
			if p := b.post("/portal/oauth", url.Values{"name": {"x"}, "scope": {"convert"}}); p.status != 403 {
				t.Fatalf("no CSRF token: %d", p.status)
			}

			id, secret, rid := b.createOAuthClient("ci", "convert", "formats:read")
			if l := b.get("/portal/oauth"); strings.Contains(l.body, secret) || !strings.Contains(l.body, id) {
				t.Fatal("the secret is shown twice, or the client id not at all")
			}
			form := "application/x-www-form-urlencoded"

			// HTTP Basic.
			r := c.call("POST", "/v1/oauth/token", "", "grant_type=client_credentials", "Content-Type", form, "Authorization", basic(id, secret))
			tok, _ := r.json["access_token"].(string)
			if r.status != 200 || !strings.HasPrefix(tok, "at_test_") || r.json["token_type"] != "Bearer" ||
				r.json["expires_in"] != float64(3600) || r.json["scope"] != "convert formats:read" || r.header.Get("Cache-Control") != "no-store" {
				t.Fatalf("token: %d %v %s", r.status, r.header, r.body)
			}
			// Form fields, and a narrower scope.
			r = c.call("POST", "/v1/oauth/token", "", url.Values{"grant_type": {"client_credentials"}, "client_id": {id},
				"client_secret": {secret}, "scope": {"formats:read"}}.Encode(), "Content-Type", form)
			narrow, _ := r.json["access_token"].(string)
			if r.status != 200 || r.json["scope"] != "formats:read" {
				t.Fatalf("token with form fields: %d %s", r.status, r.body)
			}

			// The token converts, in test mode (X-Quota-Limit is the test pool).
			conv := c.call("POST", "/v1/convert?to=camt.053", "", ":20:A\n:25:DE89370400440532013000\n:28C:1\n:60F:C260101EUR10,\n:62F:C260101EUR10,\n-",
				"Content-Type", "text/plain", "Authorization", "Bearer "+tok)
			if conv.status != 200 || conv.header.Get("X-Quota-Limit") != "250" {
				t.Fatalf("convert with the access token: %d %v %s", conv.status, conv.header, conv.body)
			}
			if got := c.call("POST", "/v1/convert?to=camt.053", "", ":20:A", "Content-Type", "text/plain", "Authorization", "Bearer "+narrow); got.status != 403 {
				t.Fatalf("convert with a formats:read token: %d %s", got.status, got.body)
			}

			// RFC 6749 refusals.
			for _, tc := range []struct {
				name, body, auth string
				status           int
				code             string
			}{
				{"wrong secret", "grant_type=client_credentials", basic(id, secret+"x"), 401, "invalid_client"},
				{"unknown client", "grant_type=client_credentials", basic("oc_test_nobody", secret), 401, "invalid_client"},
				{"no client", "grant_type=client_credentials", "", 401, "invalid_client"},
				{"bearer instead of basic", "grant_type=client_credentials", "Bearer " + tok, 401, "invalid_client"},
				{"both methods", "grant_type=client_credentials&client_secret=" + secret, basic(id, secret), 400, "invalid_request"},
				{"no grant type", "scope=convert", basic(id, secret), 400, "invalid_request"},
				{"repeated parameter", "grant_type=client_credentials&grant_type=client_credentials", basic(id, secret), 400, "invalid_request"},
				{"unsupported grant", "grant_type=urn%3Aexample%3Amagic", basic(id, secret), 400, "unsupported_grant_type"},
				{"password grant", "grant_type=password&username=a&password=b", basic(id, secret), 400, "unauthorized_client"},
				{"scope not granted", "grant_type=client_credentials&scope=enrich", basic(id, secret), 400, "invalid_scope"},
			} {
				t.Run(tc.name, func(t *testing.T) {
					hdr := []string{"Content-Type", form}
					if tc.auth != "" {
						hdr = append(hdr, "Authorization", tc.auth)
					}
					r := c.call("POST", "/v1/oauth/token", "", tc.body, hdr...)
					if r.status != tc.status || r.json["error"] != tc.code || r.header.Get("Content-Type") != "application/json" {
						t.Fatalf("%d %s, want %d %s", r.status, r.body, tc.status, tc.code)
					}
					if (tc.status == 401) != (r.header.Get("WWW-Authenticate") != "") {
						t.Fatalf("WWW-Authenticate %q on %d", r.header.Get("WWW-Authenticate"), r.status)
					}
				})
			}
			if r := c.call("POST", "/v1/oauth/token", "", `{"grant_type":"client_credentials"}`, "Content-Type", "application/json",
				"Authorization", basic(id, secret)); r.status != 400 || r.json["error"] != "invalid_request" {
				t.Fatalf("a JSON body: %d %s", r.status, r.body)
			}

			// Another account cannot revoke the client.
			other := newBrowser(t, st.URL)
			other.signUp("other@example.com", pw, "Other Ltd")
			if p := other.post("/portal/oauth/"+rid+"/revoke", url.Values{"csrf": {other.get("/portal/oauth").csrf(t)}}); p.status != 404 {
				t.Fatalf("another account revoking the client: %d", p.status)
			}
			if strings.Contains(other.get("/portal/oauth").body, id) {
				t.Fatal("another account sees the client")
			}

			// Revoke: the token is refused within the lag, and no new one is granted.
			p := b.post("/portal/oauth/"+rid+"/revoke", url.Values{"csrf": {b.get("/portal/oauth").csrf(t)}})
			if p.status != http.StatusSeeOther {
				t.Fatalf("revoke: %d %s", p.status, p.body)
			}
			waitFormats(t, st.URL, tok, 401)
			if r := c.call("POST", "/v1/oauth/token", "", "grant_type=client_credentials", "Content-Type", form, "Authorization", basic(id, secret)); r.status != 401 {
				t.Fatalf("token for a revoked client: %d %s", r.status, r.body)
			}
			if l := b.get("/portal/oauth"); !strings.Contains(l.body, "revoked 20") {
				t.Fatalf("the listing does not show the revocation: %s", l.body)
			}
		})
	}
}

// TestOAuthTokenThrottle: ten failed authentications of one client id lock
// it (429 problem with Retry-After), the right secret included.
func TestOAuthTokenThrottle(t *testing.T) {
	st := stack(t, false)
	c := client{t: t, base: st.URL}
	b := newBrowser(t, st.URL)
	b.signUp("throttle@example.com", pw, "Throttle Ltd")
	id, secret, _ := b.createOAuthClient("ci", "convert")
	form := "application/x-www-form-urlencoded"
	for i := range 10 {
		if r := c.call("POST", "/v1/oauth/token", "", "grant_type=client_credentials", "Content-Type", form, "Authorization", basic(id, "wrong")); r.status != 401 {
			t.Fatalf("failure %d: %d %s", i, r.status, r.body)
		}
	}
	r := c.call("POST", "/v1/oauth/token", "", "grant_type=client_credentials", "Content-Type", form, "Authorization", basic(id, secret))
	r.wantProblem(t, 429, "rate-limited")
	if r.header.Get("Retry-After") == "" {
		t.Fatal("no Retry-After")
	}
}
