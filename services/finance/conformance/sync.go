package conformance

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/ledgerlane/platform/pkg/cursor"
	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/services/finance"
	"github.com/ledgerlane/platform/services/finance/banksync"
)

// The change feed (finance/sync.go) over a store: the property the issue
// asks for, a feed replayed into a copy equals a fresh listing as the
// grant sees it, whatever writes, grant changes and page boundaries
// interleave; and the same with writers racing the reads.

type feedWorld struct {
	s       Store
	svc     *finance.Service
	caller  finance.Caller
	grant   finance.Grant
	conn    string
	accts   []string
	cats    []string // custom: cats[0] a parent, cats[1] its child, the rest top level
	clock   *time.Time
	rows    map[string]finance.Transaction // what the store holds, by id
	copy    map[string]finance.Transaction // the client's replay of the feed
	cursor  string
	pending bool // a drain is under way (has_more was true)
	// trace is every write and page, printed when a replay differs from
	// the listing: ids are random, so a failure is read, not re-run.
	trace []string
}

func newFeedWorld(t *testing.T, s Store) *feedWorld {
	t.Helper()
	ctx := context.Background()
	tenant := newID()
	w := &feedWorld{s: s, conn: newID(), rows: map[string]finance.Transaction{}, copy: map[string]finance.Transaction{}}
	at := base
	w.clock = &at
	user := newID()
	must(t, s.CreateUser(ctx, finance.User{ID: user, OwnerAccountID: tenant, CreatedAt: base}))
	must(t, s.CreateConnection(ctx, finance.Connection{ID: w.conn, UserID: user, Provider: finance.ProviderPlaid,
		Institution: "Chase", Status: finance.ConnectionActive, CreatedAt: base, UpdatedAt: base}))
	for i := range 3 {
		id := newID()
		must(t, s.CreateAccount(ctx, finance.Account{ID: id, UserID: user, ConnectionID: w.conn, Name: fmt.Sprintf("A%d", i),
			Currency: "USD", Balance: money("0", "USD"), CreatedAt: base.Add(time.Duration(i) * time.Second), UpdatedAt: base}))
		w.accts = append(w.accts, id)
	}
	for i := range 4 {
		c := finance.Category{ID: newID(), UserID: user, Name: fmt.Sprintf("C%d", i), TypeTag: finance.CategoryExpense,
			CreatedAt: base, UpdatedAt: base}
		if i == 1 {
			c.ParentID = w.cats[0]
		}
		must(t, s.CreateCategory(ctx, c))
		w.cats = append(w.cats, c.ID)
	}
	w.grant = finance.Grant{ID: newID(), UserID: user, WritesEnabled: true, Version: 1, CreatedAt: base}
	must(t, s.CreateGrant(ctx, w.grant))
	w.caller = finance.Caller{UserID: user, GrantID: w.grant.ID, OwnerAccountID: tenant}
	w.svc = finance.NewService(finance.Config{Store: s, Cursors: cursor.New([]byte("feed-key")), Clock: func() time.Time { return *w.clock }})
	return w
}

func (w *feedWorld) newRow(r *rand.Rand, parent string) finance.Transaction {
	t := finance.Transaction{ID: newID(), UserID: w.caller.UserID, AccountID: w.accts[r.IntN(len(w.accts))],
		Amount: money(fmt.Sprintf("-%d.%02d", r.IntN(90)+1, r.IntN(100)), "USD"), Merchant: "Shop " + fmt.Sprint(r.IntN(9)),
		Date: day(-r.IntN(40)), Source: finance.SourceManual, Version: 1, CreatedAt: base, UpdatedAt: base,
		Location: &finance.Location{City: "Portland", State: "OR"}}
	if n := r.IntN(len(w.cats) + 1); n < len(w.cats) {
		t.CategoryID = w.cats[n]
	}
	if parent != "" {
		p := w.rows[parent]
		t.SplitParentID, t.AccountID, t.Date = parent, p.AccountID, p.Date
	}
	return t
}

// pick is a random row the store holds, "" when none.
func (w *feedWorld) pick(r *rand.Rand) string {
	ids := make([]string, 0, len(w.rows))
	for id := range w.rows {
		ids = append(ids, id)
	}
	if len(ids) == 0 {
		return ""
	}
	slices.Sort(ids)
	return ids[r.IntN(len(ids))]
}

