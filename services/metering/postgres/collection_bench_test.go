package postgres_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/ledgerlane/platform/pkg/pgtest"
	"github.com/ledgerlane/platform/services/metering/postgres"
)

// BenchmarkDueCollections is the scan every replica's billing tick makes
// for due invoice collections, over a table of settled invoices (paid) and
// a few retries due later: what each tick costs when nothing is due.
func BenchmarkDueCollections(b *testing.B) {
	for _, n := range []int{1_000, 20_000} {
		b.Run(fmt.Sprintf("invoices=%d", n), func(b *testing.B) {
			pool := pgtest.Pool(b, "metering", postgres.Migrations)
			store := postgres.New(pool)
			ctx := b.Context()
			now := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
			// Accounts of 24 invoices each, inserted in one statement per
			// account to keep the set-up short.
			for i := range n / 24 {
				id := uuid.NewString()
				if _, err := pool.Exec(ctx, `INSERT INTO accounts (id, name, plan_id, billing_currency, billing_anchor, created_at)
					VALUES ($1, $2, 'growth', 'usd', $3, $3)`, id, fmt.Sprintf("acct %d", i), now.AddDate(-2, 0, 0)); err != nil {
					b.Fatal(err)
				}
				_, err := pool.Exec(ctx, `INSERT INTO invoices (id, account_id, period_start, period_end, plan_id, currency, lines,
						subtotal_cents, credit_cents, total_cents, created_at, collection_state, collection_attempts, next_attempt_at)
					SELECT gen_random_uuid(), $1, $2::timestamptz + make_interval(months => g), $2::timestamptz + make_interval(months => g + 1),
						'growth', 'usd', '[]', 14900, 0, 14900, $2, CASE WHEN g = 23 THEN 'collecting' ELSE 'paid' END,
						1, CASE WHEN g = 23 THEN $3::timestamptz ELSE NULL END
					FROM generate_series(0, 23) g`, id, now.AddDate(-2, 0, 0), now.Add(time.Hour))
				if err != nil {
					b.Fatal(err)
				}
			}
			if _, err := pool.Exec(ctx, `ANALYZE invoices`); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for b.Loop() {
				due, err := store.DueCollections(ctx, now, 200)
				if err != nil || len(due) != 0 {
					b.Fatal(len(due), err)
				}
			}
		})
	}
}
