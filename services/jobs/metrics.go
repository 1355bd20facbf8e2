package jobs

import "time"

// Metrics observes the service for monitoring. metrics.Prometheus records
// the ledgerlane_jobs_* series; Config.Metrics nil observes nothing.
type Metrics interface {
	// JobCreated: a batch was accepted and enqueued.
	JobCreated()
	// ItemCompleted: an item of a job created at created completed with
	// status (ItemOK or ItemFailed) at now. A redelivered item is reported
	// once.
	ItemCompleted(status string, created, now time.Time)
	// JobsSwept: the sweeper removed n expired jobs.
	JobsSwept(n int)
	// DeliveryAttempted: a webhook attempt was sent (an abandoned delivery
	// is not an attempt).
	DeliveryAttempted(a Attempt)
}

type noMetrics struct{}

func (noMetrics) JobCreated()                                {}
func (noMetrics) ItemCompleted(string, time.Time, time.Time) {}
func (noMetrics) JobsSwept(int)                              {}
func (noMetrics) DeliveryAttempted(Attempt)                  {}