// write makes one random write through the store.
func (w *feedWorld) write(t *testing.T, r *rand.Rand) {
	t.Helper()
	ctx := context.Background()
	switch op := r.IntN(10); {
	case op < 3: // create, sometimes a few at once (an import, a sync)
		var batch []finance.Transaction
		for range r.IntN(3) + 1 {
			batch = append(batch, w.newRow(r, ""))
		}
		must(t, w.s.InsertTransactions(ctx, batch))
		for _, x := range batch {
			w.trace = append(w.trace, fmt.Sprintf("insert %s acc %s cat %s", x.ID[:4], x.AccountID[:4], x.CategoryID))
		}
		for _, x := range batch {
			w.rows[x.ID] = x
		}
	case op < 5: // PATCH-like update: memo, sometimes the category
		id := w.pick(r)
		if id == "" {
			return
		}
		x, err := w.s.GetTransaction(ctx, w.caller.UserID, id)
		must(t, err)
		x.Memo = fmt.Sprintf("memo %d", r.IntN(1000))
		if r.IntN(2) == 0 {
			x.CategoryID = w.cats[r.IntN(len(w.cats))]
		}
		x.Version++
		must(t, w.s.UpdateTransaction(ctx, x, x.Version-1))
		w.trace = append(w.trace, fmt.Sprintf("update %s cat %s", x.ID[:4], x.CategoryID))
		w.rows[id] = x
	case op < 6: // delete (a bank withdrawal; slices go with their parent)
		id := w.pick(r)
		if id == "" {
			return
		}
		must(t, w.s.ApplySync(ctx, banksync.Write{Deletes: []string{id}, UserID: w.caller.UserID,
			Connection: banksync.ConnectionState{ID: w.conn, Status: finance.ConnectionActive, UpdatedAt: base}}))
		delete(w.rows, id)
		w.trace = append(w.trace, "delete "+id[:4])
		for sid, x := range w.rows {
			if x.SplitParentID == id {
				delete(w.rows, sid)
			}
		}
	case op < 7: // split: a slice under a top-level row
		id := w.pick(r)
		if id == "" || w.rows[id].SplitParentID != "" {
			return
		}
		x := w.newRow(r, id)
		must(t, w.s.InsertTransactions(ctx, []finance.Transaction{x}))
		w.trace = append(w.trace, fmt.Sprintf("split %s of %s cat %s", x.ID[:4], id[:4], x.CategoryID))
		w.rows[x.ID] = x
	case op < 8: // bulk recategorize: several rows into one category
		cat := w.cats[r.IntN(len(w.cats))]
		for range r.IntN(4) + 1 {
			id := w.pick(r)
			if id == "" {
				return
			}
			x, err := w.s.GetTransaction(ctx, w.caller.UserID, id)
			must(t, err)
			x.CategoryID = cat
			x.Version++
			must(t, w.s.UpdateTransaction(ctx, x, x.Version-1))
			w.trace = append(w.trace, fmt.Sprintf("recat %s cat %s", x.ID[:4], x.CategoryID))
			w.rows[id] = x
		}
	case op < 9: // the grant's settings change
		g := w.grant
		g.ExcludedAccountIDs, g.ExcludedCategoryIDs, g.RedactedFields = nil, nil, nil
		if r.IntN(2) == 0 {
			g.ExcludedAccountIDs = []string{w.accts[r.IntN(len(w.accts))]}
		}
		if r.IntN(2) == 0 {
			g.ExcludedCategoryIDs = []string{w.cats[[]int{0, 2}[r.IntN(2)]]} // a parent hides its child too
		}
		if r.IntN(3) == 0 {
			g.RedactedFields = []string{finance.FieldTransactionLocation}
		}
		g.Version++
		must(t, w.s.UpdateGrant(ctx, g, g.Version-1))
		w.trace = append(w.trace, fmt.Sprintf("grant %v %v %v", g.ExcludedAccountIDs, g.ExcludedCategoryIDs, g.RedactedFields))
		w.grant = g
	default: // the category tree changes: cats[3] moves under cats[0] or back
		c, err := w.s.GetCategory(ctx, w.caller.UserID, w.cats[3])
		must(t, err)
		c.ParentID = ""
		if r.IntN(2) == 0 {
			c.ParentID = w.cats[0]
		}
		must(t, w.s.UpdateCategory(ctx, c))
		w.trace = append(w.trace, "parent of cats[3] = "+c.ParentID)
	}
}

