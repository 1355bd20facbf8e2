package finance_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/ledgerlane/platform/pkg/cursor"
	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/services/finance"
	"github.com/ledgerlane/platform/services/finance/banksync"
	"github.com/ledgerlane/platform/services/finance/budgets"
	"github.com/ledgerlane/platform/services/finance/debt"
	"github.com/ledgerlane/platform/services/finance/insights"
	"github.com/ledgerlane/platform/services/finance/memory"
	"github.com/ledgerlane/platform/services/finance/networth"
	"github.com/ledgerlane/platform/services/finance/recurring"
	"github.com/ledgerlane/platform/services/finance/seed"
)

var now = time.Date(2026, 5, 20, 14, 30, 0, 0, time.UTC)

// tenant is the metering account owning the demo user.
const tenant = "3f9d2c4e-8b1a-4c7e-9d2f-5a6b7c8d9e01"

type env struct {
	svc       *finance.Service
	banksync  *banksync.Service
	budgets   *budgets.Service
	debt      *debt.Service
	insights  *insights.Service
	nw        *networth.Service
	recurring *recurring.Service
	store     *memory.Store
	demo      seed.DemoData
	read      finance.Caller
	write     finance.Caller
	redacted  finance.Caller
}

func newEnv(t *testing.T, clock finance.Clock) env {
	t.Helper()
	store := memory.New()
	d, err := seed.Demo(context.Background(), store, tenant, now)
	if err != nil {
		t.Fatal(err)
	}
	if clock == nil {
		clock = func() time.Time { return now }
	}
	svc := finance.NewService(finance.Config{Store: store, Cursors: cursor.New([]byte("test-key")), Clock: clock})
	rec := recurring.NewService(recurring.Config{Kernel: svc, Store: store})
	return env{
		banksync:  banksync.NewService(banksync.Config{Kernel: svc, Store: store}),
		recurring: rec,
		budgets:   budgets.NewService(budgets.Config{Kernel: svc, Recurring: rec, Store: store}),
		svc:       svc,
		debt:      debt.NewService(debt.Config{Kernel: svc, Store: store}),
		insights:  insights.NewService(insights.Config{Kernel: svc, Store: store}),
		nw:        networth.NewService(networth.Config{Kernel: svc, Store: store}),
		store:     store,
		demo:      d,
		read:      finance.Caller{UserID: d.UserID, GrantID: d.GrantReadID, OwnerAccountID: tenant},
		write:     finance.Caller{UserID: d.UserID, GrantID: d.GrantWriteID, OwnerAccountID: tenant},
		redacted:  finance.Caller{UserID: d.UserID, GrantID: d.GrantRedactedID, OwnerAccountID: tenant},
	}
}

func wantProblem(t *testing.T, err error, typ problem.Type, field string) {
	t.Helper()
	var p *problem.Problem
	if !errors.As(err, &p) {
		t.Fatalf("want a %s problem, got %v", typ, err)
	}
	if p.Type != typ || p.Field != field {
		t.Fatalf("got problem %s (field %q), want %s (field %q)", p.Type, p.Field, typ, field)
	}
}

// all pages through ListTransactions and fails on a repeated row.
func all(t *testing.T, e env, c finance.Caller, q finance.TransactionQuery) []finance.Transaction {
	t.Helper()
	var out []finance.Transaction
	seen := map[string]bool{}
	q.PageSize = size(finance.MaxPageSize)
	for range 100 {
		page, err := e.svc.ListTransactions(context.Background(), c, q)
		if err != nil {
			t.Fatal(err)
		}
		for _, tx := range page.Data {
			if seen[tx.ID] {
				t.Fatalf("row %s served twice", tx.ID)
			}
			seen[tx.ID] = true
		}
		out = append(out, page.Data...)
		if !page.HasMore {
			if page.NextCursor != "" {
				t.Fatal("last page carries a cursor")
			}
			return out
		}
		q.Cursor = page.NextCursor
	}
	t.Fatal("pagination did not end")
	return nil
}

