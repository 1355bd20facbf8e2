// Package natsqueue is the jobs.Queue on NATS JetStream: a work stream of
// items and an event stream of job.completed events, each a work queue with
// one durable pull consumer shared by every replica. docs/jobs.md describes
// the streams, subjects and consumers.
package natsqueue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.opentelemetry.io/otel/trace"

	"github.com/ledgerlane/platform/pkg/eventbus"
	"github.com/ledgerlane/platform/pkg/tracing"
	"github.com/ledgerlane/platform/services/jobs"
)

// Names are the JetStream streams, subjects and durable consumers the queue
// uses.
type Names struct {
	// WorkStream holds one message per item on WorkSubject.<job>.<index>;
	// the message names the item and never carries its content.
	WorkStream, WorkSubject, WorkConsumer string
	// EventStream holds job.completed events on EventSubject.
	EventStream, EventSubject, EventConsumer string
	// Domain is the stream of the other services' events (pkg/eventbus),
	// which DomainConsumer reads.
	Domain         eventbus.Names
	DomainConsumer string
}

// DefaultNames are the production names.
func DefaultNames() Names { return NamesWithPrefix("") }

// NamesWithPrefix returns names isolated by prefix (letters and digits), for
// tests that share one NATS server.
func NamesWithPrefix(p string) Names {
	sp, subj := "", ""
	if p != "" {
		sp, subj = strings.ToUpper(p)+"_", strings.ToLower(p)+"."
	}
	return Names{
		WorkStream: sp + "JOBS_WORK", WorkSubject: subj + "jobs.work", WorkConsumer: "workers",
		EventStream: sp + "JOBS_EVENTS", EventSubject: subj + "jobs.events.completed", EventConsumer: "webhook-fanout",
		Domain: eventbus.NamesWithPrefix(p), DomainConsumer: "webhook-domain-fanout",
	}
}

// Queue implements jobs.Queue on JetStream.
type Queue struct {
	js       jetstream.JetStream
	names    Names
	replicas int
}

var _ jobs.Queue = (*Queue)(nil)

// New returns a Queue on js; zero names mean DefaultNames.
func New(js jetstream.JetStream, names Names) *Queue {
	if names == (Names{}) {
		names = DefaultNames()
	}
	return &Queue{js: js, names: names}
}

// WithReplicas makes Setup create (or update) both streams kept on n
// JetStream nodes, so the queue survives a node of a NATS cluster; n ≤ 1 is
// one node, which a single server requires. It returns q.
func (q *Queue) WithReplicas(n int) *Queue {
	q.replicas = n
	return q
}

// Names returns the names the queue uses.
func (q *Queue) Names() Names { return q.names }

// Setup creates or updates both streams. Both are work queues: a message is
// removed once a consumer acknowledges it, so items and events are processed
// by exactly one worker at a time and redelivered when a worker dies before
// acknowledging.
func (q *Queue) Setup(ctx context.Context) error {
	for _, cfg := range []jetstream.StreamConfig{
		{
			Name: q.names.WorkStream, Subjects: []string{q.names.WorkSubject + ".>"},
			Retention: jetstream.WorkQueuePolicy, Storage: jetstream.FileStorage,
			// Items of a job outlive it at most by the longest TTL.
			MaxAge: jobs.MaxTTL,
			// Above jobs.EnqueueLease: a publisher that takes over a stored
			// job's enqueue intent republishes within the window.
			Duplicates: WorkDuplicates,
		},
		{
			Name: q.names.EventStream, Subjects: []string{q.names.EventSubject},
			Retention: jetstream.WorkQueuePolicy, Storage: jetstream.FileStorage,
			MaxAge: jobs.MaxTTL, Duplicates: 2 * time.Minute,
		},
		eventbus.StreamConfig(q.names.Domain, q.replicas),
	} {
		cfg.Replicas = max(1, q.replicas)
		if _, err := q.js.CreateOrUpdateStream(ctx, cfg); err != nil {
			return fmt.Errorf("jobs: stream %s: %w", cfg.Name, err)
		}
	}
	return nil
}

// WorkDuplicates is the work stream's de-duplication window.
const WorkDuplicates = 5 * time.Minute

// workMsg is a work message's body.
type workMsg struct {
	JobID   string `json:"job_id"`
	Index   int    `json:"index"`
	Retries int    `json:"retries,omitempty"`
	Resumes int    `json:"resumes,omitempty"`
}

// eventMsg is an event message's body: the tenant and the delivery body.
type eventMsg struct {
	AccountID string          `json:"account_id"`
	Mode      string          `json:"mode,omitempty"`
	JobID     string          `json:"job_id"`
	Body      json.RawMessage `json:"body"`
}

