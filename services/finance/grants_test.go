package finance_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/ledgerlane/platform/pkg/cursor"
	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/services/finance"
	"github.com/ledgerlane/platform/services/finance/events"
	"github.com/ledgerlane/platform/services/finance/memory"
	"github.com/ledgerlane/platform/services/finance/seed"
)

// grantNotes counts the Written nudges and reads the notes the writes
// stored in the outbox (in their own transaction).
type grantNotes struct {
	finance.Notifier
	store   *memory.Store
	mu      sync.Mutex
	written int
}

func (n *grantNotes) Written(context.Context, string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.written++
}

// take returns the notes stored since the last take ("kind user|grant")
// and checks one nudge came with each.
func (n *grantNotes) take(t *testing.T) []string {
	t.Helper()
	var out []string
	_, err := n.store.RelayNotes(context.Background(), now.Add(time.Hour), 100, time.Hour,
		func(_ context.Context, o events.OutboxNote) error {
			out = append(out, o.Kind+" "+o.UserID+"|"+o.GrantID)
			return nil
		}, func(int) time.Duration { return time.Second })
	if err != nil {
		t.Fatal(err)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.written != len(out) {
		t.Fatalf("%d notes stored, %d nudges", len(out), n.written)
	}
	n.written = 0
	return out
}

type grantEnv struct {
	svc   *finance.Service
	store *memory.Store
	demo  seed.DemoData
	notes *grantNotes
	owner finance.Tenant
	// strangerAccount and strangerCategory belong to another user of the
	// same tenant.
	strangerAccount, strangerCategory string
}

func newGrantEnv(t *testing.T) grantEnv {
	t.Helper()
	ctx := context.Background()
	store := memory.New()
	d, err := seed.Demo(ctx, store, tenant, now)
	if err != nil {
		t.Fatal(err)
	}
	e := grantEnv{store: store, demo: d, notes: &grantNotes{store: store},
		owner:           finance.Tenant{AccountID: tenant, Mode: "live", CredentialID: "cred-1", IdempotencyKey: "k-1"},
		strangerAccount: uuid.NewString(), strangerCategory: uuid.NewString()}
	// nopNotifier's methods for everything else: a Notifier built from
	// a service with none.
	e.notes.Notifier = finance.NewService(finance.Config{Store: store}).Notify()
	e.svc = finance.NewService(finance.Config{Store: store, Cursors: cursor.New([]byte("test-key")), Notifier: e.notes,
		Clock: func() time.Time { return now }})
	stranger := uuid.NewString()
	conn := uuid.NewString()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(store.CreateUser(ctx, finance.User{ID: stranger, Name: "Other", OwnerAccountID: tenant, CreatedAt: now}))
	must(store.CreateConnection(ctx, finance.Connection{ID: conn, UserID: stranger, Provider: finance.ProviderManual,
		Status: finance.ConnectionActive, CreatedAt: now, UpdatedAt: now}))
	must(store.CreateAccount(ctx, finance.Account{ID: e.strangerAccount, UserID: stranger, ConnectionID: conn, Name: "X",
		Type: finance.AccountDepository, Currency: "USD", Balance: finance.Money{Currency: "USD"}, CreatedAt: now, UpdatedAt: now}))
	must(store.CreateCategory(ctx, finance.Category{ID: e.strangerCategory, UserID: stranger, Name: "Mine",
		TypeTag: finance.CategoryExpense, CreatedAt: now, UpdatedAt: now}))
	return e
}

func list(s ...string) *[]string { return &s }

// TestUpdateGrantRefusals: every refusal names its field, changes nothing
// and announces nothing; another tenant's and another mode's grant are the
// same 404 as an unknown one.
func TestUpdateGrantRefusals(t *testing.T) {
	e := newGrantEnv(t)
	ctx := context.Background()
	g := e.demo.GrantWriteID
	other := e.owner
	other.AccountID = uuid.NewString()
	testMode := e.owner
	testMode.Mode = "test"
	tests := []struct {
		name  string
		who   finance.Tenant
		u     finance.GrantUpdate
		typ   problem.Type
		field string
	}{
		{"id not a uuid", e.owner, finance.GrantUpdate{ID: "g-1", ExpectedVersion: 1}, problem.InvalidInput, "id"},
		{"unknown grant", e.owner, finance.GrantUpdate{ID: uuid.NewString(), ExpectedVersion: 1}, problem.NotFound, "id"},
		{"another tenant's grant", other, finance.GrantUpdate{ID: g, ExpectedVersion: 1, WritesEnabled: new(bool)}, problem.NotFound, "id"},
		{"a live grant to a test key", testMode, finance.GrantUpdate{ID: g, ExpectedVersion: 1, WritesEnabled: new(bool)}, problem.NotFound, "id"},
		{"no expected_version", e.owner, finance.GrantUpdate{ID: g, WritesEnabled: new(bool)}, problem.InvalidInput, "expected_version"},
		{"stale version", e.owner, finance.GrantUpdate{ID: g, ExpectedVersion: 2, WritesEnabled: new(bool)}, problem.VersionConflict, "expected_version"},
		{"unknown field id", e.owner, finance.GrantUpdate{ID: g, ExpectedVersion: 1, RedactedFields: list("transaction.memo")},
			problem.InvalidInput, "redacted_fields"},
		{"account id not a uuid", e.owner, finance.GrantUpdate{ID: g, ExpectedVersion: 1, ExcludedAccountIDs: list("checking")},
			problem.InvalidInput, "excluded_account_ids"},
		{"unknown account", e.owner, finance.GrantUpdate{ID: g, ExpectedVersion: 1, ExcludedAccountIDs: list(e.demo.AccountIDs.Checking, uuid.NewString())},
			problem.InvalidInput, "excluded_account_ids"},
		{"another user's account", e.owner, finance.GrantUpdate{ID: g, ExpectedVersion: 1, ExcludedAccountIDs: list(e.strangerAccount)},
			problem.InvalidInput, "excluded_account_ids"},
		{"unknown category", e.owner, finance.GrantUpdate{ID: g, ExpectedVersion: 1, ExcludedCategoryIDs: list(uuid.NewString())},
			problem.InvalidInput, "excluded_category_ids"},
		{"another user's category", e.owner, finance.GrantUpdate{ID: g, ExpectedVersion: 1, ExcludedCategoryIDs: list(e.strangerCategory)},
			problem.InvalidInput, "excluded_category_ids"},
	}
	before, err := e.store.GetGrant(ctx, g)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.svc.UpdateGrantSettings(ctx, tc.who, tc.u)
			wantProblem(t, err, tc.typ, tc.field)
			after, err := e.store.GetGrant(ctx, g)
			if err != nil {
				t.Fatal(err)
			}
			if after.Version != before.Version || after.WritesEnabled != before.WritesEnabled || len(after.ExcludedAccountIDs) != 0 {
				t.Fatalf("a refused update changed the grant: %+v", after)
			}
			if n := e.notes.take(t); len(n) != 0 {
				t.Fatalf("a refused update announced %v", n)
			}
		})
	}
	for _, who := range []finance.Tenant{other, testMode} {
		if _, err := e.svc.TenantGrant(ctx, who, g); err == nil {
			t.Fatalf("%+v read the grant", who)
		} else {
			wantProblem(t, err, problem.NotFound, "id")
		}
	}
}

