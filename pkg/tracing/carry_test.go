package tracing

import (
	"context"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// Off, Inject stores nothing and Extract hands ctx back, allocating
// nothing either way; on, a span Inject wrote down is the parent of the
// span Start opens after Extract, tracestate included, and what cannot be
// a trace context is ignored.
func TestInjectExtract(t *testing.T) {
	ctx := context.Background()
	const parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	if n := testing.AllocsPerRun(100, func() {
		if tp, ts := (Internal{}).Inject(ctx); tp != "" || ts != "" {
			t.Fatalf("Inject with tracing off: %q %q", tp, ts)
		}
		if got := (Internal{}).Extract(ctx, parent, ""); got != ctx {
			t.Fatal("Extract changed the context with tracing off")
		}
	}); n != 0 {
		t.Fatalf("Inject and Extract allocate %v times with tracing off", n)
	}

	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer Install(tp)()
	if tp, ts := (Internal{}).Inject(ctx); tp != "" || ts != "" {
		t.Fatalf("Inject without a span: %q %q", tp, ts)
	}

	state, err := trace.ParseTraceState("vendor=opaque")
	if err != nil {
		t.Fatal(err)
	}
	sctx, end := Internal{}.Start(ctx, "fanout")
	sctx = trace.ContextWithSpanContext(sctx, trace.SpanContextFromContext(sctx).WithTraceState(state))
	stored := trace.SpanContextFromContext(sctx)
	end()
	traceparent, tracestate := Internal{}.Inject(sctx)
	if traceparent == "" || tracestate != "vendor=opaque" {
		t.Fatalf("Inject: %q %q", traceparent, tracestate)
	}

	actx, end := Internal{}.Start(Internal{}.Extract(ctx, traceparent, tracestate), "attempt")
	end()
	got := trace.SpanContextFromContext(actx)
	if got.TraceID() != stored.TraceID() || got.TraceState().String() != "vendor=opaque" {
		t.Fatalf("attempt span %+v, want trace %s with its tracestate", got, stored.TraceID())
	}
	spans := exp.GetSpans()
	if last := spans[len(spans)-1]; last.Name != "attempt" || last.Parent.SpanID() != stored.SpanID() || !last.Parent.IsRemote() {
		t.Fatalf("attempt span parent %+v, want the stored span %s", last.Parent, stored.SpanID())
	}

	for _, bad := range []string{"", "garbage", "00-00000000000000000000000000000000-00f067aa0ba902b7-01"} {
		if got := (Internal{}).Extract(ctx, bad, "vendor=opaque"); got != ctx {
			t.Fatalf("Extract(%q) changed the context", bad)
		}
	}
}
