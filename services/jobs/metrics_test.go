package jobs_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	conversionv1 "github.com/ledgerlane/platform/proto/conversion/v1"
	"github.com/ledgerlane/platform/services/jobs"
	"github.com/ledgerlane/platform/services/jobs/metrics"
)

// The metrics live on the shared default registry, so each check compares a
// series before and after the operation.

func histogram(t *testing.T, h prometheus.Histogram) (count uint64, sum float64) {
	t.Helper()
	var m dto.Metric
	if err := h.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetHistogram().GetSampleCount(), m.GetHistogram().GetSampleSum()
}

func TestBatchMetrics(t *testing.T) {
	e := newEnv(t)
	svc := e.service(t, &fakeConverter{}, nil)
	ctx := context.Background()
	okC, failedC := metrics.BatchItemsProcessed.WithLabelValues("ok"), metrics.BatchItemsProcessed.WithLabelValues("failed")
	created0, ok0, failed0 := testutil.ToFloat64(metrics.BatchJobsCreated), testutil.ToFloat64(okC), testutil.ToFloat64(failedC)
	n0, sum0 := histogram(t, metrics.BatchItemLatency)
	swept0 := testutil.ToFloat64(metrics.BatchJobsSwept)

	j, err := svc.CreateBatch(ctx, alice, jobs.BatchRequest{To: "camt.053", Messages: []string{"a", "bad b", "c"}, TTLSeconds: ttl(60)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateBatch(ctx, alice, jobs.BatchRequest{}); err == nil {
		t.Fatal("invalid batch accepted")
	}
	if got := testutil.ToFloat64(metrics.BatchJobsCreated) - created0; got != 1 {
		t.Fatalf("jobs created rose by %v, want 1", got)
	}
	// The items wait 3 s in the queue before a worker starts.
	e.clock.Add(3 * time.Second)
	start(t, func(ctx context.Context) { _ = svc.RunWorkers(ctx) })
	waitFor(t, "job completion", 20*time.Second, func() bool {
		v, err := svc.GetJob(ctx, alice, j.ID)
		return err == nil && v.Job.Status == jobs.JobCompleted
	})
	if got := testutil.ToFloat64(okC) - ok0; got != 2 {
		t.Errorf("items ok rose by %v, want 2", got)
	}
	if got := testutil.ToFloat64(failedC) - failed0; got != 1 {
		t.Errorf("items failed rose by %v, want 1", got)
	}
	if n, sum := histogram(t, metrics.BatchItemLatency); n-n0 != 3 || sum-sum0 != 9 {
		t.Errorf("latency: %d observations summing to %vs, want 3 summing to 9s", n-n0, sum-sum0)
	}

	e.clock.Add(2 * time.Minute) // past the 60 s TTL
	if n, err := svc.Sweep(ctx); err != nil || n != 1 {
		t.Fatalf("sweep: %d, %v", n, err)
	}
	if got := testutil.ToFloat64(metrics.BatchJobsSwept) - swept0; got != 1 {
		t.Errorf("jobs swept rose by %v, want 1", got)
	}
}

func TestWebhookMetrics(t *testing.T) {
	tests := []struct {
		name      string
		status    int
		outcome   string
		attempts  int // attempts sent
		exhausted float64
	}{
		{"delivered", http.StatusNoContent, "delivered", 1, 0},
		{"failed, retried", http.StatusInternalServerError, "failed", 1, 0},
		{"failed until exhausted", http.StatusBadGateway, "failed", len(jobs.RetrySchedule), 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			svc := e.service(t, &fakeConverter{}, nil)
			ctx := context.Background()
			rec := newReceiver(t, tt.status)
			if _, err := svc.CreateWebhook(ctx, alice, jobs.WebhookSettings{URL: rec.srv.URL}); err != nil {
				t.Fatal(err)
			}
			c := metrics.WebhookAttempts.WithLabelValues(tt.outcome)
			c0, x0 := testutil.ToFloat64(c), testutil.ToFloat64(metrics.WebhookExhausted)
			if err := svc.Fanout(ctx, alice.AccountID, alice.Mode, "0e8a3c6e-2f4b-4f54-9f53-00000000eeee", []byte(`{}`)); err != nil {
				t.Fatal(err)
			}
			// Each pass makes every attempt due by then; 2 h covers the schedule.
			total := svc.DeliverDue(ctx)
			if tt.attempts > 1 {
				e.clock.Add(2 * time.Hour)
				total += svc.DeliverDue(ctx)
			}
			if total != tt.attempts {
				t.Fatalf("%d attempts, want %d", total, tt.attempts)
			}
			if got := testutil.ToFloat64(c) - c0; got != float64(tt.attempts) {
				t.Errorf("attempts{%s} rose by %v, want %d", tt.outcome, got, tt.attempts)
			}
			if got := testutil.ToFloat64(metrics.WebhookExhausted) - x0; got != tt.exhausted {
				t.Errorf("exhausted rose by %v, want %v", got, tt.exhausted)
			}
		})
	}
}

// failingFirst answers Unavailable to the first failures calls for each
// message, then converts as fakeConverter: a converter that was restarting.
type failingFirst struct {
	fakeConverter
	failures int
	mu       sync.Mutex
	seen     map[string]int
}

func (c *failingFirst) Convert(ctx context.Context, in *conversionv1.ConvertRequest, opts ...grpc.CallOption) (*conversionv1.ConvertResponse, error) {
	c.mu.Lock()
	if c.seen == nil {
		c.seen = map[string]int{}
	}
	c.seen[in.GetMessage()]++
	n := c.seen[in.GetMessage()]
	c.mu.Unlock()
	if n <= c.failures {
		return nil, status.Error(codes.Unavailable, "connection refused")
	}
	return c.fakeConverter.Convert(ctx, in, opts...)
}

// TestRedeliveryMetrics: every work message a worker receives is counted,
// as a first delivery or a redelivery; an item that uses its retry
// deliveries (2 with fastRetries) is parked, and its fresh message is a
// first delivery again.
func TestRedeliveryMetrics(t *testing.T) {
	tests := []struct {
		name                      string
		failures                  int // transient converter failures before the item converts
		first, redelivered, parks float64
	}{
		{"converted at once", 0, 1, 0, 0},
		{"retried once", 1, 1, 1, 0},
		{"parked after two", 2, 2, 1, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			svc := e.service(t, &failingFirst{failures: tt.failures}, fastRetries)
			first, again := metrics.BatchItemDeliveries.WithLabelValues("first"), metrics.BatchItemDeliveries.WithLabelValues("redelivered")
			first0, again0, parked0 := testutil.ToFloat64(first), testutil.ToFloat64(again), testutil.ToFloat64(metrics.BatchItemsParked)
			start(t, func(ctx context.Context) { _ = svc.RunWorkers(ctx) })
			j, err := svc.CreateBatch(context.Background(), alice, jobs.BatchRequest{To: "camt.053", Messages: msgs(1)})
			if err != nil {
				t.Fatal(err)
			}
			allOK(t, waitCompleted(t, svc, j.ID, 20*time.Second), 1)
			if got := testutil.ToFloat64(first) - first0; got != tt.first {
				t.Errorf("first deliveries rose by %v, want %v", got, tt.first)
			}
			if got := testutil.ToFloat64(again) - again0; got != tt.redelivered {
				t.Errorf("redeliveries rose by %v, want %v", got, tt.redelivered)
			}
			if got := testutil.ToFloat64(metrics.BatchItemsParked) - parked0; got != tt.parks {
				t.Errorf("parked items rose by %v, want %v", got, tt.parks)
			}
		})
	}
}

