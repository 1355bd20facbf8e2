package local_test

import (
	"math/big"
	"net/url"
	"testing"
	"time"

	"github.com/ledgerlane/platform/deploy/local"
)

func TestDebtEndToEnd(t *testing.T) {
	for _, withDB := range []bool{false, true} {
		name := "memory"
		if withDB {
			name = "postgres"
		}
		t.Run(name, func(t *testing.T) { debtEndToEnd(t, financeStack(t, withDB)) })
	}
}

// pagesE2E reads every page of a finance list.
func pagesE2E(t *testing.T, f *fin, key, path string, q url.Values) []map[string]any {
	t.Helper()
	q.Set("page_size", "200")
	var out []map[string]any
	for range 200 {
		r := f.call("GET", path+"?"+q.Encode(), key, "")
		if r.status != 200 {
			t.Fatalf("%s: %d %s", path, r.status, r.body)
		}
		for _, row := range r.json["data"].([]any) {
			out = append(out, row.(map[string]any))
		}
		pg := r.json["pagination"].(map[string]any)
		if pg["has_more"] != true {
			return out
		}
		q.Set("cursor", pg["next_cursor"].(string))
	}
	t.Fatalf("%s: too many pages", path)
	return nil
}

func debtEndToEnd(t *testing.T, st *local.Stack) {
	keys := map[string]string{}
	for _, k := range st.Keys {
		keys[k.Name] = k.Key
	}
	f := &fin{client: client{t: t, base: st.URL, keys: keys}}
	demo := st.Demo

	for _, grant := range []string{"finance-read", "finance-redacted"} {
		t.Run("debt summary reconciles with accounts and transactions under "+grant, func(t *testing.T) {
			f.t = t
			r := f.call("GET", "/v1/debt/summary", grant, "")
			s := f.ok(r)
			if r.json["filtered"] != false { // the redacted grant hides the brokerage and Health: no debt
				t.Errorf("filtered %v", r.json["filtered"])
			}
			sums := s["summaries"].([]any)
			if len(sums) != 1 {
				t.Fatalf("summaries %v", sums)
			}
			usd := sums[0].(map[string]any)

			debt, count := new(big.Rat), 0
			isDebt := map[string]bool{}
			for _, a := range pagesE2E(t, f, grant, "/v1/accounts", url.Values{}) {
				if a["type"] != "credit" && a["type"] != "loan" {
					continue
				}
				isDebt[a["id"].(string)] = true
				if b := rat(t, a["balance"].(map[string]any)["amount"]); b.Sign() > 0 {
					debt.Add(debt, b)
					count++
				}
			}
			today := st.Now().UTC()
			rows := pagesE2E(t, f, grant, "/v1/transactions", url.Values{
				"category_id": {demo.CategoryIDs["Loan Interest"]},
				"start_date":  {time.Date(today.Year(), 1, 1, 0, 0, 0, 0, time.UTC).Format("2006-01-02")},
				"end_date":    {today.Format("2006-01-02")}})
			interest, charged := new(big.Rat), map[string]bool{}
			for _, row := range rows {
				if acct := row["account_id"].(string); isDebt[acct] {
					interest.Sub(interest, rat(t, row["amount"].(map[string]any)["amount"]))
					charged[acct] = true
				}
			}
			if usd["currency"] != "USD" || rat(t, usd["total_debt"]).Cmp(debt) != 0 || usd["debt_count"] != float64(count) ||
				s["total_debt_count"] != float64(count) || rat(t, usd["total_ytd_interest_paid"]).Cmp(interest) != 0 ||
				usd["ytd_interest_debt_count"] != float64(len(charged)) ||
				usd["estimated_interest_debt_count"] != float64(count) { // every demo debt has an APR: each owing one is estimated
				t.Errorf("summary %v; accounts owe %s over %d debts; interest %s on %d", usd, debt.FloatString(2), count,
					interest.FloatString(2), len(charged))
			}
		})
	}

	t.Run("payoff plan", func(t *testing.T) {
		f.t = t
		loans := demo.Debts
		body := jsonBody(map[string]any{"liability_ids": []string{loans.CarLoan, loans.StudentLoan, demo.AccountIDs.Checking},
			"strategy": "snowball", "extra_monthly_payment": "250.00"})
		// No Idempotency-Key: the plan is a computation.
		r := f.call("POST", "/v1/debt/payoff-plan", "finance-read", body, "Content-Type", "application/json")
		p := f.ok(r)
		debts := p["debts"].([]any)
		excluded := p["excluded"].([]any)
		if len(debts) != 2 || len(excluded) != 1 || p["currency"] != "USD" || p["plan_feasible"] != true ||
			p["budget_insufficient"] != false || p["horizon_exceeded"] != false || p["debt_free_date"] == nil {
			t.Fatalf("plan: %s", r.body)
		}
		if x := excluded[0].(map[string]any); x["liability_id"] != demo.AccountIDs.Checking || x["reason"] != "not_found" {
			t.Errorf("excluded %v", x)
		}
		// Totals are the sums of the debts', and the timeline ends at zero.
		interest, paid := new(big.Rat), new(big.Rat)
		for _, d := range debts {
			m := d.(map[string]any)
			interest.Add(interest, rat(t, m["total_interest"]))
			paid.Add(paid, rat(t, m["total_paid"]))
		}
		timeline := p["timeline"].([]any)
		last := timeline[len(timeline)-1].(map[string]any)
		if rat(t, p["total_interest"]).Cmp(interest) != 0 || rat(t, p["total_paid"]).Cmp(paid) != 0 ||
			rat(t, last["total_balance"]).Sign() != 0 || rat(t, last["cumulative_interest"]).Cmp(interest) != 0 {
			t.Errorf("totals: interest %v paid %v, last month %v", p["total_interest"], p["total_paid"], last)
		}
		saved := new(big.Rat).Sub(rat(t, p["baseline_total_interest"]), interest)
		if rat(t, p["interest_saved_vs_minimum"]).Cmp(saved) != 0 || saved.Sign() <= 0 {
			t.Errorf("saved %v", p["interest_saved_vs_minimum"])
		}

		bad := []string{
			`{"strategy":"avalanche"}`,
			`{"strategy":"fastest","total_monthly_budget":"500"}`,
			`{"strategy":"avalanche","total_monthly_budget":"500","extra_monthly_payment":"10"}`,
			`{"strategy":"avalanche","total_monthly_budget":"-5"}`,
			`{"strategy":"custom","total_monthly_budget":"500"}`,
			`{"strategy":"avalanche","total_monthly_budget":"500","liability_ids":["nope"]}`,
		}
		for _, b := range bad {
			f.call("POST", "/v1/debt/payoff-plan", "finance-read", b, "Content-Type", "application/json").wantProblem(t, 400, "invalid-input")
		}
	})
}
