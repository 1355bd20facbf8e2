package pg_test

import (
	"errors"
	"fmt"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/ledgerlane/platform/pkg/pg"
	"github.com/ledgerlane/platform/pkg/problem"
)

// TestError: the one mapping every PostgreSQL adapter uses.
func TestError(t *testing.T) {
	notFound, conflict := errors.New("not found"), errors.New("conflict")
	boom := errors.New("syntax error at or near")
	for _, tc := range []struct {
		name        string
		err         error
		want        error // errors.Is target; nil: none
		unavailable bool
	}{
		{"nil", nil, nil, false},
		{"no rows", fmt.Errorf("scan: %w", pgx.ErrNoRows), notFound, false},
		{"unique violation", &pgconn.PgError{Code: "23505"}, conflict, false},
		{"malformed uuid", &pgconn.PgError{Code: "22P02"}, notFound, false},
		{"connection refused", fmt.Errorf("dial: %w", syscall.ECONNREFUSED), syscall.ECONNREFUSED, true},
		{"admin shutdown", &pgconn.PgError{Code: "57P01"}, nil, true},
		{"deadlock after every retry", &pgconn.PgError{Code: "40P01"}, nil, true},
		{"anything else", boom, boom, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := pg.Error("get job", tc.err, notFound, conflict)
			if tc.err == nil {
				if got != nil {
					t.Fatalf("got %v for nil", got)
				}
				return
			}
			if tc.want != nil && !errors.Is(got, tc.want) {
				t.Fatalf("got %v, want it to be %v", got, tc.want)
			}
			var p *problem.Problem
			isP := errors.As(got, &p)
			if tc.unavailable != (isP && p.Type == problem.Unavailable && p.RetryAfter > 0) {
				t.Fatalf("got %v (problem %+v), unavailable %v", got, p, tc.unavailable)
			}
			if tc.unavailable && !errors.Is(got, tc.err) {
				t.Fatalf("the cause is lost: %v", got)
			}
		})
	}
	// Without a conflict answer a unique violation stays an error of its own.
	if got := pg.Error("insert", &pgconn.PgError{Code: "23505"}, notFound, nil); errors.Is(got, conflict) || errors.Is(got, notFound) {
		t.Fatalf("got %v", got)
	}
}
