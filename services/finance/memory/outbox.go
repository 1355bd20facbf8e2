package memory

import (
	"context"
	"slices"
	"time"

	"github.com/ledgerlane/platform/services/finance"
	"github.com/ledgerlane/platform/services/finance/events"
)

// outboxState is the finance events' outbox (events.OutboxStore), in
// append order. A claimed entry is being published by one pass and skipped
// by every other, as FOR UPDATE SKIP LOCKED skips a locked row.
type outboxState struct {
	outbox []*outboxEntry
}

type outboxEntry struct {
	n       events.OutboxNote
	due     time.Time
	sent    time.Time // zero: not sent
	claimed bool
}

var _ events.OutboxStore = (*Store)(nil)

// AppendNotes implements events.OutboxStore.
func (s *Store) AppendNotes(_ context.Context, notes []finance.Note) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.appendNotes(notes)
	return nil
}

// appendNotes stores notes; the caller holds s.mu (a write stores its
// notes under the lock of the change, the memory store's transaction).
func (s *Store) appendNotes(notes []finance.Note) {
	for _, n := range notes {
		if slices.ContainsFunc(s.outbox, func(e *outboxEntry) bool { return e.n.ID == n.ID }) {
			continue
		}
		n.AccountIDs = slices.Clone(n.AccountIDs)
		if n.Streams != nil {
			m := make(map[string]string, len(n.Streams))
			for k, v := range n.Streams {
				m[k] = v
			}
			n.Streams = m
		}
		s.outbox = append(s.outbox, &outboxEntry{n: events.OutboxNote{Note: n}, due: n.At})
	}
}

// RelayNotes implements events.OutboxStore. The store's lock is not held
// while publish runs: the claim is what keeps other passes off.
func (s *Store) RelayNotes(ctx context.Context, now time.Time, limit int, keep time.Duration,
	publish func(context.Context, events.OutboxNote) error, retry func(int) time.Duration) (int, error) {
	s.mu.Lock()
	var claimed []*outboxEntry
	for _, e := range s.outbox {
		if len(claimed) == limit {
			break
		}
		if e.sent.IsZero() && !e.claimed && !e.due.After(now) {
			e.claimed = true
			claimed = append(claimed, e)
		}
	}
	s.outbox = slices.DeleteFunc(s.outbox, func(e *outboxEntry) bool { return !e.sent.IsZero() && e.sent.Before(now.Add(-keep)) })
	s.mu.Unlock()

	n := 0
	var failed *outboxEntry
	var err error
	for _, e := range claimed {
		s.mu.Lock()
		note := e.n
		s.mu.Unlock()
		if err = ctx.Err(); err != nil {
			break
		}
		if publish(ctx, note) != nil {
			failed = e
			break
		}
		s.mu.Lock()
		e.sent = now
		s.mu.Unlock()
		n++
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if failed != nil {
		failed.n.Attempts++
		failed.due = now.Add(retry(failed.n.Attempts))
	}
	for _, e := range claimed {
		e.claimed = false
	}
	return n, err
}
