package finance_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/ledgerlane/platform/pkg/cursor"
	"github.com/ledgerlane/platform/pkg/pg"
	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/pkg/rpc"
	"github.com/ledgerlane/platform/services/finance"
)

// failingWrites is a store whose transaction writes fail with err, as
// PostgreSQL's do during an outage, mapped as the postgres adapter maps
// every error it returns (pg.Error).
type failingWrites struct {
	finance.Store
	err error
}

func (s failingWrites) UpdateTransaction(context.Context, finance.Transaction, int64, ...finance.Note) error {
	return pg.Error("finance postgres: update transaction", s.err, finance.ErrNotFound, finance.ErrAlreadyExists)
}

// TestStoreOutageAnswersUnavailable: a write during a database outage
// answers 503 unavailable with Retry-After (docs/errors.md), not 500; any
// other store failure is still an opaque internal error. The service's
// error is read as pkg/rpc answers it (rpc.Problem).
func TestStoreOutageAnswersUnavailable(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	tx := pick(t, e, unedited(e))
	for _, tc := range []struct {
		name string
		err  error
		want problem.Type
	}{
		{"connection refused", &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}, problem.Unavailable},
		{"server shutting down", fmt.Errorf("update transaction: %w", &pgconn.PgError{Code: "57P01"}), problem.Unavailable},
		{"pool acquire timeout", fmt.Errorf("acquire: %w", context.DeadlineExceeded), problem.Unavailable},
		{"a bug", errors.New("column does not exist"), problem.Internal},
	} {
		t.Run(tc.name, func(t *testing.T) {
			svc := finance.NewService(finance.Config{Store: failingWrites{Store: e.store, err: tc.err}, Cursors: cursor.New([]byte("test-key"))})
			_, err := svc.UpdateTransaction(ctx, e.write, finance.TransactionUpdate{ID: tx.ID, ExpectedVersion: tx.Version, Memo: sp("lunch")})
			if !errors.Is(err, tc.err) {
				t.Fatalf("error %v does not keep its cause %v for the log", err, tc.err)
			}
			p := rpc.Problem(err)
			wantProblem(t, p, tc.want, "")
			if tc.want == problem.Unavailable && (p.Status != 503 || p.RetryAfter <= 0) {
				t.Fatalf("problem %+v: want 503 with retry_after", p)
			}
		})
	}
}