func TestListTransactionsPagesThroughEverything(t *testing.T) {
	e := newEnv(t, nil)
	got := all(t, e, e.read, finance.TransactionQuery{})
	if len(got) != e.demo.Transactions {
		t.Fatalf("paged %d rows, the demo has %d", len(got), e.demo.Transactions)
	}
	if !slices.IsSortedFunc(got, func(a, b finance.Transaction) int {
		if c := b.Date.Compare(a.Date); c != 0 {
			return c
		}
		switch {
		case a.ID > b.ID:
			return -1
		case a.ID < b.ID:
			return 1
		}
		return 0
	}) {
		t.Fatal("rows are not newest first")
	}
}

func TestPageSize(t *testing.T) {
	e := newEnv(t, nil)
	tests := []struct {
		size    *int32
		want    int
		invalid bool
	}{
		{nil, finance.DefaultPageSize, false},
		{size(0), 0, true},
		{size(1), 1, false},
		{size(37), 37, false},
		{size(finance.MaxPageSize), finance.MaxPageSize, false},
		{size(finance.MaxPageSize + 1), 0, true},
		{size(-1), 0, true},
	}
	for _, tc := range tests {
		page, err := e.svc.ListTransactions(context.Background(), e.read,
			finance.TransactionQuery{PageQuery: finance.PageQuery{PageSize: tc.size}})
		if tc.invalid {
			wantProblem(t, err, problem.InvalidInput, "page_size")
			continue
		}
		if err != nil {
			t.Fatalf("page_size %v: %v", tc.size, err)
		}
		if len(page.Data) != tc.want || !page.HasMore || page.NextCursor == "" {
			t.Errorf("page_size %v: %d rows, has_more %v", tc.size, len(page.Data), page.HasMore)
		}
		_, err = e.svc.ListConnections(context.Background(), e.read, finance.PageQuery{PageSize: tc.size})
		if err != nil {
			t.Errorf("connections, page_size %v: %v", tc.size, err)
		}
	}
	_, err := e.svc.ListConnections(context.Background(), e.read, finance.PageQuery{PageSize: size(201)})
	wantProblem(t, err, problem.InvalidInput, "page_size")
}

func TestTransactionFilters(t *testing.T) {
	e := newEnv(t, nil)
	d := e.demo
	yes := true
	no := false
	tests := []struct {
		name  string
		q     finance.TransactionQuery
		check func(finance.Transaction) bool
	}{
		{"account", finance.TransactionQuery{AccountID: d.AccountIDs.EuroChecking},
			func(tx finance.Transaction) bool { return tx.AccountID == d.AccountIDs.EuroChecking }},
		{"account id in upper case", finance.TransactionQuery{AccountID: upper(d.AccountIDs.Savings)},
			func(tx finance.Transaction) bool { return tx.AccountID == d.AccountIDs.Savings }},
		{"category", finance.TransactionQuery{CategoryID: d.CategoryIDs["Groceries"]},
			func(tx finance.Transaction) bool { return tx.CategoryID == d.CategoryIDs["Groceries"] }},
		{"dates inclusive", finance.TransactionQuery{StartDate: "2025-03-01", EndDate: "2025-03-31"},
			func(tx finance.Transaction) bool {
				return !tx.Date.Before(date("2025-03-01")) && !tx.Date.After(date("2025-03-31"))
			}},
		{"pending", finance.TransactionQuery{Pending: &yes}, func(tx finance.Transaction) bool { return tx.IsPending }},
		{"posted", finance.TransactionQuery{Pending: &no}, func(tx finance.Transaction) bool { return !tx.IsPending }},
		{"source", finance.TransactionQuery{Source: finance.SourceImport},
			func(tx finance.Transaction) bool { return tx.Source == finance.SourceImport }},
		{"uncategorized", finance.TransactionQuery{Uncategorized: true},
			func(tx finance.Transaction) bool { return tx.CategoryID == "" }},
	}
	everything := all(t, e, e.read, finance.TransactionQuery{})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := all(t, e, e.read, tc.q)
			want := 0
			for _, tx := range everything {
				if tc.check(tx) {
					want++
				}
			}
			if len(got) != want || want == 0 {
				t.Fatalf("%d rows, want %d", len(got), want)
			}
			for _, tx := range got {
				if !tc.check(tx) {
					t.Fatalf("row %s does not match the filter", tx.ID)
				}
			}
		})
	}
}