// TestUpdateGrantChangesTheFeed: excluding an account takes its rows out
// of the grant's listing, the next sync removes exactly them, and the
// change is announced for that grant once; including it again adds them
// back. writes_enabled alone moves the version but not the feed.
func TestUpdateGrantChangesTheFeed(t *testing.T) {
	e := newGrantEnv(t)
	ctx := context.Background()
	c := finance.Caller{UserID: e.demo.UserID, GrantID: e.demo.GrantWriteID, OwnerAccountID: tenant}
	drain := func(cur string) (added, removed []string, next string) {
		t.Helper()
		for {
			p, err := e.svc.SyncTransactions(ctx, c, finance.SyncQuery{Cursor: cur, Count: size(finance.MaxSyncCount)})
			if err != nil {
				t.Fatal(err)
			}
			for _, x := range slices.Concat(p.Added, p.Modified) {
				added = append(added, x.ID)
			}
			removed = append(removed, p.Removed...)
			cur = p.NextCursor
			if !p.HasMore {
				return added, removed, cur
			}
		}
	}
	_, _, cur := drain("")
	checking := func() []string {
		var ids []string
		page, err := e.svc.ListTransactions(ctx, c, finance.TransactionQuery{AccountID: e.demo.AccountIDs.Checking,
			PageQuery: finance.PageQuery{PageSize: size(finance.MaxPageSize)}})
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range page.Data {
			ids = append(ids, x.ID)
		}
		return ids
	}
	rows := checking()
	if len(rows) == 0 {
		t.Fatal("no checking rows")
	}

	upper := finance.GrantUpdate{ID: e.demo.GrantWriteID, ExpectedVersion: 1,
		// Upper case is read as the same id; a repeat collapses.
		ExcludedAccountIDs: list(strings.ToUpper(e.demo.AccountIDs.Checking), e.demo.AccountIDs.Checking)}
	res, err := e.svc.UpdateGrantSettings(ctx, e.owner, upper)
	if err != nil {
		t.Fatal(err)
	}
	if res.Data.Version != 2 || !slices.Equal(res.Data.ExcludedAccountIDs, []string{e.demo.AccountIDs.Checking}) ||
		!res.Data.UpdatedAt.Equal(now) || res.Replayed {
		t.Fatalf("updated: %+v", res)
	}
	if n := e.notes.take(t); !slices.Equal(n, []string{finance.NoteGrant + " " + e.demo.UserID + "|" + e.demo.GrantWriteID}) {
		t.Fatalf("announced %v", n)
	}
	if got := checking(); len(got) != 0 {
		t.Fatalf("the excluded account still lists %d rows", len(got))
	}
	added, removed, cur := drain(cur)
	slices.Sort(removed)
	slices.Sort(rows)
	// The listing's page holds at most MaxPageSize rows; every one of
	// them must be among the removed, and nothing else may move.
	if len(added) != 0 || len(removed) < len(rows) || !isSubset(rows, removed) {
		t.Fatalf("after excluding: %d added, %d removed of %d listed", len(added), len(removed), len(rows))
	}

	// The retry of that write (its answer lost) is answered as it was.
	again, err := e.svc.UpdateGrantSettings(ctx, e.owner, upper)
	if err != nil || !again.Replayed || again.Data.Version != 2 {
		t.Fatalf("retry: %+v %v", again, err)
	}
	// The same key with other content is a real conflict.
	diff := upper
	diff.ExcludedAccountIDs = list(e.demo.AccountIDs.Savings)
	_, err = e.svc.UpdateGrantSettings(ctx, e.owner, diff)
	wantProblem(t, err, problem.VersionConflict, "expected_version")

	// Nothing differs: no new version, nothing announced.
	same, err := e.svc.UpdateGrantSettings(ctx, e.owner, finance.GrantUpdate{ID: e.demo.GrantWriteID, ExpectedVersion: 2,
		ExcludedAccountIDs: list(e.demo.AccountIDs.Checking)})
	if err != nil || same.Data.Version != 2 {
		t.Fatalf("no-op: %+v %v", same, err)
	}
	// writes_enabled alone: a new version, the feed does not move.
	off := false
	w, err := e.svc.UpdateGrantSettings(ctx, e.owner, finance.GrantUpdate{ID: e.demo.GrantWriteID, ExpectedVersion: 2, WritesEnabled: &off})
	if err != nil || w.Data.Version != 3 || w.Data.WritesEnabled {
		t.Fatalf("writes off: %+v %v", w, err)
	}
	if n := e.notes.take(t); len(n) != 0 {
		t.Fatalf("announced %v for no feed change", n)
	}
	if a, r, _ := drain(cur); len(a)+len(r) != 0 {
		t.Fatalf("writes_enabled moved the feed: %d added, %d removed", len(a), len(r))
	}

	// Included again ([] clears): the rows come back as added.
	back, err := e.svc.UpdateGrantSettings(ctx, e.owner, finance.GrantUpdate{ID: e.demo.GrantWriteID, ExpectedVersion: 3,
		ExcludedAccountIDs: list()})
	if err != nil || back.Data.Version != 4 || len(back.Data.ExcludedAccountIDs) != 0 {
		t.Fatalf("include again: %+v %v", back, err)
	}
	added, removed, _ = drain(cur)
	if len(removed) != 0 || !isSubset(rows, added) {
		t.Fatalf("after including: %d added, %d removed", len(added), len(removed))
	}
	if n := e.notes.take(t); len(n) != 1 {
		t.Fatalf("announced %v", n)
	}
	got, err := e.svc.TenantGrant(ctx, e.owner, e.demo.GrantWriteID)
	if err != nil || got.Version != 4 {
		t.Fatalf("read back: %+v %v", got, err)
	}
}

func isSubset(small, big []string) bool {
	for _, x := range small {
		if !slices.Contains(big, x) {
			return false
		}
	}
	return true
}
