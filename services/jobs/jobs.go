// Package jobs owns batch conversion jobs (queued, encrypted at rest) and
// webhook endpoints with signed deliveries. This package holds the domain
// types, the contracts of what the Service needs (Store, Queue, Converter,
// WebhookSender, Metrics) and the Service itself, in plain Go: no network,
// transport or metrics library. The adapters live in subpackages: storage in
// memory and postgres, the work queue in natsqueue (NATS JetStream), the
// converter client in convertclient (gRPC), the webhook HTTP client and the
// receiver-side signature check in webhook, Prometheus collectors in metrics,
// and the gRPC API in grpcapi.
package jobs

import (
	"context"
	"errors"
	"slices"
	"time"
)

// Clock returns the current time. Everything time-dependent (expiry, sweep,
// the webhook retry schedule) reads it, so tests move time instead of sleeping.
type Clock func() time.Time

// Job statuses. The spec names queued and completed; running is our decision
// (a worker has picked up at least one item). completed is the only terminal
// status: a job whose items failed still completes, and the failures show per
// item.
const (
	JobQueued    = "queued"
	JobRunning   = "running"
	JobCompleted = "completed"
)

// Item statuses. ok is the spec's; pending and failed are our decisions. A
// failed item carries a problem document instead of a result.
const (
	ItemPending = "pending"
	ItemOK      = "ok"
	ItemFailed  = "failed"
)

// Limits.
const (
	MaxItems = 10000
	// MaxItemBytes is the largest message of a batch: the same 2 MiB as one
	// synchronous conversion, so a batch is never a way around that limit.
	MaxItemBytes = 2 << 20
	DefaultTTL   = time.Hour
	MaxTTL       = 24 * time.Hour
	// MaxEndpoints is how many webhook endpoints one account may register:
	// every completed job is delivered to each of them.
	MaxEndpoints = 16
)

// Job is a batch conversion job. Counts satisfy
// ItemCount = Succeeded + Failed + Pending.
type Job struct {
	ID        string // UUID
	AccountID string // the tenant
	Mode      string // "live" or "test", passed on to the converter
	Status    string
	From, To  string
	// Options are the conversion options (no message content), applied to
	// every item.
	Options     Options
	ItemCount   int
	Succeeded   int
	Failed      int
	Pending     int
	TTL         time.Duration
	CreatedAt   time.Time
	StartedAt   time.Time // zero until a worker picks an item up
	CompletedAt time.Time // zero until completed
	// ExpiresAt is CreatedAt+TTL until completion, then CompletedAt+TTL. The
	// sweeper removes the job and its results once it has passed.
	ExpiresAt time.Time
	// IdempotencyKey, when set, names the submission for a retry: the
	// client's Idempotency-Key scoped to its credential. An account holds at
	// most one job per key (CreateJob answers ErrConflict), which
	// JobByIdempotencyKey finds, with the RequestHash of the request that
	// created it. Both are written at creation; JobByIdempotencyKey reads
	// them back (other reads may leave them empty).
	IdempotencyKey, RequestHash string
	// Reference is the client's own name for the batch, as submitted
	// (BatchRequest.Reference); "" when none.
	Reference string
	// CredentialID is the credential that submitted it, so a refund of its
	// units goes back to the key they were counted for; "" for older jobs.
	CredentialID string
	// Replayed is never stored: CreateBatch sets it on a job it answers
	// because the request's Idempotency-Key had already committed it, so
	// that the edge does not bill that job again (docs/jobs.md "Billing").
	Replayed bool
}

// Options are a job's conversion options, as on a synchronous conversion
// (conversion.v1.Options). The zero value means none. The JSON tags are the
// stored form: the protojson names of conversion.v1.Options, so what earlier
// versions stored (protojson bytes) reads unchanged.
type Options struct {
	// TranslitProfile: "base" (default) or "german".
	TranslitProfile string `json:"translitProfile,omitempty"`
	// Field86Profile: "plain" (default) or "german".
	Field86Profile string `json:"field86Profile,omitempty"`
	// Strict fails instead of warning on lossy steps.
	Strict bool `json:"strict,omitempty"`
	// TargetVersion pins the target message version, e.g. "camt.053.001.08".
	TargetVersion string `json:"targetVersion,omitempty"`
	// DateFormat: "dmy", "mdy" or "ymd", for file targets.
	DateFormat string `json:"dateFormat,omitempty"`
	// OFXVersion: "102" or "220".
	OFXVersion string `json:"ofxVersion,omitempty"`
	// IntuBID is the Intuit bank id for QBO/OFX targets.
	IntuBID string `json:"intuBid,omitempty"`
}

// IsZero reports whether o sets nothing.
func (o Options) IsZero() bool { return o == Options{} }

