package tracing

import (
	"context"

	"go.opentelemetry.io/otel/propagation"
)

// traceContext is the W3C trace context format alone: what work stored to
// run later keeps is the span it continues (traceparent, tracestate), not
// the baggage the global propagator also carries, which may hold anything
// and has no place in a database row.
var traceContext = propagation.TraceContext{}

// Inject returns the W3C traceparent and tracestate of the span in ctx, for
// work stored to run later (a webhook delivery) to continue its trace after
// any delay or restart (Extract). Off, or with no span in ctx, both are
// empty, and nothing is allocated.
func (Internal) Inject(ctx context.Context) (traceparent, tracestate string) {
	if !Enabled() {
		return "", ""
	}
	c := propagation.MapCarrier{}
	traceContext.Inject(ctx, c)
	return c.Get("traceparent"), c.Get("tracestate")
}

// Extract returns ctx carrying the span that Inject described as a remote
// parent, so the next Start opens a child of it, in the same trace. An empty
// or malformed traceparent leaves ctx as it is (Start then begins a new
// trace, or continues the one already in ctx); so does tracing off.
func (Internal) Extract(ctx context.Context, traceparent, tracestate string) context.Context {
	if !Enabled() || traceparent == "" {
		return ctx
	}
	c := propagation.MapCarrier{"traceparent": traceparent}
	if tracestate != "" {
		c["tracestate"] = tracestate
	}
	return traceContext.Extract(ctx, c)
}
