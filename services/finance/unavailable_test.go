package finance_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/ledgerlane/platform/pkg/cursor"
	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/services/finance"
	"github.com/ledgerlane/platform/services/finance/postgres"
)

// failingWrites is a store whose transaction writes fail with err, as
// PostgreSQL's do during an outage.
type failingWrites struct {
	finance.Store
	err error
}

func (s failingWrites) UpdateTransaction(context.Context, finance.Transaction, int64) error {
	return s.err
}

// TestStoreOutageAnswersUnavailable: a write during a database outage
// answers 503 unavailable with Retry-After (docs/errors.md), not 500; any
// other store failure is still an opaque internal error.
func TestStoreOutageAnswersUnavailable(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	tx := pick(t, e, unedited(e))
	for _, tc := range []struct {
		name string
		err  error
		want problem.Type
	}{
		{"server shutting down", fmt.Errorf("update transaction: %w", &pgconn.PgError{Code: "57P01"}), problem.Unavailable},
		{"pool acquire timeout", fmt.Errorf("acquire: %w", context.DeadlineExceeded), problem.Unavailable},
		{"a bug", errors.New("column does not exist"), problem.Internal},
	} {
		t.Run(tc.name, func(t *testing.T) {
			svc := finance.NewService(failingWrites{Store: e.store, err: tc.err}, cursor.New([]byte("test-key")), nil, nil)
			svc.UseUnavailability(postgres.Unavailable) // as server.New does on PostgreSQL
			_, err := svc.UpdateTransaction(ctx, e.write, finance.TransactionUpdate{ID: tx.ID, ExpectedVersion: tx.Version, Memo: sp("lunch")})
			wantProblem(t, err, tc.want, "")
			var p *problem.Problem
			_ = errors.As(err, &p)
			if tc.want == problem.Unavailable && (p.Status != 503 || p.RetryAfter <= 0) {
				t.Fatalf("problem %+v: want 503 with retry_after", p)
			}
		})
	}
}
