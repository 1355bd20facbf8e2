package local_test

import (
	"context"
	"fmt"
	"net/url"
	"reflect"
	"slices"
	"testing"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/ledgerlane/platform/deploy/local"
	"github.com/ledgerlane/platform/services/finance"
	"github.com/ledgerlane/platform/services/metering"
)

// TestTransactionsSyncEndToEnd drives the change feed, GET
// /v1/transactions/sync, through the gateway on both stores: a sync from
// empty equals the listing; a PATCH and a bulk recategorize arrive in the
// next sync exactly as GET /v1/transactions/{id} shows them to the grant
// (which redacts transaction.location); an import's rows arrive as added;
// a split's slices arrive as added; a grant that starts excluding an
// account (PATCH /v1/finance-grants/{id}) removes its rows, an import
// meanwhile arrives, and including it again adds them back; after each the
// replayed copy equals a fresh listing. The grant route's refusals
// (grantRefusals) and the feed's (a tampered or foreign cursor) follow.
func TestTransactionsSyncEndToEnd(t *testing.T) {
	for _, withDB := range []bool{false, true} {
		name := "memory"
		if withDB {
			name = "postgres"
		}
		t.Run(name, func(t *testing.T) {
			// No sandbox ticks and no recurring job: every change in the
			// feed is one the test made. The scale plan's burst covers the
			// requests.
			transactionsSyncEndToEnd(t, stack(t, withDB, func(c *local.Config) {
				c.SandboxInterval, c.RecurringInterval, c.DemoPlan = -1, -1, "scale"
			}))
		})
	}
}

// feedCopy is a client's copy of the transactions, built from the feed.
type feedCopy struct {
	f      *fin
	key    string
	rows   map[string]map[string]any
	cursor string
}

// sync fetches pages until has_more is false, applies them, and returns the
// ids of the last call's changes by kind.
func (c *feedCopy) sync() (added, modified, removed []string) {
	c.f.t.Helper()
	for {
		path := "/v1/transactions/sync?count=500"
		if c.cursor != "" {
			path += "&cursor=" + url.QueryEscape(c.cursor)
		}
		r := c.f.call("GET", path, c.key, "")
		if r.status != 200 {
			c.f.t.Fatalf("sync: %d %s", r.status, r.body)
		}
		for kind, ids := range map[string]*[]string{"added": &added, "modified": &modified} {
			list, _ := r.json[kind].([]any)
			for _, x := range list {
				row := x.(map[string]any)
				c.rows[row["id"].(string)] = row
				*ids = append(*ids, row["id"].(string))
			}
		}
		list, _ := r.json["removed"].([]any)
		for _, x := range list {
			delete(c.rows, x.(string))
			removed = append(removed, x.(string))
		}
		c.cursor, _ = r.json["next_cursor"].(string)
		if c.cursor == "" {
			c.f.t.Fatalf("sync without next_cursor: %s", r.body)
		}
		if more, _ := r.json["has_more"].(bool); !more {
			return added, modified, removed
		}
	}
}

// matchesListing checks the copy against every page of GET /v1/transactions.
func (c *feedCopy) matchesListing() {
	c.f.t.Helper()
	want := map[string]map[string]any{}
	cursor := ""
	for {
		path := "/v1/transactions?page_size=200"
		if cursor != "" {
			path += "&cursor=" + url.QueryEscape(cursor)
		}
		r := c.f.call("GET", path, c.key, "")
		if r.status != 200 {
			c.f.t.Fatalf("list: %d %s", r.status, r.body)
		}
		for _, x := range r.json["data"].([]any) {
			row := x.(map[string]any)
			want[row["id"].(string)] = row
		}
		p := r.json["pagination"].(map[string]any)
		if more, _ := p["has_more"].(bool); !more {
			break
		}
		cursor = p["next_cursor"].(string)
	}
	if len(want) != len(c.rows) {
		c.f.t.Fatalf("the copy holds %d rows, the listing %d", len(c.rows), len(want))
	}
	for id, row := range want {
		if !reflect.DeepEqual(c.rows[id], row) {
			c.f.t.Fatalf("row %s:\ncopy    %v\nlisting %v", id, c.rows[id], row)
		}
	}
}

