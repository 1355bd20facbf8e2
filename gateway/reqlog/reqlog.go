// Package reqlog keeps each account's recent API requests for its request
// log (GET /v1/requests and the portal's Requests page): when, which
// credential and mode, method, route pattern, status, duration, request id
// and problem type. Never a body, a query string or a header: the request
// log is metadata only (docs/request-log.md).
//
// The request path only appends an Entry to a bounded in-process buffer;
// Flush writes the buffer out in one round trip, every second from Run and
// before every read on this replica. With Redis each account is one stream
// capped at about Keep entries (XADD MAXLEN ~), shared by every replica,
// beside one hash of counts per day (by mode and status class, route and
// credential) kept DailyKeep days; without, both in this process.
package reqlog

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ledgerlane/platform/pkg/logging"
	"github.com/ledgerlane/platform/pkg/periodic"
)

// Keep is about how many requests an account's log holds, newest kept.
const Keep = 1000

// maxPending bounds the buffer between flushes: when the store cannot keep
// up (or is down), newer entries are dropped and counted, never waited for.
const maxPending = 20_000

// Entry is one request of an account.
type Entry struct {
	Time         time.Time
	AccountID    string
	CredentialID string
	Mode         string // "live" or "test"
	Method       string
	Route        string // the route table's pattern, never the path
	Status       int
	DurationMS   int64
	RequestID    string
	Problem      string // the problem type slug of a refusal, else empty
}

// Query narrows a listing.
type Query struct {
	// RequestID finds one request.
	RequestID string
	// Mode keeps "live" or "test" only; empty keeps both.
	Mode string
	// Limit is the most entries answered (1 to Keep; 0 means 50).
	Limit int
}

// Store holds the entries.
type Store interface {
	Append(ctx context.Context, es []Entry) error
	// Recent answers the account's entries newest first.
	Recent(ctx context.Context, accountID string, q Query) ([]Entry, error)
	// Daily answers the account's counts of the n UTC days ending with
	// to's, oldest first, a day without requests included.
	Daily(ctx context.Context, accountID string, to time.Time, n int) ([]Day, error)
}

// Log buffers entries on the request path and writes them to its Store.
type Log struct {
	store   Store
	log     *slog.Logger
	mu      sync.Mutex
	pending []Entry
	// flushing keeps flushes one at a time, so batches reach the store in
	// the order they were recorded.
	flushing sync.Mutex
	dropped  atomic.Int64
}

// New returns a Log writing to store.
func New(store Store, log *slog.Logger) *Log {
	return &Log{store: store, log: logging.OrDiscard(log)}
}

// Record keeps e for the next flush; it never blocks on the store.
func (l *Log) Record(e Entry) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.pending) >= maxPending {
		l.dropped.Add(1)
		return
	}
	l.pending = append(l.pending, e)
}

// Dropped is how many entries were dropped because the buffer was full.
func (l *Log) Dropped() int64 { return l.dropped.Load() }

// Flush writes the buffered entries. Entries a failed write held are
// dropped and counted: the log is best-effort, the request path is not.
func (l *Log) Flush(ctx context.Context) error {
	l.flushing.Lock()
	defer l.flushing.Unlock()
	l.mu.Lock()
	batch := l.pending
	l.pending = nil
	l.mu.Unlock()
	if len(batch) == 0 {
		return nil
	}
	err := l.store.Append(ctx, batch)
	if err != nil {
		l.dropped.Add(int64(len(batch)))
	}
	// The stores copy what they keep: the batch's array is the next buffer
	// (unless requests came meanwhile), so a steady flow grows no slices.
	clear(batch)
	l.mu.Lock()
	if len(l.pending) == 0 {
		l.pending = batch[:0]
	}
	l.mu.Unlock()
	return err
}

// Recent flushes this replica's buffer, then answers the account's entries
// newest first.
func (l *Log) Recent(ctx context.Context, accountID string, q Query) ([]Entry, error) {
	if err := l.Flush(ctx); err != nil {
		l.log.WarnContext(ctx, "request log not written", "err", err)
	}
	if q.Limit <= 0 {
		q.Limit = 50
	}
	q.Limit = min(q.Limit, Keep)
	return l.store.Recent(ctx, accountID, q)
}

// Daily flushes this replica's buffer, then answers the account's counts of
// the n days (1 to DailyKeep) ending with to's, oldest first.
func (l *Log) Daily(ctx context.Context, accountID string, to time.Time, n int) ([]Day, error) {
	if err := l.Flush(ctx); err != nil {
		l.log.WarnContext(ctx, "request log not written", "err", err)
	}
	return l.store.Daily(ctx, accountID, to, min(max(n, 1), DailyKeep))
}

// Run flushes every second until ctx ends, then once more.
func (l *Log) Run(ctx context.Context) {
	periodic.Task{Name: "request log", Every: time.Second, Log: l.log, Run: l.Flush}.Loop(ctx)
	_ = l.Flush(context.WithoutCancel(ctx))
}
