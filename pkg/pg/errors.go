package pg

import (
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// SQLSTATE codes every store maps the same way.
const (
	uniqueViolation = "23505"
	invalidTextRepr = "22P02" // e.g. a malformed uuid: no row can match it
)

// Error is the one mapping of a driver error for every PostgreSQL adapter,
// so that the service roots never see pgx:
//   - no rows, or an id the column type cannot even hold: notFound;
//   - a unique violation: conflict (when the store has such an answer;
//     nil leaves it an internal error);
//   - the database not answering (Unavailable): the 503 unavailable problem
//     with Retry-After, wrapped with op and the cause, which pkg/rpc answers
//     as such and logs;
//   - anything else: err wrapped with op, which pkg/rpc answers as internal
//     and logs.
//
// A nil err is nil.
func Error(op string, err error, notFound, conflict error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, pgx.ErrNoRows) && notFound != nil {
		return notFound
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch {
		case pgErr.Code == uniqueViolation && conflict != nil:
			return conflict
		case pgErr.Code == invalidTextRepr && notFound != nil:
			return notFound
		}
	}
	if p := UnavailableProblem(err); p != nil {
		return fmt.Errorf("%s: %w: %w", op, p, err)
	}
	return fmt.Errorf("%s: %w", op, err)
}