// sameAsGet checks that the copy holds row id exactly as GET shows it.
func (c *feedCopy) sameAsGet(id string) {
	c.f.t.Helper()
	if got, want := c.rows[id], c.f.tx(c.key, id); !reflect.DeepEqual(got, want) {
		c.f.t.Fatalf("row %s:\nfeed %v\nGET  %v", id, got, want)
	}
}

func transactionsSyncEndToEnd(t *testing.T, st *local.Stack) {
	keys := map[string]string{}
	for _, k := range st.Keys {
		keys[k.Name] = k.Key
	}
	f := &fin{client: client{t: t, base: st.URL, keys: keys}}
	c := &feedCopy{f: f, key: "finance-redacted", rows: map[string]map[string]any{}}

	added, modified, removed := c.sync()
	if len(added) == 0 || len(modified) != 0 || len(removed) != 0 {
		t.Fatalf("first sync: %d added, %d modified, %d removed", len(added), len(modified), len(removed))
	}
	c.matchesListing()
	if _, m, r := c.sync(); len(m)+len(r) != 0 {
		t.Fatalf("a sync with nothing changed: %v %v", m, r)
	}

	// Rows of the checking account, as the redacting grant lists them.
	list := f.call("GET", "/v1/transactions?page_size=3&account_id="+st.Demo.AccountIDs.Checking, c.key, "")
	var ids []string
	for _, x := range list.json["data"].([]any) {
		ids = append(ids, x.(map[string]any)["id"].(string))
	}
	if len(ids) != 3 {
		t.Fatalf("checking rows: %s", list.body)
	}

	// A PATCH through another grant of the same user.
	tx := f.tx("finance-write", ids[0])
	f.ok(f.write("PATCH", "/v1/transactions/"+ids[0], "finance-write",
		jsonBody(map[string]any{"expected_version": version(tx), "memo": "synced memo"})))
	added, modified, removed = c.sync()
	if len(added) != 0 || !slices.Equal(modified, ids[:1]) || len(removed) != 0 {
		t.Fatalf("after a PATCH: added %v, modified %v, removed %v", added, modified, removed)
	}
	if c.rows[ids[0]]["memo"] != "synced memo" {
		t.Fatalf("patched row in the feed: %v", c.rows[ids[0]])
	}
	c.sameAsGet(ids[0])

	// A bulk recategorize of two rows, each into a category it is not in
	// (a row already in the category is applied without a write).
	var items []map[string]any
	for _, id := range ids[1:] {
		tx := f.tx("finance-write", id)
		cat := st.Demo.CategoryIDs["Groceries"]
		if tx["category_id"] == cat {
			cat = st.Demo.CategoryIDs["Dining"]
		}
		items = append(items, map[string]any{"transaction_id": id, "category_id": cat, "expected_version": version(tx)})
	}
	res := f.ok(f.write("POST", "/v1/transactions/bulk-categorize", "finance-write", jsonBody(map[string]any{"items": items})))
	if res["applied_count"] != float64(2) {
		t.Fatalf("bulk: %v", res)
	}
	_, modified, _ = c.sync()
	slices.Sort(modified)
	want := slices.Clone(ids[1:])
	slices.Sort(want)
	if !slices.Equal(modified, want) {
		t.Fatalf("after a bulk recategorize: modified %v, want %v", modified, want)
	}
	for _, id := range ids {
		c.sameAsGet(id)
	}
	c.matchesListing()

	// An import of a statement file: its 7 entries arrive as added, each as
	// GET shows it.
	imp := f.ok(f.write("POST", "/v1/imports", "finance-write", jsonBody(map[string]any{
		"account_id": st.Demo.AccountIDs.EuroChecking, "message": sharedSample(t, "mt/php-mt940/Ing_sample")})))
	if imp["added"] != float64(7) {
		t.Fatalf("import: %v", imp)
	}
	added, modified, removed = c.sync()
	if len(added) != 7 || len(modified)+len(removed) != 0 {
		t.Fatalf("after an import: added %v, modified %v, removed %v", added, modified, removed)
	}
	for _, id := range added {
		c.sameAsGet(id)
	}
	c.matchesListing()

	// A split: two slices of a checking row, written by the store as a
	// bank sync would (no public route splits a row), arrive as added.
	store := st.Finance.Store()
	parent, err := store.GetTransaction(context.Background(), st.Demo.UserID, ids[0])
	if err != nil {
		t.Fatal(err)
	}
	half := parent.Amount
	half.Amount = parent.Amount.Amount.Div(decimal.NewFromInt(2)).Round(2)
	rest := parent.Amount
	rest.Amount = parent.Amount.Amount.Sub(half.Amount)
	var slices2 []finance.Transaction
	for i, amt := range []finance.Money{half, rest} {
		x := parent
		x.ID, x.SplitParentID, x.Amount, x.Version = uuid.NewString(), parent.ID, amt, 1
		x.ExternalRef, x.LastWrite, x.Memo = "", nil, fmt.Sprintf("slice %d", i+1)
		slices2 = append(slices2, x)
	}
	if err := store.InsertTransactions(context.Background(), slices2); err != nil {
		t.Fatal(err)
	}
	added, modified, removed = c.sync()
	slices.Sort(added)
	wantSlices := []string{slices2[0].ID, slices2[1].ID}
	slices.Sort(wantSlices)
	if !slices.Equal(added, wantSlices) || len(modified)+len(removed) != 0 {
		t.Fatalf("after a split: added %v, modified %v, removed %v", added, modified, removed)
	}
	for _, id := range wantSlices {
		c.sameAsGet(id)
	}
	c.matchesListing()

	// The grant starts excluding the checking account, through PATCH
	// /v1/finance-grants/{id} with the tenant's key: its rows are removed;
	// included again, they come back.
	grantPath := "/v1/finance-grants/" + st.Demo.GrantRedactedID
	g := f.call("GET", grantPath, "conversion-all", "")
	if g.status != 200 || g.json["id"] != st.Demo.GrantRedactedID || g.json["user_id"] != st.Demo.UserID {
		t.Fatalf("get grant: %d %s", g.status, g.body)
	}
	before := g.json["excluded_account_ids"].([]any)
	excluded := append(slices.Clone(before), st.Demo.AccountIDs.Checking)
	g = f.write("PATCH", grantPath, "conversion-all", jsonBody(map[string]any{
		"expected_version": g.json["version"], "excluded_account_ids": excluded}))
	if g.status != 200 || len(g.json["excluded_account_ids"].([]any)) != len(excluded) {
		t.Fatalf("exclude: %d %s", g.status, g.body)
	}
	_, _, removed = c.sync()
	if !slices.Contains(removed, ids[0]) || !slices.Contains(removed, slices2[0].ID) {
		t.Fatalf("excluding the account removed %d rows, not %s and its slices", len(removed), ids[0])
	}
	if _, ok := c.rows[ids[0]]; ok {
		t.Fatalf("row %s of the excluded account is still in the copy", ids[0])
	}
	c.matchesListing()

	// An import while the account is excluded: the euro rows arrive.
	imp = f.ok(f.write("POST", "/v1/imports", "finance-write", jsonBody(map[string]any{
		"account_id": st.Demo.AccountIDs.EuroChecking, "message": sharedSample(t, "mx/genkgo/camt053.v2.minimal.xml")})))
	added, modified, removed = c.sync()
	if len(added) != int(imp["added"].(float64)) || len(modified)+len(removed) != 0 {
		t.Fatalf("after the second import (%v): added %d, modified %v, removed %v", imp, len(added), modified, removed)
	}
	c.matchesListing()

	g = f.write("PATCH", grantPath, "conversion-all", jsonBody(map[string]any{
		"expected_version": g.json["version"], "excluded_account_ids": before}))
	if g.status != 200 {
		t.Fatalf("include again: %d %s", g.status, g.body)
	}
	added, _, _ = c.sync()
	if !slices.Contains(added, ids[0]) {
		t.Fatalf("including the account again added %d rows, not %s", len(added), ids[0])
	}
	c.sameAsGet(ids[0])
	c.matchesListing()
	grantRefusals(t, st, f, grantPath, g)

	// Refusals: count out of bounds, a tampered cursor, a cursor of another
	// grant.
	f.call("GET", "/v1/transactions/sync?count=501", c.key, "").wantProblem(t, 400, "invalid-input")
	f.call("GET", "/v1/transactions/sync?cursor="+url.QueryEscape("x"+c.cursor[1:]), c.key, "").wantProblem(t, 400, "invalid-input")
	r := f.call("GET", "/v1/transactions/sync?cursor="+url.QueryEscape(c.cursor), "finance-write", "")
	r.wantProblem(t, 400, "invalid-input")
	if r.json["field"] != "cursor" {
		t.Fatalf("foreign cursor: %s", r.body)
	}
}

