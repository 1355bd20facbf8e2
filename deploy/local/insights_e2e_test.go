package local_test

import (
	"math/big"
	"net/url"
	"testing"
	"time"

	"github.com/ledgerlane/platform/deploy/local"
)

func TestInsightsEndToEnd(t *testing.T) {
	for _, withDB := range []bool{false, true} {
		name := "memory"
		if withDB {
			name = "postgres"
		}
		t.Run(name, func(t *testing.T) { insightsEndToEnd(t, financeStack(t, withDB)) })
	}
}

// reportE2E recomputes, from GET /v1/categories and GET /v1/transactions
// under key, the USD income, expenses, counted rows and spend per top-level
// category between start and end (inclusive), by the rules of
// services/finance/README.md ("Insights").
func reportE2E(t *testing.T, f *fin, key, start, end string) (income, expenses *big.Rat, count int, spend map[string]*big.Rat) {
	t.Helper()
	parent, tag := map[string]string{}, map[string]string{}
	for _, c := range f.call("GET", "/v1/categories", key, "").json["data"].([]any) {
		m := c.(map[string]any)
		id := m["id"].(string)
		parent[id], _ = m["parent_id"].(string)
		tag[id], _ = m["type_tag"].(string)
	}
	rows := pagesE2E(t, f, key, "/v1/transactions", url.Values{"start_date": {start}, "end_date": {end}})
	sliced := map[string]bool{}
	for _, r := range rows {
		if p, _ := r["split_parent_id"].(string); p != "" {
			sliced[p] = true
		}
	}
	income, expenses, spend = new(big.Rat), new(big.Rat), map[string]*big.Rat{}
	for _, r := range rows {
		amt := r["amount"].(map[string]any)
		v := rat(t, amt["amount"])
		cat, _ := r["category_id"].(string)
		if amt["currency"] != "USD" || cat == "" || sliced[r["id"].(string)] || (r["transfer_pair_id"] != nil && v.Sign() > 0) {
			continue
		}
		top := cat
		if parent[top] != "" {
			top = parent[top]
		}
		switch tag[top] {
		case "transfer":
			continue
		case "income":
			income.Add(income, v)
		default:
			expenses.Sub(expenses, v)
			if spend[top] == nil {
				spend[top] = new(big.Rat)
			}
			spend[top].Sub(spend[top], v)
		}
		count++
	}
	return income, expenses, count, spend
}

