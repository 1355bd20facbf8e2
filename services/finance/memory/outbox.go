package memory

import (
	"context"
	"slices"
	"time"

	"github.com/ledgerlane/platform/services/finance/events"
)

// outboxState is the finance events' outbox (events.OutboxStore), in
// append order. A claimed entry is being published by one pass and skipped
// by every other, as FOR UPDATE SKIP LOCKED skips a locked row.
type outboxState struct {
	outbox []*outboxEntry
}

type outboxEntry struct {
	ev      events.OutboxEvent
	due     time.Time
	sent    time.Time // zero: not sent
	claimed bool
}

var _ events.OutboxStore = (*Store)(nil)

// AppendOutbox implements events.OutboxStore.
func (s *Store) AppendOutbox(_ context.Context, evs []events.Event, at time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ev := range evs {
		if slices.ContainsFunc(s.outbox, func(e *outboxEntry) bool { return e.ev.ID == ev.ID }) {
			continue
		}
		ev.Body = slices.Clone(ev.Body)
		s.outbox = append(s.outbox, &outboxEntry{ev: events.OutboxEvent{Event: ev, CreatedAt: at}, due: at})
	}
	return nil
}

// RelayOutbox implements events.OutboxStore. The store's lock is not held
// while publish runs: the claim is what keeps other passes off.
func (s *Store) RelayOutbox(ctx context.Context, now time.Time, limit int, keep time.Duration,
	publish func(context.Context, events.OutboxEvent) error, retry func(int) time.Duration) (int, error) {
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
		ev := e.ev
		s.mu.Unlock()
		if err = ctx.Err(); err != nil {
			break
		}
		if publish(ctx, ev) != nil {
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
		failed.ev.Attempts++
		failed.due = now.Add(retry(failed.ev.Attempts))
	}
	for _, e := range claimed {
		e.claimed = false
	}
	return n, err
}
