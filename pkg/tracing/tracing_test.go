package tracing

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

func TestRequested(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want bool
	}{
		{"nothing set", nil, false},
		{"endpoint", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, true},
		{"traces endpoint", map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://collector:4318/v1/traces"}, true},
		{"exporter otlp", map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, true},
		{"exporter none wins", map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}, false},
		{"sdk disabled wins", map[string]string{"OTEL_SDK_DISABLED": "true", "OTEL_TRACES_EXPORTER": "otlp"}, false},
		{"metrics endpoint only", map[string]string{"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "http://c:4318"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Requested(func(k string) string { return tt.env[k] }); got != tt.want {
				t.Fatalf("Requested(%v) = %v, want %v", tt.env, got, tt.want)
			}
		})
	}
}

func TestSetupOffByDefault(t *testing.T) {
	for _, k := range []string{"OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_SDK_DISABLED"} {
		t.Setenv(k, "")
	}
	stop, err := Setup(context.Background(), "test")
	if err != nil || Enabled() {
		t.Fatalf("Setup without OTEL_* variables: enabled=%v err=%v", Enabled(), err)
	}
	if err := stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Setenv("OTEL_TRACES_EXPORTER", "zipkin")
	if _, err := Setup(context.Background(), "test"); err == nil || Enabled() {
		t.Fatalf("an unsupported exporter must be refused, got enabled=%v err=%v", Enabled(), err)
	}
}

type handler struct{}

func (*handler) ServeHTTP(http.ResponseWriter, *http.Request) {}

// Off, the hot path runs exactly the code it ran before tracing: the
// handler is not wrapped, no gRPC option is added, and naming a span or
// publishing allocates nothing.
func TestOffIsFree(t *testing.T) {
	if Enabled() {
		t.Fatal("tracing is on before any Install")
	}
	h := &handler{}
	if got := HTTPHandler(h, "gateway"); got != http.Handler(h) {
		t.Fatal("HTTPHandler wrapped the handler with tracing off")
	}
	if ServerOptions() != nil || DialOptions() != nil {
		t.Fatal("gRPC options with tracing off")
	}
	ctx := context.Background()
	if n := testing.AllocsPerRun(100, func() { SetRoute(ctx, "POST", "/v1/convert") }); n != 0 {
		t.Fatalf("SetRoute allocates %v times with tracing off", n)
	}
	if n := testing.AllocsPerRun(100, func() {
		_, hdr, end := StartPublish(ctx, "jobs.work")
		end()
		if hdr != nil {
			t.Fatal("headers with tracing off")
		}
	}); n != 0 {
		t.Fatalf("StartPublish allocates %v times with tracing off", n)
	}
}

// On, an HTTP request's traceparent is continued by the server span, which
// SetRoute names after the route, and a NATS message carries the producer
// span to the consumer span.
func TestOnContinuesTraces(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	restore := Install(tp)
	defer restore()

	var inner trace.SpanContext
	h := HTTPHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		inner = trace.SpanContextFromContext(r.Context())
		SetRoute(r.Context(), r.Method, "/v1/jobs/{id}")
		ctx, hdr, end := StartPublish(r.Context(), "jobs.work")
		_ = ctx
		end()
		if hdr.Get("traceparent") == "" {
			t.Error("no traceparent on the message headers")
		}
		pctx, span := StartProcess(context.Background(), hdr, "jobs.work")
		span.End()
		if trace.SpanContextFromContext(pctx).TraceID() != inner.TraceID() {
			t.Error("consumer span is not in the producer's trace")
		}
	}), "gateway")
	req := httptest.NewRequest("GET", "/v1/jobs/j1", nil)
	req.Header.Set("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	h.ServeHTTP(httptest.NewRecorder(), req)

	if inner.TraceID().String() != "4bf92f3577b34da6a3ce929d0e0e4736" {
		t.Fatalf("server span trace %s does not continue the traceparent", inner.TraceID())
	}
	names := map[string]trace.SpanKind{}
	for _, s := range exp.GetSpans() {
		names[s.Name] = s.SpanKind
	}
	want := map[string]trace.SpanKind{"GET /v1/jobs/{id}": trace.SpanKindServer, "publish jobs.work": trace.SpanKindProducer, "process jobs.work": trace.SpanKindConsumer}
	for n, k := range want {
		if names[n] != k {
			t.Fatalf("spans %v lack %s (%v)", names, n, k)
		}
	}
	restore()
	if Enabled() {
		t.Fatal("restore left tracing on")
	}
}

// BenchmarkSetRouteOff is the per-request cost tracing adds to the gateway
// when off: one context lookup.
func BenchmarkSetRouteOff(b *testing.B) {
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		SetRoute(ctx, "POST", "/v1/convert")
	}
}

// Internal opens a span only when tracing is on: off it hands ctx back and
// allocates nothing; on, the context it returns holds a recording span that
// ending finishes.
func TestInternal(t *testing.T) {
	ctx := context.Background()
	if n := testing.AllocsPerRun(100, func() {
		got, end := Internal{}.Start(ctx, "jobs.sweep")
		end()
		if got != ctx {
			t.Fatal("Internal changed the context with tracing off")
		}
	}); n != 0 {
		t.Fatalf("Internal allocates %v times with tracing off", n)
	}

	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer Install(tp)()
	sctx, end := Internal{}.Start(ctx, "jobs.sweep")
	if !trace.SpanFromContext(sctx).IsRecording() {
		t.Fatal("no recording span in the context with tracing on")
	}
	end()
	spans := exp.GetSpans()
	if len(spans) != 1 || spans[0].Name != "jobs.sweep" || spans[0].SpanKind != trace.SpanKindInternal || spans[0].Parent.IsValid() {
		t.Fatalf("spans %+v, want one internal root span jobs.sweep", spans)
	}
}