// Item is one message of a job. Input and Result are sealed blobs (see
// Keyring): the store never sees plaintext.
type Item struct {
	JobID  string
	Index  int
	Status string
	// Input is the sealed message; nil once the item has completed.
	Input []byte
	// Result is the sealed Outcome; nil until the item has completed.
	Result []byte
}

// Outcome is what a completed item holds, sealed into Item.Result.
type Outcome struct {
	Result   string    `json:"result,omitempty"`
	Warnings []Warning `json:"warnings,omitempty"`
	Problem  *Problem  `json:"problem,omitempty"`
}

// Warning mirrors conversion.v1.Warning.
type Warning struct {
	Code     string `json:"code"`
	Severity string `json:"severity"`
	Message  string `json:"message,omitempty"`
	Path     string `json:"path,omitempty"`
}

// Problem is a failed item's problem document.
type Problem struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail,omitempty"`
}

// Endpoint statuses.
const (
	EndpointActive   = "active"
	EndpointDisabled = "disabled"
)

// DeliveryRetention is how long finished delivery records (metadata only)
// are kept for support before the sweeper drops them.
const DeliveryRetention = 7 * 24 * time.Hour

// DisableAfter is how many consecutively exhausted deliveries disable an
// endpoint.
const DisableAfter = 10

// Endpoint is a webhook receiver of one tenant.
type Endpoint struct {
	ID        string
	AccountID string
	// Mode is the mode of the credential that registered it ("live" or
	// "test"): it receives the events of its mode's jobs only, and only
	// credentials of its mode see it.
	Mode string
	URL  string
	// Description is the owner's note, at most MaxDescriptionLen characters.
	Description string
	// EventTypes are the event types it receives; empty means every type,
	// those added later included (shown as "*").
	EventTypes []string
	// Secret is the sealed whsec_ signing secret.
	Secret []byte
	// PrevSecret is the sealed secret a rotation replaced; deliveries are
	// signed with it too until PrevSecretUntil (RotationOverlap after the
	// rotation). Nil when no rotation is in its overlap.
	PrevSecret          []byte
	PrevSecretUntil     time.Time
	Status              string
	ConsecutiveFailures int
	CreatedAt           time.Time
}

// Subscribes reports whether e receives events of type event.
func (e Endpoint) Subscribes(event string) bool {
	return len(e.EventTypes) == 0 || slices.Contains(e.EventTypes, event)
}

// EndpointUpdate is what UpdateEndpoint changes: the nil members stay.
type EndpointUpdate struct {
	URL         *string
	Description *string
	// EventTypes, when set, replaces the list; an empty list means all.
	EventTypes *[]string
}

// Delivery statuses.
const (
	DeliveryPending   = "pending"
	DeliverySucceeded = "succeeded"
	// DeliveryFailed: every attempt failed (exhausted).
	DeliveryFailed = "failed"
	// DeliveryAbandoned: the endpoint was deleted or disabled before the
	// delivery finished; it does not count as exhausted.
	DeliveryAbandoned = "abandoned"
)

// Delivery origins: how a delivery came to be.
const (
	// OriginEvent: the fan-out of an event to the endpoints subscribed to it.
	OriginEvent = "event"
	// OriginResend: the owner resent an earlier delivery (same event id and
	// body, a new delivery id and attempt chain).
	OriginResend = "resend"
	// OriginTest: the owner sent a webhook.test event.
	OriginTest = "test"
)

// Delivery is one event sent to one endpoint. Its ID is the
// X-Service-Delivery header and stays the same across retries.
type Delivery struct {
	ID         string
	AccountID  string
	EndpointID string
	// JobID is the job of a job.completed event; "" for events of no job
	// (webhook.test).
	JobID string
	Event string
	// EventID names the event (the X-Service-Event-Id header): the same on
	// every endpoint's delivery of one event and on its resends, so that
	// receivers can deduplicate.
	EventID string
	// Origin is OriginEvent, OriginResend or OriginTest; "" reads as
	// OriginEvent. ResendOf is the resent delivery's id (OriginResend).
	Origin   string
	ResendOf string
	// Body is the JSON event body: job metadata only, never message content.
	Body          []byte
	Status        string
	Attempts      int
	NextAttemptAt time.Time
	CreatedAt     time.Time
	// TraceParent and TraceState are the W3C trace context (traceparent and
	// tracestate headers) of the fan-out that created the delivery, so every
	// attempt, even after a restart, continues the job's trace (Tracer).
	// Empty when tracing is off or the event carried no trace.
	TraceParent string
	TraceState  string
	// CoalesceKey, when set, makes the delivery absorb later events with
	// the same key to the same endpoint while it waits to be sent (a
	// finance transactions.sync_updates_available for one user and grant:
	// docs/webhooks.md, "Coalescing"). Absorbing tells whether it does now:
	// from creation until an attempt claims it, and again after a failed
	// attempt when no newer delivery took over the key. A delivery being
	// sent absorbs nothing, so a change made while the receiver may
	// already be reading the feed yields the next event.
	CoalesceKey string
	Absorbing   bool
}

