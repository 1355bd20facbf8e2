package jobs

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// Domain metrics, on the default registry (served by pkg/rpc's METRICS_ADDR
// endpoint) and shared by every Service in the process. Labels take only the
// fixed values below: never account, job, endpoint or delivery ids.
var (
	batchJobsCreated = promauto.With(prometheus.DefaultRegisterer).NewCounter(prometheus.CounterOpts{
		Name: "ledgerlane_jobs_batch_jobs_created_total",
		Help: "Batch jobs accepted and enqueued.",
	})
	batchItemsProcessed = promauto.With(prometheus.DefaultRegisterer).NewCounterVec(prometheus.CounterOpts{
		Name: "ledgerlane_jobs_batch_items_processed_total",
		Help: "Batch items completed, by outcome (ok, failed). A redelivered item counts once.",
	}, []string{"outcome"})
	batchItemLatency = promauto.With(prometheus.DefaultRegisterer).NewHistogram(prometheus.HistogramOpts{
		Name:    "ledgerlane_jobs_batch_item_completion_seconds",
		Help:    "Time from a batch's creation (when its items are enqueued) to the completion of each item, retries included.",
		Buckets: []float64{.05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600},
	})
	batchJobsSwept = promauto.With(prometheus.DefaultRegisterer).NewCounter(prometheus.CounterOpts{
		Name: "ledgerlane_jobs_batch_jobs_swept_total",
		Help: "Expired batch jobs removed with their results by the sweeper.",
	})
	webhookAttempts = promauto.With(prometheus.DefaultRegisterer).NewCounterVec(prometheus.CounterOpts{
		Name: "ledgerlane_jobs_webhook_delivery_attempts_total",
		Help: "Webhook delivery attempts sent, by outcome (delivered: 2xx answer; failed: anything else, timeouts included).",
	}, []string{"outcome"})
	webhookExhausted = promauto.With(prometheus.DefaultRegisterer).NewCounter(prometheus.CounterOpts{
		Name: "ledgerlane_jobs_webhook_deliveries_exhausted_total",
		Help: "Webhook deliveries whose last scheduled attempt failed; DisableAfter consecutive ones disable the endpoint.",
	})
)

func init() {
	// Start the labelled series at zero so rate() and absent() work from the
	// first scrape.
	for _, o := range []string{ItemOK, ItemFailed} {
		batchItemsProcessed.WithLabelValues(o)
	}
	for _, o := range []string{"delivered", "failed"} {
		webhookAttempts.WithLabelValues(o)
	}
}

// observeItem records a newly completed item (status ItemOK or ItemFailed).
func observeItem(status string, created, now time.Time) {
	batchItemsProcessed.WithLabelValues(status).Inc()
	if !created.IsZero() && !now.Before(created) {
		batchItemLatency.Observe(now.Sub(created).Seconds())
	}
}

// observeAttempt records one sent delivery attempt.
func observeAttempt(a Attempt) {
	outcome := "failed"
	if a.Succeeded {
		outcome = "delivered"
	}
	webhookAttempts.WithLabelValues(outcome).Inc()
	if a.Exhausted {
		webhookExhausted.Inc()
	}
}
