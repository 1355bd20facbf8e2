package local_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/ledgerlane/platform/deploy/local"
	"github.com/ledgerlane/platform/gateway/route"
)

// TestFinanceHistoryEndToEnd: through the gateway on both stores, the
// net-worth history reaches back over the demo's two years (derived days
// marked, today's point the live figure), an account's balance history ends
// at its stored balance, the brokerage's cash is on the holdings answer,
// and privacy holds (an excluded account is 404, a grant that excludes
// accounts gets 403 data-excluded).
func TestFinanceHistoryEndToEnd(t *testing.T) {
	for _, withDB := range []bool{false, true} {
		name := "memory"
		if withDB {
			name = "postgres"
		}
		t.Run(name, func(t *testing.T) { financeHistoryEndToEnd(t, financeStack(t, withDB)) })
	}
}

func financeHistoryEndToEnd(t *testing.T, st *local.Stack) {
	keys := map[string]string{}
	for _, k := range st.Keys {
		keys[k.Name] = k.Key
	}
	f := &fin{client: client{t: t, base: st.URL, keys: keys}}
	data := func(r resp) []any {
		t.Helper()
		if r.status != 200 {
			t.Fatalf("want 200, got %d %s", r.status, r.body)
		}
		d, _ := r.json["data"].([]any)
		return d
	}

	t.Run("net-worth history reaches back", func(t *testing.T) {
		f.t = t
		pts := data(f.call("GET", "/v1/net-worth/history?period=1y", "finance-read", ""))
		if len(pts) < 360 {
			t.Fatalf("1y history has %d points", len(pts))
		}
		last := pts[len(pts)-1].(map[string]any)
		nw := f.ok(f.call("GET", "/v1/net-worth", "finance-read", ""))
		if last["derived"] != false || last["net_worth"] != nw["net_worth"] || last["date"] != nw["snapshot_date"] {
			t.Fatalf("today's point %v, net worth %v", last, nw)
		}
		for _, p := range pts[:len(pts)-1] {
			if p.(map[string]any)["derived"] != true {
				t.Fatalf("a past day without a snapshot is not marked derived: %v", p)
			}
		}
		f.call("GET", "/v1/net-worth/history?period=1y", "finance-redacted", "").wantProblem(t, 403, "data-excluded")
	})

	t.Run("balance history", func(t *testing.T) {
		f.t = t
		checking := st.Demo.AccountIDs.Checking
		pts := data(f.call("GET", "/v1/accounts/"+checking+"/balance-history?period=90d", "finance-read", ""))
		bal := f.ok(f.call("GET", "/v1/accounts/"+checking+"/balances", "finance-read", ""))
		last := pts[len(pts)-1].(map[string]any)
		if len(pts) != 90 || last["derived"] != false || pts[0].(map[string]any)["derived"] != true ||
			last["balance"].(map[string]any)["amount"] != bal["balance"].(map[string]any)["amount"] {
			t.Fatalf("%d points, last %v, balances %v", len(pts), last, bal)
		}
		// The redacting grant sees the checking account's history, and
		// not the brokerage it excludes: 404, as for an unknown account.
		data(f.call("GET", "/v1/accounts/"+checking+"/balance-history", "finance-redacted", ""))
		f.call("GET", "/v1/accounts/"+st.Demo.ExcludedAccountID+"/balance-history", "finance-redacted", "").wantProblem(t, 404, "not-found")
		f.call("GET", "/v1/accounts/00000000-0000-4000-8000-000000000000/balance-history", "finance-read", "").wantProblem(t, 404, "not-found")
		f.call("GET", "/v1/accounts/"+checking+"/balance-history?period=2w", "finance-read", "").wantProblem(t, 400, "invalid-input")
	})

	t.Run("the brokerage counts once: holdings and cash", func(t *testing.T) {
		f.t = t
		r := f.call("GET", "/v1/holdings?account_id="+st.Demo.AccountIDs.Brokerage, "finance-read", "")
		if r.status != 200 {
			t.Fatalf("holdings: %d %s", r.status, r.body)
		}
		cash, _ := r.json["cash"].([]any)
		if len(cash) != 1 || cash[0].(map[string]any)["account_id"] != st.Demo.AccountIDs.Brokerage {
			t.Fatalf("cash: %s", r.body)
		}
	})
}

// TestFinanceStrictInputsEndToEnd: every finance route refuses a query
// parameter it does not take (400 naming it), every finance write refuses a
// body declared as anything but JSON (400 naming Content-Type, as
// /v1/convert does), and an import of a file that holds no statement is
// 400 naming message with the line, never 200 with nothing added.
func TestFinanceStrictInputsEndToEnd(t *testing.T) {
	// A plan whose rate limit the walk over every route stays under.
	st := stack(t, false, func(c *local.Config) { c.SandboxInterval, c.DemoPlan = -1, "scale" })
	keys := map[string]string{}
	for _, k := range st.Keys {
		keys[k.Name] = k.Key
	}
	f := &fin{client: client{t: t, base: st.URL, keys: keys}}
	const someID = "00000000-0000-4000-8000-000000000000"
	n := 0
	for _, rt := range route.All() {
		if rt.Surface != route.Finance {
			continue
		}
		n++
		path := rt.Pattern
		for _, p := range []string{"{id}", "{account_id}"} {
			path = strings.ReplaceAll(path, p, someID)
		}
		t.Run(rt.Method+" "+rt.Pattern, func(t *testing.T) {
			f.t = t
			hdr := []string{"Idempotency-Key", "strict-" + rt.Method + rt.Pattern}
			body := ""
			if rt.Method != http.MethodGet {
				body = "{}"
				hdr = append(hdr, "Content-Type", "application/json")
			}
			r := f.call(rt.Method, path+"?pagesize=3", "finance-write", body, hdr...)
			r.wantProblem(t, 400, "invalid-input")
			if r.json["field"] != "pagesize" {
				t.Fatalf("unknown parameter: %s", r.body)
			}
			if rt.Method == http.MethodGet {
				return
			}
			r = f.call(rt.Method, path, "finance-write", `{"memo":"x"}`, "Content-Type", "text/plain",
				"Idempotency-Key", "strict-text-"+rt.Method+rt.Pattern)
			r.wantProblem(t, 400, "invalid-input")
			if r.json["field"] != "Content-Type" {
				t.Fatalf("text/plain body: %s", r.body)
			}
		})
	}
	if n < 30 {
		t.Fatalf("only %d finance routes", n)
	}
	t.Run("an import without a statement", func(t *testing.T) {
		f.t = t
		r := f.write("POST", "/v1/imports", "finance-write", jsonBody(map[string]any{
			"account_id": st.Demo.AccountIDs.EuroChecking, "message": ":20:broken"}))
		r.wantProblem(t, 400, "invalid-input")
		if r.json["field"] != "message" || !strings.Contains(r.json["detail"].(string), "line") {
			t.Fatalf("import of :20:broken: %s", r.body)
		}
	})
}
