// Package jobs owns batch conversion jobs (queued over NATS JetStream,
// encrypted at rest) and webhook endpoints with signed deliveries. Those land
// with the batch-jobs issue; until then its routes answer 501 not-implemented.
package jobs
