package local_test

import (
	"math/big"
	"net/url"
	"testing"
	"time"

	"github.com/ledgerlane/platform/deploy/local"
)

func TestBudgetsEndToEnd(t *testing.T) {
	for _, withDB := range []bool{false, true} {
		name := "memory"
		if withDB {
			name = "postgres"
		}
		t.Run(name, func(t *testing.T) { budgetsEndToEnd(t, financeStack(t, withDB)) })
	}
}

// rat reads a decimal amount string exactly.
func rat(t *testing.T, v any) *big.Rat {
	t.Helper()
	s, ok := v.(string)
	r, ok2 := new(big.Rat).SetString(s)
	if !ok || !ok2 {
		t.Fatalf("not a decimal amount string: %#v", v)
	}
	return r
}

func budgetsEndToEnd(t *testing.T, st *local.Stack) {
	keys := map[string]string{}
	for _, k := range st.Keys {
		keys[k.Name] = k.Key
	}
	f := &fin{client: client{t: t, base: st.URL, keys: keys}}
	demo := st.Demo.Budgets

	t.Run("list and read budgets", func(t *testing.T) {
		f.t = t
		r := f.call("GET", "/v1/budgets", "finance-read", "")
		list, _ := r.json["data"].([]any)
		if r.status != 200 || len(list) != 3 || list[0].(map[string]any)["id"] != demo.Active {
			t.Fatalf("budgets: %d %s", r.status, r.body)
		}
		b := f.ok(f.call("GET", "/v1/budgets/"+demo.Active, "finance-read", ""))
		meta, _ := b["method_meta"].(map[string]any)
		if b["method_type"] != "envelope" || b["is_active"] != true || meta["display_name"] != "Envelope" || b["currency"] != "USD" {
			t.Fatalf("budget: %v", b)
		}
		groups, _ := b["target_groups"].([]any)
		item := groups[0].(map[string]any)["items"].([]any)[0].(map[string]any)
		if item["spent_amount"] == nil || item["allocated_amount"] == nil {
			t.Fatalf("item: %v", item)
		}
		f.call("GET", "/v1/budgets/"+demo.Archived[0]+"/progress?month=2024-13", "finance-read", "").wantProblem(t, 400, "invalid-input")
		f.call("GET", "/v1/budgets/00000000-0000-4000-8000-000000000000", "finance-read", "").wantProblem(t, 404, "not-found")
	})

	for _, grant := range []string{"finance-read", "finance-redacted"} {
		t.Run("progress reconciles with transactions under "+grant, func(t *testing.T) {
			f.t = t
			now := st.Now().UTC()
			prev := time.Date(now.Year(), now.Month()-1, 1, 0, 0, 0, 0, time.UTC).Format("2006-01")
			for _, q := range []string{"", "?month=" + prev} {
				r := f.call("GET", "/v1/budgets/"+demo.Active+"/progress"+q, grant, "")
				p := f.ok(r)
				if r.json["filtered"] != (grant == "finance-redacted") {
					t.Errorf("filtered %v", r.json["filtered"])
				}
				if (q == "") != (p["is_current_period"] == true) {
					t.Errorf("is_current_period %v for %q", p["is_current_period"], q)
				}
				reconcileE2E(t, f, grant, p)
			}
		})
	}

	t.Run("goals", func(t *testing.T) {
		f.t = t
		r := f.call("GET", "/v1/goals?page_size=2", "finance-read", "")
		page, _ := r.json["data"].([]any)
		pg, _ := r.json["pagination"].(map[string]any)
		if r.status != 200 || len(page) != 2 || pg["has_more"] != true {
			t.Fatalf("goals page: %s", r.body)
		}
		g := f.ok(f.call("GET", "/v1/goals/"+demo.Goals["laptop"], "finance-read", ""))
		prog, _ := g["progress"].(map[string]any)
		if g["tracking_mode"] != "budget_driven" || prog["projected_completion_date"] == nil ||
			rat(t, prog["remaining_amount"]).Cmp(new(big.Rat).Sub(rat(t, g["target_amount"]), rat(t, g["current_amount"]))) != 0 {
			t.Fatalf("laptop goal: %v", g)
		}
		// Linked only to the excluded brokerage: not found under the redacted grant.
		f.call("GET", "/v1/goals/"+demo.Goals["retirement"], "finance-redacted", "").wantProblem(t, 404, "not-found")
		f.ok(f.call("GET", "/v1/goals/"+demo.Goals["retirement"], "finance-read", ""))
	})

	t.Run("accounts", func(t *testing.T) {
		f.t = t
		r := f.call("GET", "/v1/accounts", "finance-redacted", "")
		list, _ := r.json["data"].([]any)
		if r.status != 200 || len(list) != 8 || r.json["filtered"] != true { // 9 (with the car and student loans) less the brokerage
			t.Fatalf("accounts: %s", r.body)
		}
	})

	t.Run("switch method", func(t *testing.T) {
		f.t = t
		path := "/v1/budgets/switch-method"
		r := f.write("POST", path, "finance-write", `{"method":"kakeibo"}`)
		if r.wantProblem(t, 400, "invalid-input"); r.json["field"] != "confirm" {
			t.Fatalf("field %v", r.json["field"])
		}
		if r = f.write("POST", path, "finance-write", `{"method":"yolo","confirm":true}`); r.json["field"] != "method" {
			t.Fatalf("unknown method: %s", r.body)
		}
		f.write("POST", path, "finance-read", `{"method":"kakeibo","confirm":true}`).wantProblem(t, 403, "forbidden-scope")
		f.call("POST", path, "finance-write", `{"method":"kakeibo","confirm":true}`, "Content-Type", "application/json").
			wantProblem(t, 400, "invalid-input")

		hdr := []string{"Content-Type", "application/json", "Idempotency-Key", "switch-e2e-1"}
		first := f.call("POST", path, "finance-write", `{"method":"kakeibo","confirm":true}`, hdr...)
		res := f.ok(first)
		newID, _ := res["new_budget_id"].(string)
		if newID == "" || res["previous_budget_archived"] != true {
			t.Fatalf("switch: %s", first.body)
		}
		replay := f.call("POST", path, "finance-write", `{"method":"kakeibo","confirm":true}`, hdr...)
		if replay.header.Get("Idempotency-Replayed") != "true" || string(replay.body) != string(first.body) {
			t.Fatalf("replay: %s %s", replay.header.Get("Idempotency-Replayed"), replay.body)
		}
		old := f.ok(f.call("GET", "/v1/budgets/"+demo.Active, "finance-read", ""))
		if old["is_active"] != false || old["archived_at"] == nil {
			t.Fatalf("previous budget: %v", old)
		}
		second := f.ok(f.write("POST", path, "finance-write", `{"method":"fire","confirm":true}`))
		if second["previous_budget_archived"] != true {
			t.Fatal(second)
		}
		if made := f.ok(f.call("GET", "/v1/budgets/"+newID, "finance-read", "")); made["is_active"] != false {
			t.Fatalf("the first switch's budget is still active: %v", made)
		}
		kakeibo := f.ok(f.call("GET", "/v1/budgets/"+newID, "finance-read", ""))
		if groups, _ := kakeibo["target_groups"].([]any); len(groups) != 4 {
			t.Fatalf("kakeibo has four pillars: %v", kakeibo)
		}
		p := f.ok(f.call("GET", "/v1/budgets/"+second["new_budget_id"].(string)+"/progress", "finance-write", ""))
		reconcileE2E(t, f, "finance-write", p)
	})
}

