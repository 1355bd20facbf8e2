package jobs

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/ledgerlane/platform/pkg/cursor"
	"github.com/ledgerlane/platform/pkg/periodic"
	"github.com/ledgerlane/platform/pkg/problem"
)

// Resolver looks up a webhook host's addresses; *net.Resolver is one.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Config assembles a Service. Store, Queue, Converter and Webhooks are
// required.
type Config struct {
	Store Store
	// Queue carries work items and job.completed events (natsqueue).
	Queue Queue
	// Converter converts one item (convertclient, over gRPC).
	Converter Converter
	// Webhooks sends delivery attempts (webhook.Client, over HTTP).
	Webhooks WebhookSender
	// Metrics observes the service (metrics.Prometheus); nil observes
	// nothing.
	Metrics Metrics
	// Tracer opens the spans of background work no request started
	// (tracing.Internal); nil opens none.
	Tracer Tracer
	// Keys seals item data and webhook secrets. Nil means no
	// JOB_ENCRYPTION_KEY: every batch and webhook route answers
	// batch-unavailable and no worker starts.
	Keys  *Keyring
	Clock Clock
	Log   *slog.Logger
	// Workers is the number of item workers per process (default 4).
	Workers int
	// AckWait is how long a fetched item may go unacknowledged before the
	// queue redelivers it (default 2 minutes, above the converter deadline).
	// MaxDeliver bounds deliveries per message (default 20).
	AckWait    time.Duration
	MaxDeliver int
	// RetryDeliveries is how many deliveries of one message a transient
	// failure (the database, the queue, the converter not answering) may
	// use, each followed by a nak with backoff; at the last of them the
	// worker parks the item instead: it queues a fresh message carrying the
	// item's retry count and acknowledges the old one, so a transient
	// failure never uses a message's last delivery (default MaxDeliver/2;
	// the deliveries above it are for workers that die mid-item).
	RetryDeliveries int
	// RetryBase and RetryCeiling shape the backoff of transient failures:
	// the k-th retry of an item waits RetryBase·2^(k-1), at most RetryCeiling
	// (defaults 1 s and 30 s).
	RetryBase, RetryCeiling time.Duration
	// ConvertRetryFor is how long, by the backoff schedule, an item is
	// retried while the converter does not answer before it fails as
	// unavailable (default 10 minutes: a converter restart or a rolling
	// deploy never fails an item).
	ConvertRetryFor time.Duration
	// StallAfter is how long an unfinished job may go without progress
	// before the resumer checks its pending items against the queue and
	// re-enqueues those the queue lost (default 2 minutes).
	StallAfter time.Duration
	// ConvertTimeout bounds one converter call (default 60 s).
	ConvertTimeout time.Duration
	// AllowPrivate permits webhook URLs that resolve to loopback, private or
	// link-local addresses when they are registered (WEBHOOK_ALLOW_PRIVATE;
	// the local stack sets it). The same setting goes to the sender, which
	// checks again when it connects (webhook.NewClient).
	AllowPrivate bool
	// Resolver resolves webhook hosts (net.DefaultResolver when nil).
	Resolver Resolver
	// Refunder gives back the units of items failed by an outage
	// (meteringclient); nil leaves them counted.
	Refunder Refunder
	// Cursors signs the delivery list's cursors; every replica needs the
	// same key (nil: a random key, for one process).
	Cursors *cursor.Codec
	// RetrySchedule is when each webhook delivery attempt is due, as offsets
	// from the delivery's creation (default RetrySchedule; checked by
	// ValidateRetrySchedule, which server.New applies). Operators shorten it
	// only to watch the whole schedule and the auto-disable in seconds (the
	// fault suite).
	RetrySchedule []time.Duration
}

// Service implements the batch and webhook routes, the item workers, the
// webhook fan-out and delivery, and the sweeper.
type Service struct {
	store    Store
	queue    Queue
	conv     Converter
	webhooks WebhookSender
	metrics  Metrics
	tracer   Tracer
	keys     *Keyring
	now      Clock
	log      *slog.Logger
	cfg      Config
	resolver Resolver
	cursors  *cursor.Codec

	deliverMu sync.Mutex // one DeliverDue pass at a time
}

