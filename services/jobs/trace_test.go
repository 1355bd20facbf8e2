package jobs_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/ledgerlane/platform/pkg/logging"
	"github.com/ledgerlane/platform/pkg/tracing"
	"github.com/ledgerlane/platform/services/jobs"
)

// logSink collects the JSON lines the service's goroutines write.
type logSink struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logSink) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// lines returns the records whose message is msg and whose attributes
// include every pair of attrs.
func (l *logSink) lines(t *testing.T, msg string, attrs map[string]any) []map[string]any {
	t.Helper()
	l.mu.Lock()
	text := l.buf.String()
	l.mu.Unlock()
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var rec map[string]any
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("log line %q: %v", sc.Text(), err)
		}
		if rec["msg"] != msg {
			continue
		}
		match := true
		for k, v := range attrs {
			if rec[k] != v {
				match = false
			}
		}
		if match {
			out = append(out, rec)
		}
	}
	return out
}

// traced turns tracing on with an SDK provider (no exporter: the spans are
// only needed for their ids) and returns a logger as the binaries build it,
// with the trace handler of pkg/logging, at debug level.
func traced(t *testing.T) (trace.Tracer, *slog.Logger, *logSink) {
	tracer, log, sink, _ := tracedSpans(t)
	return tracer, log, sink
}

// tracedSpans is traced that also records every ended span.
func tracedSpans(t *testing.T) (trace.Tracer, *slog.Logger, *logSink, *tracetest.SpanRecorder) {
	t.Helper()
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	t.Cleanup(tracing.Install(tp))
	sink := &logSink{}
	log := slog.New(logging.WithTrace(slog.NewJSONHandler(sink, &slog.HandlerOptions{Level: slog.LevelDebug})))
	return tp.Tracer("test"), log, sink, spans
}

// wantTrace checks that recs is not empty and that every record carries
// trace (or, with trace "", some trace id and a span id).
func wantTrace(t *testing.T, what string, recs []map[string]any, trace string) string {
	t.Helper()
	if len(recs) == 0 {
		t.Fatalf("no %s log line", what)
	}
	var got string
	for _, r := range recs {
		id, _ := r["trace_id"].(string)
		span, _ := r["span_id"].(string)
		if id == "" || span == "" || (trace != "" && id != trace) {
			want := "trace " + trace
			if trace == "" {
				want = "a trace and span id"
			}
			t.Fatalf("%s line %v: trace_id %q span_id %q, want %s", what, r, id, span, want)
		}
		got = id
	}
	return got
}

// TestWorkerLogLinesCarryTheSubmittersTrace: with tracing on, the log lines
// of a batch item's processing (a transient failure retried, then the
// completion) carry the trace id of the request that submitted the batch:
// the item's message carries it across NATS and the worker continues it.
func TestWorkerLogLinesCarryTheSubmittersTrace(t *testing.T) {
	tracer, log, sink := traced(t)
	e := newEnv(t)
	svc := e.service(t, &failingFirst{failures: 1}, func(c *jobs.Config) {
		fastRetries(c)
		c.Log, c.Tracer = log, tracing.Internal{}
	})
	start(t, func(ctx context.Context) { _ = svc.RunWorkers(ctx) })

	ctx, span := tracer.Start(context.Background(), "POST /v1/convert/batch")
	j, err := svc.CreateBatch(ctx, alice, jobs.BatchRequest{To: "camt.053", Messages: msgs(2)})
	span.End()
	if err != nil {
		t.Fatal(err)
	}
	allOK(t, waitCompleted(t, svc, j.ID, 20*time.Second), 2)
	submitter := span.SpanContext().TraceID().String()
	wantTrace(t, "retry", sink.lines(t, "jobs: item will be retried", map[string]any{"job_id": j.ID}), submitter)
	done := sink.lines(t, "jobs: item completed", map[string]any{"job_id": j.ID})
	if len(done) != 2 {
		t.Fatalf("%d completion lines for 2 items", len(done))
	}
	wantTrace(t, "completion", done, submitter)
}

// TestWebhookAttemptsContinueTheSubmittersTrace: with tracing on, every
// attempt of a batch's job.completed delivery is in the trace of the
// request that submitted the batch: its span is a child of the fan-out's
// and its log lines carry the submitter's trace id. That holds for the
// first attempt, sent by the fan-out's own pass, and for the retry a minute
// later sent by another process (a restart): the delivery's stored trace
// context is all that links them.
func TestWebhookAttemptsContinueTheSubmittersTrace(t *testing.T) {
	eachStore(t, webhookAttemptsContinueTheSubmittersTrace)
}

