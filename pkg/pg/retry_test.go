package pg_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"testing/fstest"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/ledgerlane/platform/pkg/pg"
)

func TestRetryConflicts(t *testing.T) {
	defer pg.NoConflictBackoff()()
	deadlock := fmt.Errorf("update transaction: %w", &pgconn.PgError{Code: "40P01", Message: "deadlock detected"})
	serialization := &pgconn.PgError{Code: "40001"}
	other := &pgconn.PgError{Code: "23505"}
	for _, tc := range []struct {
		name      string
		errs      []error // what each attempt returns; nil after the list
		wantCalls int
		wantErr   error
	}{
		{"succeeds at once", nil, 1, nil},
		{"a deadlock, then success", []error{deadlock}, 2, nil},
		{"serialization failures, then success", []error{serialization, serialization, serialization}, 4, nil},
		{"conflicts every time: the last one is returned", []error{deadlock, deadlock, deadlock, serialization, nil}, pg.ConflictAttempts, serialization},
		{"another error is not retried", []error{other, nil}, 1, other},
		{"a conflict, then another error", []error{deadlock, other}, 2, other},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			err := pg.RetryConflicts(context.Background(), func() error {
				calls++
				if calls <= len(tc.errs) {
					return tc.errs[calls-1]
				}
				return nil
			})
			if calls != tc.wantCalls {
				t.Errorf("calls = %d, want %d", calls, tc.wantCalls)
			}
			if !errors.Is(err, tc.wantErr) && err != tc.wantErr {
				t.Errorf("err = %v, want %v", err, tc.wantErr)
			}
		})
	}
	t.Run("the context ending stops the retries", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		calls := 0
		err := pg.RetryConflicts(ctx, func() error {
			calls++
			cancel()
			return deadlock
		})
		if calls != 1 || !pg.Conflict(err) {
			t.Fatalf("calls = %d, err = %v; want one call and the conflict", calls, err)
		}
	})
}

// TestInTxRetriesARealDeadlock: two transactions update the same two rows in
// opposite orders, so PostgreSQL aborts one of them as a deadlock victim.
// InTx runs the victim again after the other commits, and both land.
func TestInTxRetriesARealDeadlock(t *testing.T) {
	url := os.Getenv("TEST_DATABASE_URL")
	if url == "" {
		t.Skip("TEST_DATABASE_URL is not set: skipping the PostgreSQL deadlock test")
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	schema := "pgtest_deadlock_" + hex.EncodeToString(b[:])
	migrations := fstest.MapFS{
		"00001_init.sql": {Data: []byte("-- +goose Up\nCREATE TABLE pair (id int PRIMARY KEY, n int NOT NULL);\nINSERT INTO pair VALUES (1, 0), (2, 0);\n")},
	}
	ctx := context.Background()
	pool, err := pg.Open(ctx, url, schema, migrations, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = pool.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+schema+" CASCADE")
		pool.Close()
	})

	// Both first updates are in before either second one starts, so the
	// second ones wait on each other: a deadlock on every run.
	var firsts sync.WaitGroup
	firsts.Add(2)
	var attempts, conflicts atomic.Int32
	run := func(first, second int) error {
		attempt := 0
		return pg.InTx(ctx, pool, func(tx pgx.Tx) error {
			attempt++
			attempts.Add(1)
			if _, err := tx.Exec(ctx, `SET LOCAL deadlock_timeout = '100ms'`); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `UPDATE pair SET n = n + 1 WHERE id = $1`, first); err != nil {
				return err
			}
			if attempt == 1 {
				firsts.Done()
				firsts.Wait()
			}
			_, err := tx.Exec(ctx, `UPDATE pair SET n = n + 1 WHERE id = $1`, second)
			if pg.Conflict(err) {
				conflicts.Add(1)
			}
			return err
		})
	}
	errs := make(chan error, 2)
	go func() { errs <- run(1, 2) }()
	go func() { errs <- run(2, 1) }()
	for range 2 {
		if err := <-errs; err != nil {
			t.Errorf("InTx: %v", err)
		}
	}
	if conflicts.Load() != 1 || attempts.Load() != 3 {
		t.Errorf("deadlocks %d, attempts %d; want 1 deadlock and 3 attempts", conflicts.Load(), attempts.Load())
	}
	var n1, n2 int
	if err := pool.QueryRow(ctx, `SELECT (SELECT n FROM pair WHERE id = 1), (SELECT n FROM pair WHERE id = 2)`).Scan(&n1, &n2); err != nil {
		t.Fatal(err)
	}
	if n1 != 2 || n2 != 2 {
		t.Errorf("rows = %d, %d; want each updated by both transactions (2, 2)", n1, n2)
	}
}
