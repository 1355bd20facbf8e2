// Package conformance is the behaviour every finance.Store must share. Each
// implementation's tests call Run with a constructor for an empty store, so
// the in-memory store used in service tests cannot drift from PostgreSQL.
package conformance

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/ledgerlane/platform/services/finance"
	"github.com/ledgerlane/platform/services/finance/recurring"
	"github.com/ledgerlane/platform/services/finance/stores"
)

// Store is the whole finance store; each part's cases are in the file of
// its name (debt.go: the debt subdomain's).
type Store = stores.Store

// Run runs the suite; newStore must return an empty store for every call.
func Run(t *testing.T, newStore func(t *testing.T) Store) {
	tests := []struct {
		name string
		run  func(t *testing.T, s Store)
	}{
		{"Users", testUsers},
		{"Grants", testGrants},
		{"Connections", testConnections},
		{"Accounts", testAccounts},
		{"Categories", testCategories},
		{"RecurringRules", testRecurringRules},
		{"SaveRecurringStreams", testSaveRecurringStreams}, // writes_budgets.go
		{"TransactionRoundTrip", testTransactionRoundTrip},
		{"DecimalRoundTrip", testDecimalRoundTrip},
		{"InsertTransactionsIsAtomic", testInsertAtomic},
		{"TransactionFilters", testTransactionFilters},
		{"TransactionKeysetPagination", testTransactionKeyset},
		{"UpdateTransactionCompareAndSwap", testUpdateTransaction},
		{"SplitParent", testSplitParent},
		{"CustomCategories", testCustomCategories},
		{"DeleteCategory", testDeleteCategory},
		{"Search", testSearch},
		{"ApplySync", testApplySync},
		{"ConnectionSync", testConnectionSync},
		// budgets.go
		{"Budgets", testBudgets},
		{"ThresholdAlerts", testThresholdAlerts},
		{"ProgressSnapshots", testProgressSnapshots},
		{"BudgetRows", testBudgetRows},
		{"Goals", testGoals},
		{"GoalWrites", testGoalWrites}, // writes_budgets.go
		{"BudgetGroupsCompareAndSwap", testBudgetGroupsCAS},
		{"WriteMarks", testWriteMarks},   // write_marks.go
		{"Liabilities", testLiabilities}, // debt.go
		{"Holdings", testHoldings},       // holding.go
		{"FXRates", testFXRates},         // networth.go
		{"NetWorthSnapshots", testNetWorthSnapshots},
		{"DerivedHistoryProperty", testDerivedHistoryProperty}, // history.go
		{"UsersWithoutSnapshot", testUsersWithoutSnapshot},     // networth.go
		{"RecurringDue", testRecurringDue},                     // recurring_due.go
		{"FlowTotals", testFlowTotals},                         // flows.go
		{"Imports", testImports},                               // imports.go
		{"ConcurrentImports", testConcurrentImports},
		{"ConcurrentWrites", testConcurrentWrites}, // concurrent.go
		{"SyncFeedProperty", testSyncFeedProperty}, // sync.go
		{"SyncFeedRacingWrites", testSyncFeedRacingWrites},
		{"SyncFeedCursors", testSyncFeedCursors},
		{"SyncFeedHeldVersions", testSyncFeedHeldVersions},
		{"SandboxUsers", testSandboxUsers}, // sandboxlink.go
		{"SandboxLinks", testSandboxLinks},
		{"Outbox", testOutbox}, // outbox.go
		{"OutboxWithWrites", testOutboxWithWrites},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, newStore(t)) })
	}
}

// base has microseconds only: stores keep no more.
var base = time.Date(2025, 3, 14, 9, 26, 53, 123456000, time.UTC)

func day(n int) time.Time { return finance.Day(base).AddDate(0, 0, n) }

func ptr[T any](v T) *T { return &v }

func money(s, currency string) finance.Money {
	return finance.Money{Amount: decimal.RequireFromString(s), Currency: currency}
}

func newID() string { return uuid.NewString() }

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func diff(t *testing.T, what string, want, got any) {
	t.Helper()
	if d := gocmp.Diff(want, got); d != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", what, d)
	}
}

// fixture is two users, each with a connection and an account, so every
// read can be checked for isolation.
type fixture struct {
	user, other       string
	conn, otherConn   string
	account, account2 string
	otherAccount      string
}