func upper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'a' && c <= 'f' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}

func date(s string) time.Time {
	d, err := finance.ParseDate(s)
	if err != nil {
		panic(err)
	}
	return d
}

func TestInvalidInput(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	tests := []struct {
		name  string
		q     finance.TransactionQuery
		field string
	}{
		{"account id", finance.TransactionQuery{AccountID: "12"}, "account_id"},
		{"account id in braces", finance.TransactionQuery{AccountID: "{" + e.demo.AccountIDs.Checking + "}"}, "account_id"},
		{"category id", finance.TransactionQuery{CategoryID: "groceries"}, "category_id"},
		{"start date", finance.TransactionQuery{StartDate: "2025-02-30"}, "start_date"},
		{"end date", finance.TransactionQuery{EndDate: "05/01/2025"}, "end_date"},
		{"start after end", finance.TransactionQuery{StartDate: "2025-05-02", EndDate: "2025-05-01"}, "start_date"},
		{"source", finance.TransactionQuery{Source: "aggregator"}, "source"},
		{"garbage cursor", finance.TransactionQuery{PageQuery: finance.PageQuery{Cursor: "not-a-cursor"}}, "cursor"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.svc.ListTransactions(ctx, e.read, tc.q)
			wantProblem(t, err, problem.InvalidInput, tc.field)
		})
	}
	_, err := e.svc.GetTransaction(ctx, e.read, "txn_1")
	wantProblem(t, err, problem.InvalidInput, "id")
	_, err = e.svc.GetAccountBalances(ctx, e.read, "checking")
	wantProblem(t, err, problem.InvalidInput, "id")
	_, err = e.svc.ListConnections(ctx, e.read, finance.PageQuery{Cursor: "x.y"})
	wantProblem(t, err, problem.InvalidInput, "cursor")
}

