package conformance

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/ledgerlane/platform/services/finance"
	"github.com/ledgerlane/platform/services/finance/banksync"
)

// testConcurrentWrites races the writers of one user's rows in opposite
// orders: a sync updating every row oldest first in one transaction, single
// edits (PATCH, bulk categorize) newest first, and a category delete moving
// rows to another category in one statement. On PostgreSQL their flow-total
// triggers lock months and rows in those orders and deadlock; the store runs
// the victim again, so a caller sees success or a version conflict, never
// the deadlock, and the totals still match the rows.
func testConcurrentWrites(t *testing.T, s Store) {
	ctx := context.Background()
	f := setup(t, s)
	var cats []string
	for i := range 3 {
		c := finance.Category{ID: newID(), UserID: f.user, Name: fmt.Sprintf("Race %d", i), CreatedAt: base, UpdatedAt: base}
		must(t, s.CreateCategory(ctx, c))
		cats = append(cats, c.ID)
	}
	jan := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var ids []string
	var rows []finance.Transaction
	for i := range 36 { // six months, both accounts
		acct := f.account
		if i%2 == 1 {
			acct = f.account2
		}
		r := finance.Transaction{ID: newID(), UserID: f.user, AccountID: acct, CategoryID: cats[i%2],
			Amount: finance.Money{Amount: decimal.New(-int64(100+i), -2), Currency: "USD"}, Merchant: "m",
			Date: jan.AddDate(0, 0, i*5), Source: finance.SourceBankSync, Version: 1, CreatedAt: base, UpdatedAt: base}
		rows, ids = append(rows, r), append(ids, r.ID)
	}
	must(t, s.InsertTransactions(ctx, rows))

	// edit reads the row and writes it changed by change, again after a
	// version conflict (as a client would), at most ten times.
	edit := func(id string, change func(*finance.Transaction)) error {
		for range 10 {
			r, err := s.GetTransaction(ctx, f.user, id)
			if err != nil {
				return err
			}
			change(&r)
			r.Version++
			err = s.UpdateTransaction(ctx, r, r.Version-1)
			if !errors.Is(err, finance.ErrVersionConflict) {
				return err
			}
		}
		return nil
	}
	sync1 := func(round int) error {
		for range 10 {
			var w banksync.Write
			w.UserID = f.user
			w.Connection = banksync.ConnectionState{ID: f.conn, Status: finance.ConnectionActive, UpdatedAt: base}
			for _, id := range ids { // oldest first
				r, err := s.GetTransaction(ctx, f.user, id)
				if err != nil {
					return err
				}
				r.Merchant, r.Version = fmt.Sprintf("sync %d", round), r.Version+1
				w.Updates = append(w.Updates, r)
			}
			err := s.ApplySync(ctx, w)
			if !errors.Is(err, finance.ErrVersionConflict) {
				return err
			}
		}
		return nil
	}

	const rounds = 3
	for round := range rounds {
		doomed := finance.Category{ID: newID(), UserID: f.user, Name: fmt.Sprintf("Doomed %d", round), CreatedAt: base, UpdatedAt: base}
		must(t, s.CreateCategory(ctx, doomed))
		for i, id := range ids {
			if i%3 == 0 {
				must(t, edit(id, func(r *finance.Transaction) { r.CategoryID = doomed.ID }))
			}
		}
		var wg sync.WaitGroup
		errs := make(chan error, 4)
		run := func(what string, fn func() error) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := fn(); err != nil {
					errs <- fmt.Errorf("round %d: %s: %w", round, what, err)
				}
			}()
		}
		run("sync", func() error { return sync1(round) })
		for k := range 2 {
			run(fmt.Sprintf("edits %d", k), func() error {
				for _, id := range slices.Backward(ids) { // newest first
					if err := edit(id, func(r *finance.Transaction) {
						r.CategoryID, r.Amount.Amount = cats[(round+k)%3], r.Amount.Amount.Sub(decimal.New(1, -2))
					}); err != nil {
						return err
					}
				}
				return nil
			})
		}
		run("category delete", func() error {
			_, err := s.DeleteCategory(ctx, f.user, doomed.ID, cats[2], base)
			return err
		})
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
	}
	checkFlows(t, s, f.user, cats, "after racing writers")
}
