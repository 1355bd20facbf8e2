package jobs_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ledgerlane/platform/pkg/natsconn"
	"github.com/ledgerlane/platform/pkg/pg"
	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/pkg/rpc"
	conversionv1 "github.com/ledgerlane/platform/proto/conversion/v1"
	"github.com/ledgerlane/platform/services/jobs"
	"github.com/ledgerlane/platform/services/jobs/conformance"
	"github.com/ledgerlane/platform/services/jobs/metrics"
	"github.com/ledgerlane/platform/services/jobs/natsqueue"
)

// errRefused is what the PostgreSQL store answers while the database is
// down: marked unavailable by the one mapping (pg.Error).
var errRefused = pg.Error("jobs postgres: create job", fmt.Errorf("dial: %w", syscall.ECONNREFUSED), jobs.ErrNotFound, jobs.ErrConflict)

// downStore fails what the workers and submission use while down is set,
// as a store does during a database outage.
type downStore struct {
	conformance.Store
	down atomic.Bool
}

func (s *downStore) err() error {
	if s.down.Load() {
		return errRefused
	}
	return nil
}

func (s *downStore) CreateJob(ctx context.Context, j jobs.Job, items []jobs.Item) error {
	if err := s.err(); err != nil {
		return err
	}
	return s.Store.CreateJob(ctx, j, items)
}

func (s *downStore) JobByID(ctx context.Context, id string) (jobs.Job, error) {
	if err := s.err(); err != nil {
		return jobs.Job{}, err
	}
	return s.Store.JobByID(ctx, id)
}

func (s *downStore) Item(ctx context.Context, jobID string, index int) (jobs.Item, error) {
	if err := s.err(); err != nil {
		return jobs.Item{}, err
	}
	return s.Store.Item(ctx, jobID, index)
}

func (s *downStore) CompleteItem(ctx context.Context, jobID string, index int, st string, result []byte, now time.Time) (jobs.Job, bool, error) {
	if err := s.err(); err != nil {
		return jobs.Job{}, false, err
	}
	return s.Store.CompleteItem(ctx, jobID, index, st, result, now)
}

// downQueue refuses publishes while down is set, as JetStream does while
// NATS is unreachable.
type downQueue struct {
	jobs.Queue
	down atomic.Bool
}

func (q *downQueue) PublishWork(ctx context.Context, items []jobs.WorkItem) error {
	if q.down.Load() {
		return errors.New("nats: no responders available for request")
	}
	return q.Queue.PublishWork(ctx, items)
}

// restartingConverter does not answer until downUntil, then converts as
// fakeConverter; ok counts the conversions it made.
type restartingConverter struct {
	fakeConverter
	downUntil time.Time
	ok        atomic.Int64
}

func (c *restartingConverter) Convert(ctx context.Context, in *conversionv1.ConvertRequest, opts ...grpc.CallOption) (*conversionv1.ConvertResponse, error) {
	if time.Now().Before(c.downUntil) {
		return nil, status.Error(codes.Unavailable, "connection refused")
	}
	c.ok.Add(1)
	return c.fakeConverter.Convert(ctx, in, opts...)
}

// fastRetries: backoff 50 ms doubling to 200 ms, and few deliveries per
// message (MaxDeliver 4, so items are parked at their 2nd delivery), so an
// outage of a few seconds outlasts every message many times over.
func fastRetries(c *jobs.Config) {
	c.MaxDeliver, c.RetryBase, c.RetryCeiling = 4, 50*time.Millisecond, 200*time.Millisecond
}

func waitCompleted(t *testing.T, svc *jobs.Service, id string, d time.Duration) jobs.JobView {
	t.Helper()
	var v jobs.JobView
	waitFor(t, "job completion", d, func() bool {
		var err error
		v, err = svc.GetJob(context.Background(), alice, id)
		return err == nil && v.Job.Status == jobs.JobCompleted
	})
	return v
}

func allOK(t *testing.T, v jobs.JobView, n int) {
	t.Helper()
	if v.Job.Succeeded != n || v.Job.Failed != 0 || len(v.Items) != n {
		t.Fatalf("job: %+v", v.Job)
	}
	for i, it := range v.Items {
		if it.Status != jobs.ItemOK || it.Result != fmt.Sprintf("MSG %d|camt.053", i) {
			t.Fatalf("item %d: %+v", i, it)
		}
	}
}

func msgs(n int) []string { return messages(n, func(i int) string { return fmt.Sprintf("msg %d", i) }) }

