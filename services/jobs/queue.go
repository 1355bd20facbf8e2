package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ledgerlane/platform/pkg/principal"
	"github.com/ledgerlane/platform/pkg/problem"
	conversionv1 "github.com/ledgerlane/platform/proto/conversion/v1"
)

// Names are the JetStream streams, subjects and durable consumers the
// service uses.
type Names struct {
	// WorkStream holds one message per item on WorkSubject.<job>.<index>;
	// the message names the item and never carries its content.
	WorkStream, WorkSubject, WorkConsumer string
	// EventStream holds job.completed events on EventSubject.
	EventStream, EventSubject, EventConsumer string
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
	}
}

// EnsureStreams creates or updates both streams. Both are work queues: a
// message is removed once a consumer acknowledges it, so items and events
// are processed by exactly one worker at a time and redelivered when a worker
// dies before acknowledging.
func (s *Service) EnsureStreams(ctx context.Context) error {
	for _, cfg := range []jetstream.StreamConfig{
		{
			Name: s.names.WorkStream, Subjects: []string{s.names.WorkSubject + ".>"},
			Retention: jetstream.WorkQueuePolicy, Storage: jetstream.FileStorage,
			// Items of a job outlive it at most by the longest TTL.
			MaxAge: MaxTTL,
		},
		{
			Name: s.names.EventStream, Subjects: []string{s.names.EventSubject},
			Retention: jetstream.WorkQueuePolicy, Storage: jetstream.FileStorage,
			MaxAge: MaxTTL, Duplicates: 2 * time.Minute,
		},
	} {
		if _, err := s.js.CreateOrUpdateStream(ctx, cfg); err != nil {
			return fmt.Errorf("jobs: stream %s: %w", cfg.Name, err)
		}
	}
	return nil
}

type workMsg struct {
	JobID string `json:"job_id"`
	Index int    `json:"index"`
}

