package conformance

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ledgerlane/platform/services/finance"
)

// testWriteMarks: the LastWrite of transactions, goals and budgets (column
// last_write, migration 00012) is kept as given by the updates that write
// it, cleared by an update without one, seen by every read, and a refused
// compare-and-swap leaves it as it was.
func testWriteMarks(t *testing.T, s Store) {
	ctx := context.Background()
	f := setup(t, s)
	mark := func(c byte, version int64) *finance.WriteMark {
		return &finance.WriteMark{Key: strings.Repeat(string(c), 64), Content: strings.Repeat("e", 64), Version: version}
	}

	t.Run("transaction", func(t *testing.T) {
		tx := bankRow(f, -1)
		must(t, s.InsertTransactions(ctx, []finance.Transaction{tx}))
		read := func() *finance.WriteMark {
			t.Helper()
			got, err := s.GetTransaction(ctx, f.user, tx.ID)
			must(t, err)
			listed, err := s.ListTransactions(ctx, f.user, finance.TransactionFilter{AccountID: f.account}, nil, 0)
			must(t, err)
			for _, l := range listed {
				if l.ID == tx.ID {
					diff(t, "listed mark", got.LastWrite, l.LastWrite)
				}
			}
			return got.LastWrite
		}
		diff(t, "new row", (*finance.WriteMark)(nil), read())

		next := tx
		next.Memo, next.Version, next.UpdatedAt, next.LastWrite = "lunch", 2, base.Add(time.Hour), mark('a', 2)
		must(t, s.UpdateTransaction(ctx, next, 1))
		diff(t, "after a keyed write", mark('a', 2), read())

		stale := next
		stale.LastWrite = mark('b', 2)
		if err := s.UpdateTransaction(ctx, stale, 1); err == nil {
			t.Fatal("a stale version was written")
		}
		diff(t, "after a refused write", mark('a', 2), read())

		next.Memo, next.Version, next.LastWrite = "dinner", 3, nil
		must(t, s.UpdateTransaction(ctx, next, 2))
		diff(t, "after a write without a key", (*finance.WriteMark)(nil), read())
	})

	t.Run("goal", func(t *testing.T) {
		g := goal(f.user, 1)
		must(t, s.CreateGoal(ctx, g))
		read := func() *finance.WriteMark {
			t.Helper()
			got, err := s.GetGoal(ctx, f.user, g.ID)
			must(t, err)
			listed, err := s.ListGoals(ctx, f.user, nil, 0)
			must(t, err)
			if len(listed) != 1 {
				t.Fatalf("%d goals listed", len(listed))
			}
			diff(t, "listed mark", got.LastWrite, listed[0].LastWrite)
			return got.LastWrite
		}
		diff(t, "new goal", (*finance.WriteMark)(nil), read())

		next := g
		next.Name, next.Version, next.UpdatedAt, next.LastWrite = "Renamed", 2, base.Add(time.Hour), mark('c', 2)
		must(t, s.UpdateGoal(ctx, next, 1))
		diff(t, "after a keyed write", mark('c', 2), read())

		next.Name, next.Version, next.LastWrite = "Again", 3, nil
		must(t, s.UpdateGoal(ctx, next, 2))
		diff(t, "after a write without a key", (*finance.WriteMark)(nil), read())
	})

	t.Run("budget", func(t *testing.T) {
		b := budget(f.user, true, base)
		must(t, s.CreateBudget(ctx, b))
		read := func() *finance.WriteMark {
			t.Helper()
			got, err := s.GetBudget(ctx, f.user, b.ID)
			must(t, err)
			listed, err := s.ListBudgets(ctx, f.user)
			must(t, err)
			if len(listed) != 1 {
				t.Fatalf("%d budgets listed", len(listed))
			}
			diff(t, "listed mark", got.LastWrite, listed[0].LastWrite)
			return got.LastWrite
		}
		diff(t, "new budget", (*finance.WriteMark)(nil), read())

		next := b
		next.Version, next.UpdatedAt, next.LastWrite = 2, base.Add(time.Hour), mark('d', 2)
		must(t, s.UpdateBudgetGroups(ctx, next, 1))
		diff(t, "after a keyed write", mark('d', 2), read())

		next.Version, next.LastWrite = 3, nil
		must(t, s.UpdateBudgetGroups(ctx, next, 2))
		diff(t, "after a write without a key", (*finance.WriteMark)(nil), read())
	})
}