func setup(t *testing.T, s Store) fixture {
	t.Helper()
	ctx := context.Background()
	f := fixture{user: newID(), other: newID(), conn: newID(), otherConn: newID(),
		account: newID(), account2: newID(), otherAccount: newID()}
	must(t, s.CreateUser(ctx, finance.User{ID: f.user, Name: "Ada", CreatedAt: base}))
	must(t, s.CreateUser(ctx, finance.User{ID: f.other, CreatedAt: base}))
	for _, c := range []struct{ id, user string }{{f.conn, f.user}, {f.otherConn, f.other}} {
		must(t, s.CreateConnection(ctx, finance.Connection{ID: c.id, UserID: c.user, Provider: finance.ProviderPlaid,
			Status: finance.ConnectionActive, CreatedAt: base, UpdatedAt: base}))
	}
	for i, a := range []struct{ id, user, conn string }{{f.account, f.user, f.conn}, {f.account2, f.user, f.conn}, {f.otherAccount, f.other, f.otherConn}} {
		must(t, s.CreateAccount(ctx, finance.Account{ID: a.id, UserID: a.user, ConnectionID: a.conn,
			Name: fmt.Sprintf("Account %d", i), Currency: "USD", Balance: money("0", "USD"),
			CreatedAt: base.Add(time.Duration(i) * time.Second), UpdatedAt: base}))
	}
	return f
}

func testUsers(t *testing.T, s Store) {
	ctx := context.Background()
	owned := finance.User{ID: newID(), Name: "Grace", OwnerAccountID: newID(), Mode: "test", CreatedAt: base}
	// A user stored before owners existed reads back with none; without a
	// mode, as live.
	bare := finance.User{ID: newID(), CreatedAt: base}
	for _, u := range []finance.User{owned, bare} {
		must(t, s.CreateUser(ctx, u))
	}
	bare.Mode = "live"
	if err := s.CreateUser(ctx, finance.User{ID: owned.ID, CreatedAt: base}); !errors.Is(err, finance.ErrAlreadyExists) {
		t.Fatalf("duplicate user: want ErrAlreadyExists, got %v", err)
	}
	tests := []struct {
		name    string
		id      string
		want    finance.User
		wantErr error
	}{
		{"with owner", owned.ID, owned, nil},
		{"without owner or name", bare.ID, bare, nil},
		{"missing", newID(), finance.User{}, finance.ErrNotFound},
		{"not a uuid", "user-1", finance.User{}, finance.ErrNotFound},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := s.GetUser(ctx, tc.id)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("GetUser: want %v, got %v", tc.wantErr, err)
			}
			diff(t, "user", tc.want, got)
		})
	}
}