// grantRefusals: the grant route refuses other tenants, other modes,
// finance credentials and keys without the scope, unknown ids in the
// exclusion lists (naming the field), a stale version and a missing
// Idempotency-Key; none of them changes the grant (last is its latest
// answer).
func grantRefusals(t *testing.T, st *local.Stack, f *fin, path string, last resp) {
	t.Helper()
	ctx := context.Background()
	svc := st.Metering.Service()
	scopes := append(metering.DefaultConversionScopes(), metering.ScopeFinanceGrantsManage)
	issue := func(name, account, mode string) {
		secret, _, err := svc.IssueCredential(ctx, metering.IssueParams{AccountID: account, Name: name,
			Kind: metering.KindAPIKey, Surface: metering.SurfaceConversion, Mode: mode, Scopes: scopes})
		if err != nil {
			t.Fatal(err)
		}
		f.keys[name] = secret
	}
	other, err := svc.CreateAccount(ctx, "Other tenant", metering.PlanGrowth, metering.USD)
	if err != nil {
		t.Fatal(err)
	}
	issue("grants-other-tenant", other.ID, metering.ModeLive)
	issue("grants-test-mode", st.Demo.OwnerAccountID, metering.ModeTest)

	v := last.json["version"]
	patch := func(key string, body map[string]any) resp {
		return f.write("PATCH", path, key, jsonBody(body))
	}
	exclude := map[string]any{"expected_version": v, "excluded_account_ids": []string{st.Demo.AccountIDs.Savings}}
	f.call("GET", path, "grants-other-tenant", "").wantProblem(t, 404, "not-found")
	patch("grants-other-tenant", exclude).wantProblem(t, 404, "not-found")
	f.call("GET", path, "grants-test-mode", "").wantProblem(t, 404, "not-found")
	patch("grants-test-mode", exclude).wantProblem(t, 404, "not-found")
	f.call("GET", "/v1/finance-grants/"+uuid.NewString(), "conversion-all", "").wantProblem(t, 404, "not-found")
	f.call("GET", path, "conversion-live", "").wantProblem(t, 403, "forbidden-scope")
	f.call("GET", path, "finance-redacted", "").wantProblem(t, 403, "forbidden-scope")
	patch("finance-redacted", exclude).wantProblem(t, 403, "forbidden-scope")
	for field, body := range map[string]map[string]any{
		"excluded_account_ids":  {"expected_version": v, "excluded_account_ids": []string{uuid.NewString()}},
		"excluded_category_ids": {"expected_version": v, "excluded_category_ids": []string{uuid.NewString()}},
		"redacted_fields":       {"expected_version": v, "redacted_fields": []string{"transaction.memo"}},
		"expected_version":      {"excluded_account_ids": []string{}},
	} {
		r := patch("conversion-all", body)
		r.wantProblem(t, 400, "invalid-input")
		if r.json["field"] != field {
			t.Fatalf("refusal names %v, want %s: %s", r.json["field"], field, r.body)
		}
	}
	r := patch("conversion-all", map[string]any{"expected_version": v.(float64) - 1, "writes_enabled": false})
	r.wantProblem(t, 409, "version-conflict")
	f.call("PATCH", path, "conversion-all", jsonBody(exclude), "Content-Type", "application/json").
		wantProblem(t, 400, "invalid-input")
	if now := f.call("GET", path, "conversion-all", ""); now.status != 200 || !reflect.DeepEqual(now.json, last.json) {
		t.Fatalf("a refusal changed the grant: %s, was %s", now.body, last.body)
	}
}