// syncPage asks for one page and applies it to the copy.
func (w *feedWorld) syncPage(t *testing.T, count int32) finance.SyncPage {
	t.Helper()
	page, err := w.svc.SyncTransactions(context.Background(), w.caller, finance.SyncQuery{Cursor: w.cursor, Count: &count})
	must(t, err)
	if n := len(page.Added) + len(page.Modified) + len(page.Removed); n > int(count) {
		t.Fatalf("a page of count %d holds %d changes", count, n)
	}
	seen := map[string]bool{}
	for _, x := range slices.Concat(page.Added, page.Modified) {
		if seen[x.ID] {
			t.Fatalf("row %s twice on one page", x.ID)
		}
		seen[x.ID] = true
		w.copy[x.ID] = x
	}
	for _, id := range page.Removed {
		if seen[id] {
			t.Fatalf("row %s added and removed on one page", id)
		}
		delete(w.copy, id)
	}
	w.cursor, w.pending = page.NextCursor, page.HasMore
	var ids []string
	for _, x := range page.Added {
		ids = append(ids, "+"+x.ID[:4])
	}
	for _, x := range page.Modified {
		ids = append(ids, "~"+x.ID[:4])
	}
	for _, id := range page.Removed {
		ids = append(ids, "-"+id[:4])
	}
	body, _, _ := strings.Cut(page.NextCursor, ".")
	raw, _ := base64.RawURLEncoding.DecodeString(body)
	w.trace = append(w.trace, fmt.Sprintf("page %v more=%v %s", ids, page.HasMore, raw))
	return page
}

// drain syncs until has_more is false and checks the copy against a fresh
// listing under the grant.
func (w *feedWorld) drain(t *testing.T, r *rand.Rand) {
	t.Helper()
	for i := 0; ; i++ {
		if i > 10000 {
			t.Fatal("the feed never ends")
		}
		if page := w.syncPage(t, int32(r.IntN(7)+1)); !page.HasMore {
			break
		}
	}
	want := w.listing(t)
	if diff := gocmp.Diff(want, w.copy); diff != "" {
		for _, l := range w.trace {
			t.Log(l)
		}
		t.Fatalf("the replayed feed differs from the listing (-listing +copy):\n%s", diff)
	}
}

func (w *feedWorld) listing(t *testing.T) map[string]finance.Transaction {
	t.Helper()
	out := map[string]finance.Transaction{}
	size := int32(finance.MaxPageSize)
	q := finance.TransactionQuery{PageQuery: finance.PageQuery{PageSize: &size}}
	for {
		page, err := w.svc.ListTransactions(context.Background(), w.caller, q)
		must(t, err)
		for _, x := range page.Data {
			out[x.ID] = x
		}
		if !page.HasMore {
			return out
		}
		q.Cursor = page.NextCursor
	}
}

func testSyncFeedProperty(t *testing.T, s Store) {
	seeds := []uint64{1, 2, 3, 4, 5, 6}
	if testing.Short() {
		seeds = seeds[:2]
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 33))
			w := newFeedWorld(t, s)
			for range 20 { // some history before the first sync
				w.write(t, r)
			}
			for step := range 400 {
				switch n := r.IntN(10); {
				case n < 6:
					w.write(t, r)
				case n < 9:
					w.syncPage(t, int32(r.IntN(7)+1))
				default:
					w.drain(t, r)
				}
				if step%100 == 99 {
					w.drain(t, r)
				}
			}
			w.drain(t, r)
			// A client starting afresh reaches the same state.
			w.copy, w.cursor = map[string]finance.Transaction{}, ""
			w.drain(t, r)
		})
	}
}

