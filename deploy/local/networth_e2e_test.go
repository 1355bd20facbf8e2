package local_test

import (
	"math/big"
	"net/url"
	"testing"

	"github.com/ledgerlane/platform/deploy/local"
)

func TestNetWorthEndToEnd(t *testing.T) {
	for _, withDB := range []bool{false, true} {
		name := "memory"
		if withDB {
			name = "postgres"
		}
		t.Run(name, func(t *testing.T) { netWorthEndToEnd(t, financeStack(t, withDB)) })
	}
}

// netWorthEndToEnd reads GET /v1/net-worth and its history through the
// gateway (every answer checked against the OpenAPI document by the client)
// and reconciles the liabilities with GET /v1/accounts, by the rules of
// services/finance/README.md ("Net worth").
func netWorthEndToEnd(t *testing.T, st *local.Stack) {
	keys := map[string]string{}
	for _, k := range st.Keys {
		keys[k.Name] = k.Key
	}
	f := &fin{client: client{t: t, base: st.URL, keys: keys}}
	today := st.Now().UTC().Format("2006-01-02")

	t.Run("net worth reconciles", func(t *testing.T) {
		f.t = t
		r := f.call("GET", "/v1/net-worth", "finance-read", "")
		nw := f.ok(r)
		if r.json["filtered"] != false || len(r.json["redacted_fields"].([]any)) != 0 {
			t.Fatalf("envelope: %s", r.body)
		}
		assets, liabs, net := rat(t, nw["total_assets"]), rat(t, nw["total_liabilities"]), rat(t, nw["net_worth"])
		if new(big.Rat).Sub(assets, liabs).Cmp(net) != 0 || nw["base_currency"] != "USD" || nw["snapshot_date"] != today ||
			nw["is_manual"] != true {
			t.Fatalf("net worth: %s", r.body)
		}
		debts := new(big.Rat)
		for _, a := range pagesE2E(t, f, "finance-read", "/v1/accounts", url.Values{}) {
			if a["type"] == "credit" || a["type"] == "loan" {
				bal := a["balance"].(map[string]any)
				if bal["currency"] != "USD" {
					t.Fatalf("demo debt in %v", bal["currency"])
				}
				debts.Add(debts, rat(t, bal["amount"]))
			}
		}
		if debts.Cmp(liabs) != 0 {
			t.Errorf("liabilities %s, accounts owe %s", liabs.FloatString(2), debts.FloatString(2))
		}
		bd := nw["breakdown"].(map[string]any)
		labels := map[string]bool{}
		for _, e := range bd["by_currency"].([]any) {
			labels[e.(map[string]any)["label"].(string)] = true
		}
		if !labels["USD"] || !labels["EUR"] {
			t.Errorf("by_currency: %v", bd["by_currency"])
		}
		liq := bd["liquidity"].(map[string]any)
		sum := new(big.Rat)
		for _, k := range []string{"liquid", "investable", "illiquid"} {
			sum.Add(sum, rat(t, liq[k].(map[string]any)["value"]))
		}
		if diff := new(big.Rat).Sub(sum, assets); diff.Abs(diff).Cmp(big.NewRat(10, 100)) > 0 {
			t.Errorf("liquidity sums to %s, assets %s", sum.FloatString(2), assets.FloatString(2))
		}

		eur := f.ok(f.call("GET", "/v1/net-worth?base_currency=EUR", "finance-read", ""))
		if eur["base_currency"] != "EUR" || rat(t, eur["net_worth"]).Cmp(net) == 0 {
			t.Errorf("EUR: %v", eur)
		}
		f.call("GET", "/v1/net-worth?base_currency=JPY", "finance-read", "").wantProblem(t, 422, "unprocessable")
		f.call("GET", "/v1/net-worth?base_currency=usd", "finance-read", "").wantProblem(t, 400, "invalid-input")
	})

	t.Run("history", func(t *testing.T) {
		f.t = t
		// Today's point is the stored snapshot; every earlier day back to
		// the demo's oldest row (two years) is derived from the rows.
		least := map[string]int{"30d": 30, "90d": 90, "6mo": 180, "1y": 365, "5y": 700, "all": 700}
		for _, p := range []string{"30d", "90d", "6mo", "1y", "5y", "all"} {
			r := f.call("GET", "/v1/net-worth/history?period="+p+"&base_currency=GBP", "finance-read", "")
			if r.status != 200 {
				t.Fatalf("%s: %d %s", p, r.status, r.body)
			}
			pts := r.json["data"].([]any)
			if len(pts) < least[p] || (p == "30d" || p == "90d") && len(pts) != least[p] || len(r.json["missing_rate_dates"].([]any)) != 0 {
				t.Fatalf("%s: %d points, missing %v", p, len(pts), r.json["missing_rate_dates"])
			}
			for i, x := range pts {
				pt := x.(map[string]any)
				last := i == len(pts)-1
				if pt["derived"] != !last || (last && pt["date"] != today) || pt["base_currency"] != "GBP" ||
					new(big.Rat).Sub(rat(t, pt["total_assets"]), rat(t, pt["total_liabilities"])).Cmp(rat(t, pt["net_worth"])) != 0 {
					t.Fatalf("%s point %d: %v", p, i, pt)
				}
			}
		}
		f.call("GET", "/v1/net-worth/history?period=2w", "finance-read", "").wantProblem(t, 400, "invalid-input")
		r := f.call("GET", "/v1/net-worth/history?base_currency=JPY", "finance-read", "")
		if r.status != 200 || len(r.json["data"].([]any)) != 0 || len(r.json["missing_rate_dates"].([]any)) != 30 {
			t.Fatalf("JPY history: %d %s", r.status, r.body)
		}
	})

	t.Run("data-excluded", func(t *testing.T) {
		f.t = t
		f.call("GET", "/v1/net-worth", "finance-redacted", "").wantProblem(t, 403, "data-excluded")
		f.call("GET", "/v1/net-worth/history", "finance-redacted", "").wantProblem(t, 403, "data-excluded")
	})
}
