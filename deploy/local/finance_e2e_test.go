package local_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/ledgerlane/platform/deploy/local"
	"github.com/ledgerlane/platform/services/finance/sandbox"
)

// financeStack is stack with the sandbox aggregator's ticker off, so only
// the test's SyncNow calls move bank data and each step knows what a sync
// does.
func financeStack(t *testing.T, withDB bool) *local.Stack {
	t.Helper()
	return stack(t, withDB, func(c *local.Config) { c.SandboxInterval = -1 })
}

func TestFinanceEndToEnd(t *testing.T) {
	for _, withDB := range []bool{false, true} {
		name := "memory"
		if withDB {
			name = "postgres"
		}
		t.Run(name, func(t *testing.T) { financeEndToEnd(t, financeStack(t, withDB)) })
	}
}

// fin is a client for finance writes: every write carries a fresh
// Idempotency-Key, as the gateway requires.
type fin struct {
	client
	n int
}

func (f *fin) write(method, path, key, body string) resp {
	f.t.Helper()
	f.n++
	return f.call(method, path, key, body, "Content-Type", "application/json",
		"Idempotency-Key", fmt.Sprintf("e2e-%s-%d", f.t.Name(), f.n))
}

func (f *fin) ok(r resp) map[string]any {
	f.t.Helper()
	if r.status != 200 {
		f.t.Fatalf("want 200, got %d %s", r.status, r.body)
	}
	data, _ := r.json["data"].(map[string]any)
	return data
}

func (f *fin) tx(key, id string) map[string]any {
	f.t.Helper()
	return f.ok(f.call("GET", "/v1/transactions/"+id, key, ""))
}

