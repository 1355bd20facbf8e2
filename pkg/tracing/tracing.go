// Package tracing is the OpenTelemetry plumbing every binary shares: the
// tracer provider configured by the standard OTEL_* variables (off unless
// they ask for an exporter), W3C trace context propagation, the HTTP server
// span of the gateway, the gRPC stats handlers of pkg/rpc and the carrier
// that puts a trace on NATS message headers.
//
// Off is the default and costs nothing on the hot path: nothing is wrapped
// or installed, so requests run exactly the code they ran without tracing.
// Whether tracing is on is decided once, before the servers are built
// (Setup or Install), and read by HTTPHandler, ServerOptions and
// DialOptions when they are called.
package tracing

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc/filters"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
	"google.golang.org/grpc"
	"google.golang.org/grpc/stats"
)

// enabled is set once a real tracer provider is installed.
var enabled atomic.Bool

// Enabled reports whether spans are recorded and exported.
func Enabled() bool { return enabled.Load() }

// Install makes tp the global tracer provider, W3C trace context (and
// baggage) the propagation format, and turns the instrumentation on for
// everything built afterwards. Tests install an SDK provider with an
// in-memory exporter and call restore when done, which puts back what was
// there before for whatever is built next.
func Install(tp trace.TracerProvider) (restore func()) {
	prevTP, prevProp, prevOn := otel.GetTracerProvider(), otel.GetTextMapPropagator(), enabled.Load()
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	enabled.Store(true)
	return func() {
		if !prevOn {
			// Before the first Install the global is otel's delegating
			// default, which cannot be set again; a no-op provider is the
			// same for everything built afterwards.
			prevTP = noop.NewTracerProvider()
		}
		otel.SetTracerProvider(prevTP)
		otel.SetTextMapPropagator(prevProp)
		enabled.Store(prevOn)
	}
}

// Requested reports whether the environment asks for traces: an
// OTEL_TRACES_EXPORTER other than "none", or an OTLP endpoint
// (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT).
// OTEL_SDK_DISABLED=true wins over both.
func Requested(getenv func(string) string) bool {
	if strings.EqualFold(getenv("OTEL_SDK_DISABLED"), "true") {
		return false
	}
	switch exp := strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER")); exp {
	case "none":
		return false
	case "":
		return getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
	default:
		return true
	}
}

// Setup installs an SDK tracer provider exporting over OTLP when the
// environment asks for traces (Requested), for the binary named service
// (OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES, read by the SDK, win).
// The exporter reads its own OTEL_EXPORTER_OTLP_* variables (endpoint,
// headers, timeout, TLS); OTEL_EXPORTER_OTLP_TRACES_PROTOCOL or
// OTEL_EXPORTER_OTLP_PROTOCOL picks "http/protobuf" (the default) or
// "grpc". The returned function flushes and stops the provider; when
// nothing is requested it does nothing, and tracing stays off.
func Setup(ctx context.Context, service string) (shutdown func(context.Context) error, err error) {
	if !Requested(os.Getenv) {
		return func(context.Context) error { return nil }, nil
	}
	if exp := strings.TrimSpace(os.Getenv("OTEL_TRACES_EXPORTER")); exp != "" && exp != "otlp" {
		return nil, fmt.Errorf("OTEL_TRACES_EXPORTER=%q: only \"otlp\" and \"none\" are supported", exp)
	}
	protocol := os.Getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
	if protocol == "" {
		protocol = os.Getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	var exporter sdktrace.SpanExporter
	switch protocol {
	case "", "http/protobuf":
		exporter, err = otlptracehttp.New(ctx)
	case "grpc":
		exporter, err = otlptracegrpc.New(ctx)
	default:
		return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL=%q: only \"http/protobuf\" and \"grpc\" are supported", protocol)
	}
	if err != nil {
		return nil, fmt.Errorf("otlp trace exporter: %w", err)
	}
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(semconv.ServiceName(service)))
	if err != nil {
		return nil, err
	}
	// Environment attributes last, so OTEL_SERVICE_NAME overrides the default.
	if env, err := resource.New(ctx, resource.WithFromEnv()); err == nil {
		if merged, err := resource.Merge(res, env); err == nil {
			res = merged
		}
	}
	// The sampler follows OTEL_TRACES_SAMPLER when set (the SDK reads it);
	// the default is parent-based always-on.
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exporter), sdktrace.WithResource(res))
	Install(tp)
	return tp.Shutdown, nil
}