// TestDatabaseOutageStrandsNothing (issue 11, item 1): a database outage
// that outlasts every delivery of the items' messages does not use their
// last delivery; once the database answers again the job completes, each
// item converted once.
func TestDatabaseOutageStrandsNothing(t *testing.T) {
	e := newEnv(t)
	store := &downStore{Store: e.store}
	conv := &fakeConverter{}
	svc := e.service(t, conv, func(c *jobs.Config) { fastRetries(c); c.Store = store })
	const n = 6
	j, err := svc.CreateBatch(context.Background(), alice, jobs.BatchRequest{To: "camt.053", Messages: msgs(n)})
	if err != nil {
		t.Fatal(err)
	}
	store.down.Store(true)
	start(t, func(ctx context.Context) { _ = svc.RunWorkers(ctx) })
	time.Sleep(3 * time.Second) // dozens of attempts per item, each message parked many times
	store.down.Store(false)
	allOK(t, waitCompleted(t, svc, j.ID, 20*time.Second), n)
	if got := conv.calls.Load(); got != n {
		t.Fatalf("%d conversions for %d items", got, n)
	}
}

// TestConverterRestartFailsNothing (issue 11, item 3): a converter that
// does not answer for a few seconds (a restart) fails no item, although
// every message runs out of its retry deliveries meanwhile.
func TestConverterRestartFailsNothing(t *testing.T) {
	e := newEnv(t)
	conv := &restartingConverter{downUntil: time.Now().Add(3 * time.Second)}
	svc := e.service(t, conv, fastRetries)
	start(t, func(ctx context.Context) { _ = svc.RunWorkers(ctx) })
	const n = 6
	j, err := svc.CreateBatch(context.Background(), alice, jobs.BatchRequest{To: "camt.053", Messages: msgs(n)})
	if err != nil {
		t.Fatal(err)
	}
	allOK(t, waitCompleted(t, svc, j.ID, 20*time.Second), n)
	if got := conv.ok.Load(); got != n {
		t.Fatalf("%d conversions for %d items", got, n)
	}
}

// TestSubmissionOutbox (issue 11, item 2): a batch whose items did not reach
// the queue when it was stored (the queue refused them, or the process died
// right after the commit) is still accepted and runs: the publisher takes
// the open intent over after EnqueueLease, on another replica.
func TestSubmissionOutbox(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		var q *downQueue
		a := e.service(t, &fakeConverter{}, func(c *jobs.Config) {
			q = &downQueue{Queue: c.Queue}
			q.down.Store(true)
			c.Queue = q
		})
		const n = 5
		j, err := a.CreateBatch(ctx, alice, jobs.BatchRequest{To: "camt.053", Messages: msgs(n)})
		if err != nil {
			t.Fatalf("a stored batch must be accepted: %v", err)
		}
		conv := &fakeConverter{}
		b := e.service(t, conv, nil)
		start(t, func(ctx context.Context) { _ = b.RunWorkers(ctx) })
		if got, err := b.PublishPending(ctx); got != 0 || err != nil {
			t.Fatalf("published %d (%v) within the submitter's lease", got, err)
		}
		e.clock.Add(jobs.EnqueueLease)
		if got, err := b.PublishPending(ctx); got != 1 || err != nil {
			t.Fatalf("published %d jobs: %v", got, err)
		}
		allOK(t, waitCompleted(t, b, j.ID, 20*time.Second), n)
		if got := conv.calls.Load(); got != n {
			t.Fatalf("%d conversions for %d items", got, n)
		}
		e.clock.Add(jobs.EnqueueLease)
		if got, _ := b.PublishPending(ctx); got != 0 {
			t.Fatalf("published again: %d", got)
		}
	})
}

// TestResumeLostItems (issue 11, item 1): the resumer re-enqueues the
// pending items of a stalled job that the queue no longer holds: removed
// from the stream, or past their last delivery (workers that died with
// them). Each item is still converted once.
func TestResumeLostItems(t *testing.T) {
	ctx := context.Background()
	const n = 4
	for _, how := range []string{"purged", "exhausted"} {
		t.Run(how, func(t *testing.T) {
			e := newEnv(t)
			conv := &fakeConverter{}
			svc := e.service(t, conv, func(c *jobs.Config) { c.MaxDeliver, c.AckWait = 2, 300*time.Millisecond })
			j, js, stream := queuedBatch(t, e, svc, n)
			switch how {
			case "purged":
				if err := stream.Purge(ctx); err != nil {
					t.Fatal(err)
				}
			case "exhausted":
				exhaust(t, js, e.names, n)
			}
			// Not stalled yet: nothing to do.
			if got, err := svc.Resume(ctx); got != 0 || err != nil {
				t.Fatalf("resumed %d (%v) before the job stalled", got, err)
			}
			e.clock.Add(2 * time.Minute)
			resumed0 := testutil.ToFloat64(metrics.BatchItemsResumed)
			if got, err := svc.Resume(ctx); got != n || err != nil {
				t.Fatalf("resumed %d items (%v), want %d", got, err, n)
			}
			if got := testutil.ToFloat64(metrics.BatchItemsResumed) - resumed0; got != n {
				t.Fatalf("resumed items counter rose by %v, want %d", got, n)
			}
			start(t, func(ctx context.Context) { _ = svc.RunWorkers(ctx) })
			allOK(t, waitCompleted(t, svc, j.ID, 20*time.Second), n)
			if got := conv.calls.Load(); got != n {
				t.Fatalf("%d conversions for %d items", got, n)
			}
		})
	}
}