// NewService returns a Service from cfg, filling defaults.
func NewService(cfg Config) *Service {
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Metrics == nil {
		cfg.Metrics = noMetrics{}
	}
	if cfg.Tracer == nil {
		cfg.Tracer = noTracer{}
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 4
	}
	if cfg.AckWait <= 0 {
		cfg.AckWait = 2 * time.Minute
	}
	if cfg.MaxDeliver <= 0 {
		cfg.MaxDeliver = 20
	}
	if cfg.MaxDeliver < 2 {
		cfg.MaxDeliver = 2 // one for retries, one for a dying worker
	}
	if cfg.RetryDeliveries <= 0 || cfg.RetryDeliveries >= cfg.MaxDeliver {
		cfg.RetryDeliveries = cfg.MaxDeliver / 2
	}
	if cfg.RetryBase <= 0 {
		cfg.RetryBase = time.Second
	}
	if cfg.RetryCeiling < cfg.RetryBase {
		cfg.RetryCeiling = max(30*time.Second, cfg.RetryBase)
	}
	if cfg.ConvertRetryFor <= 0 {
		cfg.ConvertRetryFor = 10 * time.Minute
	}
	if cfg.StallAfter <= 0 {
		cfg.StallAfter = 2 * time.Minute
	}
	if cfg.ConvertTimeout <= 0 {
		cfg.ConvertTimeout = 60 * time.Second
	}
	if cfg.Resolver == nil {
		cfg.Resolver = net.DefaultResolver
	}
	if len(cfg.RetrySchedule) == 0 {
		cfg.RetrySchedule = RetrySchedule
	}
	if cfg.Cursors == nil {
		key := make([]byte, 32)
		_, _ = rand.Read(key)
		cfg.Cursors = cursor.New(key)
	}
	return &Service{
		store: cfg.Store, queue: cfg.Queue, conv: cfg.Converter, webhooks: cfg.Webhooks, metrics: cfg.Metrics, tracer: cfg.Tracer,
		keys: cfg.Keys, now: cfg.Clock, log: cfg.Log, cfg: cfg, resolver: cfg.Resolver, cursors: cfg.Cursors,
	}
}

// Available reports whether a job encryption key is configured.
func (s *Service) Available() bool { return s.keys != nil }

func (s *Service) timestamp() time.Time {
	// Microseconds: the finest PostgreSQL keeps, so memory and PostgreSQL agree.
	return s.now().UTC().Truncate(time.Microsecond)
}

// Caller is the tenant a request acts for.
type Caller struct {
	AccountID string
	Mode      string
	// CredentialID and IdempotencyKey: the client's Idempotency-Key, when
	// it sent one, and the credential it belongs to (the gateway scopes
	// keys to the credential; so does the store's key, idempotencyKey).
	CredentialID   string
	IdempotencyKey string
}

// idempotencyKey is the caller's key as stored with a job: scoped to the
// credential and mode as the gateway scopes it, so one credential never
// finds another's job. Empty without a key.
func (c Caller) idempotencyKey() string {
	if c.IdempotencyKey == "" {
		return ""
	}
	return c.CredentialID + ":" + c.Mode + ":" + c.IdempotencyKey
}

func (s *Service) check(c Caller) error {
	if s.keys == nil {
		return problem.New(problem.BatchUnavailable, "batch conversion is not configured on this deployment")
	}
	if c.AccountID == "" {
		return problem.New(problem.Unauthorized, "")
	}
	return nil
}

var errNotFoundJob = func() error { return problem.New(problem.NotFound, "no such job") }

// fieldProblem is a problem naming the request member at fault.
func fieldProblem(t problem.Type, detail, field string) error {
	return problem.New(t, detail).WithField(field)
}

// BatchRequest is a validated-on-entry CreateBatch input.
type BatchRequest struct {
	To, From string
	// Options apply to every item; the zero value for none.
	Options  Options
	Messages []string
	// TTL is nil for the default.
	TTLSeconds *int32
	// Reference is the client's own name for the batch (MaxReferenceLen
	// characters at most, no control characters), echoed on the job and in
	// its job.completed body: what lets a client that never got the 202
	// recognise the job (docs/jobs.md, "Submission").
	Reference string
}

// MaxReferenceLen bounds BatchRequest.Reference, in characters.
const MaxReferenceLen = 128

// checkReference refuses a reference that is too long, not UTF-8, or holds
// control characters (it travels in JSON, logs and receivers' databases).
func checkReference(ref string) error { return checkText(ref, "reference", MaxReferenceLen) }

