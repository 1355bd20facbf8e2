package events

import (
	"context"
	"log/slog"
	"time"

	"github.com/ledgerlane/platform/pkg/periodic"
	"github.com/ledgerlane/platform/services/finance"
)

// The outbox (docs/webhooks.md, "Transport"): an event is first stored in
// the finance store, and a relay publishes it on the bus and marks it sent.
// A publish that fails (NATS down, a timeout) is retried with backoff
// instead of being lost; a publish whose acknowledgement was lost is made
// again with the same event id, which JetStream drops as a duplicate
// (message id = event id) and jobs' fan-out takes once (one delivery per
// event id and endpoint). So events are at least once, delivered once.

// OutboxEvent is an event waiting in the outbox.
type OutboxEvent struct {
	Event
	CreatedAt time.Time
	// Attempts counts the failed publishes so far.
	Attempts int
}

// OutboxStore keeps the events until the relay has published them. Both
// finance stores implement it (conformance: Outbox).
type OutboxStore interface {
	// AppendOutbox stores events to publish, due at once. An id already
	// in the outbox is left as it is.
	AppendOutbox(ctx context.Context, evs []Event, at time.Time) error
	// RelayOutbox is one relay pass: it claims up to limit unsent events
	// due at now, oldest first, skipping those another pass holds (in
	// PostgreSQL FOR UPDATE SKIP LOCKED, so replicas' relays never publish
	// the same event at once), and hands them to publish in order. Each
	// one published is marked sent at now; at the first failure that
	// event's attempts grow by one, it is due again at now+retry(attempts),
	// and the pass ends. Sent events older than keep are deleted. It
	// returns how many it published.
	RelayOutbox(ctx context.Context, now time.Time, limit int, keep time.Duration,
		publish func(context.Context, OutboxEvent) error, retry func(attempts int) time.Duration) (int, error)
}

// Relay bounds and timing.
const (
	// RelayBatch is how many events one pass claims at most.
	RelayBatch = 100
	// RelayInterval is how often the relay looks when nothing nudged it.
	RelayInterval = time.Second
	// KeepSent is how long a sent event stays in the outbox (to look at
	// when a receiver asks where an event went).
	KeepSent = 24 * time.Hour
	// PublishTimeout bounds one publish.
	PublishTimeout = 5 * time.Second
	// MaxRetryDelay bounds the backoff between attempts.
	MaxRetryDelay = time.Minute
)

// RetryDelay is the wait after the n-th failed publish: 1 s doubling to
// MaxRetryDelay.
func RetryDelay(n int) time.Duration {
	if n < 1 {
		n = 1
	}
	return min(time.Second<<min(n-1, 10), MaxRetryDelay)
}

// Outbox is the Publisher the events Service writes through: it stores the
// event and nudges the relay.
type Outbox struct {
	store OutboxStore
	now   finance.Clock
	kick  chan struct{}
}

// NewOutbox returns an Outbox over store on the clock now (nil: time.Now).
func NewOutbox(store OutboxStore, now finance.Clock) *Outbox {
	if now == nil {
		now = time.Now
	}
	return &Outbox{store: store, now: now, kick: make(chan struct{}, 1)}
}

// Publish stores ev for the relay.
func (o *Outbox) Publish(ctx context.Context, ev Event) error {
	if err := o.store.AppendOutbox(ctx, []Event{ev}, o.now().UTC()); err != nil {
		return err
	}
	select {
	case o.kick <- struct{}{}:
	default: // a nudge is pending already
	}
	return nil
}

// Relay publishes the outbox's events.
type Relay struct {
	store OutboxStore
	pub   Publisher
	now   finance.Clock
	log   *slog.Logger
	kick  <-chan struct{}
}

// NewRelay returns the relay of o's events onto pub.
func NewRelay(o *Outbox, pub Publisher, log *slog.Logger) *Relay {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Relay{store: o.store, pub: pub, now: o.now, log: log, kick: o.kick}
}

// Pass publishes what is due now, batch after batch until a batch comes
// back short or a publish fails; it returns how many it published.
func (r *Relay) Pass(ctx context.Context) (int, error) {
	total := 0
	for {
		failed := false
		n, err := r.store.RelayOutbox(ctx, r.now().UTC(), RelayBatch, KeepSent,
			func(ctx context.Context, ev OutboxEvent) error {
				// Bounded: the pass holds its claim (row locks) while
				// it publishes.
				ctx, cancel := context.WithTimeout(ctx, PublishTimeout)
				defer cancel()
				err := r.pub.Publish(ctx, ev.Event)
				if err != nil {
					failed = true
					r.log.WarnContext(ctx, "finance events: publish failed, will retry", "event", ev.Type, "event_id", ev.ID,
						"attempts", ev.Attempts+1, "err", err)
				}
				return err
			}, RetryDelay)
		total += n
		if err != nil || failed || n < RelayBatch {
			return total, err
		}
	}
}

// Run runs passes every interval (zero: RelayInterval) and whenever an
// event is appended, until ctx ends.
func (r *Relay) Run(ctx context.Context, every time.Duration) {
	if every <= 0 {
		every = RelayInterval
	}
	pass := func(ctx context.Context) error { _, err := r.Pass(ctx); return err }
	done := make(chan struct{})
	go func() {
		defer close(done)
		periodic.Task{Name: "finance events relay", Every: every, AtStart: true, Log: r.log, Run: pass}.Loop(ctx)
	}()
	defer func() { <-done }()
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.kick:
			if err := pass(ctx); err != nil && ctx.Err() == nil {
				r.log.WarnContext(ctx, "finance events relay", "err", err)
			}
		}
	}
}
