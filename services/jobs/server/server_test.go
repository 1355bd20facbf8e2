package server_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ledgerlane/platform/services/jobs/server"
)

// TestNewRefusesABadRetrySchedule: a schedule jobs.ValidateRetrySchedule
// rejects stops New before it connects to anything, whoever filled Config
// (cmd/jobs from WEBHOOK_RETRY_SCHEDULE, or the local stack).
func TestNewRefusesABadRetrySchedule(t *testing.T) {
	tests := []struct {
		name  string
		sched []time.Duration
		want  string
	}{
		{"not starting at 0", []time.Duration{time.Second, 2 * time.Second}, "must be due at 0s"},
		{"going backwards", []time.Duration{0, 4 * time.Second, 2 * time.Second}, "is not after"},
		{"too many", make([]time.Duration, 11), "at most 10"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Addresses nobody listens on: New must fail before dialing.
			_, err := server.New(context.Background(), server.Config{
				NATSURL: "nats://127.0.0.1:1", ConverterAddr: "127.0.0.1:1", RetrySchedule: tt.sched,
			})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("New: %v, want an error with %q", err, tt.want)
			}
		})
	}
}
