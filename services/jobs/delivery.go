package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/ledgerlane/platform/pkg/periodic"
	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/services/jobs/internal/ipaddr"
)

// EventJobCompleted is the event of a completed job.
const EventJobCompleted = "job.completed"

// RetrySchedule holds when each delivery attempt is due, measured from the
// delivery's creation (the first attempt): 0 s, 1 m, 5 m, 30 m, 2 h. Five
// attempts at most; the fifth failure exhausts the delivery. It is the
// default of Config.RetrySchedule, which WEBHOOK_RETRY_SCHEDULE replaces
// (ParseRetrySchedule).
var RetrySchedule = []time.Duration{0, time.Minute, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour}

// Bounds of a configured retry schedule (ValidateRetrySchedule): at most
// MaxRetryAttempts attempts, the last due at most MaxRetryOffset after the
// first, well inside DeliveryRetention.
const (
	MaxRetryAttempts = 10
	MaxRetryOffset   = 24 * time.Hour
)

// ParseRetrySchedule reads a retry schedule written as comma-separated Go
// durations, each an offset from the delivery's creation ("0s,1m,5m,30m,2h"
// is the default), and validates it (ValidateRetrySchedule).
func ParseRetrySchedule(spec string) ([]time.Duration, error) {
	var out []time.Duration
	for i, f := range strings.Split(spec, ",") {
		f = strings.TrimSpace(f)
		d, err := time.ParseDuration(f)
		if err != nil {
			return nil, fmt.Errorf("retry schedule: entry %d %q is not a duration (e.g. 0s, 90s, 5m, 2h)", i+1, f)
		}
		out = append(out, d)
	}
	if err := ValidateRetrySchedule(out); err != nil {
		return nil, err
	}
	return out, nil
}

// ValidateRetrySchedule checks a retry schedule: the first attempt is due at
// once (0), each later one strictly after the one before, at most
// MaxRetryAttempts of them, the last within MaxRetryOffset. A schedule that
// went backwards would make "attempt n" ambiguous; an unbounded one would
// keep deliveries pending past their retention.
func ValidateRetrySchedule(s []time.Duration) error {
	switch {
	case len(s) == 0:
		return errors.New("retry schedule: no attempts")
	case len(s) > MaxRetryAttempts:
		return fmt.Errorf("retry schedule: %d attempts, at most %d", len(s), MaxRetryAttempts)
	case s[0] != 0:
		return fmt.Errorf("retry schedule: the first attempt must be due at 0s, not %s", s[0])
	case s[len(s)-1] > MaxRetryOffset:
		return fmt.Errorf("retry schedule: the last attempt is due %s after the first, at most %s", s[len(s)-1], MaxRetryOffset)
	}
	for i := 1; i < len(s); i++ {
		if s[i] <= s[i-1] {
			return fmt.Errorf("retry schedule: attempt %d (%s) is not after attempt %d (%s)", i+1, s[i], i, s[i-1])
		}
	}
	return nil
}

// DeliveryTimeout bounds one attempt; running out counts as a failure.
const DeliveryTimeout = 10 * time.Second

// claimLease keeps a claimed delivery from being sent by another replica
// while this one is still trying it (well above DeliveryTimeout).
const claimLease = time.Minute

// WebhookSender sends one signed delivery attempt: body POSTed to target,
// signed at the time at with each of secrets (the header carries one
// signature per secret: two while a rotated secret is in its overlap),
// naming the event, its id and the delivery id. webhook.Client is the HTTP
// implementation. status is the receiver's HTTP status, 0 when none came.
// Any error is a failed attempt; without a status its text is the failure's
// class, without content: "timeout", "dns error", "connection refused",
// "tls error", "address not allowed", "transport error" or "bad request".
type WebhookSender interface {
	Send(ctx context.Context, target string, secrets []string, event, eventID, deliveryID string, body []byte, at time.Time) (status int, err error)
}

