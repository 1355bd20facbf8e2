package local_test

import (
	"context"
	"net/url"
	"reflect"
	"slices"
	"testing"

	"github.com/ledgerlane/platform/deploy/local"
)

// TestTransactionsSyncEndToEnd drives the change feed, GET
// /v1/transactions/sync, through the gateway on both stores: a sync from
// empty equals the listing; a PATCH and a bulk recategorize arrive in the
// next sync exactly as GET /v1/transactions/{id} shows them to the grant
// (which redacts transaction.location); an import's rows arrive as added;
// a grant that starts excluding an account removes its rows, and including
// it again adds them back; a tampered or foreign cursor is refused.
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

	// The grant starts excluding the checking account: its rows are
	// removed; included again, they come back.
	store := st.Finance.Store()
	g, err := store.GetGrant(context.Background(), st.Demo.GrantRedactedID)
	if err != nil {
		t.Fatal(err)
	}
	before := g
	g.ExcludedAccountIDs = append(slices.Clone(g.ExcludedAccountIDs), st.Demo.AccountIDs.Checking)
	if err := store.UpdateGrant(context.Background(), g); err != nil {
		t.Fatal(err)
	}
	_, _, removed = c.sync()
	if !slices.Contains(removed, ids[0]) {
		t.Fatalf("excluding the account removed %d rows, not %s", len(removed), ids[0])
	}
	if _, ok := c.rows[ids[0]]; ok {
		t.Fatalf("row %s of the excluded account is still in the copy", ids[0])
	}
	c.matchesListing()
	if err := store.UpdateGrant(context.Background(), before); err != nil {
		t.Fatal(err)
	}
	added, _, _ = c.sync()
	if !slices.Contains(added, ids[0]) {
		t.Fatalf("including the account again added %d rows, not %s", len(added), ids[0])
	}
	c.sameAsGet(ids[0])
	c.matchesListing()

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
