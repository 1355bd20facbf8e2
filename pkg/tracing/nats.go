package tracing

import (
	"context"

	"github.com/nats-io/nats.go"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

const tracerName = "github.com/ledgerlane/platform/pkg/tracing"

// natsCarrier reads and writes a trace on NATS message headers. Keys are
// used as given ("traceparent"), not canonicalised as HTTP headers are.
type natsCarrier nats.Header

func (c natsCarrier) Get(key string) string { return nats.Header(c).Get(key) }
func (c natsCarrier) Set(key, value string) { nats.Header(c).Set(key, value) }
func (c natsCarrier) Keys() []string {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	return keys
}

// StartPublish opens a producer span for publishing to destination (a subject
// pattern such as "jobs.work", never a subject holding ids) and returns
// the headers that carry it to the consumer (W3C traceparent). Off, it
// returns ctx, nil headers and a no-op end, so the message is published
// exactly as without tracing.
func StartPublish(ctx context.Context, destination string) (context.Context, nats.Header, func()) {
	if !Enabled() {
		return ctx, nil, func() {}
	}
	ctx, span := otel.Tracer(tracerName).Start(ctx, "publish "+destination, trace.WithSpanKind(trace.SpanKindProducer),
		trace.WithAttributes(attribute.String("messaging.system", "nats"), attribute.String("messaging.destination.name", destination)))
	h := nats.Header{}
	otel.GetTextMapPropagator().Inject(ctx, natsCarrier(h))
	return ctx, h, func() { span.End() }
}

// StartProcess opens a consumer span for processing a message from
// destination (as StartPublish), continuing the trace its headers carry.
// The caller ends the span once the message is settled. Off, it returns ctx
// and a span that records nothing.
func StartProcess(ctx context.Context, h nats.Header, destination string) (context.Context, trace.Span) {
	if !Enabled() {
		return ctx, trace.SpanFromContext(context.Background())
	}
	if h != nil {
		ctx = otel.GetTextMapPropagator().Extract(ctx, natsCarrier(h))
	}
	return otel.Tracer(tracerName).Start(ctx, "process "+destination, trace.WithSpanKind(trace.SpanKindConsumer),
		trace.WithAttributes(attribute.String("messaging.system", "nats"), attribute.String("messaging.destination.name", destination)))
}