// TestEndpointDisabledMetrics: the DisableAfter-th consecutive exhausted
// delivery counts one auto-disabled endpoint, and the sweeper's pass sets
// the gauge of disabled endpoints, on both stores.
func TestEndpointDisabledMetrics(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		svc := e.service(t, &fakeConverter{}, nil)
		rec := newReceiver(t, http.StatusServiceUnavailable)
		if _, err := svc.CreateWebhook(ctx, alice, jobs.WebhookSettings{URL: rec.srv.URL}); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Sweep(ctx); err != nil {
			t.Fatal(err)
		}
		if got := testutil.ToFloat64(metrics.WebhookEndpointsDisabled); got != 0 {
			t.Fatalf("disabled endpoints gauge %v before any failure", got)
		}
		disabled0 := testutil.ToFloat64(metrics.WebhookEndpointsAutoDisabled)
		exhaust := func(k int) {
			t.Helper()
			if err := svc.Fanout(ctx, alice.AccountID, alice.Mode, fmt.Sprintf("0e8a3c6e-2f4b-4f54-9f53-%012d", k), []byte(`{}`)); err != nil {
				t.Fatal(err)
			}
			for range jobs.RetrySchedule {
				svc.DeliverDue(ctx)
				e.clock.Add(2 * time.Hour)
			}
		}
		for k := range jobs.DisableAfter - 1 {
			exhaust(k)
		}
		if got := testutil.ToFloat64(metrics.WebhookEndpointsAutoDisabled) - disabled0; got != 0 {
			t.Fatalf("auto-disabled rose by %v before the threshold", got)
		}
		exhaust(jobs.DisableAfter)
		if got := testutil.ToFloat64(metrics.WebhookEndpointsAutoDisabled) - disabled0; got != 1 {
			t.Fatalf("auto-disabled rose by %v, want 1", got)
		}
		if _, err := svc.Sweep(ctx); err != nil {
			t.Fatal(err)
		}
		if got := testutil.ToFloat64(metrics.WebhookEndpointsDisabled); got != 1 {
			t.Fatalf("disabled endpoints gauge %v, want 1", got)
		}
	})
}