// Attempt is the result of one delivery attempt, applied by RecordAttempt.
type Attempt struct {
	At        time.Time
	Succeeded bool
	// Exhausted: failed and no attempts remain.
	Exhausted bool
	// Abandoned: not sent because the endpoint is gone or disabled.
	Abandoned bool
	// NextAttemptAt is when to retry (only for a failure with attempts left).
	NextAttemptAt time.Time
	// StatusCode is the receiver's HTTP status; 0 when none came.
	StatusCode int
	// Failure is why a failed attempt failed without a status: a class
	// ("timeout", "connection refused", …, see WebhookSender), never the
	// receiver's answer; "" otherwise.
	Failure string
	// Duration is how long the attempt took.
	Duration time.Duration
}

// AttemptRecord is one attempt as stored and shown (an abandoned delivery
// has none: nothing was sent). The receiver's response body is never kept.
type AttemptRecord struct {
	// N counts from 1 within the delivery.
	N             int
	At            time.Time
	Succeeded     bool
	StatusCode    int
	Failure       string
	Duration      time.Duration
	NextAttemptAt time.Time // zero when no retry followed
}

// DeliveryFilter selects an endpoint's deliveries for ListDeliveries.
type DeliveryFilter struct {
	AccountID, EndpointID string
	// Status, when set, keeps deliveries of that status only.
	Status string
	// Before, when set, keeps deliveries older than that position (the
	// previous page's last): pages run newest first.
	Before *Position
}

// Position is a delivery's place in the newest-first order.
type Position struct {
	CreatedAt time.Time
	ID        string
}

// ErrNotFound is returned for a missing row, and for another tenant's row.
var ErrNotFound = errors.New("jobs: not found")

// ErrConflict is returned when a row with the same id exists, or a job with
// the same idempotency key.
var ErrConflict = errors.New("jobs: conflict")