// eventNamespace derives the event ids of job events (eventID).
var eventNamespace = uuid.MustParse("4f0e3b8a-0a51-4c43-9d0e-6a1f2f2c8e51")

// eventID is the id of the event of type event about job jobID: derived,
// so that a redelivered event (and every endpoint's delivery of it) has
// the same id.
func eventID(event, jobID string) string {
	return uuid.NewSHA1(eventNamespace, []byte(event+"|"+jobID)).String()
}

// completedBody is the job.completed delivery body. It mirrors
// jobs.v1.JobCompletedEvent as protojson writes it with proto names and
// default values: unset timestamps are left out.
type completedBody struct {
	Event          string `json:"event"`
	ID             string `json:"id"`
	Status         string `json:"status"`
	ItemCount      int    `json:"item_count"`
	SucceededCount int    `json:"succeeded_count"`
	FailedCount    int    `json:"failed_count"`
	CreatedAt      string `json:"created_at,omitempty"`
	StartedAt      string `json:"started_at,omitempty"`
	CompletedAt    string `json:"completed_at,omitempty"`
	ExpiresAt      string `json:"expires_at,omitempty"`
	Reference      string `json:"reference"`
}

// timestamp formats t as protojson formats a google.protobuf.Timestamp: RFC
// 3339 in UTC with 0, 3, 6 or 9 fractional digits; "" for the zero time.
func timestamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	x := t.UTC().Format("2006-01-02T15:04:05.000000000")
	x = strings.TrimSuffix(x, "000")
	x = strings.TrimSuffix(x, "000")
	x = strings.TrimSuffix(x, ".000")
	return x + "Z"
}

// eventBody is the job.completed delivery body: metadata only.
func eventBody(j Job) ([]byte, error) {
	return json.Marshal(completedBody{
		Event: EventJobCompleted, ID: j.ID, Status: j.Status,
		ItemCount: j.ItemCount, SucceededCount: j.Succeeded, FailedCount: j.Failed,
		CreatedAt: timestamp(j.CreatedAt), StartedAt: timestamp(j.StartedAt),
		CompletedAt: timestamp(j.CompletedAt), ExpiresAt: timestamp(j.ExpiresAt),
		Reference: j.Reference,
	})
}

// RunFanout consumes job.completed events until ctx ends and creates one
// delivery per active endpoint of the job's tenant.
func (s *Service) RunFanout(ctx context.Context) error {
	cons, err := s.queue.EventConsumer(ctx)
	if err != nil {
		return fmt.Errorf("jobs: event consumer: %w", err)
	}
	consume(ctx, s, cons, "events", func(msg Msg[CompletedEvent]) {
		mctx := msgContext(ctx, msg) // the completing worker's trace
		ev, err := msg.Value()
		if err != nil {
			_ = msg.Term()
			return
		}
		if err := s.Fanout(mctx, ev.AccountID, ev.Mode, ev.JobID, ev.Body); err != nil {
			s.log.WarnContext(mctx, "jobs: fanout will be retried", "job_id", ev.JobID, "err", err)
			_ = msg.Nak(time.Second)
			return
		}
		// After the fan-out, so a metering outage delays no webhook; the
		// event is redelivered until the refund is answered (the
		// fan-out finds its deliveries there, the refund its reference).
		if err := s.refundFailed(mctx, ev.AccountID, ev.JobID); err != nil {
			s.log.WarnContext(mctx, "jobs: refund will be retried", "job_id", ev.JobID, "err", err)
			_ = msg.Nak(5 * time.Second)
			return
		}
		_ = msg.Ack()
	})
	return nil
}

// consume hands every message of cons to handle until ctx ends; after each
// batch it sends the deliveries now due without waiting for the tick.
func consume[T any](ctx context.Context, s *Service, cons Consumer[T], what string, handle func(Msg[T])) {
	for ctx.Err() == nil {
		fctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		batch, err := cons.Fetch(fctx, 10)
		if err != nil {
			cancel()
			if ctx.Err() == nil {
				s.log.Warn("jobs: fetch "+what, "err", err)
				time.Sleep(200 * time.Millisecond)
			}
			continue
		}
		for msg := range batch {
			handle(msg)
		}
		cancel()
		s.DeliverDue(ctx)
	}
}

