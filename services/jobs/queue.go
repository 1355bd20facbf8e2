package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ledgerlane/platform/pkg/problem"
)

// WorkItem is a work-queue message: it names one item of a job and never
// carries its content, which stays in the store, sealed.
type WorkItem struct {
	JobID string
	Index int
	// Retries is how many transient failures the item had before this
	// message: a worker that parks an item (Config.RetryDeliveries) queues
	// a fresh message carrying them, so the backoff and the converter's
	// retry horizon continue where they were.
	Retries int
	// Resumes is how many times the resumer re-enqueued the item after the
	// queue had lost it (or its message was past its last delivery).
	Resumes int
}

// MsgID is the message's de-duplication id: <job>.<index> for the first
// message of an item, <job>.<index>.<retries>.<resumes> for a parked or
// resumed one, so that each such step is published once however many
// replicas attempt it.
func (w WorkItem) MsgID() string {
	id := w.JobID + "." + strconv.Itoa(w.Index)
	if w.Retries == 0 && w.Resumes == 0 {
		return id
	}
	return id + "." + strconv.Itoa(w.Retries) + "." + strconv.Itoa(w.Resumes)
}

// Leftover is a stored work message the queue will never deliver again.
type Leftover struct {
	Item WorkItem
	// Ref is the queue's reference to the message (its stream sequence).
	Ref uint64
}

// CompletedEvent is a job.completed event on its way from the worker that
// completed the job to the webhook fan-out: the tenant and the delivery body
// (job metadata only).
type CompletedEvent struct {
	AccountID string
	// Mode is the job's mode: only endpoints of that mode get the event
	// (empty, from a replica older than modes: live).
	Mode  string
	JobID string
	Body  []byte
}

// Queue carries work items to the item workers and job.completed events to
// the webhook fan-out, across replicas. Both are work queues: a message goes
// to one consumer at a time, is removed once acknowledged, and is redelivered
// when it is not acknowledged in time. natsqueue implements it on NATS
// JetStream.
type Queue interface {
	// Setup creates or updates what the queue needs (streams). Run calls it
	// before anything else.
	Setup(ctx context.Context) error
	// PublishWork queues items and returns once the queue holds all of them.
	// Each is de-duplicated by its MsgID, so a retried publish does not
	// queue an item twice.
	PublishWork(ctx context.Context, items []WorkItem) error
	// Lost returns those of items the work queue holds neither waiting nor
	// in flight: never published, removed, or past their last delivery. An
	// item whose message is stored but will not be delivered again comes
	// back with the Retries and Resumes its message carried, and that
	// message is removed.
	Lost(ctx context.Context, items []WorkItem) ([]WorkItem, error)
	// Leftovers reports the work messages the queue still stores but will
	// never deliver again (a crash of the queue's server kept messages
	// already acknowledged, or a message is past its last delivery): how
	// many there are, and up to max messages to check, oldest first. Those
	// may include messages still awaiting an acknowledgement (a crash can
	// lose the acknowledgement itself): the caller discards only messages
	// of settled items.
	Leftovers(ctx context.Context, max int) (int, []Leftover, error)
	// Discard removes a leftover message; one already gone is no error.
	Discard(ctx context.Context, l Leftover) error
	// PublishCompleted queues ev, de-duplicated by job for a short window so
	// that a republish (a redelivered last item) is dropped.
	PublishCompleted(ctx context.Context, ev CompletedEvent) error
	// WorkConsumer returns the consumer all item workers share: explicit
	// acknowledgement, redelivery after c.AckWait, at most c.MaxDeliver
	// deliveries per item.
	WorkConsumer(ctx context.Context, c WorkConsumerConfig) (Consumer[WorkItem], error)
	// EventConsumer returns the consumer the webhook fan-outs share.
	EventConsumer(ctx context.Context) (Consumer[CompletedEvent], error)
	// DomainEventConsumer returns the consumer of the events other services
	// publish for webhooks (the finance events: pkg/eventbus), which the
	// domain fan-outs share.
	DomainEventConsumer(ctx context.Context) (Consumer[Event], error)
}