func webhookAttemptsContinueTheSubmittersTrace(t *testing.T, e *env) {
	tracer, log, sink, spans := tracedSpans(t)
	withTracing := func(c *jobs.Config) { c.Log, c.Tracer = log, tracing.Internal{} }
	svc := e.service(t, &fakeConverter{}, withTracing)
	rec := newReceiver(t, http.StatusServiceUnavailable)
	if _, err := svc.CreateWebhook(context.Background(), alice, jobs.WebhookSettings{URL: rec.srv.URL}); err != nil {
		t.Fatal(err)
	}
	stopWorkers := start(t, func(ctx context.Context) { _ = svc.RunWorkers(ctx) })
	stopFanout := start(t, func(ctx context.Context) { _ = svc.RunFanout(ctx) })

	ctx, span := tracer.Start(context.Background(), "POST /v1/convert/batch")
	j, err := svc.CreateBatch(ctx, alice, jobs.BatchRequest{To: "camt.053", Messages: msgs(1)})
	span.End()
	if err != nil {
		t.Fatal(err)
	}
	submitter := span.SpanContext().TraceID()
	waitCompleted(t, svc, j.ID, 20*time.Second)
	failed := func(attempt int) []map[string]any {
		// JSON numbers decode as float64.
		return sink.lines(t, "jobs: delivery attempt failed", map[string]any{"attempt": float64(attempt)})
	}
	waitFor(t, "the first attempt", 10*time.Second, func() bool { return len(failed(1)) > 0 })
	wantTrace(t, "first attempt", failed(1), submitter.String())
	stopFanout()
	stopWorkers()

	// Another process takes the retry over, from the store alone, with a
	// context that carries no trace.
	restarted := e.service(t, &fakeConverter{}, withTracing)
	e.clock.Add(jobs.RetrySchedule[1])
	if n := restarted.DeliverDue(context.Background()); n != 1 {
		t.Fatalf("%d retries", n)
	}
	wantTrace(t, "retried attempt", failed(2), submitter.String())
	if got := len(rec.deliveries()); got != 2 {
		t.Fatalf("%d attempts reached the receiver", got)
	}

	var attempts int
	for _, s := range spans.Ended() {
		if s.Name() != "jobs.webhook.attempt" {
			continue
		}
		attempts++
		if s.SpanContext().TraceID() != submitter || !s.Parent().IsValid() || !s.Parent().IsRemote() {
			t.Fatalf("attempt span in trace %s with parent %+v, want a child of a stored span in trace %s",
				s.SpanContext().TraceID(), s.Parent(), submitter)
		}
	}
	if attempts != 2 {
		t.Fatalf("%d attempt spans", attempts)
	}
}

// TestBackgroundLogLinesCarryATrace: work no request started runs in a span
// of its own, so its lines carry a trace id too: the publisher enqueueing a
// stored job (whose items then carry the publisher's trace to the worker),
// a webhook attempt, and the sweeper's pass.
func TestBackgroundLogLinesCarryATrace(t *testing.T) {
	_, log, sink := traced(t)
	ctx := context.Background()
	e := newEnv(t)
	var q *downQueue
	svc := e.service(t, &fakeConverter{}, func(c *jobs.Config) {
		q = &downQueue{Queue: c.Queue}
		q.down.Store(true)
		c.Queue = q
		c.Log, c.Tracer = log, tracing.Internal{}
	})
	start(t, func(ctx context.Context) { _ = svc.RunWorkers(ctx) })
	rec := newReceiver(t, http.StatusInternalServerError)
	if _, err := svc.CreateWebhook(ctx, alice, jobs.WebhookSettings{URL: rec.srv.URL}); err != nil {
		t.Fatal(err)
	}

	t.Run("publisher", func(t *testing.T) {
		// Submitted without a trace while the queue refuses it; the
		// publisher takes the intent over.
		j, err := svc.CreateBatch(ctx, alice, jobs.BatchRequest{To: "camt.053", Messages: msgs(1), TTLSeconds: ttl(60)})
		if err != nil {
			t.Fatal(err)
		}
		// The submission's own attempt to enqueue runs after the answer:
		// the queue must refuse it before it comes back, or that attempt
		// (not the publisher) enqueues the item.
		for deadline := time.Now().Add(10 * time.Second); len(sink.lines(t, "jobs: enqueue after submission failed; the publisher retries",
			map[string]any{"job_id": j.ID})) == 0; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the submission's enqueue attempt never failed")
			}
		}
		q.down.Store(false)
		e.clock.Add(jobs.EnqueueLease)
		if n, err := svc.PublishPending(ctx); n != 1 || err != nil {
			t.Fatalf("published %d: %v", n, err)
		}
		id := wantTrace(t, "publisher", sink.lines(t, "jobs: enqueued a stored job", map[string]any{"job_id": j.ID}), "")
		waitCompleted(t, svc, j.ID, 20*time.Second)
		wantTrace(t, "completion of a published item", sink.lines(t, "jobs: item completed", map[string]any{"job_id": j.ID}), id)
	})
	t.Run("webhook attempt", func(t *testing.T) {
		if err := svc.Fanout(ctx, alice.AccountID, alice.Mode, "0e8a3c6e-2f4b-4f54-9f53-00000000cccc", []byte(`{}`)); err != nil {
			t.Fatal(err)
		}
		if n := svc.DeliverDue(ctx); n != 1 {
			t.Fatalf("%d attempts", n)
		}
		wantTrace(t, "failed attempt", sink.lines(t, "jobs: delivery attempt failed", nil), "")
	})
	t.Run("sweeper", func(t *testing.T) {
		e.clock.Add(2 * time.Hour) // past the published job's TTL
		sctx, cancel := context.WithCancel(ctx)
		defer cancel()
		go svc.RunSweeper(sctx, 10*time.Millisecond)
		waitFor(t, "a sweep", 10*time.Second, func() bool {
			return len(sink.lines(t, "jobs: swept expired jobs", nil)) > 0
		})
		wantTrace(t, "sweep", sink.lines(t, "jobs: swept expired jobs", nil), "")
	})
}