func testGrants(t *testing.T, s Store) {
	ctx := context.Background()
	f := setup(t, s)
	full := finance.Grant{ID: newID(), UserID: f.user,
		RedactedFields:      []string{finance.FieldTransactionLocation, finance.FieldConnectionInstitution},
		ExcludedAccountIDs:  []string{f.account2},
		ExcludedCategoryIDs: []string{newID(), newID()},
		WritesEnabled:       true, Version: 3, CreatedAt: base, UpdatedAt: base.Add(time.Hour),
		LastWrite: &finance.WriteMark{Key: "k", Content: "c", Version: 3}}
	bare := finance.Grant{ID: newID(), UserID: f.user, CreatedAt: base}
	for _, g := range []finance.Grant{full, bare} {
		must(t, s.CreateGrant(ctx, g))
	}
	bare.Version = 1 // a zero version is stored as 1
	if err := s.CreateGrant(ctx, bare); !errors.Is(err, finance.ErrAlreadyExists) {
		t.Fatalf("duplicate grant: want ErrAlreadyExists, got %v", err)
	}
	tests := []struct {
		name    string
		id      string
		want    finance.Grant
		wantErr error
	}{
		{"full", full.ID, full, nil},
		{"empty lists read back nil", bare.ID, bare, nil},
		{"missing", newID(), finance.Grant{}, finance.ErrNotFound},
		{"not a uuid", "grant-1", finance.Grant{}, finance.ErrNotFound},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := s.GetGrant(ctx, tc.id)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			diff(t, "grant", tc.want, got)
		})
	} // ListGrants (the finance events): the user's grants, oldest first,
	// as GetGrant reads them; none for a user without any.
	t.Run("list", func(t *testing.T) {
		gs, err := s.ListGrants(ctx, f.user)
		must(t, err)
		found := 0
		for i, g := range gs {
			if g.UserID != f.user || i > 0 && g.CreatedAt.Before(gs[i-1].CreatedAt) {
				t.Fatalf("grant %d: %+v", i, g)
			}
			for _, w := range []finance.Grant{full, bare} {
				if g.ID == w.ID {
					diff(t, "listed grant", w, g)
					found++
				}
			}
		}
		if found != 2 {
			t.Fatalf("listed %d of the 2 grants: %+v", found, gs)
		}
		if none, err := s.ListGrants(ctx, newID()); err != nil || len(none) != 0 {
			t.Fatalf("unknown user: %v %+v", err, none)
		}
	})
	// UpdateGrant is a compare-and-swap on the version: the whole
	// settings, version, updated_at and mark replaced, created_at kept; a
	// stale version is ErrVersionConflict, another user's or an unknown
	// grant ErrNotFound, and neither writes anything.
	t.Run("update", func(t *testing.T) {
		g := bare
		g.RedactedFields = []string{finance.FieldTransactionLocation}
		g.ExcludedAccountIDs = []string{f.account2}
		g.ExcludedCategoryIDs = []string{newID()}
		g.WritesEnabled = true
		g.Version = 2
		g.UpdatedAt = base.Add(2 * time.Hour)
		g.LastWrite = &finance.WriteMark{Key: "k2", Content: "c2", Version: 2}
		tests := []struct {
			name     string
			g        finance.Grant
			expected int64
			wantErr  error
		}{
			{"stale version", g, 2, finance.ErrVersionConflict},
			{"another user", func() finance.Grant { x := g; x.UserID = newID(); return x }(), 1, finance.ErrNotFound},
			{"unknown grant", func() finance.Grant { x := g; x.ID = newID(); return x }(), 1, finance.ErrNotFound},
			{"not a uuid", func() finance.Grant { x := g; x.ID = "grant-1"; return x }(), 1, finance.ErrNotFound},
		}
		for _, tc := range tests {
			if err := s.UpdateGrant(ctx, tc.g, tc.expected); !errors.Is(err, tc.wantErr) {
				t.Fatalf("%s: err = %v, want %v", tc.name, err, tc.wantErr)
			}
			got, err := s.GetGrant(ctx, bare.ID)
			must(t, err)
			diff(t, tc.name+": grant after a refused update", bare, got)
		}
		must(t, s.UpdateGrant(ctx, g, 1))
		got, err := s.GetGrant(ctx, bare.ID)
		must(t, err)
		diff(t, "updated grant", g, got)
		g.CreatedAt = base.Add(time.Hour) // not written
		g.RedactedFields, g.ExcludedAccountIDs, g.ExcludedCategoryIDs, g.LastWrite = nil, nil, nil, nil
		g.Version = 3
		must(t, s.UpdateGrant(ctx, g, 2))
		got, err = s.GetGrant(ctx, bare.ID)
		must(t, err)
		g.CreatedAt = base
		diff(t, "cleared grant", g, got)
	})
}