// WorkConsumerConfig is the redelivery policy of work items.
type WorkConsumerConfig struct {
	AckWait    time.Duration
	MaxDeliver int
}

// Consumer pulls messages of one kind.
type Consumer[T any] interface {
	// Fetch pulls up to max messages, waiting no longer than ctx allows, and
	// yields them as they arrive. A consumer that stops early leaves the rest
	// unacknowledged, to be redelivered after the ack wait.
	Fetch(ctx context.Context, max int) (iter.Seq[Msg[T]], error)
}

// Msg is one delivery of a queued message. Ack, Nak and Term settle it; a
// message left unsettled is redelivered once its ack wait has passed.
type Msg[T any] interface {
	// Value decodes the message; an error means it is malformed (Term it).
	Value() (T, error)
	// NumDelivered is how many times the message has been delivered, this
	// delivery included.
	NumDelivered() (int, error)
	// Ack removes the message: it has been processed.
	Ack() error
	// Nak asks for a redelivery after delay.
	Nak(delay time.Duration) error
	// InProgress restarts the ack wait.
	InProgress() error
	// Term removes the message without processing it, for good.
	Term() error
}

func (s *Service) enqueue(ctx context.Context, jobID string, n int) error {
	items := make([]WorkItem, n)
	for i := range items {
		items[i] = WorkItem{JobID: jobID, Index: i}
	}
	return s.queue.PublishWork(ctx, items)
}

// RunWorkers runs Config.Workers item workers until ctx ends. Each pulls a
// few items at a time and processes them in order.
func (s *Service) RunWorkers(ctx context.Context) error {
	if s.keys == nil {
		<-ctx.Done()
		return nil
	}
	cons, err := s.queue.WorkConsumer(ctx, WorkConsumerConfig{AckWait: s.cfg.AckWait, MaxDeliver: s.cfg.MaxDeliver})
	if err != nil {
		return fmt.Errorf("jobs: work consumer: %w", err)
	}
	var wg sync.WaitGroup
	for range s.cfg.Workers {
		wg.Go(func() { s.workLoop(ctx, cons) })
	}
	wg.Wait()
	return nil
}

func (s *Service) workLoop(ctx context.Context, cons Consumer[WorkItem]) {
	for ctx.Err() == nil {
		s.fetchOne(ctx, cons)
	}
}

func (s *Service) fetchOne(ctx context.Context, cons Consumer[WorkItem]) {
	// A bounded wait, so the loop notices ctx ending promptly.
	fctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	batch, err := cons.Fetch(fctx, fetchBatch)
	if err != nil {
		if ctx.Err() == nil {
			s.log.Warn("jobs: fetch", "err", err)
			time.Sleep(200 * time.Millisecond)
		}
		return
	}
	first := true
	for msg := range batch {
		if ctx.Err() != nil {
			return // stopping: the rest is redelivered after AckWait
		}
		if !first {
			// It waited behind the previous item: restart its AckWait so a
			// slow neighbour does not get it redelivered elsewhere.
			_ = msg.InProgress()
		}
		first = false
		s.handleWork(msgContext(ctx, msg), msg)
	}
}

// tracedMsg is a Msg that carries its publisher's trace (natsqueue's, when
// tracing is on): the work it starts continues that trace, and settling the
// message ends its processing span.
type tracedMsg interface {
	Context(ctx context.Context) context.Context
}

// msgContext is ctx continued with m's trace, when m carries one.
func msgContext[T any](ctx context.Context, m Msg[T]) context.Context {
	if t, ok := m.(tracedMsg); ok {
		return t.Context(ctx)
	}
	return ctx
}

// fetchBatch items per pull request: fewer round trips than one at a time,
// few enough that items do not queue long behind one slow conversion.
const fetchBatch = 4