// reconcileE2E recomputes a progress answer's spend and income from
// GET /v1/transactions and GET /v1/categories, exactly (README rules).
func reconcileE2E(t *testing.T, f *fin, key string, p map[string]any) {
	t.Helper()
	cats := f.call("GET", "/v1/categories", key, "")
	parent, tag := map[string]string{}, map[string]string{}
	for _, c := range cats.json["data"].([]any) {
		m := c.(map[string]any)
		id, _ := m["id"].(string)
		parent[id], _ = m["parent_id"].(string)
		tag[id], _ = m["type_tag"].(string)
	}
	itemOf := map[string]string{}
	for _, g := range p["groups"].([]any) {
		for _, it := range g.(map[string]any)["items"].([]any) {
			m := it.(map[string]any)
			itemOf[m["category_id"].(string)] = m["id"].(string)
		}
	}
	covered := map[string]bool{}
	for _, a := range p["anomalies"].([]any) {
		if m := a.(map[string]any); m["status"] == "covered" {
			covered[m["transaction_id"].(string)] = true
		}
	}
	end, _ := time.Parse("2006-01-02", p["period_end"].(string))
	q := url.Values{"start_date": {p["period_start"].(string)}, "end_date": {end.AddDate(0, 0, -1).Format("2006-01-02")},
		"page_size": {"200"}}
	spent, income := map[string]*big.Rat{}, new(big.Rat)
	for {
		r := f.call("GET", "/v1/transactions?"+q.Encode(), key, "")
		for _, row := range r.json["data"].([]any) {
			m := row.(map[string]any)
			amt := m["amount"].(map[string]any)
			v := rat(t, amt["amount"])
			cat, _ := m["category_id"].(string)
			if amt["currency"] != p["currency"] || cat == "" || (m["transfer_pair_id"] != nil && v.Sign() > 0) {
				continue
			}
			if tag[cat] == "income" || tag[parent[cat]] == "income" {
				income.Add(income, v)
				continue
			}
			item, ok := itemOf[cat]
			if !ok {
				item, ok = itemOf[parent[cat]]
			}
			if !ok || covered[m["id"].(string)] {
				continue
			}
			if spent[item] == nil {
				spent[item] = new(big.Rat)
			}
			spent[item].Sub(spent[item], v)
		}
		pg := r.json["pagination"].(map[string]any)
		if pg["has_more"] != true {
			break
		}
		q.Set("cursor", pg["next_cursor"].(string))
	}
	if rat(t, p["total_income"]).Cmp(income) != 0 {
		t.Errorf("%s total_income %s, transactions %s", p["period_label"], p["total_income"], income.FloatString(2))
	}
	total := new(big.Rat)
	for _, g := range p["groups"].([]any) {
		gm := g.(map[string]any)
		for _, it := range gm["items"].([]any) {
			m := it.(map[string]any)
			want := spent[m["id"].(string)]
			if want == nil {
				want = new(big.Rat)
			}
			if rat(t, m["spent_amount"]).Cmp(want) != 0 {
				t.Errorf("%s item %s spent %s, transactions %s", p["period_label"], m["category_id"], m["spent_amount"], want.FloatString(2))
			}
		}
		total.Add(total, rat(t, gm["spent"]))
	}
	if rat(t, p["total_spent"]).Cmp(total) != 0 {
		t.Errorf("total_spent %s, groups %s", p["total_spent"], total.FloatString(2))
	}
}