// TestCursorIsBoundToItsQuery replays one cursor under every variation of
// caller, route and filter: only the exact query it came from accepts it.
func TestCursorIsBoundToItsQuery(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	yes := true
	base := finance.TransactionQuery{
		PageQuery: finance.PageQuery{PageSize: size(5)},
		AccountID: e.demo.AccountIDs.CreditCard, CategoryID: e.demo.CategoryIDs["Groceries"],
		StartDate: "2024-06-01", EndDate: "2026-05-20", Pending: nil, Source: finance.SourceBankSync,
	}
	first, err := e.svc.ListTransactions(ctx, e.read, base)
	if err != nil || first.NextCursor == "" {
		t.Fatalf("first page: %v, cursor %q", err, first.NextCursor)
	}
	conns, err := e.svc.ListConnections(ctx, e.read, finance.PageQuery{PageSize: size(1)})
	if err != nil || conns.NextCursor == "" {
		t.Fatalf("connections: %v", err)
	}
	otherUser := finance.Caller{UserID: uuid.NewString(), GrantID: uuid.NewString()}
	tampered := []byte(first.NextCursor)
	tampered[3] ^= 1

	tests := []struct {
		name   string
		caller finance.Caller
		edit   func(*finance.TransactionQuery)
		ok     bool
	}{
		{"same query", e.read, func(*finance.TransactionQuery) {}, true},
		{"same query, other page size", e.read, func(q *finance.TransactionQuery) { q.PageSize = size(50) }, true},
		{"other grant of the same user", e.write, func(*finance.TransactionQuery) {}, false},
		{"other account", e.read, func(q *finance.TransactionQuery) { q.AccountID = e.demo.AccountIDs.Checking }, false},
		{"no account", e.read, func(q *finance.TransactionQuery) { q.AccountID = "" }, false},
		{"other category", e.read, func(q *finance.TransactionQuery) { q.CategoryID = e.demo.CategoryIDs["Dining"] }, false},
		{"other start", e.read, func(q *finance.TransactionQuery) { q.StartDate = "2024-06-02" }, false},
		{"other end", e.read, func(q *finance.TransactionQuery) { q.EndDate = "" }, false},
		{"pending set", e.read, func(q *finance.TransactionQuery) { q.Pending = &yes }, false},
		{"other source", e.read, func(q *finance.TransactionQuery) { q.Source = "" }, false},
		{"uncategorized", e.read, func(q *finance.TransactionQuery) { q.Uncategorized = true }, false},
		{"tampered", e.read, func(q *finance.TransactionQuery) { q.Cursor = string(tampered) }, false},
		{"cursor of another route", e.read, func(q *finance.TransactionQuery) { q.Cursor = conns.NextCursor }, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q := base
			q.Cursor = first.NextCursor
			tc.edit(&q)
			page, err := e.svc.ListTransactions(ctx, tc.caller, q)
			if tc.ok {
				if err != nil {
					t.Fatal(err)
				}
				if page.Data[0].ID == first.Data[0].ID {
					t.Fatal("the cursor restarted from the first page")
				}
				return
			}
			wantProblem(t, err, problem.InvalidInput, "cursor")
		})
	}
	// A user who is not the cursor's cannot even reach the cursor check.
	_, err = e.svc.ListTransactions(ctx, otherUser, finance.TransactionQuery{PageQuery: finance.PageQuery{Cursor: first.NextCursor}})
	wantProblem(t, err, problem.Unauthorized, "")
	// A transactions cursor is no connections cursor.
	_, err = e.svc.ListConnections(ctx, e.read, finance.PageQuery{Cursor: first.NextCursor})
	wantProblem(t, err, problem.InvalidInput, "cursor")
}

func TestPrivacyScope(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	d := e.demo
	health := []string{d.CategoryIDs["Health"], d.CategoryIDs["Pharmacy"], d.CategoryIDs["Fitness"]}

	open := all(t, e, e.read, finance.TransactionQuery{})
	scoped := all(t, e, e.redacted, finance.TransactionQuery{})
	var hidden, located int
	var excludedRow, healthRow, locatedRow string
	for _, tx := range open {
		switch {
		case tx.AccountID == d.ExcludedAccountID:
			hidden++
			excludedRow = tx.ID
		case slices.Contains(health, tx.CategoryID):
			hidden++
			healthRow = tx.ID
		}
		if tx.Location != nil {
			located++
			locatedRow = tx.ID
		}
	}
	if hidden == 0 || located == 0 || healthRow == "" || excludedRow == "" {
		t.Fatal("the demo data lacks rows the redacted grant hides or strips")
	}
	if len(scoped) != len(open)-hidden {
		t.Fatalf("redacted grant sees %d rows, want %d", len(scoped), len(open)-hidden)
	}
	for _, tx := range scoped {
		if tx.AccountID == d.ExcludedAccountID || slices.Contains(health, tx.CategoryID) || tx.Location != nil {
			t.Fatalf("row %s leaks through the grant", tx.ID)
		}
	}

	page, err := e.svc.ListTransactions(ctx, e.redacted, finance.TransactionQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if !page.Filtered || !slices.Equal(page.RedactedFields, []string{finance.FieldTransactionLocation, finance.FieldConnectionInstitution}) {
		t.Errorf("redacted envelope: filtered %v, redacted %v", page.Filtered, page.RedactedFields)
	}
	page, err = e.svc.ListTransactions(ctx, e.read, finance.TransactionQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if page.Filtered || page.RedactedFields != nil {
		t.Errorf("open envelope: filtered %v, redacted %v", page.Filtered, page.RedactedFields)
	}
	// Filtering on an excluded account finds nothing rather than its rows.
	page, err = e.svc.ListTransactions(ctx, e.redacted, finance.TransactionQuery{AccountID: d.ExcludedAccountID})
	if err != nil || len(page.Data) != 0 {
		t.Errorf("excluded account filter: %d rows, %v", len(page.Data), err)
	}

	getTests := []struct {
		name     string
		caller   finance.Caller
		id       string
		notFound bool
		located  bool
	}{
		{"excluded account", e.redacted, excludedRow, true, false},
		{"subcategory of excluded category", e.redacted, healthRow, true, false},
		{"unknown", e.read, uuid.NewString(), true, false},
		{"location stripped", e.redacted, locatedRow, false, false},
		{"location kept", e.read, locatedRow, false, true},
		{"excluded row, open grant", e.read, excludedRow, false, false},
	}
	for _, tc := range getTests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := e.svc.GetTransaction(ctx, tc.caller, tc.id)
			if tc.notFound {
				wantProblem(t, err, problem.NotFound, "")
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (res.Data.Location != nil) != tc.located {
				t.Errorf("location present = %v", res.Data.Location != nil)
			}
			if redacts := slices.Contains(res.RedactedFields, finance.FieldTransactionLocation); redacts != (tc.caller == e.redacted) {
				t.Errorf("redacted_fields = %v", res.RedactedFields)
			}
		})
	}
}

