package postgres_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/ledgerlane/platform/pkg/cursor"
	"github.com/ledgerlane/platform/pkg/pgtest"
	"github.com/ledgerlane/platform/services/finance"
	"github.com/ledgerlane/platform/services/finance/postgres"
)

// TestFeedWaitsForWritersInFlight is the classic race of a sequence-ordered
// feed, made to happen: writer A takes change value N and stays open,
// writer B takes N+1 and commits. A read then must not hand out N+1 and
// move past N: it waits for A (the user's feed lock, migration 00016), and
// its page holds both rows.
func TestFeedWaitsForWritersInFlight(t *testing.T) {
	pool := pgtest.Pool(t, "finance", postgres.Migrations)
	store := postgres.New(pool)
	ctx := context.Background()
	at := time.Date(2026, 5, 20, 14, 30, 0, 0, time.UTC)
	tenant, user, conn, account, grant := uuid.NewString(), uuid.NewString(), uuid.NewString(), uuid.NewString(), uuid.NewString()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(store.CreateUser(ctx, finance.User{ID: user, OwnerAccountID: tenant, CreatedAt: at}))
	must(store.CreateConnection(ctx, finance.Connection{ID: conn, UserID: user, Provider: finance.ProviderManual,
		Status: finance.ConnectionActive, CreatedAt: at, UpdatedAt: at}))
	must(store.CreateAccount(ctx, finance.Account{ID: account, UserID: user, ConnectionID: conn, Name: "Checking",
		Currency: "USD", Balance: finance.Money{Amount: decimal.Zero, Currency: "USD"}, CreatedAt: at, UpdatedAt: at}))
	must(store.CreateGrant(ctx, finance.Grant{ID: grant, UserID: user, CreatedAt: at}))
	svc := finance.NewService(finance.Config{Store: store, Cursors: cursor.New([]byte("k")), Clock: func() time.Time { return at }})
	c := finance.Caller{UserID: user, GrantID: grant, OwnerAccountID: tenant}
	first, err := svc.SyncTransactions(ctx, c, finance.SyncQuery{})
	must(err)

	row := func() finance.Transaction {
		return finance.Transaction{ID: uuid.NewString(), UserID: user, AccountID: account,
			Amount: finance.Money{Amount: decimal.RequireFromString("-1.00"), Currency: "USD"}, Date: at,
			Source: finance.SourceManual, Version: 1, CreatedAt: at, UpdatedAt: at}
	}
	a, b := row(), row()
	// Another month: writers of one user's month queue on its flow totals
	// (migration 00011), which would make B wait for A.
	b.Date = at.AddDate(0, -2, 0)
	txA, err := pool.Begin(ctx)
	must(err)
	defer func() { _ = txA.Rollback(ctx) }()
	_, err = txA.Exec(ctx, `INSERT INTO transactions (id, user_id, account_id, amount, currency, date, source, created_at, updated_at)
		VALUES ($1, $2, $3, -1, 'USD', $4, 'manual', $5, $5)`, a.ID, user, account, at.Format("2006-01-02"), at)
	must(err)
	// B shares the lock with A: it does not wait, and commits a higher value.
	must(store.InsertTransactions(ctx, []finance.Transaction{b}))
	const hold = 300 * time.Millisecond
	committed := make(chan error, 1)
	go func() {
		time.Sleep(hold)
		committed <- txA.Commit(ctx)
	}()
	start := time.Now()
	page, err := svc.SyncTransactions(ctx, c, finance.SyncQuery{Cursor: first.NextCursor})
	must(err)
	must(<-committed)
	var ids []string
	for _, x := range page.Added {
		ids = append(ids, x.ID)
	}
	if !slices.Contains(ids, a.ID) || !slices.Contains(ids, b.ID) {
		t.Fatalf("page after the race: added %v, want %s (in flight) and %s", ids, a.ID, b.ID)
	}
	if waited := time.Since(start); waited < hold/2 {
		t.Fatalf("the read did not wait for the writer in flight (%s)", waited)
	}
}