// HTTPHandler wraps h in an HTTP server span that continues the caller's
// W3C traceparent, when tracing is on; off, it returns h itself. The span
// is named after the method until the handler names the route (SetRoute).
func HTTPHandler(h http.Handler, operation string) http.Handler {
	if !Enabled() {
		return h
	}
	return otelhttp.NewHandler(h, operation,
		otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string { return r.Method }),
		// Kubernetes probes ask these every few seconds; their spans would
		// bury the requests' traces.
		otelhttp.WithFilter(func(r *http.Request) bool { return r.URL.Path != "/v1/health" && r.URL.Path != "/v1/ready" }))
}

// SetRoute names the request's server span after the matched route
// pattern, as the semantic conventions ask ("POST /v1/convert"). Off, the
// context holds no recording span and this does nothing.
func SetRoute(ctx context.Context, method, pattern string) {
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return
	}
	span.SetName(method + " " + pattern)
	span.SetAttributes(semconv.HTTPRoute(pattern))
}

// notHealth leaves the health checks untraced: probes and /v1/ready ask
// every few seconds, which would bury the requests' traces.
var notHealth = filters.Not(filters.HealthCheck())

// ServerOptions are the gRPC server options that open a server span per
// call, continuing the trace the caller put in the metadata; none when off.
func ServerOptions() []grpc.ServerOption {
	if h := ServerStatsHandler(); h != nil {
		return []grpc.ServerOption{grpc.StatsHandler(h)}
	}
	return nil
}

// ServerStatsHandler is the handler ServerOptions installs, for a server
// that takes stats handlers another way (pkg/rpc's in-process connection);
// nil when off.
func ServerStatsHandler() stats.Handler {
	if !Enabled() {
		return nil
	}
	return otelgrpc.NewServerHandler(otelgrpc.WithFilter(notHealth))
}

// DialOptions are the gRPC client options that open a client span per
// call and send its trace in the metadata; none when off.
func DialOptions() []grpc.DialOption {
	if h := ClientStatsHandler(); h != nil {
		return []grpc.DialOption{grpc.WithStatsHandler(h)}
	}
	return nil
}

// ClientStatsHandler is the handler DialOptions installs; nil when off.
func ClientStatsHandler() stats.Handler {
	if !Enabled() {
		return nil
	}
	return otelgrpc.NewClientHandler(otelgrpc.WithFilter(notHealth))
}

// Internal opens spans for background work no request started (a sweep, a
// retried delivery, an outbox publish): it implements the Tracer contract
// of the jobs service, Start(ctx, name) (ctx, end). Each span continues the
// trace in ctx or, as in a background loop, starts a new one, so the log
// lines written with the returned context carry a trace id (pkg/logging)
// and messages published under it carry the trace on. Off, Start returns
// ctx and a no-op end, allocating nothing. Inject and Extract (carry.go)
// keep a span's context as text for work stored to run later.
type Internal struct{}

// Start opens an internal span named name.
func (Internal) Start(ctx context.Context, name string) (context.Context, func()) {
	if !Enabled() {
		return ctx, noEnd
	}
	ctx, span := otel.Tracer(tracerName).Start(ctx, name, trace.WithSpanKind(trace.SpanKindInternal))
	return ctx, func() { span.End() }
}

func noEnd() {}

// flushTimeout bounds how long a stopping process waits for its last spans.
const flushTimeout = 5 * time.Second

// Start is Setup for a process's main: the returned stop flushes and stops
// the provider within flushTimeout (a collector that does not answer must
// not hold up a shutdown), logging a failure to log.
func Start(ctx context.Context, service string, log *slog.Logger) (stop func(), err error) {
	shutdown, err := Setup(ctx, service)
	if err != nil {
		return nil, err
	}
	return func() {
		sctx, cancel := context.WithTimeout(context.Background(), flushTimeout)
		defer cancel()
		if err := shutdown(sctx); err != nil {
			log.Warn("flush traces", "err", err)
		}
	}, nil
}