func TestListCategories(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	open, err := e.svc.ListCategories(ctx, e.read)
	if err != nil {
		t.Fatal(err)
	}
	scoped, err := e.svc.ListCategories(ctx, e.redacted)
	if err != nil {
		t.Fatal(err)
	}
	if len(open.Data) != len(e.demo.CategoryIDs) || open.Filtered {
		t.Errorf("open: %d categories of %d, filtered %v", len(open.Data), len(e.demo.CategoryIDs), open.Filtered)
	}
	if len(scoped.Data) != len(open.Data)-3 || !scoped.Filtered {
		t.Errorf("redacted: %d categories, filtered %v", len(scoped.Data), scoped.Filtered)
	}
	for _, c := range scoped.Data {
		if c.Name == "Health" || c.Name == "Pharmacy" || c.Name == "Fitness" {
			t.Errorf("excluded category %s listed", c.Name)
		}
	}
}

func TestListConnections(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	tests := []struct {
		name          string
		caller        finance.Caller
		fidelityCount int
		redacted      bool
	}{
		{"open", e.read, 2, false},
		{"redacted", e.redacted, 1, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []finance.ConnectionSummary
			q := finance.PageQuery{PageSize: size(1)}
			for range 5 {
				page, err := e.svc.ListConnections(ctx, tc.caller, q)
				if err != nil {
					t.Fatal(err)
				}
				if page.Filtered != tc.redacted ||
					slices.Contains(page.RedactedFields, finance.FieldConnectionInstitution) != tc.redacted {
					t.Fatalf("envelope: filtered %v, redacted %v", page.Filtered, page.RedactedFields)
				}
				got = append(got, page.Data...)
				if !page.HasMore {
					break
				}
				q.Cursor = page.NextCursor
			}
			if len(got) != 3 {
				t.Fatalf("%d connections", len(got))
			}
			for _, c := range got {
				if (c.Institution == "" && c.InstitutionLogoURL == "") != tc.redacted && c.Provider != finance.ProviderManual {
					t.Errorf("%s: institution %q, logo %q", c.ID, c.Institution, c.InstitutionLogoURL)
				}
				if c.ID == e.demo.ConnectionIDs.Fidelity {
					if c.AccountCount != tc.fidelityCount || c.SourceAggregator != "mx" {
						t.Errorf("fidelity: %d accounts, aggregator %q", c.AccountCount, c.SourceAggregator)
					}
				}
			}
		})
	}
}

