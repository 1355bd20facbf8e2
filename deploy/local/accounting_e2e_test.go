package local_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ledgerlane/platform/deploy/local"
	"github.com/ledgerlane/platform/services/metering"
)

// TestAccountingConnectionsEndToEnd connects the sandbox accounting platform
// through the gateway as a client would with curl (docs/accounting.md):
// create → follow the authorization URL → callback → active; another
// account gets 404 for the id; push an MT940 statement and find its entries
// at the sandbox; push again, and push the same statement as camt.053, and
// nothing is doubled; a platform that drops the access token gets a refresh;
// DELETE revokes the grant at the sandbox and the id is 404 afterwards; a
// second connection whose grant the user revokes at the platform goes to
// error with the reason when its refresh is refused. No
// token the sandbox issued (nor the callback's code or state) appears in any
// response or log line.
func TestAccountingConnectionsEndToEnd(t *testing.T) {
	msg, err := os.ReadFile(filepath.Join("..", "..", "..", "shared", "samples", "mt", "php-mt940", "Ing_sample"))
	if err != nil {
		t.Skipf("../shared samples not found: %v", err)
	}
	msg2, err := os.ReadFile(filepath.Join("..", "..", "..", "shared", "samples", "mt", "php-mt940", "Asn_sample"))
	if err != nil {
		t.Skipf("../shared samples not found: %v", err)
	}
	logs := &lockedBuffer{}
	st := stack(t, false, func(c *local.Config) {
		c.Log = slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	keys := map[string]string{}
	for _, k := range st.Keys {
		keys[k.Name] = k.Key
	}
	c := client{t: t, base: st.URL, keys: keys}
	var bodies []string
	call := func(method, path, key, body string) resp {
		t.Helper()
		r := c.call(method, path, key, body, "Content-Type", "application/json")
		bodies = append(bodies, string(r.body))
		return r
	}

	// Scope and input checks.
	call("POST", "/v1/connections", "conversion-live", `{"platform":"sandbox"}`).wantProblem(t, 403, "forbidden-scope")
	r := call("POST", "/v1/connections", "conversion-all", `{"platform":"sage"}`)
	r.wantProblem(t, 400, "invalid-input")
	if r.json["field"] != "platform" {
		t.Fatalf("field: %s", r.body)
	}
	call("GET", "/v1/connections?page_size=0", "conversion-all", "").wantProblem(t, 400, "invalid-input")

	// 1. Create: pending, with where to send the user.
	r = call("POST", "/v1/connections", "conversion-all", `{"platform":"sandbox","display_name":"Books"}`)
	if r.status != 200 || r.json["status"] != "pending" || r.json["authorization_url"] == nil {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	id := r.json["id"].(string)
	authURL := r.json["authorization_url"].(string)
	if !strings.HasPrefix(authURL, st.AccountingSandbox.URL+"/oauth/authorize?") || !strings.Contains(authURL, "code_challenge_method=S256") {
		t.Fatalf("authorization_url %s", authURL)
	}

	// 2. The user's browser at the platform: approved, redirected back.
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	ar, err := noFollow.Get(authURL)
	if err != nil {
		t.Fatal(err)
	}
	ar.Body.Close()
	callback := ar.Header.Get("Location")
	if ar.StatusCode != http.StatusFound || !strings.HasPrefix(callback, st.URL+"/v1/connections/callback?") {
		t.Fatalf("authorize: %d %s", ar.StatusCode, callback)
	}
	path := strings.TrimPrefix(callback, st.URL)

	// 3. The callback, public: active.
	r = call("GET", path, "", "")
	if r.status != 200 || r.json["status"] != "active" || r.json["id"] != id || r.json["platform_tenant_id"] == nil {
		t.Fatalf("callback: %d %s", r.status, r.body)
	}
	// The state is single-use.
	call("GET", path, "", "").wantProblem(t, 400, "authorization-failed")
	call("GET", "/v1/connections/callback?code=x&state=forged", "", "").wantProblem(t, 400, "authorization-failed")
	for _, q := range []string{"state=%ff", "code=%00&state=x", "state=" + strings.Repeat("s", 600), "state=a;b", ""} {
		if r := call("GET", "/v1/connections/callback?"+q, "", ""); r.status != 400 {
			t.Fatalf("callback ?%.40s: %d %s", q, r.status, r.body)
		}
	}

	r = call("GET", "/v1/connections", "conversion-all", "")
	if r.status != 200 {
		t.Fatalf("list: %d %s", r.status, r.body)
	}
	list := r.json["connections"].([]any)
	if len(list) != 1 || list[0].(map[string]any)["status"] != "active" || list[0].(map[string]any)["authorization_url"] != nil {
		t.Fatalf("list: %s", r.body)
	}
	// The finance surface's GET /v1/connections is still the bank connections.
	if r := call("GET", "/v1/connections", "finance-read", ""); r.status != 200 || r.json["connections"] != nil && strings.Contains(string(r.body), id) {
		t.Fatalf("finance connections: %d %s", r.status, r.body)
	}

	// Another account sees nothing of it: its id is 404 like an unknown one.
	other, err := st.Metering.Service().CreateAccount(context.Background(), "Other Co", metering.PlanStarter, metering.USD)
	if err != nil {
		t.Fatal(err)
	}
	otherKey, _, err := st.Metering.Service().IssueCredential(context.Background(), metering.IssueParams{
		AccountID: other.ID, Name: "other", Kind: metering.KindAPIKey, Surface: metering.SurfaceConversion,
		Mode: metering.ModeLive, Scopes: []string{"connections:manage"}})
	if err != nil {
		t.Fatal(err)
	}
	c.keys["other"] = otherKey
	if r := call("GET", "/v1/connections", "other", ""); r.status != 200 || strings.Contains(string(r.body), id) {
		t.Fatalf("another account's list: %d %s", r.status, r.body)
	}
	call("DELETE", "/v1/connections/"+id, "other", "").wantProblem(t, 404, "not-found")
	call("POST", "/v1/connections/"+id+"/statements", "other", `{"message":"x"}`).wantProblem(t, 404, "not-found")

	// 4. Push a statement: every entry booked at the sandbox.
	push := func(m []byte) resp {
		t.Helper()
		b, _ := json.Marshal(map[string]string{"message": string(m)})
		return call("POST", "/v1/connections/"+id+"/statements", "conversion-all", string(b))
	}
	r = push(msg)
	created := r.json["created"]
	if r.status != 200 || created == nil || created.(float64) < 1 || r.json["already_present"].(float64) != 0 {
		t.Fatalf("push: %d %s", r.status, r.body)
	}
	n := int(created.(float64))
	if got := len(st.AccountingSandbox.Transactions()); got != n {
		t.Fatalf("sandbox holds %d transactions, push said %d", got, n)
	}
	for _, tx := range st.AccountingSandbox.Transactions() {
		if tx.TenantID != r.json["connection_id"] && tx.TenantID == "" {
			t.Fatalf("transaction without organisation: %+v", tx)
		}
	}

	// 5. Again: nothing doubled.
	r = push(msg)
	if r.status != 200 || r.json["created"].(float64) != 0 || int(r.json["already_present"].(float64)) != n {
		t.Fatalf("second push: %d %s", r.status, r.body)
	}
	if got := len(st.AccountingSandbox.Transactions()); got != n {
		t.Fatalf("sandbox holds %d transactions after a repeated push, want %d", got, n)
	}

	// The same statement as camt.053: the same entry ids, nothing booked.
	conv := c.call("POST", "/v1/convert?to=camt.053", "conversion-all", string(msg), "Content-Type", "text/plain", "Accept", "application/xml")
	if conv.status != 200 {
		t.Fatalf("convert: %d %s", conv.status, conv.body)
	}
	r = push(conv.body)
	if r.status != 200 || r.json["created"].(float64) != 0 || int(r.json["already_present"].(float64)) != n {
		t.Fatalf("the camt.053 of the same statement: %d %s", r.status, r.body)
	}

	// 6. The platform drops the access token: the next push refreshes it.
	st.AccountingSandbox.ExpireAccessTokens()
	r = push(msg2)
	if r.status != 200 || r.json["created"].(float64) < 1 {
		t.Fatalf("push after expiry: %d %s", r.status, r.body)
	}
	if g := st.AccountingSandbox.Grants(); len(g) != 1 || g[0].Refreshes != 1 {
		t.Fatalf("grants after the refresh: %+v", g)
	}

	// Bad input is a 4xx naming the field.
	r = call("POST", "/v1/connections/"+id+"/statements", "conversion-all", `{"message":""}`)
	r.wantProblem(t, 400, "invalid-input")
	if r.json["field"] != "message" {
		t.Fatalf("field: %s", r.body)
	}
	call("POST", "/v1/connections/00000000-0000-4000-8000-000000000000/statements", "conversion-all", `{"message":"x"}`).
		wantProblem(t, 404, "not-found")

	// 7. Delete: revoked at the sandbox, then 404.
	if r := call("DELETE", "/v1/connections/"+id, "conversion-all", ""); r.status != 200 {
		t.Fatalf("delete: %d %s", r.status, r.body)
	}
	if g := st.AccountingSandbox.Grants(); len(g) != 1 || !g[0].Revoked {
		t.Fatalf("grant not revoked at the sandbox: %+v", g)
	}
	call("DELETE", "/v1/connections/"+id, "conversion-all", "").wantProblem(t, 404, "not-found")
	push(msg).wantProblem(t, 404, "not-found")
	if r := call("GET", "/v1/connections", "conversion-all", ""); r.status != 200 || strings.Contains(string(r.body), id) {
		t.Fatalf("list after delete: %d %s", r.status, r.body)
	}

	// A second connection; the user disconnects the app at the platform: the
	// next push finds the grant gone, the refresh is refused, and the
	// connection shows error with the reason; it is not retried.
	r = call("POST", "/v1/connections", "conversion-all", `{"platform":"sandbox"}`)
	id = r.json["id"].(string)
	q, _ := url.Parse(r.json["authorization_url"].(string))
	ar, err = noFollow.Get(q.String())
	if err != nil {
		t.Fatal(err)
	}
	ar.Body.Close()
	if r := call("GET", strings.TrimPrefix(ar.Header.Get("Location"), st.URL), "", ""); r.status != 200 || r.json["status"] != "active" {
		t.Fatalf("second callback: %d %s", r.status, r.body)
	}
	msg3, err := os.ReadFile(filepath.Join("..", "..", "..", "shared", "samples", "mt", "php-mt940", "Spk_sample"))
	if err != nil {
		t.Fatal(err)
	}
	st.AccountingSandbox.RevokeAll()
	push(msg3).wantProblem(t, 409, "connection-not-active")
	r = call("GET", "/v1/connections", "conversion-all", "")
	got := r.json["connections"].([]any)[0].(map[string]any)
	if got["status"] != "error" || !strings.Contains(got["status_reason"].(string), "refused the token refresh") {
		t.Fatalf("after a refused refresh: %s", r.body)
	}
	push(msg3).wantProblem(t, 409, "connection-not-active")

	// No token ever left the service.
	toks := st.AccountingSandbox.IssuedTokens()
	if len(toks) < 4 {
		t.Fatalf("the sandbox issued %d tokens", len(toks))
	}
	all := strings.Join(bodies, "\n") + logs.String()
	for _, tok := range toks {
		if strings.Contains(all, tok) {
			t.Fatal("a platform token appears in a response or a log line")
		}
	}
	// Nor the callback's code and state in a log line.
	cb, _ := url.Parse(callback)
	for _, k := range []string{"code", "state"} {
		if v := cb.Query().Get(k); v == "" || strings.Contains(logs.String(), v) {
			t.Fatalf("the callback's %s is missing or logged", k)
		}
	}
}