func (s *Service) enqueue(ctx context.Context, jobID string, n int) error {
	// Asynchronous publishes, awaited in windows: a 10,000-item batch would
	// otherwise pay 10,000 round trips before answering 202, and an unbounded
	// window overruns the client's pending-ack limit.
	const window = 500
	for lo := 0; lo < n; lo += window {
		hi := min(lo+window, n)
		futures := make([]jetstream.PubAckFuture, 0, hi-lo)
		for i := lo; i < hi; i++ {
			body, _ := json.Marshal(workMsg{JobID: jobID, Index: i})
			subj := s.names.WorkSubject + "." + jobID + "." + strconv.Itoa(i)
			f, err := s.js.PublishAsync(subj, body, jetstream.WithMsgID(jobID+"."+strconv.Itoa(i)))
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

// RunWorkers runs Config.Workers item workers until ctx ends. Each pulls a
// few items at a time and processes them in order.
func (s *Service) RunWorkers(ctx context.Context) error {
	if s.keys == nil {
		<-ctx.Done()
		return nil
	}
	cons, err := s.js.CreateOrUpdateConsumer(ctx, s.names.WorkStream, jetstream.ConsumerConfig{
		Durable: s.names.WorkConsumer, AckPolicy: jetstream.AckExplicitPolicy,
		AckWait: s.cfg.AckWait, MaxDeliver: s.cfg.MaxDeliver,
		FilterSubject: s.names.WorkSubject + ".>",
		MaxAckPending: 1000,
	})
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

func (s *Service) workLoop(ctx context.Context, cons jetstream.Consumer) {
	for ctx.Err() == nil {
		s.fetchOne(ctx, cons)
	}
}

func (s *Service) fetchOne(ctx context.Context, cons jetstream.Consumer) {
	// A bounded wait, so the loop notices ctx ending promptly.
	fctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	batch, err := cons.Fetch(fetchBatch, jetstream.FetchContext(fctx))
	if err != nil {
		if ctx.Err() == nil {
			s.log.Warn("jobs: fetch", "err", err)
			time.Sleep(200 * time.Millisecond)
		}
		return
	}
	first := true
	for msg := range batch.Messages() {
		if ctx.Err() != nil {
			return // stopping: the rest is redelivered after AckWait
		}
		if !first {
			// It waited behind the previous item: restart its AckWait so a
			// slow neighbour does not get it redelivered elsewhere.
			_ = msg.InProgress()
		}
		first = false
		s.handleWork(ctx, msg)
	}
}

// fetchBatch items per pull request: fewer round trips than one at a time,
// few enough that items do not queue long behind one slow conversion.
const fetchBatch = 4

// handleWork processes one item message. The message is acknowledged only
// after the outcome is stored (and, for the last item, the event published),
// so a worker that dies earlier leaves it for redelivery.
func (s *Service) handleWork(ctx context.Context, msg jetstream.Msg) {
	var wm workMsg
	if err := json.Unmarshal(msg.Data(), &wm); err != nil {
		s.log.Error("jobs: malformed work message; dropped", "subject", msg.Subject())
		_ = msg.Term()
		return
	}
	err := s.processItem(ctx, wm, msg)
	switch {
	case err == nil:
		_ = msg.Ack()
	case ctx.Err() != nil:
		// Shutting down (or killed in a test): no ack, JetStream redelivers.
	default:
		s.log.Warn("jobs: item will be retried", "job_id", wm.JobID, "index", wm.Index, "err", err)
		_ = msg.NakWithDelay(time.Second)
	}
}

func (s *Service) processItem(ctx context.Context, wm workMsg, msg jetstream.Msg) error {
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
	if input, err := s.keys.Open(it.Input, inputAAD(j.ID, it.Index)); err != nil {
		// Retrying cannot help (its key was removed from JOB_ENCRYPTION_KEY
		// too early, say): fail the item so the job still completes.
		s.log.Error("jobs: item input does not decrypt", "job_id", j.ID, "index", it.Index)
		out = Outcome{Problem: itemProblem(problem.New(problem.Internal, "the item could not be decrypted"))}
	} else {
		out, retry = s.convert(ctx, j, input)
	}
	if retry != nil {
		// Transient converter trouble: retry until the last delivery, then
		// record the failure so the job still completes.
		if md, err := msg.Metadata(); err == nil && int(md.NumDelivered) < s.cfg.ConvertAttempts {
			return retry
		}
		out = Outcome{Problem: &Problem{Type: string(problem.Unavailable), Title: problem.Unavailable.Title(), Status: problem.Unavailable.Status(),
			Detail: "the converter did not answer after several attempts"}}
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
		observeItem(st, j.CreatedAt, s.now())
	}
	if done.Status == JobCompleted && changed {
		return s.publishCompleted(ctx, done)
	}
	return nil
}

// convert calls the converter as the job's tenant. A problem answer (bad
// input, unknown format, strict loss) is a final item failure; a transport
// failure is returned as retry.
func (s *Service) convert(ctx context.Context, j Job, input []byte) (out Outcome, retry error) {
	opts, err := optionsFromJSON(j.Options)
	if err != nil {
		return Outcome{Problem: itemProblem(problem.New(problem.InvalidInput, "options could not be decoded"))}, nil
	}
	cctx, cancel := context.WithTimeout(ctx, s.cfg.ConvertTimeout)
	defer cancel()
	cctx = principal.Outgoing(cctx, principal.Principal{
		// The gateway checked the convert scope when the batch was accepted.
		AccountID: j.AccountID, Mode: j.Mode, Surface: principal.SurfaceConversion, Scopes: []string{"convert"},
		RequestID: "job-" + j.ID,
	})
	resp, err := s.conv.Convert(cctx, &conversionv1.ConvertRequest{From: j.From, To: j.To, Message: string(input), Options: opts})
	if err != nil {
		if ctx.Err() != nil {
			return Outcome{}, ctx.Err()
		}
		switch status.Code(err) {
		case codes.Unavailable, codes.DeadlineExceeded, codes.Canceled, codes.ResourceExhausted, codes.Aborted:
			return Outcome{}, err
		}
		return Outcome{Problem: itemProblem(problem.FromError(err))}, nil
	}
	// Paged MT output is concatenated, as on the bare-document convert route.
	out.Result = strings.Join(resp.GetResult(), "")
	for _, w := range resp.GetWarnings() {
		out.Warnings = append(out.Warnings, Warning{Code: w.GetCode(), Severity: w.GetSeverity(), Message: w.GetMessage(), Path: w.GetPath()})
	}
	return out, nil
}

func itemProblem(p *problem.Problem) *Problem {
	return &Problem{Type: string(p.Type), Title: p.Title, Status: p.Status, Detail: p.Detail}
}

// eventMsg is the NATS job.completed event: the tenant and the delivery body.
type eventMsg struct {
	AccountID string          `json:"account_id"`
	JobID     string          `json:"job_id"`
	Body      json.RawMessage `json:"body"`
}

func (s *Service) publishCompleted(ctx context.Context, j Job) error {
	body, err := eventBody(j)
	if err != nil {
		return err
	}
	data, _ := json.Marshal(eventMsg{AccountID: j.AccountID, JobID: j.ID, Body: body})
	// The message id lets JetStream drop a republish within its window.
	_, err = s.js.Publish(ctx, s.names.EventSubject, data, jetstream.WithMsgID("job.completed."+j.ID))
	return err
}
