package local_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/ledgerlane/platform/deploy/local"
	"github.com/ledgerlane/platform/pkg/logging"
	"github.com/ledgerlane/platform/pkg/tracing"
)

// lockedBuffer is a log sink the stack's goroutines write concurrently.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestTraceSpansGatewayServiceQueueWorker: with tracing on (an in-memory
// exporter in place of OTLP), a batch submitted with a W3C traceparent
// makes one trace that runs from the gateway's HTTP span through the jobs
// service's gRPC span, the publish onto NATS and the worker's processing of
// the item to the converter's gRPC span; and log lines of the request carry
// its trace id.
func TestTraceSpansGatewayServiceQueueWorker(t *testing.T) {
	msg, err := os.ReadFile(filepath.Join("..", "..", "..", "shared", "samples", "mt", "php-mt940", "Ing_sample"))
	if err != nil {
		t.Skipf("shared samples not found beside the repository: %v", err)
	}
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(t.Context()) })
	restore := tracing.Install(tp)
	t.Cleanup(restore)

	logs := &lockedBuffer{}
	st := stack(t, false, func(c *local.Config) {
		c.Log = slog.New(logging.WithTrace(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	})
	keys := map[string]string{}
	for _, k := range st.Keys {
		keys[k.Name] = k.Key
	}
	c := client{t: t, base: st.URL, keys: keys}

	const traceID, parentID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	body, _ := json.Marshal(map[string]any{"to": "camt.053", "items": []map[string]string{{"message": string(msg)}}})
	r := c.call("POST", "/v1/convert/batch", "conversion-all", string(body), "Content-Type", "application/json",
		"traceparent", "00-"+traceID+"-"+parentID+"-01")
	jobID, _ := r.json["id"].(string)
	if r.status != 202 || jobID == "" {
		t.Fatalf("batch: %d %s", r.status, r.body)
	}

	// The item is processed asynchronously: wait for the worker's span
	// and the converter call under it.
	var spans tracetest.SpanStubs
	find := func(pred func(tracetest.SpanStub) bool) (tracetest.SpanStub, bool) {
		for _, s := range spans {
			if s.SpanContext.TraceID().String() == traceID && pred(s) {
				return s, true
			}
		}
		return tracetest.SpanStub{}, false
	}
	kindNamed := func(kind trace.SpanKind, name string) func(tracetest.SpanStub) bool {
		return func(s tracetest.SpanStub) bool { return s.SpanKind == kind && strings.Contains(s.Name, name) }
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		spans = exp.GetSpans()
		_, processed := find(kindNamed(trace.SpanKindConsumer, "process "))
		_, converted := find(kindNamed(trace.SpanKindServer, "ConversionService/Convert"))
		if processed && converted {
			break
		}
		if time.Now().After(deadline) {
			var names []string
			for _, s := range spans {
				names = append(names, s.Name+"@"+s.SpanContext.TraceID().String())
			}
			t.Fatalf("no worker and converter spans in trace %s; spans: %v", traceID, names)
		}
		time.Sleep(50 * time.Millisecond)
	}

	gw, ok := find(kindNamed(trace.SpanKindServer, "POST /v1/convert/batch"))
	if !ok || gw.Parent.SpanID().String() != parentID || !gw.Parent.IsRemote() {
		t.Fatalf("gateway span missing or not continuing the caller's traceparent: %+v", gw)
	}
	svc, ok := find(kindNamed(trace.SpanKindServer, "JobService/CreateBatch"))
	if !ok {
		t.Fatal("no jobs CreateBatch server span in the trace")
	}
	pub, ok := find(kindNamed(trace.SpanKindProducer, "publish jobs.work"))
	if !ok || pub.Parent.SpanID() != svc.SpanContext.SpanID() {
		t.Fatalf("publish span missing or not under CreateBatch: %+v", pub)
	}
	proc, _ := find(kindNamed(trace.SpanKindConsumer, "process jobs.work"))
	if proc.Parent.SpanID() != pub.SpanContext.SpanID() || !proc.Parent.IsRemote() {
		t.Fatalf("worker span does not continue the publish span from the message headers: %+v", proc)
	}
	conv, _ := find(kindNamed(trace.SpanKindServer, "ConversionService/Convert"))
	if !descends(spans, conv, proc) {
		t.Fatalf("converter span is not under the worker's span")
	}

	// The gateway's access line and the services' call lines carry it.
	if n := strings.Count(logs.String(), `"trace_id":"`+traceID+`"`); n < 2 {
		t.Fatalf("%d log lines carry trace %s:\n%s", n, traceID, logs.String())
	}
}

// descends reports whether s has anc among its ancestors in spans.
func descends(spans tracetest.SpanStubs, s, anc tracetest.SpanStub) bool {
	byID := map[trace.SpanID]tracetest.SpanStub{}
	for _, x := range spans {
		byID[x.SpanContext.SpanID()] = x
	}
	for range len(spans) {
		if s.Parent.SpanID() == anc.SpanContext.SpanID() {
			return true
		}
		p, ok := byID[s.Parent.SpanID()]
		if !ok {
			return false
		}
		s = p
	}
	return false
}