// Store persists jobs, items, endpoints and deliveries. Implementations:
// memory and postgres; conformance holds the behaviour both must have.
// Methods taking accountID treat another tenant's row as missing.
type Store interface {
	// CreateJob stores a job with its items (all pending) and the intent to
	// enqueue them, atomically: the outbox of submission. The intent is not
	// claimable (ClaimUnenqueued) until j.CreatedAt+EnqueueLease, which
	// leaves it to the submitting process first. The job's progress time is
	// j.CreatedAt.
	CreateJob(ctx context.Context, j Job, items []Item) error
	// JobByIdempotencyKey returns the account's job created with
	// IdempotencyKey key (with its RequestHash), or ErrNotFound.
	JobByIdempotencyKey(ctx context.Context, accountID, key string) (Job, error)
	// ClaimUnenqueued returns up to limit jobs whose enqueue intent is still
	// open and claimable at now, oldest first, and makes each unclaimable
	// until now+lease, so that one replica publishes a job at a time.
	ClaimUnenqueued(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]Job, error)
	// MarkEnqueued closes a job's enqueue intent: its items are in the queue.
	// A missing job is no error.
	MarkEnqueued(ctx context.Context, jobID string) error
	// OutboxBacklog counts the jobs whose enqueue intent is open (claimed or
	// not) and returns the creation time of the oldest: the metrics of the
	// submission outbox. It must stay cheap (the publisher asks every pass).
	OutboxBacklog(ctx context.Context) (OutboxBacklog, error)
	// ClaimStalled returns up to limit enqueued, unfinished jobs that made no
	// progress (creation, start, an item completed) since now-stalledFor and
	// were not claimed since, and makes each unclaimable until now+lease:
	// the jobs whose items the resumer checks against the queue.
	ClaimStalled(ctx context.Context, now time.Time, stalledFor, lease time.Duration, limit int) ([]Job, error)
	// PendingIndexes returns the indexes of a job's pending items in order;
	// ErrNotFound for a missing job.
	PendingIndexes(ctx context.Context, jobID string) ([]int, error)
	// GetJob returns the tenant's job.
	GetJob(ctx context.Context, accountID, id string) (Job, error)
	// JobByID returns a job regardless of tenant; for workers only.
	JobByID(ctx context.Context, id string) (Job, error)
	// Items returns a job's items in index order.
	Items(ctx context.Context, jobID string) ([]Item, error)
	// Item returns one item.
	Item(ctx context.Context, jobID string, index int) (Item, error)
	// StartJob moves a queued job to running and sets StartedAt (and its
	// progress time); a no-op for a job that is already running or
	// completed.
	StartJob(ctx context.Context, jobID string, now time.Time) error
	// CompleteItem records a pending item's outcome: status ok or failed,
	// result stored, input purged, counts and progress time updated, and the
	// job completed
	// (CompletedAt = now, ExpiresAt = now + TTL) when it was the last item.
	// changed is false, and nothing is written, when the item had already
	// completed: a redelivered item never counts twice. The returned job is
	// the state after the call.
	CompleteItem(ctx context.Context, jobID string, index int, status string, result []byte, now time.Time) (j Job, changed bool, err error)
	// DeleteJob removes the tenant's job and its items.
	DeleteJob(ctx context.Context, accountID, id string) error
	// SweepExpired removes, with their items, every completed job with
	// ExpiresAt <= now and every unfinished job created MaxTTL or more before
	// now (one that can no longer finish: its estimate must not cut a long
	// batch short). It also drops finished deliveries created
	// DeliveryRetention or more before now. It returns how many jobs went.
	SweepExpired(ctx context.Context, now time.Time) (int, error)

	CreateEndpoint(ctx context.Context, e Endpoint) error
	// ListEndpoints returns the tenant's endpoints, oldest first.
	ListEndpoints(ctx context.Context, accountID string) ([]Endpoint, error)
	// EndpointByID returns an endpoint regardless of tenant; for delivery.
	EndpointByID(ctx context.Context, id string) (Endpoint, error)
	DeleteEndpoint(ctx context.Context, accountID, id string) error

	// CreateDelivery stores d unless a delivery of the same event for the same
	// job and endpoint exists (for an event of no job: a fan-out delivery of
	// the same event id to the same endpoint), or d has a CoalesceKey and a
	// pending delivery to the same endpoint with that key is Absorbing;
	// created reports which. This keeps the delivery id stable when the
	// event itself is redelivered, and a burst of changes one event. A
	// delivery stored with a CoalesceKey is Absorbing.
	CreateDelivery(ctx context.Context, d Delivery) (created bool, err error)
	// ClaimDue returns up to limit pending deliveries with NextAttemptAt <=
	// now, oldest first, and pushes their NextAttemptAt to now+lease so that
	// another replica does not send them concurrently. A claimed delivery
	// stops absorbing (Delivery.CoalesceKey).
	ClaimDue(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]Delivery, error)
	// RecordAttempt applies an attempt to a delivery and its endpoint, and
	// stores it (AttemptRecord) unless abandoned; a failure with a retry
	// left makes a coalescing delivery absorb again unless another pending
	// one with its key and endpoint absorbs: a success resets the endpoint's ConsecutiveFailures; an exhausted delivery
	// increments it and disables the endpoint at DisableAfter. disabled
	// reports whether this call moved the endpoint from active to disabled,
	// so the disabling is observed once.
	RecordAttempt(ctx context.Context, deliveryID string, a Attempt) (disabled bool, err error)
	// CountDisabledEndpoints returns how many endpoints, of every tenant,
	// are disabled.
	CountDisabledEndpoints(ctx context.Context) (int, error)
	// Delivery returns one delivery.
	Delivery(ctx context.Context, id string) (Delivery, error)

	// UpdateEndpoint applies u to the tenant's endpoint and returns it as
	// it is after.
	UpdateEndpoint(ctx context.Context, accountID, id string, u EndpointUpdate) (Endpoint, error)
	// RotateSecret makes secret (sealed) the tenant's endpoint's signing
	// secret, and the one it replaces its PrevSecret until prevUntil, in
	// one step: two rotations at once keep one of the new secrets, with the
	// other as the previous one.
	RotateSecret(ctx context.Context, accountID, id string, secret []byte, prevUntil time.Time) (Endpoint, error)
	// EnableEndpoint makes the tenant's endpoint active with no failures
	// counted, and returns it.
	EnableEndpoint(ctx context.Context, accountID, id string) (Endpoint, error)
	// ListDeliveries returns up to limit of an endpoint's deliveries that
	// f selects, newest first (created_at, then id, descending).
	ListDeliveries(ctx context.Context, f DeliveryFilter, limit int) ([]Delivery, error)
	// DeliveryAttempts returns a delivery's attempts in order.
	DeliveryAttempts(ctx context.Context, deliveryID string) ([]AttemptRecord, error)
	// CreateManualDelivery stores d, a resend or test delivery, unless its
	// endpoint already has maxPending manual deliveries pending
	// (ErrLimit), checked and written atomically.
	CreateManualDelivery(ctx context.Context, d Delivery, maxPending int) error
}

// ErrLimit is returned by CreateManualDelivery when the endpoint has its
// fill of pending manual deliveries.
var ErrLimit = errors.New("jobs: limit reached")
