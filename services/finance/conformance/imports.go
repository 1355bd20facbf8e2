package conformance

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/ledgerlane/platform/services/finance"
	"github.com/ledgerlane/platform/services/finance/banksync"
	"github.com/ledgerlane/platform/services/finance/imports"
)

func importRow(f fixture, key string, date int, amount string) imports.ImportRow {
	t := finance.Transaction{ID: newID(), UserID: f.user, AccountID: f.account, Amount: money(amount, "USD"),
		Merchant: "Imported " + key, Date: day(date), Source: finance.SourceImport, Version: 1, CreatedAt: base, UpdatedAt: base}
	return imports.ImportRow{Key: key, Insert: &t}
}

// testImports: keys are claimed once per account, a claimed key writes
// nothing, matched rows are claimed without a new row, claims are found by
// key and by transaction, and a claim goes with its transaction.
func testImports(t *testing.T, s Store) {
	ctx := context.Background()
	f := setup(t, s)
	bank := bankRow(f, -3)
	must(t, s.InsertTransactions(ctx, []finance.Transaction{bank}))

	first := imports.ImportWrite{UserID: f.user, AccountID: f.account, Rows: []imports.ImportRow{
		importRow(f, "k1", -2, "-3.50"), importRow(f, "k2", -1, "10.00"), {Key: "k3", MatchID: bank.ID},
	}}
	claimed, err := s.ApplyImport(ctx, first)
	must(t, err)
	diff(t, "first import", []bool{true, true, true}, claimed)
	got, err := s.GetTransaction(ctx, f.user, first.Rows[0].Insert.ID)
	must(t, err)
	if got.Source != finance.SourceImport || got.Merchant != "Imported k1" || !got.Amount.Amount.Equal(money("-3.50", "USD").Amount) {
		t.Fatalf("imported row read back as %+v", got)
	}

	// The same keys again (new transaction ids, as a second import makes)
	// claim nothing and add nothing; a new key beside them is claimed.
	again := imports.ImportWrite{UserID: f.user, AccountID: f.account, Rows: []imports.ImportRow{
		importRow(f, "k1", -2, "-3.50"), importRow(f, "k4", 0, "-1.00"), {Key: "k3", MatchID: bank.ID},
	}}
	claimed, err = s.ApplyImport(ctx, again)
	must(t, err)
	diff(t, "second import", []bool{false, true, false}, claimed)
	if _, err := s.GetTransaction(ctx, f.user, again.Rows[0].Insert.ID); !errors.Is(err, finance.ErrNotFound) {
		t.Fatalf("a claimed key inserted its row: %v", err)
	}
	rows, err := s.ListTransactions(ctx, f.user, finance.TransactionFilter{Source: finance.SourceImport}, nil, 0)
	must(t, err)
	if len(rows) != 3 {
		t.Fatalf("import rows: %d, want 3", len(rows))
	}

	// The same key on another account is another key.
	other := importRow(f, "k1", -2, "-3.50")
	other.Insert.AccountID = f.account2
	claimed, err = s.ApplyImport(ctx, imports.ImportWrite{UserID: f.user, AccountID: f.account2, Rows: []imports.ImportRow{other}})
	must(t, err)
	diff(t, "other account", []bool{true}, claimed)

	claims, err := s.ImportClaims(ctx, f.account, []string{"k1", "nope"}, []string{bank.ID})
	must(t, err)
	diff(t, "claims", []imports.ImportClaim{
		{AccountID: f.account, Key: "k1", TransactionID: first.Rows[0].Insert.ID},
		{AccountID: f.account, Key: "k3", TransactionID: bank.ID},
	}, claims)
	if claims, err := s.ImportClaims(ctx, f.otherAccount, []string{"k1"}, nil); err != nil || len(claims) != 0 {
		t.Fatalf("claims of another account: %v %v", claims, err)
	}

	// A matched row that is gone fails the whole write: nothing is claimed
	// or inserted.
	gone := imports.ImportWrite{UserID: f.user, AccountID: f.account, Rows: []imports.ImportRow{
		importRow(f, "k5", 0, "-2.00"), {Key: "k6", MatchID: newID()},
	}}
	if _, err := s.ApplyImport(ctx, gone); !errors.Is(err, finance.ErrNotFound) {
		t.Fatalf("match of a missing row: want ErrNotFound, got %v", err)
	}
	if _, err := s.GetTransaction(ctx, f.user, gone.Rows[0].Insert.ID); !errors.Is(err, finance.ErrNotFound) {
		t.Fatalf("a failed import left its row: %v", err)
	}
	if claims, _ := s.ImportClaims(ctx, f.account, []string{"k5", "k6"}, nil); len(claims) != 0 {
		t.Fatalf("a failed import left claims: %v", claims)
	}

	// A bank sync that withdraws the matched row frees its key.
	must(t, s.ApplySync(ctx, banksync.Write{UserID: f.user, Deletes: []string{bank.ID},
		Connection: banksync.ConnectionState{ID: f.conn, Status: finance.ConnectionActive, UpdatedAt: base}}))
	claims, err = s.ImportClaims(ctx, f.account, []string{"k3"}, nil)
	must(t, err)
	if len(claims) != 0 {
		t.Fatalf("claim outlived its transaction: %v", claims)
	}
	claimed, err = s.ApplyImport(ctx, imports.ImportWrite{UserID: f.user, AccountID: f.account,
		Rows: []imports.ImportRow{importRow(f, "k3", -3, "-1.00")}})
	must(t, err)
	diff(t, "freed key", []bool{true}, claimed)
}

// testConcurrentImports: imports of one file racing each other add each
// row exactly once, whoever wins each key.
func testConcurrentImports(t *testing.T, s Store) {
	ctx := context.Background()
	f := setup(t, s)
	const racers, entries = 4, 30
	var wg sync.WaitGroup
	results := make([][]bool, racers)
	errs := make([]error, racers)
	for r := range racers {
		w := imports.ImportWrite{UserID: f.user, AccountID: f.account}
		for i := range entries {
			w.Rows = append(w.Rows, importRow(f, fmt.Sprintf("key-%02d", i), -i, "-1.00"))
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[r], errs[r] = s.ApplyImport(ctx, w)
		}()
	}
	wg.Wait()
	won := make([]int, entries)
	for r := range racers {
		must(t, errs[r])
		for i, ok := range results[r] {
			if ok {
				won[i]++
			}
		}
	}
	for i, n := range won {
		if n != 1 {
			t.Errorf("key %d claimed %d times, want once", i, n)
		}
	}
	rows, err := s.ListTransactions(ctx, f.user, finance.TransactionFilter{AccountID: f.account, Source: finance.SourceImport}, nil, 0)
	must(t, err)
	if len(rows) != entries {
		t.Fatalf("%d rows after %d racing imports of %d entries, want %d", len(rows), racers, entries, entries)
	}
}