func testConnections(t *testing.T, s Store) {
	ctx := context.Background()
	f := setup(t, s) // f.conn is the user's first connection, created at base
	synced := base.Add(-time.Hour)
	var want []finance.Connection
	first := finance.Connection{ID: f.conn, UserID: f.user, Provider: finance.ProviderPlaid,
		Status: finance.ConnectionActive, CreatedAt: base, UpdatedAt: base}
	want = append(want, first)
	for i := range 5 {
		c := finance.Connection{ID: newID(), UserID: f.user, Provider: finance.ProviderQuiltt, SourceAggregator: "mx",
			Institution: fmt.Sprintf("Bank %d", i), InstitutionLogoURL: "https://logos.example/bank.png",
			Status: finance.ConnectionLoginRequired, LastSyncedAt: &synced, ErrorCode: "login_required",
			ErrorMessage: "sign in again", CreatedAt: base.Add(time.Duration(1+i/2) * time.Minute), UpdatedAt: base}
		must(t, s.CreateConnection(ctx, c))
		want = append(want, c)
	}
	// Two rows share each creation time above: the id breaks the tie.
	slices.SortFunc(want, func(a, b finance.Connection) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	if err := s.CreateConnection(ctx, first); !errors.Is(err, finance.ErrAlreadyExists) {
		t.Fatalf("duplicate connection: want ErrAlreadyExists, got %v", err)
	}

	all, err := s.ListConnections(ctx, f.user, nil, 0)
	must(t, err)
	diff(t, "all connections", want, all)

	for _, limit := range []int{1, 2, 4, 6, 10} {
		t.Run(fmt.Sprintf("pages of %d", limit), func(t *testing.T) {
			var got []finance.Connection
			var after *finance.ConnectionPosition
			for range 10 {
				page, err := s.ListConnections(ctx, f.user, after, limit)
				must(t, err)
				if len(page) > limit {
					t.Fatalf("page of %d rows over limit %d", len(page), limit)
				}
				got = append(got, page...)
				if len(page) < limit {
					break
				}
				last := page[len(page)-1]
				after = &finance.ConnectionPosition{CreatedAt: last.CreatedAt, ID: last.ID}
			}
			diff(t, "paged connections", want, got)
		})
	}
	other, err := s.ListConnections(ctx, f.other, nil, 0)
	must(t, err)
	if len(other) != 1 || other[0].ID != f.otherConn {
		t.Fatalf("other user's connections = %+v", other)
	}
}

func testAccounts(t *testing.T, s Store) {
	ctx := context.Background()
	f := setup(t, s)
	asOf := base.Add(-30 * time.Minute)
	full := finance.Account{ID: newID(), UserID: f.user, ConnectionID: f.conn, Name: "Rewards Visa",
		Nickname: "travel card", Type: finance.AccountCredit, Subtype: "credit card", Mask: "4421", Currency: "USD",
		Balance: money("1234.56", "USD"), AvailableBalance: ptr(money("8765.44", "USD")), BalanceAsOf: &asOf,
		IsHidden: true, Provider: finance.ProviderPlaid, InstitutionName: "Elan Financial Services",
		InstitutionLogoURL: "https://logos.example/elan.png", CreatedAt: base.Add(time.Hour), UpdatedAt: base.Add(2 * time.Hour)}
	must(t, s.CreateAccount(ctx, full))
	if err := s.CreateAccount(ctx, full); !errors.Is(err, finance.ErrAlreadyExists) {
		t.Fatalf("duplicate account: want ErrAlreadyExists, got %v", err)
	}
	bare, err := s.GetAccount(ctx, f.user, f.account)
	must(t, err)
	if bare.AvailableBalance != nil || bare.BalanceAsOf != nil || bare.InstitutionName != "" {
		t.Errorf("unset optional fields read back set: %+v", bare)
	}

	tests := []struct {
		name     string
		user, id string
		want     *finance.Account
	}{
		{"every field", f.user, full.ID, &full},
		{"other user's account", f.other, full.ID, nil},
		{"missing", f.user, newID(), nil},
		{"not a uuid", f.user, "acct", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := s.GetAccount(ctx, tc.user, tc.id)
			if tc.want == nil {
				if !errors.Is(err, finance.ErrNotFound) {
					t.Fatalf("want ErrNotFound, got %v", err)
				}
				return
			}
			must(t, err)
			diff(t, "account", *tc.want, got)
		})
	}

	list, err := s.ListAccounts(ctx, f.user)
	must(t, err)
	var ids []string
	for _, a := range list {
		ids = append(ids, a.ID)
	}
	diff(t, "account order", []string{f.account, f.account2, full.ID}, ids)
	otherList, err := s.ListAccounts(ctx, f.other)
	must(t, err)
	if len(otherList) != 1 || otherList[0].ID != f.otherAccount {
		t.Fatalf("other user's accounts = %+v", otherList)
	}
}

