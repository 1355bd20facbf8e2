package pg

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// ConflictAttempts is how many times RetryConflicts and InTx run a unit of
// work in all before giving its conflict back to the caller (who answers
// 503 with Retry-After, see Unavailable).
const ConflictAttempts = 4

// conflictBackoff is the pause before attempt n+1: a few milliseconds,
// growing and jittered, so the two transactions that met do not meet again
// in the same order. A variable so a test can take the pause out.
var conflictBackoff = func(n int) time.Duration {
	base := time.Duration(n) * 5 * time.Millisecond
	return base + rand.N(base)
}

// Conflict reports whether PostgreSQL aborted the transaction for a
// concurrent one: 40P01 deadlock_detected or 40001 serialization_failure.
// The server rolled the whole transaction back, so running it again is safe
// and usually succeeds; PostgreSQL's documentation asks applications to do
// exactly that.
func Conflict(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "40P01" || pgErr.Code == "40001")
}

// RetryConflicts runs fn, and runs it again while it fails with a Conflict,
// up to ConflictAttempts times in all. fn must be one whole unit of work
// (one statement outside a transaction, or one transaction) whose effects a
// conflict rolled back, and must not carry state from one attempt into the
// next. Any other error, or the context ending, ends the loop.
func RetryConflicts(ctx context.Context, fn func() error) error {
	for n := 1; ; n++ {
		err := fn()
		if err == nil || !Conflict(err) || n == ConflictAttempts || ctx.Err() != nil {
			return err
		}
		t := time.NewTimer(conflictBackoff(n))
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
	}
}

// Beginner starts transactions: a pool, a connection or a transaction (for
// a savepoint).
type Beginner interface {
	Begin(ctx context.Context) (pgx.Tx, error)
}

// InTx runs fn in a transaction on db (committed when fn returns nil, rolled
// back otherwise) and, when PostgreSQL aborts it as a deadlock victim or for
// a serialization failure, in a new transaction again, as RetryConflicts
// does. fn must reset anything it fills in outside the transaction at its
// start, since it may run more than once.
func InTx(ctx context.Context, db Beginner, fn func(pgx.Tx) error) error {
	return RetryConflicts(ctx, func() error { return pgx.BeginFunc(ctx, db, fn) })
}