func TestGetAccountBalances(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	res, err := e.svc.GetAccountBalances(ctx, e.read, e.demo.AccountIDs.EuroChecking)
	if err != nil {
		t.Fatal(err)
	}
	if res.Data.Balance.Currency != "EUR" || res.Data.AsOf == nil || res.Data.AvailableBalance == nil {
		t.Errorf("EUR balance: %+v", res.Data)
	}
	_, err = e.svc.GetAccountBalances(ctx, e.redacted, e.demo.ExcludedAccountID)
	wantProblem(t, err, problem.NotFound, "")
	_, err = e.svc.GetAccountBalances(ctx, e.read, uuid.NewString())
	wantProblem(t, err, problem.NotFound, "")
	if _, err = e.svc.GetAccountBalances(ctx, e.read, e.demo.ExcludedAccountID); err != nil {
		t.Errorf("open grant, brokerage: %v", err)
	}
}

func TestGetSyncStatus(t *testing.T) {
	tests := []struct {
		name    string
		at      time.Time
		healthy map[string]bool // by institution
	}{
		{"now", now, map[string]bool{"Chase": true, "Fidelity Investments": false, "Manual accounts": true}},
		{"three days later", now.Add(72 * time.Hour), map[string]bool{"Chase": false, "Fidelity Investments": false, "Manual accounts": true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, func() time.Time { return tc.at })
			res, err := e.svc.GetSyncStatus(context.Background(), e.read)
			if err != nil {
				t.Fatal(err)
			}
			if res.Data.AllHealthy {
				t.Error("all_healthy with a connection that needs a login")
			}
			if res.Data.OldestSyncedAt == nil || !res.Data.OldestSyncedAt.Equal(now.Add(-77*time.Hour)) {
				t.Errorf("oldest_synced_at = %v", res.Data.OldestSyncedAt)
			}
			for _, c := range res.Data.Connections {
				if c.Healthy != tc.healthy[c.Institution] {
					t.Errorf("%s healthy = %v", c.Institution, c.Healthy)
				}
			}
			scoped, err := e.svc.GetSyncStatus(context.Background(), e.redacted)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range scoped.Data.Connections {
				if c.Institution != "" {
					t.Errorf("institution %q not redacted", c.Institution)
				}
			}
			if !slices.Equal(scoped.RedactedFields, []string{finance.FieldConnectionInstitution}) {
				t.Errorf("redacted_fields = %v", scoped.RedactedFields)
			}
		})
	}
}