// TestOutboxMetrics: while the queue refuses a stored job's items, each
// publisher pass reports one open intent growing older; once published, the
// backlog is empty. Both stores.
func TestOutboxMetrics(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		var q *downQueue
		svc := e.service(t, &fakeConverter{}, func(c *jobs.Config) {
			q = &downQueue{Queue: c.Queue}
			q.down.Store(true)
			c.Queue = q
		})
		want := func(open, age float64) {
			t.Helper()
			if got := testutil.ToFloat64(metrics.OutboxOpenIntents); got != open {
				t.Errorf("open intents %v, want %v", got, open)
			}
			if got := testutil.ToFloat64(metrics.OutboxOldestAge); got != age {
				t.Errorf("oldest intent age %vs, want %vs", got, age)
			}
		}
		if _, err := svc.PublishPending(ctx); err != nil {
			t.Fatal(err)
		}
		want(0, 0)
		if _, err := svc.CreateBatch(ctx, alice, jobs.BatchRequest{To: "camt.053", Messages: msgs(2)}); err != nil {
			t.Fatal(err)
		}
		e.clock.Add(30 * time.Second)
		if n, err := svc.PublishPending(ctx); n != 0 || err != nil {
			t.Fatalf("published %d (%v) within the submitter's lease", n, err)
		}
		want(1, 30)
		e.clock.Add(jobs.EnqueueLease)
		if n, err := svc.PublishPending(ctx); n != 0 || err == nil {
			t.Fatalf("published %d (%v) with the queue down", n, err)
		}
		want(1, 90)
		q.down.Store(false)
		e.clock.Add(jobs.EnqueueLease)
		if n, err := svc.PublishPending(ctx); n != 1 || err != nil {
			t.Fatalf("published %d (%v), want 1", n, err)
		}
		want(0, 0)
	})
}

func TestMetricsLint(t *testing.T) {
	for _, c := range []prometheus.Collector{metrics.BatchJobsCreated, metrics.BatchItemsProcessed, metrics.BatchItemLatency,
		metrics.BatchJobsSwept, metrics.WebhookAttempts, metrics.WebhookExhausted, metrics.BatchItemDeliveries,
		metrics.BatchItemsParked, metrics.BatchItemsResumed, metrics.OutboxOpenIntents, metrics.OutboxOldestAge,
		metrics.WebhookEndpointsAutoDisabled, metrics.WebhookEndpointsDisabled} {
		problems, err := testutil.CollectAndLint(c)
		if err != nil || len(problems) > 0 {
			t.Errorf("lint: %v %v", err, problems)
		}
	}
}