// handleWork processes one item message. The message is acknowledged only
// after the outcome is stored (and, for the last item, the event published),
// so a worker that dies earlier leaves it for redelivery. A transient failure
// (the store, the queue, the converter not answering) is retried with
// exponential backoff through the nak delay; it never uses the message's last
// delivery: at RetryDeliveries the item is parked (re-queued as a fresh
// message carrying its retry count), so an outage of any length strands
// nothing.
func (s *Service) handleWork(ctx context.Context, msg Msg[WorkItem]) {
	wm, err := msg.Value()
	if err != nil {
		s.log.ErrorContext(ctx, "jobs: malformed work message; dropped", "err", err)
		_ = msg.Term()
		return
	}
	n, err := msg.NumDelivered()
	if err != nil || n < 1 {
		n = 1
	}
	s.metrics.ItemDelivered(n > 1)
	attempt := wm.Retries + n
	err = s.processItem(ctx, wm, attempt)
	switch {
	case err == nil:
		_ = msg.Ack()
	case ctx.Err() != nil:
		// Shutting down (or killed in a test): no ack, the queue redelivers.
	case n < s.cfg.RetryDeliveries:
		delay := s.backoff(attempt)
		s.log.WarnContext(ctx, "jobs: item will be retried", "job_id", wm.JobID, "index", wm.Index, "attempt", attempt, "delay", delay, "err", err)
		_ = msg.Nak(delay)
	default:
		s.park(ctx, msg, wm, attempt, err)
	}
}

// park re-queues an item that keeps failing transiently as a fresh message
// carrying its retry count, then acknowledges the old one, which has used
// the deliveries meant for retries. A failed publish (the queue is down too)
// falls back to a nak; should the message run out of deliveries anyway, the
// resumer re-enqueues it.
func (s *Service) park(ctx context.Context, msg Msg[WorkItem], wm WorkItem, attempt int, cause error) {
	next := wm
	next.Retries = attempt
	if err := s.queue.PublishWork(ctx, []WorkItem{next}); err != nil {
		s.log.WarnContext(ctx, "jobs: parking an item failed; retried", "job_id", wm.JobID, "index", wm.Index, "err", err)
		_ = msg.Nak(s.backoff(attempt))
		return
	}
	s.metrics.ItemParked()
	s.log.WarnContext(ctx, "jobs: item parked after transient failures", "job_id", wm.JobID, "index", wm.Index, "attempt", attempt, "err", cause)
	_ = msg.Ack()
}

// backoff is the delay after the k-th attempt: RetryBase·2^(k-1), at most
// RetryCeiling.
func (s *Service) backoff(k int) time.Duration {
	d := s.cfg.RetryBase
	for i := 1; i < k && d < s.cfg.RetryCeiling; i++ {
		d *= 2
	}
	return min(d, s.cfg.RetryCeiling)
}

// retriedFor is how long, by the backoff schedule, an item has waited
// between its attempts before the k-th: a lower bound of the time it has
// been failing.
func (s *Service) retriedFor(k int) time.Duration {
	var total time.Duration
	for i := 1; i < k; i++ {
		b := s.backoff(i)
		if b == s.cfg.RetryCeiling {
			return total + time.Duration(k-i)*b
		}
		total += b
	}
	return total
}

// MaxResumes is how many times the resumer may re-enqueue an item the queue
// lost before the item fails: an item whose workers keep dying on it (and so
// exhaust its deliveries) must not loop for ever.
const MaxResumes = 3