func TestCallerMustHoldAValidGrant(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	// The stranger belongs to another account, with a grant of its own.
	otherTenant, stranger, strangersGrant := uuid.NewString(), uuid.NewString(), uuid.NewString()
	if err := e.store.CreateUser(ctx, finance.User{ID: stranger, OwnerAccountID: otherTenant, CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	if err := e.store.CreateGrant(ctx, finance.Grant{ID: strangersGrant, UserID: stranger, CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	// A user stored before owners existed belongs to no account.
	orphan, orphansGrant := uuid.NewString(), uuid.NewString()
	if err := e.store.CreateUser(ctx, finance.User{ID: orphan, CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	if err := e.store.CreateGrant(ctx, finance.Grant{ID: orphansGrant, UserID: orphan, CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	withAccount := func(c finance.Caller, account string) finance.Caller { c.OwnerAccountID = account; return c }
	tests := []struct {
		name string
		c    finance.Caller
	}{
		{"empty", finance.Caller{}},
		{"no grant", finance.Caller{UserID: e.demo.UserID, OwnerAccountID: tenant}},
		{"unknown grant", finance.Caller{UserID: e.demo.UserID, GrantID: uuid.NewString(), OwnerAccountID: tenant}},
		{"grant that is not a uuid", finance.Caller{UserID: e.demo.UserID, GrantID: "grant", OwnerAccountID: tenant}},
		{"another user's grant", finance.Caller{UserID: e.demo.UserID, GrantID: strangersGrant, OwnerAccountID: tenant}},
		{"no account", withAccount(e.read, "")},
		{"credential of another account", withAccount(e.read, otherTenant)},
		{"credential of an unknown account", withAccount(e.read, uuid.NewString())},
		{"another account's user and grant", finance.Caller{UserID: stranger, GrantID: strangersGrant, OwnerAccountID: tenant}},
		{"user without an owner", finance.Caller{UserID: orphan, GrantID: orphansGrant, OwnerAccountID: tenant}},
		{"user that is not a uuid", finance.Caller{UserID: "user", GrantID: e.demo.GrantReadID, OwnerAccountID: tenant}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			calls := map[string]func() error{
				"transactions": func() error {
					_, err := e.svc.ListTransactions(ctx, tc.c, finance.TransactionQuery{})
					return err
				},
				"transaction": func() error { _, err := e.svc.GetTransaction(ctx, tc.c, uuid.NewString()); return err },
				"categories":  func() error { _, err := e.svc.ListCategories(ctx, tc.c); return err },
				"connections": func() error { _, err := e.svc.ListConnections(ctx, tc.c, finance.PageQuery{}); return err },
				"balances": func() error {
					_, err := e.svc.GetAccountBalances(ctx, tc.c, e.demo.AccountIDs.Checking)
					return err
				},
				"sync": func() error { _, err := e.svc.GetSyncStatus(ctx, tc.c); return err },
			}
			for name, call := range calls {
				t.Run(name, func(t *testing.T) { wantProblem(t, call(), problem.Unauthorized, "") })
			}
		})
	}
}

func TestCheckGrant(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	otherTenant, stranger, strangersGrant := uuid.NewString(), uuid.NewString(), uuid.NewString()
	if err := e.store.CreateUser(ctx, finance.User{ID: stranger, OwnerAccountID: otherTenant, CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	if err := e.store.CreateGrant(ctx, finance.Grant{ID: strangersGrant, UserID: stranger, CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name                  string
		account, user, grant  string
		userInAccount, ofUser bool
	}{
		{"user, grant and account belong together", tenant, e.demo.UserID, e.demo.GrantRedactedID, true, true},
		{"another account", otherTenant, e.demo.UserID, e.demo.GrantReadID, false, true},
		{"no account", "", e.demo.UserID, e.demo.GrantReadID, false, true},
		{"another account's user", tenant, stranger, strangersGrant, false, true},
		{"another user's grant", tenant, e.demo.UserID, strangersGrant, true, false},
		{"unknown user", tenant, uuid.NewString(), e.demo.GrantReadID, false, false},
		{"unknown grant", tenant, e.demo.UserID, uuid.NewString(), true, false},
		{"malformed ids", "acct", "user", "grant", false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := e.svc.CheckGrant(ctx, tc.account, tc.user, tc.grant, "live")
			if err != nil {
				t.Fatalf("CheckGrant: %v", err)
			}
			userKnown := tc.user == e.demo.UserID || tc.user == stranger // the users that exist, both live
			want := finance.GrantCheck{UserInAccount: tc.userInAccount, GrantOfUser: tc.ofUser, UserOfMode: userKnown}
			if got != want || got.OK() != (tc.userInAccount && tc.ofUser) {
				t.Errorf("CheckGrant = %+v (OK %v), want %+v", got, got.OK(), want)
			}
			// A test credential never reaches a live user.
			if test, err := e.svc.CheckGrant(ctx, tc.account, tc.user, tc.grant, "test"); err != nil || test.OK() {
				t.Errorf("CheckGrant in test mode = %+v %v", test, err)
			}
		})
	}
}

func TestMoneyAmountString(t *testing.T) {
	tests := []struct {
		amount, currency, want string
	}{
		{"-12.5", "USD", "-12.50"},
		{"1234567.89", "USD", "1234567.89"},
		{"-0.01", "EUR", "-0.01"},
		{"1500", "JPY", "1500"},
		{"0.125", "USD", "0.125"},
		{"1.5", "KWD", "1.500"},
	}
	for _, tc := range tests {
		m := finance.Money{Currency: tc.currency}
		var err error
		if m.Amount, err = decimal.NewFromString(tc.amount); err != nil {
			t.Fatal(err)
		}
		if got := m.AmountString(); got != tc.want {
			t.Errorf("%s %s = %q, want %q", tc.amount, tc.currency, got, tc.want)
		}
	}
}

func size(n int32) *int32 { return &n }
