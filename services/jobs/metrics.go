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
	// ItemDelivered: a worker received a work message; redelivered when the
	// queue had delivered that message before (a nak after a transient
	// failure, or an ack wait that ran out on a slow or dead worker).
	ItemDelivered(redelivered bool)
	// ItemParked: an item used its message's retry deliveries and was
	// queued again as a fresh message (Config.RetryDeliveries).
	ItemParked()
	// ItemsResumed: the resumer re-enqueued n items the queue had lost
	// (removed, or past their last delivery).
	ItemsResumed(n int)
	// JobsSwept: the sweeper removed n expired jobs.
	JobsSwept(n int)
	// DeliveryAttempted: a webhook attempt was sent (an abandoned delivery
	// is not an attempt).
	DeliveryAttempted(a Attempt)
	// EndpointAutoDisabled: an exhausted delivery disabled its endpoint
	// (DisableAfter consecutive ones). Reported once per endpoint, by the
	// replica whose attempt disabled it.
	EndpointAutoDisabled()
	// EndpointsDisabled: n webhook endpoints are disabled, counted by the
	// sweeper's pass.
	EndpointsDisabled(n int)
	// OutboxObserved: the publisher's pass found b open enqueue intents.
	OutboxObserved(b OutboxBacklog, now time.Time)
	// LeftoversObserved: the queue stores n work messages it will never
	// deliver again, before this pass discarded any.
	LeftoversObserved(n int)
	// LeftoversDiscarded: the pass removed n leftover messages of settled
	// items.
	LeftoversDiscarded(n int)
}

// OutboxBacklog is the submission outbox as the store holds it: the stored
// jobs whose enqueue intent is still open (items not yet confirmed in the
// queue), and the creation time of the oldest (zero when there is none).
type OutboxBacklog struct {
	Open   int
	Oldest time.Time
}

type noMetrics struct{}

func (noMetrics) JobCreated()                                {}
func (noMetrics) ItemCompleted(string, time.Time, time.Time) {}
func (noMetrics) ItemDelivered(bool)                         {}
func (noMetrics) ItemParked()                                {}
func (noMetrics) ItemsResumed(int)                           {}
func (noMetrics) JobsSwept(int)                              {}
func (noMetrics) DeliveryAttempted(Attempt)                  {}
func (noMetrics) EndpointAutoDisabled()                      {}
func (noMetrics) EndpointsDisabled(int)                      {}
func (noMetrics) OutboxObserved(OutboxBacklog, time.Time)    {}
func (noMetrics) LeftoversObserved(int)                      {}
func (noMetrics) LeftoversDiscarded(int)                     {}