func (s *Service) processItem(ctx context.Context, wm WorkItem, attempt int) error {
	j, err := s.store.JobByID(ctx, wm.JobID)
	if errors.Is(err, ErrNotFound) {
		return nil // deleted or swept: nothing to do
	}
	if err != nil {
		return err
	}
	it, err := s.store.Item(ctx, wm.JobID, wm.Index)
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if it.Status != ItemPending {
		// A redelivery of an item already done. If the job is complete the
		// earlier worker may have died between storing and publishing, so
		// publish again: deliveries are deduplicated per job and endpoint.
		if j.Status == JobCompleted {
			return s.publishCompleted(ctx, j)
		}
		return nil
	}
	if j.Status == JobQueued {
		if err := s.store.StartJob(ctx, j.ID, s.timestamp()); err != nil && !errors.Is(err, ErrNotFound) {
			return err
		}
	}
	var out Outcome
	var retry error
	if wm.Resumes > MaxResumes {
		s.log.ErrorContext(ctx, "jobs: item lost by the queue too often; failed", "job_id", j.ID, "index", it.Index, "resumes", wm.Resumes)
		out = Outcome{Problem: itemProblem(problem.New(problem.Internal, "the item could not be processed"))}
	} else if input, err := s.keys.Open(it.Input, inputAAD(j.ID, it.Index)); err != nil {
		// Retrying cannot help (its key was removed from JOB_ENCRYPTION_KEY
		// too early, say): fail the item so the job still completes.
		s.log.ErrorContext(ctx, "jobs: item input does not decrypt", "job_id", j.ID, "index", it.Index)
		out = Outcome{Problem: itemProblem(problem.New(problem.Internal, "the item could not be decrypted"))}
	} else {
		out, retry = s.convert(ctx, j, input)
	}
	if retry != nil {
		// Transient converter trouble: retry with backoff for
		// ConvertRetryFor, then record the failure so the job still
		// completes.
		if s.retriedFor(attempt) < s.cfg.ConvertRetryFor {
			return retry
		}
		out = Outcome{Problem: &Problem{Type: string(problem.Unavailable), Title: problem.Unavailable.Title(), Status: problem.Unavailable.Status(),
			Detail: "the converter did not answer through several minutes of retries"}}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	st := ItemOK
	if out.Problem != nil {
		st = ItemFailed
	}
	pt, err := json.Marshal(out)
	if err != nil {
		return err
	}
	sealed, err := s.keys.Seal(pt, resultAAD(j.ID, it.Index))
	if err != nil {
		return err
	}
	done, changed, err := s.store.CompleteItem(ctx, j.ID, it.Index, st, sealed, s.timestamp())
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if changed {
		s.metrics.ItemCompleted(st, j.CreatedAt, s.now())
		if s.log.Enabled(ctx, slog.LevelDebug) { // no argument boxing per item when off
			s.log.DebugContext(ctx, "jobs: item completed", "job_id", j.ID, "index", it.Index, "status", st, "attempt", attempt)
		}
	}
	if done.Status == JobCompleted && changed {
		return s.publishCompleted(ctx, done)
	}
	return nil
}

// convert calls the converter as the job's tenant. A problem answer (bad
// input, unknown format, strict loss) is a final item failure; an
// ErrConverterUnavailable is returned as retry.
func (s *Service) convert(ctx context.Context, j Job, input []byte) (out Outcome, retry error) {
	cctx, cancel := context.WithTimeout(ctx, s.cfg.ConvertTimeout)
	defer cancel()
	res, err := s.conv.Convert(cctx, ConvertRequest{
		AccountID: j.AccountID, Mode: j.Mode, RequestID: "job-" + j.ID,
		From: j.From, To: j.To, Message: string(input), Options: j.Options,
	})
	if err != nil {
		if ctx.Err() != nil {
			return Outcome{}, ctx.Err()
		}
		if errors.Is(err, ErrConverterUnavailable) {
			return Outcome{}, err
		}
		var p *problem.Problem
		if !errors.As(err, &p) {
			// Not a problem document: opaque, as any unclassified error.
			p = problem.New(problem.Internal, "")
		}
		return Outcome{Problem: itemProblem(p)}, nil
	}
	// Paged MT output is concatenated, as on the bare-document convert route.
	out.Result = strings.Join(res.Pages, "")
	out.Warnings = res.Warnings
	return out, nil
}

func itemProblem(p *problem.Problem) *Problem {
	return &Problem{Type: string(p.Type), Title: p.Title, Status: p.Status, Detail: p.Detail}
}

func (s *Service) publishCompleted(ctx context.Context, j Job) error {
	body, err := eventBody(j)
	if err != nil {
		return err
	}
	return s.queue.PublishCompleted(ctx, CompletedEvent{AccountID: j.AccountID, Mode: j.Mode, JobID: j.ID, Body: body})
}
