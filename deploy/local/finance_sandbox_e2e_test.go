package local_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/ledgerlane/platform/deploy/local"
	"github.com/ledgerlane/platform/services/finance"
	"github.com/ledgerlane/platform/services/finance/sandboxlink"
	"github.com/ledgerlane/platform/services/finance/seed"
	"github.com/ledgerlane/platform/services/metering"
)

// TestFinanceSandbox walks the finance sandbox through the gateway on both
// stores (docs/finance-sandbox.md): a new account's test key creates a
// finance user, links it through an MFA step, gets a finance credential on
// the link's grant and reads exactly the generated history with it, then
// the aggregator's next tick adds rows. The attacker's pass: a live key and
// a key without the scope are refused, the failing institution and wrong
// credentials store nothing, another account's user, link and grant are
// 404 everywhere, and the test credentials appear in no log line.
func TestFinanceSandbox(t *testing.T) {
	for _, withDB := range []bool{false, true} {
		name := "memory"
		if withDB {
			name = "postgres"
		}
		t.Run(name, func(t *testing.T) {
			logs := &lockedBuffer{}
			clk := newStepClock()
			st := stack(t, withDB, func(c *local.Config) {
				c.Now, c.SandboxInterval = clk.Now, -1
				c.Log = slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
			})
			financeSandbox(t, st, clk, logs)
		})
	}
}

// sandboxKeys makes a new account with a test and a live key carrying
// finance_sandbox:manage, and a second account with a test key.
func sandboxKeys(t *testing.T, st *local.Stack) map[string]string {
	t.Helper()
	ctx := context.Background()
	svc := st.Metering.Service()
	keys := map[string]string{}
	for _, k := range st.Keys {
		keys[k.Name] = k.Key
	}
	scopes := append(metering.DefaultConversionScopes(), metering.ScopeFinanceSandboxManage)
	for _, acct := range []string{"a", "b"} {
		a, err := svc.CreateAccount(ctx, "Sandbox "+acct, metering.PlanGrowth, metering.USD) // a burst of 200: the clock stands still
		if err != nil {
			t.Fatal(err)
		}
		for _, mode := range []string{metering.ModeTest, metering.ModeLive} {
			secret, _, err := svc.IssueCredential(ctx, metering.IssueParams{AccountID: a.ID, Name: "sandbox " + mode,
				Kind: metering.KindAPIKey, Surface: metering.SurfaceConversion, Mode: mode, Scopes: scopes})
			if err != nil {
				t.Fatal(err)
			}
			keys[acct+"-"+mode] = secret
		}
	}
	return keys
}

