package logging

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/trace"
)

func TestLogLinesCarryTheTrace(t *testing.T) {
	tid, _ := trace.TraceIDFromHex("4bf92f3577b34da6a3ce929d0e0e4736")
	sid, _ := trace.SpanIDFromHex("00f067aa0ba902b7")
	traced := trace.ContextWithSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled}))
	tests := []struct {
		name      string
		ctx       context.Context
		wantTrace bool
	}{
		{"with a span", traced, true},
		{"without", context.Background(), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			log := NewTo(&buf, "svc", "info").With("k", "v").WithGroup("g")
			log.InfoContext(tt.ctx, "hello", "x", 1)
			var line map[string]any
			if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
				t.Fatalf("%v: %s", err, buf.String())
			}
			has := strings.Contains(buf.String(), `"trace_id":"4bf92f3577b34da6a3ce929d0e0e4736"`) &&
				strings.Contains(buf.String(), `"span_id":"00f067aa0ba902b7"`)
			if has != tt.wantTrace || line["service"] != "svc" {
				t.Fatalf("line %s: trace ids present %v, want %v", buf.String(), has, tt.wantTrace)
			}
		})
	}
}
