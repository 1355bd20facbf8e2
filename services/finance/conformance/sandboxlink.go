package conformance

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/ledgerlane/platform/services/finance"
	"github.com/ledgerlane/platform/services/finance/sandboxlink"
)

// testSandboxUsers: an owner's test-mode users are counted against the
// limit atomically and listed in creation order; live users and other
// owners' are neither.
func testSandboxUsers(t *testing.T, s Store) {
	ctx := context.Background()
	a, b := newID(), newID()
	must(t, s.CreateUser(ctx, finance.User{ID: newID(), OwnerAccountID: a, Mode: "live", CreatedAt: base}))
	must(t, s.CreateUser(ctx, finance.User{ID: newID(), OwnerAccountID: b, Mode: "test", CreatedAt: base}))
	first := finance.User{ID: newID(), Name: "First", OwnerAccountID: a, Mode: "test", CreatedAt: base.Add(time.Second)}
	second := finance.User{ID: newID(), Name: "Second", OwnerAccountID: a, Mode: "test", CreatedAt: base}
	must(t, s.CreateSandboxUser(ctx, first, 2))
	must(t, s.CreateSandboxUser(ctx, second, 2))
	err := s.CreateSandboxUser(ctx, finance.User{ID: newID(), OwnerAccountID: a, Mode: "test", CreatedAt: base}, 2)
	if !errors.Is(err, finance.ErrLimitReached) {
		t.Fatalf("third user: %v, want ErrLimitReached", err)
	}
	got, err := s.ListSandboxUsers(ctx, a)
	must(t, err)
	diff(t, "sandbox users", []finance.User{second, first}, got)
	if got, err := s.GetUser(ctx, first.ID); err != nil || got.Mode != "test" {
		t.Fatalf("get: %+v, %v", got, err)
	}
	if got, err := s.ListSandboxUsers(ctx, "not-a-uuid"); err != nil || len(got) != 0 {
		t.Fatalf("malformed owner: %v, %v", got, err)
	}

	// Concurrent creates never overshoot.
	c := newID()
	var wg sync.WaitGroup
	var mu sync.Mutex
	made := 0
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := s.CreateSandboxUser(ctx, finance.User{ID: newID(), OwnerAccountID: c, Mode: "test", CreatedAt: base}, 3)
			switch {
			case err == nil:
				mu.Lock()
				made++
				mu.Unlock()
			case !errors.Is(err, finance.ErrLimitReached):
				t.Errorf("concurrent create: %v", err)
			}
		}()
	}
	wg.Wait()
	if made != 3 {
		t.Fatalf("%d concurrent creates succeeded, want 3", made)
	}
}

func sandboxLinked(user string) *sandboxlink.Linked {
	conn := finance.Connection{ID: newID(), UserID: user, Provider: finance.ProviderSandbox, Institution: "Harbor Otter Bank",
		Status: finance.ConnectionActive, LastSyncedAt: &base, CreatedAt: base, UpdatedAt: base}
	checking := finance.Account{ID: newID(), UserID: user, ConnectionID: conn.ID, Name: "Checking", Type: finance.AccountDepository,
		Subtype: "checking", Currency: "USD", Balance: money("10.00", "USD"), CreatedAt: base, UpdatedAt: base}
	savings := finance.Account{ID: newID(), UserID: user, ConnectionID: conn.ID, Name: "Savings", Type: finance.AccountDepository,
		Subtype: "savings", Currency: "USD", Balance: money("5.00", "USD"), CreatedAt: base.Add(time.Second), UpdatedAt: base}
	cat := finance.Category{ID: newID(), Name: "Sandbox system " + newID()[:8], TypeTag: finance.CategoryExpense, CreatedAt: base, UpdatedAt: base}
	tx := finance.Transaction{ID: newID(), UserID: user, AccountID: checking.ID, CategoryID: cat.ID, Amount: money("-4.50", "USD"),
		Merchant: "Blue Bottle", Date: day(-1), Source: finance.SourceBankSync, ExternalRef: "sbxh_1", Version: 1, CreatedAt: base, UpdatedAt: base}
	return &sandboxlink.Linked{Connection: conn, Grant: finance.Grant{ID: newID(), UserID: user, WritesEnabled: true, Version: 1, CreatedAt: base},
		History:        sandboxlink.History{Accounts: []finance.Account{checking, savings}, Categories: []finance.Category{cat}, Transactions: []finance.Transaction{tx}},
		RecurringDueAt: base}
}