// queuedBatch submits a batch of n items to svc and waits until the work
// stream holds its n messages and the job's enqueue intent is closed (the
// resumer looks only at enqueued jobs; a claim far in the future finds no
// open intent). It returns the job and the stream, on a connection of its
// own.
func queuedBatch(t *testing.T, e *env, svc *jobs.Service, n int) (jobs.Job, jetstream.JetStream, jetstream.Stream) {
	t.Helper()
	ctx := context.Background()
	_, js, err := natsconn.Connect(e.url, "jobs-test-queued")
	if err != nil {
		t.Fatal(err)
	}
	j, err := svc.CreateBatch(ctx, alice, jobs.BatchRequest{To: "camt.053", Messages: msgs(n)})
	if err != nil {
		t.Fatal(err)
	}
	stream, err := js.Stream(ctx, e.names.WorkStream)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "items queued", 5*time.Second, func() bool {
		info, err := stream.Info(ctx)
		return err == nil && info.State.Msgs == uint64(n)
	})
	waitFor(t, "enqueue intent closed", 5*time.Second, func() bool {
		open, err := e.store.ClaimUnenqueued(ctx, e.clock.Now().Add(24*time.Hour), jobs.EnqueueLease, 20)
		return err == nil && len(open) == 0
	})
	return j, js, stream
}

// exhaust takes two deliveries of each of the n queued work messages and
// acknowledges none (AckWait 300 ms, MaxDeliver 2): the consumer delivers
// them no more, and the stream keeps them.
func exhaust(t *testing.T, js jetstream.JetStream, names natsqueue.Names, n int) {
	t.Helper()
	ctx := context.Background()
	cons, err := natsqueue.New(js, names).WorkConsumer(ctx, jobs.WorkConsumerConfig{AckWait: 300 * time.Millisecond, MaxDeliver: 2})
	if err != nil {
		t.Fatal(err)
	}
	got := 0
	deadline := time.Now().Add(10 * time.Second)
	for got < 2*n && time.Now().Before(deadline) {
		fctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		batch, err := cons.Fetch(fctx, n)
		if err == nil {
			for range batch {
				got++
			}
		}
		cancel()
	}
	if got != 2*n {
		t.Fatalf("%d deliveries", got)
	}
	time.Sleep(400 * time.Millisecond)
	fctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	if batch, err := cons.Fetch(fctx, n); err == nil {
		for range batch {
			t.Fatal("a third delivery")
		}
	}
}

