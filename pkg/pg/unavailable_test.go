package pg_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/ledgerlane/platform/pkg/pg"
	"github.com/ledgerlane/platform/pkg/problem"
)

// TestUnavailable: the database not answering (refused, broken, out of time,
// shutting down) is unavailability; an answer of the server is not.
func TestUnavailable(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	// Nothing listens on port 1: a real connect error from pgx.
	_, refused := pgx.Connect(ctx, "postgres://postgres@127.0.0.1:1/x?connect_timeout=2")
	if refused == nil {
		t.Fatal("connecting to port 1 succeeded")
	}
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"connection refused", fmt.Errorf("store: create job: %w", refused), true},
		{"deadline", fmt.Errorf("acquire: %w", context.DeadlineExceeded), true},
		{"admin shutdown", &pgconn.PgError{Code: "57P01", Message: "terminating connection due to administrator command"}, true},
		{"starting up", &pgconn.PgError{Code: "57P03"}, true},
		{"too many connections", &pgconn.PgError{Code: "53300"}, true},
		{"deadlock", &pgconn.PgError{Code: "40P01", Message: "deadlock detected"}, true},
		{"serialization failure", &pgconn.PgError{Code: "40001"}, true},
		{"connection failure", &pgconn.PgError{Code: "08006"}, true},
		{"closed pool", errors.New("closed pool"), true},
		{"unique violation", &pgconn.PgError{Code: "23505"}, false},
		{"syntax", &pgconn.PgError{Code: "42601"}, false},
		{"no rows", pgx.ErrNoRows, false},
		{"canceled by the caller", context.Canceled, false},
		{"plain", errors.New("boom"), false},
		{"nil", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := pg.Unavailable(tc.err); got != tc.want {
				t.Fatalf("Unavailable(%v) = %v", tc.err, got)
			}
			p := pg.UnavailableProblem(tc.err)
			if !tc.want {
				if p != nil {
					t.Fatalf("problem %+v for %v", p, tc.err)
				}
				return
			}
			if p == nil || p.Type != problem.Unavailable || p.Status != 503 || p.RetryAfter != pg.UnavailableRetryAfter {
				t.Fatalf("problem %+v", p)
			}
		})
	}
}
