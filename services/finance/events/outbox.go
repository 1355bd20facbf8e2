package events

import (
	"context"
	"log/slog"
	"time"

	"github.com/ledgerlane/platform/pkg/periodic"
	"github.com/ledgerlane/platform/services/finance"
)

// The outbox (docs/webhooks.md, "Transport"). Every change to announce is a
// finance.Note stored in the finance store: by the write itself, in its own
// transaction, where its store method takes notes (a transaction PATCH, a
// grant change), else by the Outbox right after the write committed. The
// Relay publishes each note's events and marks it sent. A publish that
// fails (NATS down, a timeout) is retried with backoff instead of being
// lost; a note published again makes the same events (their ids derive
// from the note's), which JetStream drops as duplicates (message id = event
// id) and jobs' fan-out takes once (one delivery per event id and
// endpoint). So events are at least once, delivered once.

// OutboxNote is a note waiting in the outbox.
type OutboxNote struct {
	finance.Note
	// Attempts counts the failed publishes so far.
	Attempts int
}

// OutboxStore keeps the notes until the relay has published them. Both
// finance stores implement it (conformance: Outbox).
type OutboxStore interface {
	// AppendNotes stores notes, each due at its At. An id already in the
	// outbox is left as it is.
	AppendNotes(ctx context.Context, notes []finance.Note) error
	// RelayNotes is one relay pass: it claims up to limit unsent notes due
	// at now, oldest first, skipping those another pass holds (in
	// PostgreSQL FOR UPDATE SKIP LOCKED, so replicas' relays never publish
	// the same note at once), and hands them to publish in order. Each one
	// published is marked sent at now; at the first failure that note's
	// attempts grow by one, it is due again at now+retry(attempts), and
	// the pass ends. Sent notes older than keep are deleted. It returns
	// how many it published.
	RelayNotes(ctx context.Context, now time.Time, limit int, keep time.Duration,
		publish func(context.Context, OutboxNote) error, retry func(attempts int) time.Duration) (int, error)
}

// Relay bounds and timing.
const (
	// RelayBatch is how many notes one pass claims at most.
	RelayBatch = 100
	// RelayInterval is how often the relay looks when nothing nudged it
	// (another replica's writes, a retry coming due).
	RelayInterval = time.Second
	// KeepSent is how long a sent note stays in the outbox.
	KeepSent = 24 * time.Hour
	// PublishTimeout bounds the publishing of one note's events.
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

// Outbox is the finance.Notifier of a service with events: every write
// stores its notes in its own transaction, and Written nudges the relay.
type Outbox struct {
	store OutboxStore
	now   finance.Clock
	log   *slog.Logger
	kick  chan struct{}
}

var _ finance.Notifier = (*Outbox)(nil)

// NewOutbox returns an Outbox over store on the clock now (nil: time.Now).
func NewOutbox(store OutboxStore, now finance.Clock, log *slog.Logger) *Outbox {
	if now == nil {
		now = time.Now
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Outbox{store: store, now: now, log: log, kick: make(chan struct{}, 1)}
}

// Written implements finance.Notifier: nudge the relay.
func (o *Outbox) Written(context.Context, string) {
	select {
	case o.kick <- struct{}{}:
	default: // a nudge is pending already
	}
}

// Relay publishes the outbox's notes as events.
type Relay struct {
	store OutboxStore
	svc   *Service
	now   finance.Clock
	log   *slog.Logger
	kick  <-chan struct{}
}

// NewRelay returns the relay of o's notes through svc (which builds and
// publishes their events).
func NewRelay(o *Outbox, svc *Service) *Relay {
	return &Relay{store: o.store, svc: svc, now: o.now, log: o.log, kick: o.kick}
}

// Pass publishes what is due now, batch after batch until a batch comes
// back short or a publish fails; it returns how many notes it published.
func (r *Relay) Pass(ctx context.Context) (int, error) {
	total := 0
	for {
		failed := false
		n, err := r.store.RelayNotes(ctx, r.now().UTC(), RelayBatch, KeepSent,
			func(ctx context.Context, n OutboxNote) error {
				// Bounded: the pass holds its claim (row locks) while
				// it publishes.
				ctx, cancel := context.WithTimeout(ctx, PublishTimeout)
				defer cancel()
				err := r.svc.Publish(ctx, n.Note)
				if err != nil {
					failed = true
					r.log.WarnContext(ctx, "finance events: publish failed, will retry", "kind", n.Kind, "note_id", n.ID,
						"attempts", n.Attempts+1, "err", err)
				}
				return err
			}, RetryDelay)
		total += n
		if err != nil || failed || n < RelayBatch {
			return total, err
		}
	}
}

// Run runs passes every interval (zero: RelayInterval) and whenever a note
// is written in this process, until ctx ends.
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