func testCategories(t *testing.T, s Store) {
	ctx := context.Background()
	f := setup(t, s)
	food := finance.Category{ID: newID(), Name: "Food", Icon: "restaurant", Color: "#FF7043",
		TypeTag: finance.CategoryExpense, SortOrder: 2, CreatedAt: base, UpdatedAt: base}
	income := finance.Category{ID: newID(), Name: "Income", Icon: "payments", Color: "#43A047",
		TypeTag: finance.CategoryIncome, SortOrder: 1, CreatedAt: base, UpdatedAt: base}
	coffee := finance.Category{ID: newID(), ParentID: food.ID, Name: "Coffee", Icon: "emoji:☕", Color: "#6D4C41",
		TypeTag: finance.CategoryExpense, SortOrder: 2, CreatedAt: base, UpdatedAt: base}
	mine := finance.Category{ID: newID(), UserID: f.user, ParentID: food.ID, Name: "Bakery", SortOrder: 2,
		CreatedAt: base, UpdatedAt: base}
	theirs := finance.Category{ID: newID(), UserID: f.other, Name: "Theirs", SortOrder: 0, CreatedAt: base, UpdatedAt: base}
	for _, c := range []finance.Category{food, income, coffee, mine, theirs} {
		must(t, s.CreateCategory(ctx, c))
	}
	if err := s.CreateCategory(ctx, food); !errors.Is(err, finance.ErrAlreadyExists) {
		t.Fatalf("duplicate category: want ErrAlreadyExists, got %v", err)
	}
	tests := []struct {
		name string
		user string
		want []finance.Category
	}{
		{"system and own, by sort order then name", f.user, []finance.Category{income, mine, coffee, food}},
		{"other user sees own custom only", f.other, []finance.Category{theirs, income, coffee, food}},
		{"unknown user sees system only", newID(), []finance.Category{income, coffee, food}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := s.ListCategories(ctx, tc.user)
			must(t, err)
			diff(t, "categories", tc.want, got)
		})
	}
}

// fullTransaction sets every field.
func fullTransaction(f fixture, categoryID string) finance.Transaction {
	posted := base.Add(-20 * time.Hour)
	return finance.Transaction{
		ID: newID(), UserID: f.user, AccountID: f.account, CategoryID: categoryID,
		Amount: money("-42.17", "USD"), Merchant: "Blue Bottle Coffee", DisplayName: "Blue Bottle",
		Description: "BLUE BOTTLE COFFEE #12 OAKLAND CA", Date: day(-1), PostedAt: &posted, IsPending: false,
		Source: finance.SourceBankSync, PaymentChannel: "in store", TransferPairID: newID(),
		ExternalRef: "txn_8f2c", Tags: []string{"coffee", "work"}, CheckNumber: "1042", Memo: "team coffee",
		Location:                &finance.Location{Street: "300 Webster St", City: "Oakland", State: "CA", PostalCode: "94607", Country: "US"},
		ProviderAmount:          ptr(money("-42.10", "USD")),
		ProviderMerchantName:    ptr("BLUE BOTTLE"),
		ProviderTransactionDate: ptr(day(-2)),
		ProviderDescription:     ptr("BLUE BOTTLE COFFEE"),
		ProviderMemo:            ptr(""), // captured, and empty: not the same as nil
		Version:                 3, OwnedByUser: []string{"amount", "merchant"},
		CreatedAt: base.Add(-20 * time.Hour), UpdatedAt: base,
	}
}