// testSandboxLinks: links round-trip, are limited per user, change by
// compare-and-swap, and a link's write lands whole or not at all.
func testSandboxLinks(t *testing.T, s Store) {
	ctx := context.Background()
	f := setup(t, s)
	owner := newID()
	waiting := sandboxlink.Link{ID: newID(), OwnerAccountID: owner, UserID: f.user, InstitutionID: "ins_quokka",
		Status: sandboxlink.StatusMFARequired, Version: 1, CreatedAt: base, UpdatedAt: base, ExpiresAt: base.Add(10 * time.Minute)}
	must(t, s.CreateLink(ctx, waiting, 3, nil))
	got, err := s.GetLink(ctx, waiting.ID)
	must(t, err)
	diff(t, "waiting link", waiting, got)
	for _, id := range []string{newID(), "nope"} {
		if _, err := s.GetLink(ctx, id); !errors.Is(err, finance.ErrNotFound) {
			t.Fatalf("get %s: %v, want ErrNotFound", id, err)
		}
	}

	// A stale version changes nothing; the current one links it, writing
	// everything with it.
	linked := waiting
	linked.Version, linked.MFAAttempts, linked.UpdatedAt = 2, 1, base.Add(time.Minute)
	w := sandboxLinked(f.user)
	linked.Status, linked.ExpiresAt, linked.ConnectionID, linked.GrantID = sandboxlink.StatusLinked, time.Time{}, w.Connection.ID, w.Grant.ID
	if err := s.UpdateLink(ctx, linked, 5, w); !errors.Is(err, finance.ErrVersionConflict) {
		t.Fatalf("stale update: %v, want ErrVersionConflict", err)
	}
	if _, err := s.GetGrant(ctx, w.Grant.ID); !errors.Is(err, finance.ErrNotFound) {
		t.Fatalf("a refused update wrote its grant: %v", err)
	}
	if err := s.UpdateLink(ctx, sandboxlink.Link{ID: newID(), Version: 2}, 1, nil); !errors.Is(err, finance.ErrNotFound) {
		t.Fatalf("update of an unknown link: %v, want ErrNotFound", err)
	}
	must(t, s.UpdateLink(ctx, linked, 1, w))
	got, err = s.GetLink(ctx, linked.ID)
	must(t, err)
	diff(t, "linked link", linked, got)
	g, err := s.GetGrant(ctx, w.Grant.ID)
	must(t, err)
	diff(t, "grant", w.Grant, g)
	accounts, err := s.ListAccounts(ctx, f.user)
	must(t, err)
	n := 0
	for _, a := range accounts {
		if a.ConnectionID == w.Connection.ID {
			n++
		}
	}
	if n != 2 {
		t.Fatalf("%d accounts on the linked connection, want 2", n)
	}
	tx, err := s.GetTransaction(ctx, f.user, w.History.Transactions[0].ID)
	must(t, err)
	if tx.CategoryID != w.History.Categories[0].ID || tx.ExternalRef != "sbxh_1" {
		t.Fatalf("row read back as %+v", tx)
	}
	if _, ok, err := s.RecurringDue(ctx, f.user); err != nil || !ok {
		t.Fatalf("the user is not due for recurring detection: %v, %v", ok, err)
	}

	// A category already held is kept; a write whose row clashes leaves
	// nothing behind, not even its connection.
	w2 := sandboxLinked(f.user)
	w2.History.Categories = append(w2.History.Categories, w.History.Categories[0])
	w2.History.Transactions[0].ID = w.History.Transactions[0].ID // taken
	clash := sandboxlink.Link{ID: newID(), OwnerAccountID: owner, UserID: f.user, InstitutionID: "ins_otter",
		Status: sandboxlink.StatusLinked, ConnectionID: w2.Connection.ID, GrantID: w2.Grant.ID, Version: 1, CreatedAt: base, UpdatedAt: base}
	if err := s.CreateLink(ctx, clash, 3, w2); err == nil {
		t.Fatal("a link whose row id is taken was written")
	}
	if _, err := s.GetLink(ctx, clash.ID); !errors.Is(err, finance.ErrNotFound) {
		t.Fatalf("the refused link is stored: %v", err)
	}
	if _, err := s.GetGrant(ctx, w2.Grant.ID); !errors.Is(err, finance.ErrNotFound) {
		t.Fatalf("the refused link's grant is stored: %v", err)
	}
	w2.History.Transactions[0].ID = newID()
	must(t, s.CreateLink(ctx, clash, 3, w2))

	// The user has three links now: a fourth is refused; another user's
	// count is its own.
	err = s.CreateLink(ctx, sandboxlink.Link{ID: newID(), OwnerAccountID: owner, UserID: f.user, InstitutionID: "ins_otter",
		Status: sandboxlink.StatusFailed, Version: 1, CreatedAt: base, UpdatedAt: base}, 2, nil)
	if !errors.Is(err, finance.ErrLimitReached) {
		t.Fatalf("link over the limit: %v, want ErrLimitReached", err)
	}
	otherLink := sandboxlink.Link{ID: newID(), OwnerAccountID: newID(), UserID: f.other, InstitutionID: "ins_otter",
		Status: sandboxlink.StatusFailed, ErrorCode: "too_many_mfa_attempts", MFAAttempts: 3, Version: 3, CreatedAt: base, UpdatedAt: base}
	must(t, s.CreateLink(ctx, otherLink, 2, nil))

	all, err := s.ListLinks(ctx, owner, "")
	must(t, err)
	if len(all) != 2 || all[0].ID > all[1].ID { // both made at base: by id
		t.Fatalf("owner's links: %+v", all)
	}
	mine, err := s.ListLinks(ctx, otherLink.OwnerAccountID, f.other)
	must(t, err)
	diff(t, "other owner's links", []sandboxlink.Link{otherLink}, mine)
	if none, err := s.ListLinks(ctx, owner, f.other); err != nil || len(none) != 0 {
		t.Fatalf("owner's links of another user: %v, %v", none, err)
	}

	// The aggregator sees the two linked connections with every account.
	lcs, err := s.LinkedConnections(ctx)
	must(t, err)
	ids := map[string]int{}
	for _, lc := range lcs {
		ids[lc.ConnectionID] = len(lc.Accounts)
	}
	diff(t, "linked connections", map[string]int{w.Connection.ID: 2, w2.Connection.ID: 2}, ids)
}
