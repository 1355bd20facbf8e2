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
	BatchJobsCreated             = counter("ledgerlane_jobs_batch_jobs_created_total", "Batch jobs accepted and enqueued.")
	BatchItemsProcessed          = counterVec("ledgerlane_jobs_batch_items_processed_total", "Batch items completed, by outcome (ok, failed). A redelivered item counts once.", "outcome")
	BatchItemLatency             = histogram("ledgerlane_jobs_batch_item_completion_seconds", "Time from a batch's creation (when its items are enqueued) to the completion of each item, retries included.", []float64{.05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600})
	BatchItemDeliveries          = counterVec("ledgerlane_jobs_batch_item_deliveries_total", "Work-queue messages received by the item workers, by delivery (first; redelivered: the queue delivered it before, after a nak for a transient failure or an ack wait that ran out).", "delivery")
	BatchItemsParked             = counter("ledgerlane_jobs_batch_items_parked_total", "Items that used their message's retry deliveries on transient failures and were queued again as a fresh message.")
	BatchItemsResumed            = counter("ledgerlane_jobs_batch_items_resumed_total", "Items of stalled jobs the resumer re-enqueued because the queue had lost them (removed, or past their last delivery).")
	OutboxOpenIntents            = gauge("ledgerlane_jobs_outbox_open_intents", "Stored batch jobs whose items are not yet confirmed in the work queue (open enqueue intents), as the last publisher pass counted them.")
	OutboxOldestAge              = gauge("ledgerlane_jobs_outbox_oldest_intent_age_seconds", "Age of the oldest open enqueue intent at the last publisher pass; 0 when there is none.")
	WorkLeftovers                = gauge("ledgerlane_jobs_work_leftover_messages", "Work-queue messages the stream still stores but the consumer will never deliver again (kept by a crash of the queue's server, or past their last delivery), as the last leftover pass found them.")
	WorkLeftoversDiscarded       = counter("ledgerlane_jobs_work_leftovers_discarded_total", "Leftover work-queue messages of settled items (or of jobs no longer stored) the leftover pass removed.")
	BatchJobsSwept               = counter("ledgerlane_jobs_batch_jobs_swept_total", "Expired batch jobs removed with their results by the sweeper.")
	WebhookAttempts              = counterVec("ledgerlane_jobs_webhook_delivery_attempts_total", "Webhook delivery attempts sent, by outcome (delivered: 2xx answer; failed: anything else, timeouts included).", "outcome")
	WebhookExhausted             = counter("ledgerlane_jobs_webhook_deliveries_exhausted_total", "Webhook deliveries whose last scheduled attempt failed; DisableAfter consecutive ones disable the endpoint.")
	WebhookEndpointsAutoDisabled = counter("ledgerlane_jobs_webhook_endpoints_auto_disabled_total", "Webhook endpoints disabled automatically after DisableAfter consecutive exhausted deliveries.")
	WebhookEndpointsDisabled     = gauge("ledgerlane_jobs_webhook_endpoints_disabled", "Webhook endpoints of every tenant that are disabled, as the last sweeper pass counted them.")
	AccountingCalls              = counterVec("ledgerlane_jobs_accounting_platform_calls_total", "Calls to accounting platforms, by platform, operation (exchange, refresh, push, revoke) and outcome (ok, rejected, unavailable, invalid_grant, unauthorized).", "platform", "operation", "outcome")
	AccountingEntries            = counterVec("ledgerlane_jobs_accounting_entries_pushed_total", "Statement entries of pushes, by platform and outcome (created: booked now; present: booked by an earlier push).", "platform", "outcome")
)

// counter, counterVec, gauge and histogram register a collector on the
// default registry.
func counter(name, help string) prometheus.Counter {
	return promauto.With(prometheus.DefaultRegisterer).NewCounter(prometheus.CounterOpts{Name: name, Help: help})
}

func counterVec(name, help string, labels ...string) *prometheus.CounterVec {
	return promauto.With(prometheus.DefaultRegisterer).NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
}

func gauge(name, help string) prometheus.Gauge {
	return promauto.With(prometheus.DefaultRegisterer).NewGauge(prometheus.GaugeOpts{Name: name, Help: help})
}

func histogram(name, help string, buckets []float64) prometheus.Histogram {
	return promauto.With(prometheus.DefaultRegisterer).NewHistogram(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets})
}

func init() {
	// Start the labelled series at zero so rate() and absent() work from the
	// first scrape.
	for _, o := range []string{jobs.ItemOK, jobs.ItemFailed} {
		BatchItemsProcessed.WithLabelValues(o)
	}
	for _, o := range []string{"delivered", "failed"} {
		WebhookAttempts.WithLabelValues(o)
	}
	for _, d := range []string{"first", "redelivered"} {
		BatchItemDeliveries.WithLabelValues(d)
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

// ItemDelivered counts a work message a worker received.
func (Prometheus) ItemDelivered(redelivered bool) {
	d := "first"
	if redelivered {
		d = "redelivered"
	}
	BatchItemDeliveries.WithLabelValues(d).Inc()
}

// ItemParked counts a parked item.
func (Prometheus) ItemParked() { BatchItemsParked.Inc() }

// ItemsResumed counts items the resumer re-enqueued.
func (Prometheus) ItemsResumed(n int) { BatchItemsResumed.Add(float64(n)) }

// EndpointAutoDisabled counts an endpoint disabled by its failures.
func (Prometheus) EndpointAutoDisabled() { WebhookEndpointsAutoDisabled.Inc() }

// EndpointsDisabled sets the disabled-endpoints gauge.
func (Prometheus) EndpointsDisabled(n int) { WebhookEndpointsDisabled.Set(float64(n)) }

// OutboxObserved sets the outbox gauges from b at now. Every replica
// reports the same shared backlog: aggregate with max, not sum.
func (Prometheus) OutboxObserved(b jobs.OutboxBacklog, now time.Time) {
	OutboxOpenIntents.Set(float64(b.Open))
	age := 0.0
	if b.Open > 0 && !b.Oldest.IsZero() && now.After(b.Oldest) {
		age = now.Sub(b.Oldest).Seconds()
	}
	OutboxOldestAge.Set(age)
}

// LeftoversObserved sets the leftover gauge. Shared state: aggregate with
// max.
func (Prometheus) LeftoversObserved(n int) { WorkLeftovers.Set(float64(n)) }

// LeftoversDiscarded counts discarded leftover messages.
func (Prometheus) LeftoversDiscarded(n int) { WorkLeftoversDiscarded.Add(float64(n)) }

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