// PublishWork publishes one message per item on WorkSubject.<job>.<index>,
// with message id it.MsgID().
func (q *Queue) PublishWork(ctx context.Context, items []jobs.WorkItem) error {
	// Asynchronous publishes, awaited in windows: a 10,000-item batch would
	// otherwise pay 10,000 round trips before answering 202, and an unbounded
	// window overruns the client's pending-ack limit.
	const window = 500
	// One producer span for the publish; each message carries it in its
	// headers, so the worker's processing continues the request's trace.
	ctx, hdr, end := tracing.StartPublish(ctx, q.names.WorkSubject)
	defer end()
	for lo := 0; lo < len(items); lo += window {
		hi := min(lo+window, len(items))
		futures := make([]jetstream.PubAckFuture, 0, hi-lo)
		for _, it := range items[lo:hi] {
			body, _ := json.Marshal(workMsg{JobID: it.JobID, Index: it.Index, Retries: it.Retries, Resumes: it.Resumes})
			f, err := q.publishAsync(q.workSubject(it), body, hdr, jetstream.WithMsgID(it.MsgID()))
			if err != nil {
				return err
			}
			futures = append(futures, f)
		}
		for _, f := range futures {
			select {
			case <-f.Ok():
			case err := <-f.Err():
				return err
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	return nil
}

// publishAsync publishes data, with a copy of hdr when there is one (the
// client adds its message id to a message's headers, so messages must not
// share them); without, exactly as before tracing existed.
func (q *Queue) publishAsync(subject string, data []byte, hdr nats.Header, opts ...jetstream.PublishOpt) (jetstream.PubAckFuture, error) {
	if hdr == nil {
		return q.js.PublishAsync(subject, data, opts...)
	}
	return q.js.PublishMsgAsync(&nats.Msg{Subject: subject, Data: data, Header: maps.Clone(hdr)}, opts...)
}

func (q *Queue) workSubject(it jobs.WorkItem) string {
	return q.names.WorkSubject + "." + it.JobID + "." + strconv.Itoa(it.Index)
}

// Lost looks each item's newest message up on its subject: none means the
// item is not queued. A stored message that the work consumer has delivered
// and holds no acknowledgement for has had its last delivery (MaxDeliver):
// it is removed and reported. JetStream does not say which messages await an
// acknowledgement, only how many, so a delivered message counts as dead when
// it is at or below the consumer's acknowledgement floor, or when nothing at
// all awaits one; otherwise it may be in flight and is left (a later pass
// decides). One request per item: the resumer asks only about stalled jobs.
func (q *Queue) Lost(ctx context.Context, items []jobs.WorkItem) ([]jobs.WorkItem, error) {
	stream, err := q.js.Stream(ctx, q.names.WorkStream)
	if err != nil {
		return nil, err
	}
	// dead: every stored message at or below it has had its last delivery.
	var dead uint64
	switch cons, err := stream.Consumer(ctx, q.names.WorkConsumer); {
	case errors.Is(err, jetstream.ErrConsumerNotFound):
	case err != nil:
		return nil, err
	default:
		info, err := cons.Info(ctx)
		if err != nil {
			return nil, err
		}
		dead = info.AckFloor.Stream
		if info.NumAckPending == 0 {
			dead = info.Delivered.Stream
		}
	}
	var lost []jobs.WorkItem
	for _, it := range items {
		m, err := stream.GetLastMsgForSubject(ctx, q.workSubject(it))
		switch {
		case errors.Is(err, jetstream.ErrMsgNotFound):
			lost = append(lost, it)
		case err != nil:
			return nil, err
		case m.Sequence <= dead:
			var wm workMsg
			if json.Unmarshal(m.Data, &wm) == nil {
				it.Retries, it.Resumes = wm.Retries, wm.Resumes
			}
			if err := stream.DeleteMsg(ctx, m.Sequence); err != nil && !errors.Is(err, jetstream.ErrMsgNotFound) {
				return nil, err
			}
			lost = append(lost, it)
		}
	}
	return lost, nil
}

// Leftovers compares the work stream with its consumer: in a work-queue
// stream every stored message is either still to be delivered or awaiting
// an acknowledgement, so any surplus is a message the consumer will never
// deliver again (past its last delivery, or acknowledged before a crash
// that kept it). The surplus lies at or below the consumer's
// acknowledgement floor, which a "next message on the subject" walk from
// the stream's first sequence finds in one request per message, however
// sparse.
//
// A kill -9 of nats-server also leaves messages awaiting an
// acknowledgement that was sent but lost with the server: they are
// redelivered after the ack wait (2 minutes) and discarded as duplicates.
// So that they do not linger that long, the walk goes on past the floor to
// the last delivered message when nothing waits for delivery and at most
// max messages await an acknowledgement (the tail of the work: a pass then
// costs one request per message in flight). Those come back too; the
// caller removes only the messages of items already settled, which no
// worker needs, whether one holds them or not.
func (q *Queue) Leftovers(ctx context.Context, max int) (int, []jobs.Leftover, error) {
	stream, err := q.js.Stream(ctx, q.names.WorkStream)
	if err != nil {
		return 0, nil, err
	}
	cons, err := stream.Consumer(ctx, q.names.WorkConsumer)
	if errors.Is(err, jetstream.ErrConsumerNotFound) {
		return 0, nil, nil
	}
	if err != nil {
		return 0, nil, err
	}
	// Consumer first, then the stream: a message published in between is
	// counted by the stream only, and errs towards a surplus the walk
	// below then does not find (it stops at the last delivered message).
	ci, err := cons.Info(ctx)
	if err != nil {
		return 0, nil, err
	}
	si, err := stream.Info(ctx)
	if err != nil {
		return 0, nil, err
	}
	if si.State.Msgs == 0 {
		return 0, nil, nil
	}
	surplus := 0
	if waiting := ci.NumPending + uint64(ci.NumAckPending); si.State.Msgs > waiting {
		surplus = int(si.State.Msgs - waiting)
	}
	upTo := ci.AckFloor.Stream
	if ci.NumAckPending == 0 || (ci.NumPending == 0 && ci.NumAckPending <= max) {
		upTo = ci.Delivered.Stream
	}
	if surplus == 0 && upTo == ci.AckFloor.Stream {
		return 0, nil, nil
	}
	var found []jobs.Leftover
	for seq := si.State.FirstSeq; seq <= upTo && len(found) < max; {
		m, err := stream.GetMsg(ctx, seq, jetstream.WithGetMsgSubject(q.names.WorkSubject+".>"))
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			break
		}
		if err != nil {
			return surplus, found, err
		}
		if m.Sequence > upTo {
			break
		}
		var wm workMsg
		if err := json.Unmarshal(m.Data, &wm); err == nil {
			found = append(found, jobs.Leftover{Ref: m.Sequence,
				Item: jobs.WorkItem{JobID: wm.JobID, Index: wm.Index, Retries: wm.Retries, Resumes: wm.Resumes}})
		} else {
			// Not a message this code wrote: nothing to settle, remove it.
			found = append(found, jobs.Leftover{Ref: m.Sequence})
		}
		seq = m.Sequence + 1
	}
	return surplus, found, nil
}

// Discard removes the leftover message l.Ref.
func (q *Queue) Discard(ctx context.Context, l jobs.Leftover) error {
	stream, err := q.js.Stream(ctx, q.names.WorkStream)
	if err != nil {
		return err
	}
	if err := stream.DeleteMsg(ctx, l.Ref); err != nil && !errors.Is(err, jetstream.ErrMsgNotFound) {
		return err
	}
	return nil
}

// PublishCompleted publishes ev on EventSubject with message id
// job.completed.<job>, which lets JetStream drop a republish within its
// duplicate window.
func (q *Queue) PublishCompleted(ctx context.Context, ev jobs.CompletedEvent) error {
	data, err := json.Marshal(eventMsg{AccountID: ev.AccountID, Mode: ev.Mode, JobID: ev.JobID, Body: ev.Body})
	if err != nil {
		return err
	}
	ctx, hdr, end := tracing.StartPublish(ctx, q.names.EventSubject)
	defer end()
	if hdr == nil {
		_, err = q.js.Publish(ctx, q.names.EventSubject, data, jetstream.WithMsgID("job.completed."+ev.JobID))
		return err
	}
	_, err = q.js.PublishMsg(ctx, &nats.Msg{Subject: q.names.EventSubject, Data: data, Header: hdr}, jetstream.WithMsgID("job.completed."+ev.JobID))
	return err
}

// WorkConsumer creates or updates the durable work consumer: explicit acks,
// c's ack wait and deliveries, at most 1,000 unacknowledged.
func (q *Queue) WorkConsumer(ctx context.Context, c jobs.WorkConsumerConfig) (jobs.Consumer[jobs.WorkItem], error) {
	cons, err := q.js.CreateOrUpdateConsumer(ctx, q.names.WorkStream, jetstream.ConsumerConfig{
		Durable: q.names.WorkConsumer, AckPolicy: jetstream.AckExplicitPolicy,
		AckWait: c.AckWait, MaxDeliver: c.MaxDeliver,
		FilterSubject: q.names.WorkSubject + ".>",
		MaxAckPending: 1000,
	})
	if err != nil {
		return nil, err
	}
	return consumer[jobs.WorkItem]{cons: cons, decode: decodeWork, destination: q.names.WorkSubject}, nil
}

// EventConsumer creates or updates the durable event consumer: explicit
// acks, redelivery after 30 s.
func (q *Queue) EventConsumer(ctx context.Context) (jobs.Consumer[jobs.CompletedEvent], error) {
	cons, err := q.js.CreateOrUpdateConsumer(ctx, q.names.EventStream, jetstream.ConsumerConfig{
		Durable: q.names.EventConsumer, AckPolicy: jetstream.AckExplicitPolicy,
		AckWait: 30 * time.Second, FilterSubject: q.names.EventSubject,
	})
	if err != nil {
		return nil, err
	}
	return consumer[jobs.CompletedEvent]{cons: cons, decode: decodeEvent, destination: q.names.EventSubject}, nil
}

// DomainEventConsumer creates or updates the durable consumer of the
// domain events: explicit acks, redelivery after 30 s.
func (q *Queue) DomainEventConsumer(ctx context.Context) (jobs.Consumer[jobs.Event], error) {
	cons, err := q.js.CreateOrUpdateConsumer(ctx, q.names.Domain.Stream, jetstream.ConsumerConfig{
		Durable: q.names.DomainConsumer, AckPolicy: jetstream.AckExplicitPolicy,
		AckWait: 30 * time.Second, FilterSubject: q.names.Domain.Subject + ".>",
	})
	if err != nil {
		return nil, err
	}
	return consumer[jobs.Event]{cons: cons, decode: decodeDomainEvent, destination: q.names.Domain.Subject}, nil
}

func decodeDomainEvent(m jetstream.Msg) (jobs.Event, error) {
	ev, err := eventbus.Decode(m.Data())
	if err != nil {
		return jobs.Event{}, fmt.Errorf("subject %s: %w", m.Subject(), err)
	}
	return jobs.Event{AccountID: ev.AccountID, Mode: ev.Mode, Type: ev.Type, ID: ev.ID, CoalesceKey: ev.CoalesceKey, Body: ev.Body}, nil
}

func decodeWork(m jetstream.Msg) (jobs.WorkItem, error) {
	var wm workMsg
	if err := json.Unmarshal(m.Data(), &wm); err != nil {
		return jobs.WorkItem{}, fmt.Errorf("subject %s: %w", m.Subject(), err)
	}
	return jobs.WorkItem{JobID: wm.JobID, Index: wm.Index, Retries: wm.Retries, Resumes: wm.Resumes}, nil
}

func decodeEvent(m jetstream.Msg) (jobs.CompletedEvent, error) {
	var ev eventMsg
	if err := json.Unmarshal(m.Data(), &ev); err != nil {
		return jobs.CompletedEvent{}, fmt.Errorf("subject %s: %w", m.Subject(), err)
	}
	return jobs.CompletedEvent{AccountID: ev.AccountID, Mode: ev.Mode, JobID: ev.JobID, Body: ev.Body}, nil
}

type consumer[T any] struct {
	cons   jetstream.Consumer
	decode func(jetstream.Msg) (T, error)
	// destination names the processing span (the subject pattern).
	destination string
}

func (c consumer[T]) Fetch(ctx context.Context, max int) (iter.Seq[jobs.Msg[T]], error) {
	batch, err := c.cons.Fetch(max, jetstream.FetchContext(ctx))
	if err != nil {
		return nil, err
	}
	return func(yield func(jobs.Msg[T]) bool) {
		for m := range batch.Messages() {
			if !yield(&msg[T]{m: m, decode: c.decode, destination: c.destination}) {
				return
			}
		}
	}, nil
}

type msg[T any] struct {
	m           jetstream.Msg
	decode      func(jetstream.Msg) (T, error)
	destination string
	// span is the processing span Context opened; settling the message
	// ends it.
	span trace.Span
}

func (m *msg[T]) Value() (T, error)             { return m.decode(m.m) }
func (m *msg[T]) Ack() error                    { defer m.end(); return m.m.Ack() }
func (m *msg[T]) Nak(delay time.Duration) error { defer m.end(); return m.m.NakWithDelay(delay) }
func (m *msg[T]) InProgress() error             { return m.m.InProgress() }
func (m *msg[T]) Term() error                   { defer m.end(); return m.m.Term() }

// Context opens the message's processing span, continuing the trace its
// publisher put in the headers (pkg/tracing); the jobs service processes
// the message under the context it returns. Off, it returns ctx.
func (m *msg[T]) Context(ctx context.Context) context.Context {
	if !tracing.Enabled() {
		return ctx
	}
	ctx, m.span = tracing.StartProcess(ctx, m.m.Headers(), m.destination)
	return ctx
}

func (m *msg[T]) end() {
	if m.span != nil {
		m.span.End()
	}
}

func (m *msg[T]) NumDelivered() (int, error) {
	md, err := m.m.Metadata()
	if err != nil {
		return 0, err
	}
	return int(md.NumDelivered), nil
}