// CreateBatch validates req and stores the job with its items sealed and
// the intent to enqueue them, in one transaction (the outbox). It returns the
// queued job once that has committed; the items are published to the work
// queue after the answer, by a goroutine started here and, should that fail
// or the process die, by the publisher (RunPublisher), de-duplicated per
// item. So a job exists exactly when CreateBatch succeeded, and a stored job
// always runs (docs/jobs.md, "Submission").
func (s *Service) CreateBatch(ctx context.Context, c Caller, req BatchRequest) (Job, error) {
	if err := s.check(c); err != nil {
		return Job{}, err
	}
	if req.To == "" {
		return Job{}, fieldProblem(problem.InvalidInput, "to is required", "to")
	}
	if n := len(req.Messages); n < 1 || n > MaxItems {
		return Job{}, fieldProblem(problem.InvalidInput, fmt.Sprintf("items must hold 1 to %d entries, got %d", MaxItems, n), "items")
	}
	for i, m := range req.Messages {
		switch f := fmt.Sprintf("items[%d].message", i); {
		case m == "":
			return Job{}, fieldProblem(problem.InvalidInput, f+" is empty", f)
		case len(m) > MaxItemBytes:
			return Job{}, fieldProblem(problem.MessageTooLarge,
				fmt.Sprintf("%s is %d bytes; a message may have at most %d", f, len(m), MaxItemBytes), f)
		}
	}
	if err := checkReference(req.Reference); err != nil {
		return Job{}, err
	}
	ttl := DefaultTTL
	if req.TTLSeconds != nil {
		v := *req.TTLSeconds
		if v < 1 || time.Duration(v)*time.Second > MaxTTL {
			return Job{}, fieldProblem(problem.InvalidInput, "ttl_seconds must be between 1 and 86400", "ttl_seconds")
		}
		ttl = time.Duration(v) * time.Second
	}
	// With an Idempotency-Key, a job already committed for it answers this
	// request: its first answer was lost (the replica that committed it
	// died before answering, so the gateway answered 5xx and released the
	// key), and a second job would run for a client that holds one 202.
	key, hash := c.idempotencyKey(), ""
	if key != "" {
		hash = requestHash(req)
		prev, err := s.store.JobByIdempotencyKey(ctx, c.AccountID, key)
		if err == nil {
			// Worth a warning: the first answer was lost after its commit.
			s.log.WarnContext(ctx, "jobs: a retried submission gets the job its Idempotency-Key committed", "job_id", prev.ID)
			return replayed(prev, hash)
		}
		if !errors.Is(err, ErrNotFound) {
			return Job{}, s.internal("job by key", err)
		}
	}
	now := s.timestamp()
	n := len(req.Messages)
	j := Job{
		ID: uuid.NewString(), AccountID: c.AccountID, Mode: c.Mode, Status: JobQueued,
		From: req.From, To: req.To, Options: req.Options,
		ItemCount: n, Pending: n, TTL: ttl, CreatedAt: now, ExpiresAt: now.Add(ttl),
		IdempotencyKey: key, RequestHash: hash, Reference: req.Reference, CredentialID: c.CredentialID,
	}
	items := make([]Item, n)
	for i, m := range req.Messages {
		sealed, err := s.keys.Seal([]byte(m), inputAAD(j.ID, i))
		if err != nil {
			return Job{}, s.internal("seal input", err)
		}
		items[i] = Item{JobID: j.ID, Index: i, Status: ItemPending, Input: sealed}
	}
	if err := ctx.Err(); err != nil {
		// The caller gave up (the gateway answered 5xx and refunded): store
		// nothing, or the job would run unbilled.
		return Job{}, err
	}
	if err := s.store.CreateJob(ctx, j, items); err != nil {
		if key != "" && errors.Is(err, ErrConflict) {
			// The same key committed concurrently (two replicas).
			if prev, err := s.store.JobByIdempotencyKey(ctx, c.AccountID, key); err == nil {
				return replayed(prev, hash)
			}
		}
		return Job{}, s.internal("create job", err)
	}
	// Committed: the job runs whatever happens next. Publishing 10,000
	// items takes a while; it happens after the answer, so that a crash
	// cannot fall between a stored job and its 202.
	go s.publishNew(context.WithoutCancel(ctx), j)
	s.metrics.JobCreated()
	return j, nil
}

// JobView is a job with its items opened.
type JobView struct {
	Job   Job
	Items []ItemView
}

// ItemView is one item as GetJob shows it.
type ItemView struct {
	Index  int
	Status string
	Outcome
}

