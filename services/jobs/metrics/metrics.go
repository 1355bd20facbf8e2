// Package metrics records the jobs service's domain metrics in Prometheus:
// Prometheus implements jobs.Metrics. The collectors live on the default
// registry (served by pkg/rpc's METRICS_ADDR endpoint) and are shared by every
// Service in the process. Labels take only the fixed values below: never
// account, job, endpoint or delivery ids. docs/metrics.md lists the series.
package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"

	"github.com/ledgerlane/platform/services/jobs"
	"github.com/ledgerlane/platform/services/jobs/accounting"
)

// The collectors, exported for tests.
var (
	BatchJobsCreated = promauto.With(prometheus.DefaultRegisterer).NewCounter(prometheus.CounterOpts{
		Name: "ledgerlane_jobs_batch_jobs_created_total",
		Help: "Batch jobs accepted and enqueued.",
	})
	BatchItemsProcessed = promauto.With(prometheus.DefaultRegisterer).NewCounterVec(prometheus.CounterOpts{
		Name: "ledgerlane_jobs_batch_items_processed_total",
		Help: "Batch items completed, by outcome (ok, failed). A redelivered item counts once.",
	}, []string{"outcome"})
	BatchItemLatency = promauto.With(prometheus.DefaultRegisterer).NewHistogram(prometheus.HistogramOpts{
		Name:    "ledgerlane_jobs_batch_item_completion_seconds",
		Help:    "Time from a batch's creation (when its items are enqueued) to the completion of each item, retries included.",
		Buckets: []float64{.05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600},
	})
	BatchJobsSwept = promauto.With(prometheus.DefaultRegisterer).NewCounter(prometheus.CounterOpts{
		Name: "ledgerlane_jobs_batch_jobs_swept_total",
		Help: "Expired batch jobs removed with their results by the sweeper.",
	})
	WebhookAttempts = promauto.With(prometheus.DefaultRegisterer).NewCounterVec(prometheus.CounterOpts{
		Name: "ledgerlane_jobs_webhook_delivery_attempts_total",
		Help: "Webhook delivery attempts sent, by outcome (delivered: 2xx answer; failed: anything else, timeouts included).",
	}, []string{"outcome"})
	WebhookExhausted = promauto.With(prometheus.DefaultRegisterer).NewCounter(prometheus.CounterOpts{
		Name: "ledgerlane_jobs_webhook_deliveries_exhausted_total",
		Help: "Webhook deliveries whose last scheduled attempt failed; DisableAfter consecutive ones disable the endpoint.",
	})
	AccountingCalls = promauto.With(prometheus.DefaultRegisterer).NewCounterVec(prometheus.CounterOpts{
		Name: "ledgerlane_jobs_accounting_platform_calls_total",
		Help: "Calls to accounting platforms, by platform, operation (exchange, refresh, push, revoke) and outcome (ok, rejected, unavailable, invalid_grant, unauthorized).",
	}, []string{"platform", "operation", "outcome"})
	AccountingEntries = promauto.With(prometheus.DefaultRegisterer).NewCounterVec(prometheus.CounterOpts{
		Name: "ledgerlane_jobs_accounting_entries_pushed_total",
		Help: "Statement entries of pushes, by platform and outcome (created: booked now; present: booked by an earlier push).",
	}, []string{"platform", "outcome"})
)

func init() {
	// Start the labelled series at zero so rate() and absent() work from the
	// first scrape.
	for _, o := range []string{jobs.ItemOK, jobs.ItemFailed} {
		BatchItemsProcessed.WithLabelValues(o)
	}
	for _, o := range []string{"delivered", "failed"} {
		WebhookAttempts.WithLabelValues(o)
	}
}

// Prometheus implements jobs.Metrics and accounting.Metrics on the
// collectors above.
type Prometheus struct{}

var (
	_ jobs.Metrics       = Prometheus{}
	_ accounting.Metrics = Prometheus{}
)

// PlatformCall counts one accounting-platform call.
func (Prometheus) PlatformCall(platform, operation, outcome string) {
	AccountingCalls.WithLabelValues(platform, operation, outcome).Inc()
}

// EntriesPushed counts a push's entries.
func (Prometheus) EntriesPushed(platform string, created, present int) {
	AccountingEntries.WithLabelValues(platform, "created").Add(float64(created))
	AccountingEntries.WithLabelValues(platform, "present").Add(float64(present))
}

// JobCreated counts an accepted batch.
func (Prometheus) JobCreated() { BatchJobsCreated.Inc() }

// ItemCompleted counts a completed item (status jobs.ItemOK or ItemFailed)
// and observes its time since the job's creation.
func (Prometheus) ItemCompleted(status string, created, now time.Time) {
	BatchItemsProcessed.WithLabelValues(status).Inc()
	if !created.IsZero() && !now.Before(created) {
		BatchItemLatency.Observe(now.Sub(created).Seconds())
	}
}

// JobsSwept counts swept jobs.
func (Prometheus) JobsSwept(n int) { BatchJobsSwept.Add(float64(n)) }

// DeliveryAttempted counts one sent delivery attempt, and an exhausted
// delivery.
func (Prometheus) DeliveryAttempted(a jobs.Attempt) {
	outcome := "failed"
	if a.Succeeded {
		outcome = "delivered"
	}
	WebhookAttempts.WithLabelValues(outcome).Inc()
	if a.Exhausted {
		WebhookExhausted.Inc()
	}
}
