package local_test

import (
	"fmt"
	"math/big"
	"testing"

	"github.com/ledgerlane/platform/deploy/local"
)

// TestGoalWritesEndToEnd: POST, PATCH and DELETE /v1/goals and PATCH
// /v1/budgets/{id}/allocations through the gateway with the demo
// credentials, on both stores.
func TestGoalWritesEndToEnd(t *testing.T) {
	for _, withDB := range []bool{false, true} {
		name := "memory"
		if withDB {
			name = "postgres"
		}
		t.Run(name, func(t *testing.T) { goalWritesEndToEnd(t, financeStack(t, withDB)) })
	}
}

func goalWritesEndToEnd(t *testing.T, st *local.Stack) {
	keys := map[string]string{}
	for _, k := range st.Keys {
		keys[k.Name] = k.Key
	}
	f := &fin{client: client{t: t, base: st.URL, keys: keys}}
	demo := st.Demo
	json := []string{"Content-Type", "application/json"}
	with := func(idem string) []string { return append(json[:2:2], "Idempotency-Key", idem) }

	t.Run("goal lifecycle", func(t *testing.T) {
		f.t = t
		body := jsonBody(map[string]any{"name": "Sailing boat", "target_amount": "8000.00", "current_amount": "500",
			"target_date": "2099-06-30", "tracking_mode": "account_driven",
			"account_links": []any{map[string]any{"account_id": demo.AccountIDs.Savings}}})
		// account_driven with a current_amount is refused, naming the field.
		if r := f.write("POST", "/v1/goals", "finance-write", body); r.status != 400 || r.json["field"] != "current_amount" {
			t.Fatalf("current_amount on an account_driven goal: %d %s", r.status, r.body)
		}
		body = jsonBody(map[string]any{"name": "Sailing boat", "target_amount": "8000.00", "current_amount": "500",
			"target_date": "2099-06-30"})
		// Without an Idempotency-Key: 400 at the edge.
		if r := f.call("POST", "/v1/goals", "finance-write", body, json...); r.status != 400 || r.json["field"] != "Idempotency-Key" {
			t.Fatalf("no key: %d %s", r.status, r.body)
		}
		f.write("POST", "/v1/goals", "finance-read", body).wantProblem(t, 403, "forbidden-scope")

		first := f.call("POST", "/v1/goals", "finance-write", body, with("goal-e2e-create")...)
		g := f.ok(first)
		id, _ := g["id"].(string)
		prog, _ := g["progress"].(map[string]any)
		if id == "" || version(g) != 1 || g["status"] != "active" || g["tracking_mode"] != "manual" ||
			rat(t, prog["remaining_amount"]).Cmp(big.NewRat(7500, 1)) != 0 {
			t.Fatalf("created: %s", first.body)
		}
		// A replay answers the first answer, and creates nothing more.
		replay := f.call("POST", "/v1/goals", "finance-write", body, with("goal-e2e-create")...)
		if replay.header.Get("Idempotency-Replayed") != "true" || string(replay.body) != string(first.body) {
			t.Fatalf("replay: %s %s", replay.header.Get("Idempotency-Replayed"), replay.body)
		}
		count := 0
		for _, x := range f.call("GET", "/v1/goals?page_size=200", "finance-read", "").json["data"].([]any) {
			if x.(map[string]any)["name"] == "Sailing boat" {
				count++
			}
		}
		if count != 1 {
			t.Fatalf("%d goals after a replay", count)
		}

		// PATCH with expected_version: progress follows.
		patch := jsonBody(map[string]any{"expected_version": 1, "current_amount": "6000", "name": "Boat",
			"spending_plan": []any{map[string]any{"name": "Sails", "category_id": demo.CategoryIDs["Shopping"], "planned_amount": "250"}}})
		p := f.ok(f.write("PATCH", "/v1/goals/"+id, "finance-write", patch))
		prog, _ = p["progress"].(map[string]any)
		if version(p) != 2 || p["name"] != "Boat" || rat(t, prog["remaining_amount"]).Cmp(big.NewRat(2000, 1)) != 0 ||
			len(p["spending_plan"].([]any)) != 1 {
			t.Fatalf("patched: %v", p)
		}
		read := f.ok(f.call("GET", "/v1/goals/"+id, "finance-read", ""))
		if version(read) != 2 || rat(t, read["current_amount"]).Cmp(big.NewRat(6000, 1)) != 0 {
			t.Fatalf("read back: %v", read)
		}
		// A wrong version is 409; a field error names the field.
		f.write("PATCH", "/v1/goals/"+id, "finance-write", `{"expected_version":1,"name":"x"}`).wantProblem(t, 409, "version-conflict")
		for _, tc := range []struct{ body, field string }{
			{`{"expected_version":2,"target_amount":"12.345"}`, "target_amount"},
			{`{"expected_version":2,"tracking_mode":"auto"}`, "tracking_mode"},
			{`{"expected_version":2,"target_date":"2020-01-01"}`, "target_date"},
			{`{"expected_version":2,"account_links":[7]}`, "account_links[0]"},
			{`{"name":"x"}`, "expected_version"},
		} {
			if r := f.write("PATCH", "/v1/goals/"+id, "finance-write", tc.body); r.status != 400 || r.json["field"] != tc.field {
				t.Errorf("%s: %d %s", tc.body, r.status, r.body)
			}
		}
		// The read grant has writes off.
		f.write("PATCH", "/v1/goals/"+id, "finance-read", `{"expected_version":2,"name":"x"}`).wantProblem(t, 403, "forbidden-scope")

		// DELETE: a wrong version is 409, then it is gone.
		f.write("DELETE", "/v1/goals/"+id, "finance-write", `{"expected_version":1}`).wantProblem(t, 409, "version-conflict")
		del := f.ok(f.write("DELETE", "/v1/goals/"+id, "finance-write", `{"expected_version":2}`))
		if del["deleted"] != true {
			t.Fatalf("delete: %v", del)
		}
		f.call("GET", "/v1/goals/"+id, "finance-read", "").wantProblem(t, 404, "not-found")
		f.write("DELETE", "/v1/goals/"+id, "finance-write", "").wantProblem(t, 404, "not-found")
	})

	t.Run("excluded account", func(t *testing.T) {
		f.t = t
		body := jsonBody(map[string]any{"name": "Hidden", "target_amount": "10", "tracking_mode": "account_driven",
			"account_links": []any{map[string]any{"account_id": demo.ExcludedAccountID}}})
		r := f.write("POST", "/v1/goals", "finance-redacted", body)
		if r.wantProblem(t, 404, "not-found"); r.json["field"] != "account_links[0].account_id" {
			t.Fatalf("field %v", r.json["field"])
		}
		retirement := demo.Budgets.Goals["retirement"]
		f.write("PATCH", "/v1/goals/"+retirement, "finance-redacted", `{"expected_version":1,"name":"x"}`).wantProblem(t, 404, "not-found")
		f.write("DELETE", "/v1/goals/"+retirement, "finance-redacted", "").wantProblem(t, 404, "not-found")
		f.ok(f.call("GET", "/v1/goals/"+retirement, "finance-read", ""))
	})

	t.Run("budget allocations", func(t *testing.T) {
		f.t = t
		path := "/v1/budgets/" + demo.Budgets.Active
		b := f.ok(f.call("GET", path, "finance-read", ""))
		group := b["target_groups"].([]any)[0].(map[string]any)
		item := group["items"].([]any)[0].(map[string]any)
		before := f.ok(f.call("GET", path+"/progress", "finance-read", ""))
		alloc := new(big.Rat).Add(rat(t, item["allocated_amount"]), big.NewRat(10025, 100))
		body := jsonBody(map[string]any{"expected_version": version(b),
			"items": []any{map[string]any{"id": item["id"], "allocated_amount": alloc.FloatString(2)}}})
		nb := f.ok(f.write("PATCH", path+"/allocations", "finance-write", body))
		if version(nb) != version(b)+1 {
			t.Fatalf("version %d after %d", version(nb), version(b))
		}
		after := f.ok(f.call("GET", path+"/progress", "finance-read", ""))
		moved := new(big.Rat).Sub(rat(t, after["total_allocated"]), rat(t, before["total_allocated"]))
		if moved.Cmp(big.NewRat(10025, 100)) != 0 {
			t.Fatalf("total_allocated moved by %s", moved.FloatString(2))
		}
		reconcileE2E(t, f, "finance-read", after)
		f.write("PATCH", path+"/allocations", "finance-write", body).wantProblem(t, 409, "version-conflict")
		bad := jsonBody(map[string]any{"expected_version": version(nb),
			"items": []any{map[string]any{"id": item["id"], "allocated_amount": "-1"}}})
		if r := f.write("PATCH", path+"/allocations", "finance-write", bad); r.status != 400 || r.json["field"] != "items[0].allocated_amount" {
			t.Fatalf("negative: %d %s", r.status, r.body)
		}
		bad = jsonBody(map[string]any{"expected_version": version(nb),
			"groups": []any{map[string]any{"id": group["id"], "allocation_value": "10"}}})
		if r := f.write("PATCH", path+"/allocations", "finance-write", bad); r.status != 400 || r.json["field"] != "groups[0].allocation_value" {
			t.Fatalf("amount group value: %d %s", r.status, r.body)
		}
		f.write("PATCH", path+"/allocations", "finance-read", body).wantProblem(t, 403, "forbidden-scope")
		f.call("PATCH", path+"/allocations", "finance-write", body, json...).wantProblem(t, 400, "invalid-input")
		f.write("PATCH", "/v1/budgets/"+demo.Budgets.Archived[0]+"/allocations", "finance-write",
			fmt.Sprintf(`{"expected_version":%d,"items":[{"id":%q,"allocated_amount":"1"}]}`, 99, item["id"])).
			wantProblem(t, 400, "invalid-input") // the item is not the archived budget's
	})
}