func insightsEndToEnd(t *testing.T, st *local.Stack) {
	keys := map[string]string{}
	for _, k := range st.Keys {
		keys[k.Name] = k.Key
	}
	f := &fin{client: client{t: t, base: st.URL, keys: keys}}
	now := st.Now().UTC()
	prev := time.Date(now.Year(), now.Month()-1, 1, 0, 0, 0, 0, time.UTC)

	for _, grant := range []string{"finance-read", "finance-redacted"} {
		t.Run("month summary reconciles under "+grant, func(t *testing.T) {
			f.t = t
			for _, month := range []string{prev.Format("2006-01"), prev.AddDate(0, -6, 0).Format("2006-01")} {
				r := f.call("GET", "/v1/insights/month-summary?month="+month, grant, "")
				s := f.ok(r)
				start, _ := time.Parse("2006-01", month)
				income, expenses, count, _ := reportE2E(t, f, grant, start.Format("2006-01-02"), start.AddDate(0, 1, -1).Format("2006-01-02"))
				net := new(big.Rat).Sub(income, expenses)
				if s["month"] != month || s["currency"] != "USD" || rat(t, s["total_income"]).Cmp(income) != 0 ||
					rat(t, s["total_expenses"]).Cmp(expenses) != 0 || rat(t, s["net_savings"]).Cmp(net) != 0 ||
					s["transaction_count"] != float64(count) || s["savings_rate"] == nil {
					t.Errorf("%s: %v; want income %s expenses %s count %d", month, s, income.FloatString(2), expenses.FloatString(2), count)
				}
				if r.json["filtered"] != (grant == "finance-redacted") {
					t.Errorf("filtered %v", r.json["filtered"])
				}
			}
			f.call("GET", "/v1/insights/month-summary?month=2026-13", grant, "").wantProblem(t, 400, "invalid-input")
		})

		t.Run("spending by category reconciles under "+grant, func(t *testing.T) {
			f.t = t
			start, end := prev.AddDate(0, -2, 0).Format("2006-01-02"), prev.AddDate(0, 1, -1).Format("2006-01-02")
			r := f.call("GET", "/v1/insights/spending-by-category?start_date="+start+"&end_date="+end, grant, "")
			if r.status != 200 {
				t.Fatalf("%d %s", r.status, r.body)
			}
			_, expenses, _, spend := reportE2E(t, f, grant, start, end)
			total, pct := new(big.Rat), 0.0
			for _, l := range r.json["data"].([]any) {
				m := l.(map[string]any)
				id := m["category_id"].(string)
				if want := spend[id]; want == nil || rat(t, m["amount"]).Cmp(want) != 0 || m["currency"] != "USD" {
					t.Errorf("%s: %v, want %v", m["category_name"], m["amount"], want)
				}
				total.Add(total, rat(t, m["amount"]))
				pct += m["percentage"].(float64)
				delete(spend, id)
			}
			for _, v := range spend {
				if v.Sign() > 0 {
					t.Errorf("a category with spend %s is missing", v.FloatString(2))
				}
				total.Add(total, v)
			}
			if total.Cmp(expenses) != 0 || pct < 99.999 || pct > 100.001 {
				t.Errorf("total %s vs expenses %s, percentages %v", total.FloatString(2), expenses.FloatString(2), pct)
			}
			f.call("GET", "/v1/insights/spending-by-category?start_date="+end+"&end_date="+start, grant, "").wantProblem(t, 400, "invalid-input")
		})
	}
	t.Run("upcoming bills", func(t *testing.T) {
		f.t = t
		today := now.Format("2006-01-02")
		limit := now.AddDate(0, 0, 60).Format("2006-01-02")
		for _, grant := range []string{"finance-read", "finance-redacted"} {
			r := f.call("GET", "/v1/bills/upcoming?days_ahead=60", grant, "")
			bills, _ := r.json["data"].([]any)
			if r.status != 200 || r.json["filtered"] != (grant == "finance-redacted") {
				t.Fatalf("%s: %d %s", grant, r.status, r.body)
			}
			// How many bills fall in 60 days depends on the calendar; what
			// does not: every monthly stream comes once or more (at most
			// three times, a month apart), and the demo has six or more
			// visible to either grant.
			prev, monthly := "", map[string][]time.Time{}
			for _, b := range bills {
				m := b.(map[string]any)
				d := m["expected_date"].(string)
				if d < today || d > limit || d < prev || rat(t, m["expected_amount"]).Sign() <= 0 || m["currency"] != "USD" ||
					m["stream_type"] != "outflow" || m["rule_id"] == nil {
					t.Errorf("bill %v", m)
				}
				if m["frequency"] == "monthly" {
					at, _ := time.Parse("2006-01-02", d)
					monthly[m["rule_id"].(string)] = append(monthly[m["rule_id"].(string)], at)
				}
				prev = d
			}
			if len(monthly) < 6 {
				t.Errorf("%s: %d monthly streams billed in 60 days: %s", grant, len(monthly), r.body)
			}
			for rule, dates := range monthly {
				for i := 1; i < len(dates); i++ {
					if gap := dates[i].Sub(dates[i-1]).Hours() / 24; len(dates) > 3 || gap < 28 || gap > 31 {
						t.Errorf("%s: monthly rule %s billed on %v", grant, rule, dates)
					}
				}
			}
		}
		f.call("GET", "/v1/bills/upcoming?days_ahead=400", "finance-read", "").wantProblem(t, 400, "invalid-input")
	})

	t.Run("cash-flow forecast", func(t *testing.T) {
		f.t = t
		for _, grant := range []string{"finance-read", "finance-redacted"} {
			r := f.call("GET", "/v1/insights/cash-flow-forecast?days_ahead=45", grant, "")
			fc := f.ok(r)
			// The start is the USD cash the grant shows (GET /v1/accounts).
			cash := new(big.Rat)
			for _, a := range pagesE2E(t, f, grant, "/v1/accounts", url.Values{}) {
				if a["type"] == "depository" && a["currency"] == "USD" {
					cash.Add(cash, rat(t, a["balance"].(map[string]any)["amount"]))
				}
			}
			if fc["starting_balance_available"] != true || rat(t, fc["starting_balance"]).Cmp(cash) != 0 || fc["currency"] != "USD" ||
				len(fc["projections"].([]any)) != 3 || len(fc["recurring_items"].([]any)) == 0 || r.json["filtered"] != false {
				t.Fatalf("%s forecast: %s", grant, r.body)
			}
			points := fc["points"].([]any)
			bal := new(big.Rat).Set(cash)
			for _, p := range points {
				m := p.(map[string]any)
				bal.Add(bal, rat(t, m["income"]))
				bal.Sub(bal, rat(t, m["expenses"]))
				if rat(t, m["projected_balance"]).Cmp(bal) != 0 {
					t.Fatalf("%s: %v, want %s", m["date"], m["projected_balance"], bal.FloatString(2))
				}
			}
			if len(points) != 45 || rat(t, fc["projected_end_balance"]).Cmp(bal) != 0 {
				t.Errorf("%d points, end %v", len(points), fc["projected_end_balance"])
			}
		}
		f.call("GET", "/v1/insights/cash-flow-forecast?days_ahead=-1", "finance-read", "").wantProblem(t, 400, "invalid-input")
		f.call("GET", "/v1/insights/cash-flow-forecast?account_id="+st.Demo.AccountIDs.Brokerage, "finance-redacted", "").
			wantProblem(t, 404, "not-found")
	})
}