// TestDiscardLeftovers (issue 28, item 3): work messages the stream keeps
// but the consumer will never deliver (here: past their last delivery; after
// a kill -9 of nats-server: acknowledged, but the removal was lost) are
// counted, and those of settled items are removed; those of pending items
// stay for the resumer, which re-enqueues them. Once the job is complete
// the stream is empty.
func TestDiscardLeftovers(t *testing.T) {
	ctx := context.Background()
	const n = 4
	e := newEnv(t)
	conv := &fakeConverter{}
	svc := e.service(t, conv, func(c *jobs.Config) { c.MaxDeliver, c.AckWait = 2, 300*time.Millisecond })
	j, js, stream := queuedBatch(t, e, svc, n)
	stored := func() uint64 {
		info, err := stream.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return info.State.Msgs
	}
	if got, err := svc.DiscardLeftovers(ctx); got != 0 || err != nil {
		t.Fatalf("discarded %d (%v) while every message is still to be delivered", got, err)
	}
	exhaust(t, js, e.names, n)
	// Items 0 and 1 settled by a worker whose acknowledgement was lost (no
	// result: this test reads only the counts).
	for i := range 2 {
		if _, _, err := e.store.CompleteItem(ctx, j.ID, i, jobs.ItemOK, nil, e.clock.Now()); err != nil {
			t.Fatal(err)
		}
	}
	discarded0 := testutil.ToFloat64(metrics.WorkLeftoversDiscarded)
	if got, err := svc.DiscardLeftovers(ctx); got != 2 || err != nil {
		t.Fatalf("discarded %d (%v), want the 2 of settled items", got, err)
	}
	if got := testutil.ToFloat64(metrics.WorkLeftovers); got != n {
		t.Fatalf("leftover gauge %v, want %d", got, n)
	}
	if got := testutil.ToFloat64(metrics.WorkLeftoversDiscarded) - discarded0; got != 2 {
		t.Fatalf("discarded counter rose by %v, want 2", got)
	}
	if got := stored(); got != n-2 {
		t.Fatalf("stream holds %d messages, want the %d of pending items", got, n-2)
	}
	// Again: the pending items' messages stay (the resumer's).
	if got, err := svc.DiscardLeftovers(ctx); got != 0 || err != nil {
		t.Fatalf("discarded %d (%v) on the second pass", got, err)
	}
	e.clock.Add(2 * time.Minute)
	if got, err := svc.Resume(ctx); got != n-2 || err != nil {
		t.Fatalf("resumed %d items (%v), want %d", got, err, n-2)
	}
	start(t, func(ctx context.Context) { _ = svc.RunWorkers(ctx) })
	if v := waitCompleted(t, svc, j.ID, 20*time.Second); v.Job.Succeeded != n {
		t.Fatalf("job: %+v", v.Job)
	}
	if got := conv.calls.Load(); got != n-2 {
		t.Fatalf("%d conversions, want %d (the pending items once)", got, n-2)
	}
	waitFor(t, "stream empty", 5*time.Second, func() bool { return stored() == 0 })
	if got, err := svc.DiscardLeftovers(ctx); got != 0 || err != nil {
		t.Fatalf("discarded %d (%v) with the stream empty", got, err)
	}
	if got := testutil.ToFloat64(metrics.WorkLeftovers); got != 0 {
		t.Fatalf("leftover gauge %v once the stream is empty", got)
	}
}

// TestDiscardLeftoversAwaitingAnAck: a kill -9 of nats-server can lose
// acknowledgements a worker sent: the messages of settled items then await
// an acknowledgement that never comes, until their ack wait (2 minutes)
// runs out. At the tail of the work (nothing waiting for delivery) the
// leftover pass removes them at once; a message of a pending item in
// flight stays.
func TestDiscardLeftoversAwaitingAnAck(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	svc := e.service(t, &fakeConverter{}, nil)
	j, js, stream := queuedBatch(t, e, svc, 2)
	// Both delivered, neither acknowledged (the acknowledgements lost).
	cons, err := natsqueue.New(js, e.names).WorkConsumer(ctx, jobs.WorkConsumerConfig{AckWait: time.Minute, MaxDeliver: 20})
	if err != nil {
		t.Fatal(err)
	}
	got := 0
	for deadline := time.Now().Add(5 * time.Second); got < 2 && time.Now().Before(deadline); {
		fctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		if batch, err := cons.Fetch(fctx, 2); err == nil {
			for range batch {
				got++
			}
		}
		cancel()
	}
	if got != 2 {
		t.Fatalf("%d deliveries", got)
	}
	if _, _, err := e.store.CompleteItem(ctx, j.ID, 0, jobs.ItemOK, nil, e.clock.Now()); err != nil {
		t.Fatal(err)
	}
	if n, err := svc.DiscardLeftovers(ctx); n != 1 || err != nil {
		t.Fatalf("discarded %d (%v), want the settled item's message", n, err)
	}
	if got := testutil.ToFloat64(metrics.WorkLeftovers); got != 0 {
		t.Fatalf("leftover gauge %v: messages awaiting an acknowledgement are not leftovers", got)
	}
	info, err := stream.Info(ctx)
	if err != nil || info.State.Msgs != 1 {
		t.Fatalf("stream holds %d messages (%v), want the pending item's", info.State.Msgs, err)
	}
}

// TestStoreOutageAnswersUnavailable (issue 11, item 4): a batch submitted
// while the database does not answer gets 503 unavailable with Retry-After.
func TestStoreOutageAnswersUnavailable(t *testing.T) {
	e := newEnv(t)
	store := &downStore{Store: e.store}
	store.down.Store(true)
	svc := e.service(t, &fakeConverter{}, func(c *jobs.Config) { c.Store = store })
	_, err := svc.CreateBatch(context.Background(), alice, jobs.BatchRequest{To: "camt.053", Messages: msgs(1)})
	if p := rpc.Problem(err); p.Type != problem.Unavailable || p.Status != 503 || p.RetryAfter <= 0 {
		t.Fatalf("problem %+v", p)
	}
}