func financeSandbox(t *testing.T, st *local.Stack, clk *stepClock, logs *lockedBuffer) {
	keys := sandboxKeys(t, st)
	c := client{t: t, base: st.URL, keys: keys}
	post := func(path, key, body string) resp {
		t.Helper()
		return c.call("POST", path, key, body, "Content-Type", "application/json")
	}

	// The catalogue: one institution of each outcome, with its test
	// credentials.
	r := c.call("GET", "/v1/sandbox/institutions", "a-test", "")
	if r.status != 200 {
		t.Fatalf("institutions: %d %s", r.status, r.body)
	}
	outcomes := map[string]string{}
	for _, in := range r.json["data"].([]any) {
		m := in.(map[string]any)
		outcomes[m["id"].(string)] = m["outcome"].(string)
		creds := m["test_credentials"].(map[string]any)
		if creds["username"] != "user_good" || creds["password"] != "pass_good" {
			t.Fatalf("test credentials of %s: %v", m["id"], creds)
		}
	}
	if outcomes["ins_otter"] != "success" || outcomes["ins_quokka"] != "mfa_required" || outcomes["ins_wombat"] != "institution_down" {
		t.Fatalf("outcomes: %v", outcomes)
	}

	// Live keys and keys without the scope are refused on every route.
	for _, rt := range []struct{ method, path, body string }{
		{"POST", "/v1/sandbox/users", `{}`}, {"GET", "/v1/sandbox/users", ""}, {"GET", "/v1/sandbox/institutions", ""},
		{"POST", "/v1/sandbox/links", `{"user_id":"` + st.Demo.UserID + `","institution_id":"ins_otter","username":"user_good","password":"pass_good"}`},
		{"GET", "/v1/sandbox/links", ""},
		{"POST", "/v1/sandbox/credentials", `{"user_id":"` + st.Demo.UserID + `","grant_id":"` + st.Demo.GrantReadID + `"}`},
	} {
		hdr := []string{"Content-Type", "application/json"}
		if rt.body == "" {
			hdr = nil
		}
		c.call(rt.method, rt.path, "a-live", rt.body, hdr...).wantProblem(t, 403, "test-mode-only")
		c.call(rt.method, rt.path, "conversion-test", rt.body, hdr...).wantProblem(t, 403, "forbidden-scope")
		c.call(rt.method, rt.path, "finance-read", rt.body, hdr...).wantProblem(t, 403, "forbidden-scope")
	}

	// A user.
	r = post("/v1/sandbox/users", "a-test", `{"name":"Robin Sandbox"}`)
	if r.status != 200 || r.json["mode"] != "test" || r.json["name"] != "Robin Sandbox" {
		t.Fatalf("create user: %d %s", r.status, r.body)
	}
	user := r.json["id"].(string)
	link := func(institution, username, password string) resp {
		t.Helper()
		return post("/v1/sandbox/links", "a-test", fmt.Sprintf(`{"user_id":%q,"institution_id":%q,"username":%q,"password":%q}`,
			user, institution, username, password))
	}

	// Refusals cost a request and store nothing.
	link("ins_wombat", "user_good", "pass_good").wantProblem(t, 422, "institution-down")
	r = link("ins_otter", "user_good", "pass_wrong")
	r.wantProblem(t, 422, "invalid-credentials")
	if strings.Contains(string(r.body), "pass_wrong") {
		t.Fatalf("the refusal echoes the password: %s", r.body)
	}
	link("ins_nope", "user_good", "pass_good").wantProblem(t, 400, "invalid-input")
	if r := c.call("GET", "/v1/sandbox/links", "a-test", ""); r.status != 200 || len(r.json["data"].([]any)) != 0 {
		t.Fatalf("links after refusals: %d %s", r.status, r.body)
	}

	// The MFA institution: waiting, a wrong code, the right one.
	r = link("ins_quokka", "user_good", "pass_good")
	if r.status != 200 || r.json["status"] != "mfa_required" || r.json["mfa_prompt"] == nil || r.json["connection_id"] != nil {
		t.Fatalf("start: %d %s", r.status, r.body)
	}
	linkID := r.json["id"].(string)
	post("/v1/sandbox/links/"+linkID+"/mfa", "a-test", `{"code":"918273"}`).wantProblem(t, 422, "invalid-mfa-code")
	// Another account can neither read nor answer it.
	c.call("GET", "/v1/sandbox/links/"+linkID, "b-test", "").wantProblem(t, 404, "not-found")
	post("/v1/sandbox/links/"+linkID+"/mfa", "b-test", `{"code":"1234"}`).wantProblem(t, 404, "not-found")
	r = post("/v1/sandbox/links/"+linkID+"/mfa", "a-test", `{"code":"1234"}`)
	if r.status != 200 || r.json["status"] != "linked" || r.json["mfa_attempts"] != 1.0 || len(r.json["accounts"].([]any)) != 2 {
		t.Fatalf("mfa: %d %s", r.status, r.body)
	}
	connID, grantID := r.json["connection_id"].(string), r.json["grant_id"].(string)
	post("/v1/sandbox/links/"+linkID+"/mfa", "a-test", `{"code":"1234"}`).wantProblem(t, 409, "conflict")

	// Another account's ids are 404 everywhere they can be named.
	post("/v1/sandbox/credentials", "b-test", fmt.Sprintf(`{"user_id":%q,"grant_id":%q}`, user, grantID)).wantProblem(t, 404, "not-found")
	post("/v1/sandbox/links", "b-test", fmt.Sprintf(`{"user_id":%q,"institution_id":"ins_otter","username":"user_good","password":"pass_good"}`, user)).
		wantProblem(t, 404, "not-found")
	c.call("GET", "/v1/sandbox/links?user_id="+user, "b-test", "").wantProblem(t, 404, "not-found")
	if r := c.call("GET", "/v1/sandbox/users", "b-test", ""); r.status != 200 || len(r.json["data"].([]any)) != 0 {
		t.Fatalf("B's users: %d %s", r.status, r.body)
	}
	// The demo's live user is not a sandbox user, even of its own account.
	post("/v1/sandbox/credentials", "a-test", fmt.Sprintf(`{"user_id":%q,"grant_id":%q}`, st.Demo.UserID, st.Demo.GrantReadID)).
		wantProblem(t, 404, "not-found")

	// A finance credential on the grant reads the generated history at once.
	r = post("/v1/sandbox/credentials", "a-test", fmt.Sprintf(`{"user_id":%q,"grant_id":%q}`, user, grantID))
	if r.status != 200 || !strings.HasPrefix(r.json["secret"].(string), "at_test_") {
		t.Fatalf("credential: %d %s", r.status, r.body)
	}
	keys["sandbox-finance"] = r.json["secret"].(string)
	inst, _ := sandboxlink.InstitutionByID("ins_quokka")
	want := seed.SandboxHistory(inst, finance.Connection{ID: connID, UserID: user, Institution: inst.Name}, clk.Now())
	got := sandboxRows(t, c)
	if len(got) != len(want.Transactions) {
		t.Fatalf("GET /v1/transactions: %d rows, want the %d generated", len(got), len(want.Transactions))
	}
	for _, w := range want.Transactions {
		if amount, ok := got[w.ID]; !ok || amount != w.Amount.Amount.StringFixed(2) {
			t.Fatalf("row %s (%s %s): got %q, %v", w.ID, w.Merchant, w.Amount.Amount, amount, ok)
		}
	}
	r = c.call("GET", "/v1/connections", "sandbox-finance", "")
	if data := r.json["data"].([]any); r.status != 200 || len(data) != 1 || data[0].(map[string]any)["id"] != connID ||
		data[0].(map[string]any)["provider"] != "sandbox" || data[0].(map[string]any)["institution"] != "Quokka Credit Union" {
		t.Fatalf("connections: %d %s", r.status, r.body)
	}

	// The aggregator's next tick adds rows to the sandbox connection.
	clk.Add(30 * time.Second)
	rep, err := st.Sandbox.SyncNow(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	added := 0
	for _, cr := range rep.Created {
		if cr.ConnectionID == connID {
			added++
		}
	}
	if added != 2 {
		t.Fatalf("the tick made %d rows on the sandbox connection: %+v", added, rep.Created)
	}
	if after := sandboxRows(t, c); len(after) != len(want.Transactions)+added {
		t.Fatalf("after the tick: %d rows, want %d", len(after), len(want.Transactions)+added)
	}

	// An MFA step not answered in time expires.
	r = link("ins_quokka", "user_good", "pass_good")
	late := r.json["id"].(string)
	clk.Add(11 * time.Minute)
	if r := c.call("GET", "/v1/sandbox/links/"+late, "a-test", ""); r.json["status"] != "expired" {
		t.Fatalf("late link: %s", r.body)
	}
	post("/v1/sandbox/links/"+late+"/mfa", "a-test", `{"code":"1234"}`).wantProblem(t, 409, "conflict")

	// The test credentials never reach a log line.
	for _, secret := range []string{"pass_good", "pass_wrong", `"1234"`, "918273"} {
		for _, line := range strings.Split(logs.String(), "\n") {
			if strings.Contains(line, secret) {
				t.Fatalf("a log line holds %s: %s", secret, line)
			}
		}
	}
}

// sandboxRows reads every transaction the sandbox finance credential sees:
// id → amount.
func sandboxRows(t *testing.T, c client) map[string]string {
	t.Helper()
	out := map[string]string{}
	cursor := ""
	for {
		path := "/v1/transactions?page_size=100"
		if cursor != "" {
			path += "&cursor=" + url.QueryEscape(cursor)
		}
		r := c.call("GET", path, "sandbox-finance", "")
		if r.status != 200 {
			t.Fatalf("transactions: %d %s", r.status, r.body)
		}
		for _, row := range r.json["data"].([]any) {
			m := row.(map[string]any)
			out[m["id"].(string)] = m["amount"].(map[string]any)["amount"].(string)
		}
		p := r.json["pagination"].(map[string]any)
		if p["has_more"] != true {
			return out
		}
		cursor = p["next_cursor"].(string)
	}
}
