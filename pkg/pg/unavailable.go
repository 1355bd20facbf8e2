package pg

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/ledgerlane/platform/pkg/problem"
)

// UnavailableRetryAfter is the Retry-After, in seconds, of the problem
// UnavailableProblem answers: long enough for a pool to reconnect, short
// enough for a restart or failover of the database.
const UnavailableRetryAfter = 5

// Unavailable reports whether err means that PostgreSQL did not answer, as
// opposed to answering no: the connection was refused or broke, the pool
// could not hand out a connection in time or is closed, the server is
// shutting down, starting up or out of connection slots, or the operation ran
// out of time. Such an error is the dependency's, not a bug and not the
// request's: the request may succeed when retried. Constraint violations,
// syntax errors and every other answer of the server are not unavailability.
//
// This is the one classification of store unavailability; each service's
// store-error path asks it (finance's and jobs' internal helpers, metering's
// API) and answers UnavailableProblem instead of internal.
func Unavailable(err error) bool {
	if err == nil {
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return unavailableState(pgErr.Code)
	}
	var connectErr *pgconn.ConnectError
	var netErr net.Error
	switch {
	case errors.As(err, &connectErr), // dial, TLS or startup failed
		pgconn.SafeToRetry(err), // failed before anything was sent
		pgconn.Timeout(err),     // a deadline inside pgconn
		errors.Is(err, context.DeadlineExceeded),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		errors.As(err, &netErr):
		return true
	}
	// pgx reports a connection that broke mid-query, and the pool (puddle) a
	// closed pool, with these texts and no typed error of their own.
	msg := err.Error()
	return strings.Contains(msg, "conn closed") || strings.Contains(msg, "closed pool")
}

// unavailableState: SQLSTATE class 08 (connection exception), 57P01
// admin_shutdown, 57P02 crash_shutdown, 57P03 cannot_connect_now, 53300
// too_many_connections, 58000/58030 system and I/O errors, and 40001
// serialization_failure and 40P01 deadlock_detected: the server rolled the
// transaction back for a concurrent one and the same request, retried,
// succeeds. Stores run such a transaction again themselves (InTx), so this
// is what is left when every attempt lost.
func unavailableState(code string) bool {
	if strings.HasPrefix(code, "08") {
		return true
	}
	switch code {
	case "57P01", "57P02", "57P03", "53300", "58000", "58030", "40001", "40P01":
		return true
	}
	return false
}

// UnavailableProblem is the 503 unavailable problem (with Retry-After) for
// an error Unavailable classifies as the database not answering, and nil for
// any other error: callers answer those as they did (usually internal).
func UnavailableProblem(err error) *problem.Problem {
	if !Unavailable(err) {
		return nil
	}
	return problem.New(problem.Unavailable, "the database is not answering; retry shortly").WithRetryAfter(UnavailableRetryAfter)
}
