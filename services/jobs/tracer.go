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
//
// Work stored to run later (a webhook delivery) keeps its trace as text:
// Inject when it is stored, Extract before the Start of each later run, so
// that run's span is a child of the stored one and shares its trace id.
type Tracer interface {
	// Start opens a span named name, a child of the span in ctx if any (a
	// new trace otherwise), and returns its context and its end.
	Start(ctx context.Context, name string) (context.Context, func())
	// Inject returns the W3C trace context (traceparent and tracestate
	// headers) of the span in ctx: empty strings when ctx holds none or
	// tracing is off.
	Inject(ctx context.Context) (traceparent, tracestate string)
	// Extract returns ctx carrying the trace context Inject returned, as a
	// remote parent for the next Start; ctx unchanged when traceparent is
	// empty or malformed, or tracing is off.
	Extract(ctx context.Context, traceparent, tracestate string) context.Context
}

type noTracer struct{}

func (noTracer) Start(ctx context.Context, _ string) (context.Context, func()) { return ctx, func() {} }
func (noTracer) Inject(context.Context) (string, string)                       { return "", "" }
func (noTracer) Extract(ctx context.Context, _, _ string) context.Context      { return ctx }
