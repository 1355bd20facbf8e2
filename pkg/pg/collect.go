package pg

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// Querier is a pool, a connection or a transaction.
type Querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// All runs sql and scans every row with scan; a failure goes through mapErr
// with op (each adapter's own mapping). The list is never nil
// (pgx.CollectRows starts from an empty one), so an empty answer is [].
func All[T any](ctx context.Context, q Querier, mapErr func(op string, err error) error, op string, scan pgx.RowToFunc[T], sql string, args ...any) ([]T, error) {
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return nil, mapErr(op, err)
	}
	out, err := pgx.CollectRows(rows, scan)
	if err != nil {
		return nil, mapErr(op, err)
	}
	return out, nil
}

// One runs sql and scans its one row: none is pgx.ErrNoRows, through mapErr.
func One[T any](ctx context.Context, q Querier, mapErr func(op string, err error) error, op string, scan pgx.RowToFunc[T], sql string, args ...any) (T, error) {
	var zero T
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return zero, mapErr(op, err)
	}
	out, err := pgx.CollectExactlyOneRow(rows, scan)
	if err != nil {
		return zero, mapErr(op, err)
	}
	return out, nil
}