func jsonBody(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func version(tx map[string]any) int { n, _ := tx["version"].(float64); return int(n) }

func financeEndToEnd(t *testing.T, st *local.Stack) {
	keys := map[string]string{}
	for _, k := range st.Keys {
		keys[k.Name] = k.Key
	}
	f := &fin{client: client{t: t, base: st.URL, keys: keys}}
	ctx := context.Background()

	// A new pending row from the sandbox bank.
	rep, err := st.Sandbox.SyncNow(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var created sandbox.Created
	for _, c := range rep.Created {
		if !c.Hold {
			created = c
			break
		}
	}
	r := f.call("GET", "/v1/transactions?pending=true&page_size=200&account_id="+created.AccountID, "finance-write", "")
	var txID string
	for _, row := range r.json["data"].([]any) {
		if m := row.(map[string]any); m["external_ref"] == created.ProviderTransactionID {
			txID = m["id"].(string)
		}
	}
	if txID == "" {
		t.Fatalf("synced row %s not listed: %s", created.ProviderTransactionID, r.body)
	}

	var settled int // the row's version once the story is told
	t.Run("provider ownership: edit, sync, revert, sync", func(t *testing.T) {
		f.t = t
		tx := f.tx("finance-write", txID)
		if tx["merchant"] != created.Merchant || version(tx) != 1 {
			t.Fatalf("new row: %v", tx)
		}
		// Edit: version bump, the bank's merchant captured.
		tx = f.ok(f.write("PATCH", "/v1/transactions/"+txID, "finance-write",
			jsonBody(map[string]any{"expected_version": 1, "merchant": "Coffee with Sam"})))
		if tx["merchant"] != "Coffee with Sam" || tx["provider_merchant_name"] != created.Merchant || version(tx) != 2 {
			t.Fatalf("after edit: %v", tx)
		}
		// A stale version is refused.
		f.write("PATCH", "/v1/transactions/"+txID, "finance-write",
			jsonBody(map[string]any{"expected_version": 1, "memo": "x"})).wantProblem(t, 409, "version-conflict")

		// Sync: the bank posts the row and renames the merchant upstream.
		if _, err := st.Sandbox.SyncNow(ctx); err != nil {
			t.Fatal(err)
		}
		tx = f.tx("finance-write", txID)
		bank, _ := tx["provider_merchant_name"].(string)
		if tx["merchant"] != "Coffee with Sam" || bank == "" || bank == created.Merchant || tx["is_pending"] != false || version(tx) != 3 {
			t.Fatalf("after sync: %v", tx)
		}

		// Revert: the bank's current value comes back.
		tx = f.ok(f.write("PATCH", "/v1/transactions/"+txID, "finance-write",
			jsonBody(map[string]any{"expected_version": 3, "revert_to_provider": []string{"merchant"}})))
		if tx["merchant"] != bank || tx["provider_merchant_name"] != nil || version(tx) != 4 {
			t.Fatalf("after revert: %v", tx)
		}
		// Nothing captured any more.
		f.write("PATCH", "/v1/transactions/"+txID, "finance-write",
			jsonBody(map[string]any{"expected_version": 4, "revert_to_provider": []string{"merchant"}})).wantProblem(t, 409, "no-provider-value")

		// Sync again: the provider owns merchant and its update lands.
		if _, err := st.Sandbox.SyncNow(ctx); err != nil {
			t.Fatal(err)
		}
		tx = f.tx("finance-write", txID)
		if m, _ := tx["merchant"].(string); m == bank || m == "" || tx["provider_merchant_name"] != nil || version(tx) != 5 {
			t.Fatalf("after second sync: %v", tx)
		}
		settled = version(tx)
	})

	t.Run("search", func(t *testing.T) {
		f.t = t
		tx := f.tx("finance-read", txID)
		word := strings.Fields(tx["merchant"].(string))[0]
		r := f.call("GET", "/v1/transactions/search?page_size=200&q="+url.QueryEscape(strings.ToLower(word[:3])), "finance-read", "")
		found := false
		for _, row := range r.json["data"].([]any) {
			found = found || row.(map[string]any)["id"] == txID
		}
		if r.status != 200 || !found {
			t.Fatalf("search for %q: %d, found %v", word[:3], r.status, found)
		}
		f.call("GET", "/v1/transactions/search", "finance-read", "").wantProblem(t, 400, "invalid-input")
	})

	t.Run("category create, then delete with merge", func(t *testing.T) {
		f.t = t
		cat := f.ok(f.write("POST", "/v1/categories", "finance-write", jsonBody(map[string]any{
			"name": "Board games", "parent_id": st.Demo.CategoryIDs["Shopping"], "icon": "emoji:🎲", "color": "#1E88E5"})))
		catID, _ := cat["id"].(string)
		if catID == "" || cat["is_system"] != false || cat["parent_id"] != st.Demo.CategoryIDs["Shopping"] {
			t.Fatalf("created: %v", cat)
		}
		f.write("POST", "/v1/categories", "finance-write", `{"name":"x","color":"red"}`).wantProblem(t, 400, "invalid-input")
		f.write("DELETE", "/v1/categories/"+st.Demo.CategoryIDs["Travel"], "finance-write", "").wantProblem(t, 409, "system-category")

		tx := f.ok(f.write("PATCH", "/v1/transactions/"+txID, "finance-write",
			jsonBody(map[string]any{"expected_version": settled, "category_id": catID})))
		if tx["category_id"] != catID {
			t.Fatalf("categorized: %v", tx)
		}
		del := f.ok(f.write("DELETE", "/v1/categories/"+catID, "finance-write",
			jsonBody(map[string]any{"merge_into_category_id": st.Demo.CategoryIDs["Travel"]})))
		if del["deleted"] != true || del["transactions_merged"] != float64(1) {
			t.Fatalf("delete: %v", del)
		}
		tx = f.tx("finance-write", txID)
		if tx["category_id"] != st.Demo.CategoryIDs["Travel"] {
			t.Fatalf("row not merged: %v", tx)
		}
	})

	t.Run("bulk categorize, mixed outcome", func(t *testing.T) {
		f.t = t
		tx := f.tx("finance-write", txID)
		body := jsonBody(map[string]any{"items": []map[string]any{
			{"transaction_id": txID, "category_id": st.Demo.CategoryIDs["Groceries"], "expected_version": version(tx)},
			{"transaction_id": "00000000-0000-4000-8000-000000000000", "category_id": st.Demo.CategoryIDs["Groceries"], "expected_version": 1},
			{"transaction_id": txID, "category_id": st.Demo.CategoryIDs["Dining"], "expected_version": version(tx)},
		}})
		res := f.ok(f.write("POST", "/v1/transactions/bulk-categorize", "finance-write", body))
		var statuses []string
		for _, row := range res["results"].([]any) {
			statuses = append(statuses, row.(map[string]any)["status"].(string))
		}
		if res["applied_count"] != float64(1) || strings.Join(statuses, ",") != "applied,not_found,version_conflict" {
			t.Fatalf("bulk: %v", res)
		}
	})

	t.Run("writes refused", func(t *testing.T) {
		f.t = t
		tx := f.tx("finance-read", txID)
		// finance-read lacks transactions:write, so the gateway refuses it
		// before the service's writes_enabled check (403 either way).
		r := f.write("PATCH", "/v1/transactions/"+txID, "finance-read",
			jsonBody(map[string]any{"expected_version": version(tx), "memo": "x"}))
		if r.status != 403 || (r.json["type"] != "forbidden-scope" && r.json["type"] != "writes-disabled") {
			t.Fatalf("read credential wrote: %d %s", r.status, r.body)
		}
		// The redacted grant hides location: touching it is field-hidden.
		f.write("PATCH", "/v1/transactions/"+txID, "finance-redacted",
			jsonBody(map[string]any{"expected_version": version(tx), "location": map[string]any{"city": "Oakland"}})).
			wantProblem(t, 403, "field-hidden")
		f.write("PATCH", "/v1/transactions/"+txID, "finance-redacted",
			jsonBody(map[string]any{"expected_version": version(tx), "clear_location": true})).
			wantProblem(t, 403, "field-hidden")
		// Its other fields are writable, and the answer stays redacted.
		r = f.write("PATCH", "/v1/transactions/"+txID, "finance-redacted",
			jsonBody(map[string]any{"expected_version": version(tx), "memo": "from the redacted grant"}))
		if got := f.ok(r); got["memo"] != "from the redacted grant" || !strings.Contains(string(r.body), "transaction.location") {
			t.Fatalf("redacted edit: %s", r.body)
		}
		if after := f.tx("finance-write", txID); version(after) != version(tx)+1 {
			t.Fatalf("refused writes changed the row: %v", after)
		}
	})

	t.Run("sync status", func(t *testing.T) {
		f.t = t
		r := f.call("GET", "/v1/sync-status", "finance-read", "")
		st := f.ok(r)
		for _, c := range st["connections"].([]any) {
			m := c.(map[string]any)
			if m["status"] == "login_required" && m["healthy"] != false {
				t.Errorf("failing connection healthy: %v", m)
			}
		}
	})
}