// GetJob returns the caller's job with opened results.
func (s *Service) GetJob(ctx context.Context, c Caller, id string) (JobView, error) {
	if err := s.check(c); err != nil {
		return JobView{}, err
	}
	j, err := s.store.GetJob(ctx, c.AccountID, id)
	if errors.Is(err, ErrNotFound) || (err == nil && modeOf(j.Mode) != modeOf(c.Mode)) {
		// Another mode's job is as absent as another tenant's.
		return JobView{}, errNotFoundJob()
	}
	if err != nil {
		return JobView{}, s.internal("get job", err)
	}
	items, err := s.store.Items(ctx, j.ID)
	if errors.Is(err, ErrNotFound) {
		return JobView{}, errNotFoundJob() // deleted in between
	}
	if err != nil {
		return JobView{}, s.internal("items", err)
	}
	v := JobView{Job: j, Items: make([]ItemView, len(items))}
	for i, it := range items {
		v.Items[i] = ItemView{Index: it.Index, Status: it.Status}
		if it.Result == nil {
			continue
		}
		pt, err := s.keys.Open(it.Result, resultAAD(j.ID, it.Index))
		if err != nil {
			return JobView{}, s.internal("open result", err)
		}
		if err := json.Unmarshal(pt, &v.Items[i].Outcome); err != nil {
			return JobView{}, s.internal("decode result", err)
		}
	}
	return v, nil
}

// DeleteJob purges the caller's job and its results now.
func (s *Service) DeleteJob(ctx context.Context, c Caller, id string) error {
	if err := s.check(c); err != nil {
		return err
	}
	// A job's mode never changes, so checking it first is safe.
	j, err := s.store.GetJob(ctx, c.AccountID, id)
	if errors.Is(err, ErrNotFound) || (err == nil && modeOf(j.Mode) != modeOf(c.Mode)) {
		return errNotFoundJob()
	}
	if err != nil {
		return s.internal("get job", err)
	}
	err = s.store.DeleteJob(ctx, c.AccountID, id)
	if errors.Is(err, ErrNotFound) {
		return errNotFoundJob()
	}
	if err != nil {
		return s.internal("delete job", err)
	}
	return nil
}

// Sweep removes every job whose results have expired, and counts the
// disabled webhook endpoints for their gauge: once a minute is often enough
// for a figure that changes after hours of failed deliveries, and keeps the
// query off faster loops.
func (s *Service) Sweep(ctx context.Context) (int, error) {
	n, err := s.store.SweepExpired(ctx, s.now())
	s.metrics.JobsSwept(n)
	if err != nil {
		return n, err
	}
	d, err := s.store.CountDisabledEndpoints(ctx)
	if err != nil {
		return n, fmt.Errorf("count disabled endpoints: %w", err)
	}
	s.metrics.EndpointsDisabled(d)
	return n, nil
}

// RunSweeper sweeps every interval until ctx ends, each pass in a span of
// its own so that its log lines carry a trace id.
func (s *Service) RunSweeper(ctx context.Context, every time.Duration) {
	periodic.Task{Name: "jobs: sweep", Every: every, Log: s.log, Run: func(ctx context.Context) error {
		sctx, end := s.tracer.Start(ctx, "jobs.sweep")
		defer end()
		if n, err := s.Sweep(sctx); err != nil {
			s.log.ErrorContext(sctx, "jobs: sweep", "err", err)
		} else if n > 0 {
			s.log.InfoContext(sctx, "jobs: swept expired jobs", "jobs", n)
		}
		return nil
	}}.Loop(ctx)
}

// internal wraps a failure no rule of the service answers, with op: pkg/rpc
// logs it and answers 503 unavailable (with Retry-After) when the store
// marked it so (pg.Error: the database did not answer), an opaque internal
// problem otherwise. err never holds content or secrets.
func (s *Service) internal(op string, err error) error {
	return fmt.Errorf("jobs: %s: %w", op, err)
}

// requestHash identifies a batch request: the same key with another request
// is a conflict, as at the gateway.
func requestHash(req BatchRequest) string {
	h := sha256.New()
	ttl := int32(-1)
	if req.TTLSeconds != nil {
		ttl = *req.TTLSeconds
	}
	head, _ := json.Marshal(struct {
		To, From string
		Options  Options
		TTL      int32
		N        int
	}{req.To, req.From, req.Options, ttl, len(req.Messages)})
	h.Write(head)
	if req.Reference != "" {
		// Only when set: the hashes of keys stored before references existed
		// stay valid.
		fmt.Fprintf(h, "\nreference %d:%s", len(req.Reference), req.Reference)
	}
	for _, m := range req.Messages {
		// Length-prefixed, so no two lists of messages hash alike.
		fmt.Fprintf(h, "\n%d:", len(m))
		h.Write([]byte(m))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// replayed answers a request with the job its Idempotency-Key already
// created, or 409 when that job came from another request.
func replayed(prev Job, hash string) (Job, error) {
	if prev.RequestHash != hash {
		return Job{}, problem.New(problem.IdempotencyConflict, "this Idempotency-Key was used for another batch; use a new key")
	}
	prev.IdempotencyKey, prev.RequestHash = "", ""
	prev.Replayed = true
	return prev, nil
}
