package postgres_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/ledgerlane/platform/pkg/cursor"
	"github.com/ledgerlane/platform/pkg/pgtest"
	"github.com/ledgerlane/platform/services/finance"
	"github.com/ledgerlane/platform/services/finance/imports"
	"github.com/ledgerlane/platform/services/finance/memory"
	"github.com/ledgerlane/platform/services/finance/postgres"
	"github.com/ledgerlane/platform/services/finance/stores"
)

type fileParser struct{ entries []imports.StatementEntry }

func (p fileParser) ParseStatement(context.Context, imports.StatementFile) (imports.ParsedStatement, error) {
	return imports.ParsedStatement{DetectedType: "MT940", Entries: p.entries}, nil
}

// BenchmarkImportStatement imports a file of imports.MaxImportEntries
// entries into an account that already holds as many bank-synced rows over
// the same days: the first import of each round adds every entry, the
// second matches every entry by its key. One op is both imports; setting
// up the account is not timed.
func BenchmarkImportStatement(b *testing.B) {
	open := map[string]func(b *testing.B) stores.Store{
		"memory":   func(*testing.B) stores.Store { return memory.New() },
		"postgres": func(b *testing.B) stores.Store { return postgres.New(pgtest.Pool(b, "finance", postgres.Migrations)) },
	}
	for _, name := range []string{"memory", "postgres"} {
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			store := open[name](b)
			now := time.Date(2026, 5, 20, 0, 0, 0, 0, time.UTC)
			owner, user, grant, conn := uuid.NewString(), uuid.NewString(), uuid.NewString(), uuid.NewString()
			must := func(err error) {
				if err != nil {
					b.Fatal(err)
				}
			}
			must(store.CreateUser(ctx, finance.User{ID: user, OwnerAccountID: owner, CreatedAt: now}))
			must(store.CreateGrant(ctx, finance.Grant{ID: grant, UserID: user, WritesEnabled: true, CreatedAt: now}))
			must(store.CreateConnection(ctx, finance.Connection{ID: conn, UserID: user, Provider: finance.ProviderPlaid,
				Status: finance.ConnectionActive, CreatedAt: now, UpdatedAt: now}))
			kernel := finance.NewService(finance.Config{Store: store, Cursors: cursor.New([]byte("k")), Clock: func() time.Time { return now }})
			caller := finance.Caller{UserID: user, GrantID: grant, OwnerAccountID: owner}
			n := imports.MaxImportEntries
			for i := 0; i < b.N; i++ {
				b.StopTimer() // the account and its bank rows are not the import
				account := uuid.NewString()
				must(store.CreateAccount(ctx, finance.Account{ID: account, UserID: user, ConnectionID: conn, Name: "A",
					Currency: "EUR", Balance: finance.Money{Amount: decimal.Zero, Currency: "EUR"}, CreatedAt: now, UpdatedAt: now}))
				var bank []finance.Transaction
				entries := make([]imports.StatementEntry, n)
				for j := range entries {
					day := now.AddDate(0, 0, -j%365)
					entries[j] = imports.StatementEntry{BookingDate: day.Format(finance.DateLayout), Amount: fmt.Sprintf("%d.%02d", j, j%100),
						Currency: "EUR", BankReference: fmt.Sprintf("REF%d", j)}
					bank = append(bank, finance.Transaction{ID: uuid.NewString(), UserID: user, AccountID: account,
						Amount: finance.Money{Amount: decimal.NewFromInt(int64(-j - 100000)), Currency: "EUR"}, Date: day,
						Source: finance.SourceBankSync, Version: 1, CreatedAt: now, UpdatedAt: now})
				}
				must(store.InsertTransactions(ctx, bank))
				svc := imports.NewService(imports.Config{Kernel: kernel, Store: store, Parser: fileParser{entries: entries}})
				b.StartTimer()
				req := imports.ImportRequest{AccountID: account, StatementFile: imports.StatementFile{Message: "x"}}
				for _, want := range []int{n, 0} {
					res, err := svc.ImportStatement(ctx, caller, req)
					must(err)
					if res.Data.Added != want || res.Data.Added+res.Data.Matched != n {
						b.Fatalf("import: %+v", res.Data)
					}
				}
			}
		})
	}
}