func testTransactionRoundTrip(t *testing.T, s Store) {
	ctx := context.Background()
	f := setup(t, s)
	cat := finance.Category{ID: newID(), Name: "Coffee", CreatedAt: base, UpdatedAt: base}
	must(t, s.CreateCategory(ctx, cat))
	rule := recurring.Rule{ID: newID(), UserID: f.user, ExpectedAmount: money("-5", "USD"),
		Frequency: finance.FrequencyWeekly, StreamType: recurring.StreamOutflow, NextExpectedDate: day(3),
		CreatedAt: base, UpdatedAt: base}
	must(t, s.CreateRecurringRule(ctx, rule))

	full := fullTransaction(f, cat.ID)
	full.RecurringRuleID = rule.ID
	parent := finance.Transaction{ID: newID(), UserID: f.user, AccountID: f.account, Amount: money("-100", "USD"),
		Date: day(0), Source: finance.SourceManual, Version: 1, CreatedAt: base, UpdatedAt: base}
	// A slice listed before its parent: the batch must still go in.
	slice := finance.Transaction{ID: newID(), UserID: f.user, AccountID: f.account, Amount: money("-60", "USD"),
		Date: day(0), Source: finance.SourceManual, SplitParentID: parent.ID, Version: 1, IsPending: true,
		CreatedAt: base, UpdatedAt: base}
	emptyLoc := finance.Transaction{ID: newID(), UserID: f.user, AccountID: f.account, Amount: money("1", "EUR"),
		Date: day(0), Source: finance.SourceImport, Location: &finance.Location{}, Version: 1,
		CreatedAt: base, UpdatedAt: base}
	must(t, s.InsertTransactions(ctx, []finance.Transaction{full, slice, parent, emptyLoc}))

	wantEmptyLoc := emptyLoc
	wantEmptyLoc.Location = nil
	tests := []struct {
		name     string
		user, id string
		want     *finance.Transaction
	}{
		{"every field", f.user, full.ID, &full},
		{"bare manual row", f.user, parent.ID, &parent},
		{"split slice", f.user, slice.ID, &slice},
		{"empty location reads back as none", f.user, emptyLoc.ID, &wantEmptyLoc},
		{"other user's row", f.other, full.ID, nil},
		{"missing", f.user, newID(), nil},
		{"not a uuid", f.user, "tx-1", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := s.GetTransaction(ctx, tc.user, tc.id)
			if tc.want == nil {
				if !errors.Is(err, finance.ErrNotFound) {
					t.Fatalf("want ErrNotFound, got %v", err)
				}
				return
			}
			must(t, err)
			diff(t, "transaction", *tc.want, got)
		})
	}
}

func testDecimalRoundTrip(t *testing.T, s Store) {
	ctx := context.Background()
	f := setup(t, s)
	for _, amount := range []string{"1234567.89", "-0.01", "0", "10.50", "-98765432109876.54321", "0.000001", "1000"} {
		t.Run(amount, func(t *testing.T) {
			tx := finance.Transaction{ID: newID(), UserID: f.user, AccountID: f.account,
				Amount: money(amount, "USD"), ProviderAmount: ptr(money(amount, "EUR")),
				Date: day(0), Source: finance.SourceManual, Version: 1, CreatedAt: base, UpdatedAt: base}
			must(t, s.InsertTransactions(ctx, []finance.Transaction{tx}))
			got, err := s.GetTransaction(ctx, f.user, tx.ID)
			must(t, err)
			for _, m := range []finance.Money{got.Amount, *got.ProviderAmount} {
				if !m.Amount.Equal(tx.Amount.Amount) || m.Amount.Exponent() != tx.Amount.Amount.Exponent() {
					t.Errorf("amount %s read back as %s (exponent %d)", amount, m.Amount.String(), m.Amount.Exponent())
				}
			}
			if got.Amount.Currency != "USD" || got.ProviderAmount.Currency != "EUR" {
				t.Errorf("currencies = %s, %s", got.Amount.Currency, got.ProviderAmount.Currency)
			}
		})
	}
}

func testInsertAtomic(t *testing.T, s Store) {
	ctx := context.Background()
	f := setup(t, s)
	row := func() finance.Transaction {
		return finance.Transaction{ID: newID(), UserID: f.user, AccountID: f.account, Amount: money("-1", "USD"),
			Date: day(0), Source: finance.SourceManual, Version: 1, CreatedAt: base, UpdatedAt: base}
	}
	existing := row()
	must(t, s.InsertTransactions(ctx, []finance.Transaction{existing}))
	fresh, dup := row(), row()
	tests := []struct {
		name  string
		batch []finance.Transaction
	}{
		{"clashes with a stored row", []finance.Transaction{fresh, existing}},
		{"repeats an id within the batch", []finance.Transaction{fresh, dup, dup}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := s.InsertTransactions(ctx, tc.batch); !errors.Is(err, finance.ErrAlreadyExists) {
				t.Fatalf("want ErrAlreadyExists, got %v", err)
			}
			if _, err := s.GetTransaction(ctx, f.user, fresh.ID); !errors.Is(err, finance.ErrNotFound) {
				t.Fatalf("a row of the failed batch was kept: %v", err)
			}
		})
	}
	must(t, s.InsertTransactions(ctx, nil))
}