// Event is one event on its way to the endpoints subscribed to its type:
// a job.completed from a worker, or an event another service published
// (the finance events, docs/webhooks.md).
type Event struct {
	AccountID string
	// Mode is the mode of the endpoints that receive it ("" reads as live).
	Mode string
	// Type is the event type (EventTypes).
	Type string
	// ID is the event id, the same on every endpoint's delivery.
	ID string
	// JobID is the job of a job.completed event; "" otherwise.
	JobID string
	// CoalesceKey, when set, lets a waiting delivery with the same key to
	// the same endpoint absorb the event (Delivery.CoalesceKey).
	CoalesceKey string
	Body        []byte
}

// Fanout creates the deliveries of one job.completed event (FanoutEvent).
func (s *Service) Fanout(ctx context.Context, accountID, mode, jobID string, body []byte) error {
	return s.FanoutEvent(ctx, Event{AccountID: accountID, Mode: mode, Type: EventJobCompleted,
		ID: eventID(EventJobCompleted, jobID), JobID: jobID, Body: body})
}

// FanoutEvent creates the deliveries of one event, to the active endpoints
// of its mode (test events to test endpoints, live to live) that subscribe
// to its type.
// It is idempotent: a repeated event finds its deliveries already there.
// An event with a CoalesceKey adds nothing for an endpoint that already has
// a delivery with that key waiting to be sent.
func (s *Service) FanoutEvent(ctx context.Context, ev Event) error {
	es, err := s.store.ListEndpoints(ctx, ev.AccountID)
	if err != nil {
		return err
	}
	es = ofMode(es, ev.Mode)
	now := s.timestamp()
	// The attempts run later, from the store: they continue this trace (the
	// publisher's) only through what is stored with them.
	traceparent, tracestate := s.tracer.Inject(ctx)
	for _, e := range es {
		if e.Status != EndpointActive || !e.Subscribes(ev.Type) {
			continue
		}
		_, err := s.store.CreateDelivery(ctx, Delivery{
			ID: uuid.NewString(), AccountID: ev.AccountID, EndpointID: e.ID, JobID: ev.JobID,
			Event: ev.Type, EventID: ev.ID, Origin: OriginEvent, CoalesceKey: ev.CoalesceKey,
			Body: ev.Body, Status: DeliveryPending, NextAttemptAt: now, CreatedAt: now,
			TraceParent: traceparent, TraceState: tracestate,
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// RunDomainFanout consumes the events other services publish (the finance
// events) until ctx ends and fans each out (FanoutEvent). A malformed
// event, or one of a type not in EventTypes, is dropped with a warning.
func (s *Service) RunDomainFanout(ctx context.Context) error {
	cons, err := s.queue.DomainEventConsumer(ctx)
	if err != nil {
		return fmt.Errorf("jobs: domain event consumer: %w", err)
	}
	consume(ctx, s, cons, "domain events", func(msg Msg[Event]) {
		mctx := msgContext(ctx, msg)
		ev, err := msg.Value()
		if err == nil {
			err = checkDomainEvent(ev)
		}
		if err != nil {
			s.log.WarnContext(mctx, "jobs: domain event dropped", "event", ev.Type, "event_id", ev.ID, "err", err)
			_ = msg.Term()
			return
		}
		if err := s.FanoutEvent(mctx, ev); err != nil {
			s.log.WarnContext(mctx, "jobs: fanout will be retried", "event", ev.Type, "event_id", ev.ID, "err", err)
			_ = msg.Nak(time.Second)
			return
		}
		_ = msg.Ack()
	})
	return nil
}

// checkDomainEvent refuses an event the fan-out cannot deliver: an unknown
// type (or job.completed, which only workers send), ids that are not UUIDs,
// a mode other than live or test, a body that is not a JSON object.
func checkDomainEvent(ev Event) error {
	switch {
	case ev.Type == EventJobCompleted || !slices.ContainsFunc(EventTypes, func(t EventType) bool { return t.Name == ev.Type }):
		return fmt.Errorf("unknown event type %q", clip(ev.Type, 64))
	case uuid.Validate(ev.ID) != nil || uuid.Validate(ev.AccountID) != nil:
		return errors.New("event and account ids must be UUIDs")
	case ev.Mode != "live" && ev.Mode != "test":
		return fmt.Errorf("mode %q is neither live nor test", clip(ev.Mode, 16))
	case len(ev.CoalesceKey) > 200:
		return errors.New("coalesce key too long")
	case !json.Valid(ev.Body) || len(ev.Body) == 0 || ev.Body[0] != '{':
		return errors.New("body is not a JSON object")
	}
	return nil
}

// RunDeliveries sends due deliveries every interval until ctx ends.
func (s *Service) RunDeliveries(ctx context.Context, every time.Duration) {
	periodic.Task{Name: "jobs: deliveries", Every: every, Log: s.log,
		Run: func(ctx context.Context) error { s.DeliverDue(ctx); return nil }}.Loop(ctx)
}

// DeliverDue sends every delivery due at the clock's now, in parallel, and
// records each attempt. It returns how many attempts it made. Tests call it
// after moving the clock.
func (s *Service) DeliverDue(ctx context.Context) int {
	if s.keys == nil {
		return 0
	}
	// One pass at a time per process; replicas are kept apart by ClaimDue.
	s.deliverMu.Lock()
	defer s.deliverMu.Unlock()
	total := 0
	for ctx.Err() == nil {
		ds, err := s.store.ClaimDue(ctx, s.now(), claimLease, 50)
		if err != nil {
			s.log.Error("jobs: claim deliveries", "err", err)
			return total
		}
		if len(ds) == 0 {
			return total
		}
		var wg sync.WaitGroup
		for _, d := range ds {
			wg.Go(func() { s.attempt(ctx, d) })
		}
		wg.Wait()
		total += len(ds)
	}
	return total
}

// attempt makes one delivery attempt in a span of its own, a child of the
// fan-out's span stored with the delivery, so every attempt (a retry hours
// later, or after a restart) is in the job's trace and its log lines carry
// the job's trace id. A delivery stored without a trace (tracing was off)
// starts a trace of its own, so the lines still carry one.
func (s *Service) attempt(ctx context.Context, d Delivery) {
	d = withEventID(d)
	if d.TraceParent != "" {
		ctx = s.tracer.Extract(ctx, d.TraceParent, d.TraceState)
	}
	ctx, end := s.tracer.Start(ctx, "jobs.webhook.attempt")
	defer end()
	e, err := s.store.EndpointByID(ctx, d.EndpointID)
	if errors.Is(err, ErrNotFound) || (err == nil && e.Status != EndpointActive) {
		s.record(ctx, d, Attempt{At: s.now(), Abandoned: true})
		return
	}
	if err != nil {
		s.log.ErrorContext(ctx, "jobs: endpoint", "delivery_id", d.ID, "err", err)
		return // the lease expires and the delivery is claimed again
	}
	now := s.now()
	secrets, err := s.signingSecrets(e, now)
	if err != nil {
		s.log.ErrorContext(ctx, "jobs: open webhook secret", "endpoint_id", e.ID, "err", err)
		return
	}
	status, err := s.send(ctx, e.URL, secrets, d, now)
	a := Attempt{At: now, Succeeded: err == nil, StatusCode: status, Duration: s.now().Sub(now)}
	if err != nil {
		if status == 0 {
			a.Failure = err.Error()
		}
		n := d.Attempts + 1
		if sched := s.cfg.RetrySchedule; n >= len(sched) {
			a.Exhausted = true
		} else {
			a.NextAttemptAt = d.CreatedAt.Add(sched[n])
		}
		s.log.InfoContext(ctx, "jobs: delivery attempt failed", "delivery_id", d.ID, "endpoint_id", e.ID, "attempt", n, "reason", err.Error())
	}
	s.metrics.DeliveryAttempted(a)
	s.record(ctx, d, a)
}

// signingSecrets opens the secrets a delivery to e is signed with at now:
// its secret, and the one a rotation replaced while its overlap lasts.
func (s *Service) signingSecrets(e Endpoint, now time.Time) ([]string, error) {
	cur, err := s.keys.Open(e.Secret, secretAAD(e.ID))
	if err != nil {
		return nil, err
	}
	out := []string{string(cur)}
	if e.PrevSecret != nil && now.Before(e.PrevSecretUntil) {
		prev, err := s.keys.Open(e.PrevSecret, secretAAD(e.ID))
		if err != nil {
			return nil, err
		}
		out = append(out, string(prev))
	}
	return out, nil
}

func (s *Service) record(ctx context.Context, d Delivery, a Attempt) {
	// The attempt has happened: its outcome is written even when the pass
	// is being stopped (a shutdown mid-attempt). A record lost so would
	// leave the delivery due at its old time, and the next pass would send
	// that attempt again under the wrong number.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	disabled, err := s.store.RecordAttempt(ctx, d.ID, a)
	if err != nil {
		s.log.ErrorContext(ctx, "jobs: record attempt", "delivery_id", d.ID, "err", err)
		return
	}
	if disabled {
		s.metrics.EndpointAutoDisabled()
		s.log.WarnContext(ctx, "jobs: webhook endpoint disabled after consecutive exhausted deliveries",
			"endpoint_id", d.EndpointID, "account_id", d.AccountID, "exhausted", DisableAfter)
	}
}

// send makes one signed attempt, bounded by DeliveryTimeout.
func (s *Service) send(ctx context.Context, target string, secrets []string, d Delivery, now time.Time) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, DeliveryTimeout)
	defer cancel()
	return s.webhooks.Send(ctx, target, secrets, d.Event, d.EventID, d.ID, d.Body, now)
}

// checkURL validates a webhook URL: http or https with a host; without
// AllowPrivate, the host must be (or resolve only to) public addresses.
func (s *Service) checkURL(ctx context.Context, raw string) (string, error) {
	bad := func(detail string) error {
		return fieldProblem(problem.InvalidInput, detail, "url")
	}
	if raw == "" {
		return "", bad("url is required")
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Hostname() == "" {
		return "", bad("url must be an absolute http or https URL")
	}
	if u.User != nil {
		return "", bad("url must not carry credentials")
	}
	if len(raw) > 2048 {
		return "", bad("url is longer than 2048 characters")
	}
	if s.cfg.AllowPrivate {
		return u.String(), nil
	}
	host := u.Hostname()
	if a, err := netip.ParseAddr(host); err == nil {
		if !ipaddr.IsPublic(a) {
			return "", bad("url must not point at a loopback, private or link-local address")
		}
		return u.String(), nil
	}
	if host == "localhost" {
		return "", bad("url must not point at a loopback, private or link-local address")
	}
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	addrs, err := s.resolver.LookupNetIP(rctx, "ip", host)
	if err != nil || len(addrs) == 0 {
		return "", bad("url host does not resolve")
	}
	for _, a := range addrs {
		if !ipaddr.IsPublic(a) {
			return "", bad("url host resolves to a loopback, private or link-local address")
		}
	}
	return u.String(), nil
}

// modeOf is a stored mode, "live" for rows and events from before modes.
func modeOf(m string) string {
	if m == "" {
		return "live"
	}
	return m
}

// ofMode keeps the endpoints of mode.
func ofMode(es []Endpoint, mode string) []Endpoint {
	out := es[:0:0]
	for _, e := range es {
		if modeOf(e.Mode) == modeOf(mode) {
			out = append(out, e)
		}
	}
	return out
}