// testSyncFeedRacingWrites runs writers while a client syncs page by page,
// then drains once they stop: nothing may be missing or stale.
func testSyncFeedRacingWrites(t *testing.T, s Store) {
	w := newFeedWorld(t, s)
	r := rand.New(rand.NewPCG(7, 7))
	ctx := context.Background()
	var wg sync.WaitGroup
	stop := make(chan struct{})
	errs := make(chan error, 4)
	for g := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			wr := rand.New(rand.NewPCG(uint64(g), 99))
			var mine []string
			for i := range 300 {
				select {
				case <-stop:
					return
				case <-time.After(200 * time.Microsecond):
				}
				x := finance.Transaction{ID: newID(), UserID: w.caller.UserID, AccountID: w.accts[wr.IntN(3)],
					Amount: money("-1.00", "USD"), Date: day(-wr.IntN(9)), Source: finance.SourceManual, Version: 1,
					CreatedAt: base, UpdatedAt: base}
				var err error
				switch {
				case len(mine) > 0 && i%3 == 1:
					var cur finance.Transaction
					if cur, err = s.GetTransaction(ctx, w.caller.UserID, mine[wr.IntN(len(mine))]); err == nil {
						cur.Memo, cur.Version = fmt.Sprint(i), cur.Version+1
						err = s.UpdateTransaction(ctx, cur, cur.Version-1)
					}
				case len(mine) > 0 && i%5 == 4:
					err = s.ApplySync(ctx, banksync.Write{Deletes: mine[:1], UserID: w.caller.UserID,
						Connection: banksync.ConnectionState{ID: w.conn, Status: finance.ConnectionActive, UpdatedAt: base}})
					mine = mine[1:]
				default:
					err = s.InsertTransactions(ctx, []finance.Transaction{x})
					mine = append(mine, x.ID)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for range 150 {
		w.syncPage(t, int32(r.IntN(5)+1))
		time.Sleep(time.Millisecond) // let the writers move between pages
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	w.drain(t, r)
}

// testSyncFeedCursors: the cursor is bound to the grant and route, count is
// bounded, and a cursor past the retention is sync-cursor-expired.
func testSyncFeedCursors(t *testing.T, s Store) {
	ctx := context.Background()
	w := newFeedWorld(t, s)
	r := rand.New(rand.NewPCG(1, 1))
	for range 5 {
		w.write(t, r)
	}
	w.drain(t, r)
	for _, n := range []int32{0, 501, -1} {
		_, err := w.svc.SyncTransactions(ctx, w.caller, finance.SyncQuery{Count: &n})
		wantFeedProblem(t, err, problem.InvalidInput, "count")
	}
	other := finance.Grant{ID: newID(), UserID: w.caller.UserID, CreatedAt: base}
	must(t, s.CreateGrant(ctx, other))
	oc := w.caller
	oc.GrantID = other.ID
	_, err := w.svc.SyncTransactions(ctx, oc, finance.SyncQuery{Cursor: w.cursor})
	wantFeedProblem(t, err, problem.InvalidInput, "cursor")
	_, err = w.svc.SyncTransactions(ctx, w.caller, finance.SyncQuery{Cursor: w.cursor[:len(w.cursor)-2] + "xx"})
	wantFeedProblem(t, err, problem.InvalidInput, "cursor")
	// Within the retention the cursor works; past it, it has expired.
	*w.clock = w.clock.Add(finance.SyncRetention - time.Second)
	if _, err := w.svc.SyncTransactions(ctx, w.caller, finance.SyncQuery{Cursor: w.cursor}); err != nil {
		t.Fatal(err)
	}
	*w.clock = w.clock.Add(2 * time.Second)
	_, err = w.svc.SyncTransactions(ctx, w.caller, finance.SyncQuery{Cursor: w.cursor})
	wantFeedProblem(t, err, problem.SyncCursorExpired, "cursor")
	// An empty page keeps the position; the first call needs no cursor.
	page, err := w.svc.SyncTransactions(ctx, w.caller, finance.SyncQuery{})
	must(t, err)
	if n := len(w.listing(t)); len(page.Added) != n || page.NextCursor == "" {
		t.Fatalf("first page: %d added of %d rows, cursor %q", len(page.Added), n, page.NextCursor)
	}
}

func wantFeedProblem(t *testing.T, err error, typ problem.Type, field string) {
	t.Helper()
	var p *problem.Problem
	if !errors.As(err, &p) || p.Type != typ || p.Field != field {
		t.Fatalf("want %s naming %q, got %v", typ, field, err)
	}
}

// testSyncFeedHeldVersions: the client holds a row in a category its grant
// shows; before the next sync the row moves into a hidden category and is
// then deleted (or edited again). The client's version is no longer the
// row's latest below the cursor's next position, yet the row must still be
// removed: the category log of rows and of tombstones says it may be held.
func testSyncFeedHeldVersions(t *testing.T, s Store) {
	ctx := context.Background()
	w := newFeedWorld(t, s)
	r := rand.New(rand.NewPCG(3, 3))
	g := w.grant
	g.ExcludedCategoryIDs = []string{w.cats[2]}
	g.Version++
	must(t, s.UpdateGrant(ctx, g, g.Version-1))
	w.grant = g
	var rows []finance.Transaction
	for range 2 {
		x := w.newRow(r, "")
		x.CategoryID = w.cats[3]
		rows = append(rows, x)
		w.rows[x.ID] = x
	}
	must(t, s.InsertTransactions(ctx, rows))
	w.drain(t, r)
	for i, x := range rows {
		x, err := s.GetTransaction(ctx, w.caller.UserID, x.ID)
		must(t, err)
		x.CategoryID, x.Version = w.cats[2], x.Version+1
		must(t, s.UpdateTransaction(ctx, x, x.Version-1))
		if i == 0 {
			must(t, s.ApplySync(ctx, banksync.Write{Deletes: []string{x.ID}, UserID: w.caller.UserID,
				Connection: banksync.ConnectionState{ID: w.conn, Status: finance.ConnectionActive, UpdatedAt: base}}))
			continue
		}
		x.Memo, x.Version = "again", x.Version+1
		must(t, s.UpdateTransaction(ctx, x, x.Version-1))
	}
	page := w.syncPage(t, 10)
	slices.Sort(page.Removed)
	want := []string{rows[0].ID, rows[1].ID}
	slices.Sort(want)
	if !slices.Equal(page.Removed, want) || len(page.Added)+len(page.Modified) != 0 {
		t.Fatalf("removed %v, want %v (added %d, modified %d)", page.Removed, want, len(page.Added), len(page.Modified))
	}
}