func testTransactionFilters(t *testing.T, s Store) {
	ctx := context.Background()
	f := setup(t, s)
	catA := finance.Category{ID: newID(), Name: "A", CreatedAt: base, UpdatedAt: base}
	catB := finance.Category{ID: newID(), Name: "B", CreatedAt: base, UpdatedAt: base}
	must(t, s.CreateCategory(ctx, catA))
	must(t, s.CreateCategory(ctx, catB))

	type row struct {
		key      string
		account  string
		category string
		date     int
		pending  bool
		source   string
	}
	rows := []row{
		{"a1", f.account, catA.ID, -10, false, finance.SourceBankSync},
		{"a2", f.account, catA.ID, -5, false, finance.SourceBankSync},
		{"a3", f.account, catB.ID, -5, false, finance.SourceManual},
		{"a4", f.account, "", -3, false, finance.SourceImport},
		{"a5", f.account, catB.ID, -1, true, finance.SourceBankSync},
		{"b1", f.account2, catA.ID, -7, false, finance.SourceBankSync},
		{"b2", f.account2, "", -2, true, finance.SourceBankSync},
		{"b3", f.account2, catB.ID, 0, false, finance.SourceManual},
		{"b4", f.account2, catA.ID, -5, false, finance.SourceImport},
	}
	ids := map[string]string{}
	byID := map[string]finance.Transaction{}
	var batch []finance.Transaction
	for _, r := range rows {
		tx := finance.Transaction{ID: newID(), UserID: f.user, AccountID: r.account, CategoryID: r.category,
			Amount: money("-1", "USD"), Date: day(r.date), IsPending: r.pending, Source: r.source, Version: 1,
			CreatedAt: base, UpdatedAt: base}
		ids[r.key] = tx.ID
		byID[tx.ID] = tx
		batch = append(batch, tx)
	}
	// The other user's row matches every filter below but must never show.
	batch = append(batch, finance.Transaction{ID: newID(), UserID: f.other, AccountID: f.otherAccount,
		CategoryID: catA.ID, Amount: money("-1", "USD"), Date: day(-5), Source: finance.SourceBankSync,
		Version: 1, CreatedAt: base, UpdatedAt: base})
	must(t, s.InsertTransactions(ctx, batch))

	tests := []struct {
		name   string
		filter finance.TransactionFilter
		want   []string
	}{
		{"no filter", finance.TransactionFilter{}, []string{"a1", "a2", "a3", "a4", "a5", "b1", "b2", "b3", "b4"}},
		{"account", finance.TransactionFilter{AccountID: f.account2}, []string{"b1", "b2", "b3", "b4"}},
		{"category", finance.TransactionFilter{CategoryID: catA.ID}, []string{"a1", "a2", "b1", "b4"}},
		{"start date inclusive", finance.TransactionFilter{StartDate: day(-3)}, []string{"a4", "a5", "b2", "b3"}},
		{"end date inclusive", finance.TransactionFilter{EndDate: day(-5)}, []string{"a1", "a2", "a3", "b1", "b4"}},
		{"date range", finance.TransactionFilter{StartDate: day(-5), EndDate: day(-5)}, []string{"a2", "a3", "b4"}},
		{"pending", finance.TransactionFilter{Pending: ptr(true)}, []string{"a5", "b2"}},
		{"posted", finance.TransactionFilter{Pending: ptr(false)}, []string{"a1", "a2", "a3", "a4", "b1", "b3", "b4"}},
		{"source manual", finance.TransactionFilter{Source: finance.SourceManual}, []string{"a3", "b3"}},
		{"source import", finance.TransactionFilter{Source: finance.SourceImport}, []string{"a4", "b4"}},
		{"uncategorized", finance.TransactionFilter{Uncategorized: true}, []string{"a4", "b2"}},
		{"exclude account", finance.TransactionFilter{ExcludeAccountIDs: []string{f.account}}, []string{"b1", "b2", "b3", "b4"}},
		{"exclude category keeps uncategorized", finance.TransactionFilter{ExcludeCategoryIDs: []string{catA.ID, catB.ID}}, []string{"a4", "b2"}},
		{"exclusions ignore ids that are not uuids", finance.TransactionFilter{ExcludeAccountIDs: []string{"x"}, ExcludeCategoryIDs: []string{"y"}},
			[]string{"a1", "a2", "a3", "a4", "a5", "b1", "b2", "b3", "b4"}},
		{"account id that is not a uuid", finance.TransactionFilter{AccountID: "nope"}, nil},
		{"combined", finance.TransactionFilter{ExcludeCategoryIDs: []string{catB.ID}, AccountID: f.account,
			StartDate: day(-6), Pending: ptr(false)}, []string{"a2", "a4"}},
		{"contradictory", finance.TransactionFilter{Uncategorized: true, CategoryID: catA.ID}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var want []string
			for _, k := range tc.want {
				want = append(want, ids[k])
			}
			slices.SortFunc(want, func(a, b string) int {
				return cmp.Or(byID[b].Date.Compare(byID[a].Date), cmp.Compare(b, a))
			})
			got, err := s.ListTransactions(ctx, f.user, tc.filter, nil, 0)
			must(t, err)
			diff(t, "ids", want, txIDs(got))

			// The same answer a page of two at a time.
			var paged []string
			var after *finance.TxPosition
			for range 20 {
				page, err := s.ListTransactions(ctx, f.user, tc.filter, after, 2)
				must(t, err)
				paged = append(paged, txIDs(page)...)
				if len(page) < 2 {
					break
				}
				after = &finance.TxPosition{Date: page[1].Date, ID: page[1].ID}
			}
			diff(t, "paged ids", want, paged)
		})
	}
}

