package jobs

import "context"

// Tracer opens the span of one piece of background work that no request
// started: a stored job the publisher enqueues, items the resumer
// re-enqueues, a webhook delivery attempt, a sweep. Log lines written with
// the context it returns carry the span's trace id (pkg/logging), and items
// queued under it carry the trace to the workers, as a request's do.
// tracing.Internal is the OpenTelemetry implementation; Config.Tracer nil
// opens nothing. Work that arrives as a message continues the trace the
// message carries instead (see msgContext).
type Tracer interface {
	Start(ctx context.Context, name string) (context.Context, func())
}

type noTracer struct{}

func (noTracer) Start(ctx context.Context, _ string) (context.Context, func()) { return ctx, func() {} }
