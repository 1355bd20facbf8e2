package postgres

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/ledgerlane/platform/pkg/pgtest"
	"github.com/ledgerlane/platform/services/finance"
)

// TestSearchWindow checks the two-step search against its definition with a
// window small enough that matches lie inside it, beyond it, and both.
func TestSearchWindow(t *testing.T) {
	s := New(pgtest.Pool(t, "finance", Migrations))
	ctx := context.Background()
	base := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	user, conn, acct := uuid.NewString(), uuid.NewString(), uuid.NewString()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(s.CreateUser(ctx, finance.User{ID: user, CreatedAt: base}))
	must(s.CreateConnection(ctx, finance.Connection{ID: conn, UserID: user, Provider: finance.ProviderPlaid,
		Status: finance.ConnectionActive, CreatedAt: base, UpdatedAt: base}))
	must(s.CreateAccount(ctx, finance.Account{ID: acct, UserID: user, ConnectionID: conn, Currency: "USD",
		Balance: finance.Money{Amount: decimal.Zero, Currency: "USD"}, CreatedAt: base, UpdatedAt: base}))
	var rows []finance.Transaction
	for i := range 40 {
		m := "Filler"
		switch {
		case i%7 == 0:
			m = "Common Coffee"
		case i == 33 || i == 38:
			m = "Rare Zebra"
		}
		rows = append(rows, finance.Transaction{ID: uuid.NewString(), UserID: user, AccountID: acct, Merchant: m,
			Amount: finance.Money{Amount: decimal.NewFromInt(-1), Currency: "USD"}, Date: base.AddDate(0, 0, -i),
			Source: finance.SourceManual, Version: 1, CreatedAt: base, UpdatedAt: base})
	}
	must(s.InsertTransactions(ctx, rows))

	defer func(w int) { searchWindow = w }(searchWindow)
	for _, window := range []int{1, 3, 10, 100} {
		searchWindow = window
		for _, q := range []string{"coffee", "zebra", "filler", "none"} {
			for _, limit := range []int{1, 2, 5} {
				t.Run(fmt.Sprintf("window %d %s limit %d", window, q, limit), func(t *testing.T) {
					want, err := s.listTransactions(ctx, user, finance.TransactionFilter{}, nil, 0, "'"+q+"':*")
					must(err)
					var got []finance.Transaction
					var after *finance.TxPosition
					for range 50 {
						page, err := s.SearchTransactions(ctx, user, []string{q}, finance.TransactionFilter{}, after, limit)
						must(err)
						got = append(got, page...)
						if len(page) < limit {
							break
						}
						last := page[len(page)-1]
						after = &finance.TxPosition{Date: last.Date, ID: last.ID}
					}
					ids := func(ts []finance.Transaction) []string {
						var out []string
						for _, t := range ts {
							out = append(out, t.ID)
						}
						return out
					}
					if !slices.Equal(ids(got), ids(want)) {
						t.Fatalf("paged search: %d rows, want %d", len(got), len(want))
					}
				})
			}
		}
	}
}