func txIDs(txs []finance.Transaction) []string {
	var out []string
	for _, t := range txs {
		out = append(out, t.ID)
	}
	return out
}

// testTransactionKeyset pages through rows that share dates while new rows
// arrive between pages, and checks that nothing is repeated or skipped.
func testTransactionKeyset(t *testing.T, s Store) {
	ctx := context.Background()
	f := setup(t, s)
	mk := func(date int) finance.Transaction {
		return finance.Transaction{ID: newID(), UserID: f.user, AccountID: f.account, Amount: money("-1.00", "USD"),
			Date: day(date), Source: finance.SourceBankSync, Version: 1, CreatedAt: base, UpdatedAt: base}
	}
	all := map[string]finance.Transaction{}
	var initial []finance.Transaction
	for i := range 30 {
		tx := mk(-(i % 6)) // six dates, five rows on each
		initial = append(initial, tx)
		all[tx.ID] = tx
	}
	must(t, s.InsertTransactions(ctx, initial))

	const limit = 7
	var (
		seen     = map[string]bool{}
		got      []finance.Transaction
		expected = map[string]bool{}
		after    *finance.TxPosition
	)
	for id := range all {
		expected[id] = true
	}
	sortsAfter := func(tx finance.Transaction, p finance.TxPosition) bool {
		return tx.Date.Before(p.Date) || (tx.Date.Equal(p.Date) && tx.ID < p.ID)
	}
	for page := 0; page < 20; page++ {
		rows, err := s.ListTransactions(ctx, f.user, finance.TransactionFilter{}, after, limit)
		must(t, err)
		for _, r := range rows {
			if seen[r.ID] {
				t.Fatalf("page %d repeats %s", page, r.ID)
			}
			seen[r.ID] = true
		}
		got = append(got, rows...)
		if len(rows) < limit {
			break
		}
		last := rows[len(rows)-1]
		pos := finance.TxPosition{Date: last.Date, ID: last.ID}
		after = &pos
		// New rows: one newer than everything, one on the boundary date, one
		// older than everything. Only those sorting after the position belong
		// to the remaining pages.
		extra := []finance.Transaction{mk(5), mk(int(last.Date.Sub(day(0)).Hours() / 24)), mk(-40 - page)}
		must(t, s.InsertTransactions(ctx, extra))
		for _, tx := range extra {
			all[tx.ID] = tx
			if sortsAfter(tx, pos) {
				expected[tx.ID] = true
			}
		}
	}
	for id := range expected {
		if !seen[id] {
			t.Errorf("row %s (date %s) was skipped", id, all[id].Date.Format(finance.DateLayout))
		}
	}
	for id := range seen {
		if !expected[id] {
			t.Errorf("row %s inserted before the position showed up on a later page", id)
		}
	}
	if !slices.IsSortedFunc(got, func(a, b finance.Transaction) int {
		return cmp.Or(b.Date.Compare(a.Date), cmp.Compare(b.ID, a.ID))
	}) {
		t.Error("pages are not in date desc, id desc order")
	}
}
