package jobs_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

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
			if _, err := svc.CreateWebhook(ctx, alice, rec.srv.URL); err != nil {
				t.Fatal(err)
			}
			c := metrics.WebhookAttempts.WithLabelValues(tt.outcome)
			c0, x0 := testutil.ToFloat64(c), testutil.ToFloat64(metrics.WebhookExhausted)
			if err := svc.Fanout(ctx, alice.AccountID, "0e8a3c6e-2f4b-4f54-9f53-00000000eeee", []byte(`{}`)); err != nil {
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

func TestMetricsLint(t *testing.T) {
	for _, c := range []prometheus.Collector{metrics.BatchJobsCreated, metrics.BatchItemsProcessed, metrics.BatchItemLatency,
		metrics.BatchJobsSwept, metrics.WebhookAttempts, metrics.WebhookExhausted} {
		problems, err := testutil.CollectAndLint(c)
		if err != nil || len(problems) > 0 {
			t.Errorf("lint: %v %v", err, problems)
		}
	}
}
