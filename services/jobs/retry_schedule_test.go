package jobs_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ledgerlane/platform/services/jobs"
)

// TestParseRetrySchedule: WEBHOOK_RETRY_SCHEDULE as an operator writes it.
func TestParseRetrySchedule(t *testing.T) {
	s := time.Second
	tests := []struct {
		spec    string
		want    []time.Duration
		wantErr string // a part of the error, "" for none
	}{
		{"0s,1m,5m,30m,2h", jobs.RetrySchedule, ""},
		{"0s,2s,4s,6s,8s", []time.Duration{0, 2 * s, 4 * s, 6 * s, 8 * s}, ""},
		{" 0 , 500ms ,1.5s", []time.Duration{0, 500 * time.Millisecond, 1500 * time.Millisecond}, ""},
		{"0s", []time.Duration{0}, ""},
		{"0s,1s,2s,3s,4s,5s,6s,7s,8s,9s", []time.Duration{0, s, 2 * s, 3 * s, 4 * s, 5 * s, 6 * s, 7 * s, 8 * s, 9 * s}, ""},
		{"0s,24h", []time.Duration{0, 24 * time.Hour}, ""},
		{"", nil, "entry 1"},
		{"0s,,4s", nil, `entry 2 ""`},
		{"0s,2,4s", nil, `entry 2 "2"`},
		{"0s,2s,four", nil, `entry 3 "four"`},
		{"1s,2s", nil, "must be due at 0s"},
		{"-1s,2s", nil, "must be due at 0s"},
		{"0s,4s,2s", nil, "attempt 3 (2s) is not after attempt 2 (4s)"},
		{"0s,2s,2s", nil, "attempt 3 (2s) is not after attempt 2 (2s)"},
		{"0s,1s,2s,3s,4s,5s,6s,7s,8s,9s,10s", nil, "11 attempts, at most 10"},
		{"0s,24h1s", nil, "at most 24h0m0s"},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			got, err := jobs.ParseRetrySchedule(tt.spec)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseRetrySchedule(%q) = %v, %v; want an error with %q", tt.spec, got, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseRetrySchedule(%q): %v", tt.spec, err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("ParseRetrySchedule(%q) = %v, want %v", tt.spec, got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Fatalf("ParseRetrySchedule(%q) = %v, want %v", tt.spec, got, tt.want)
				}
			}
		})
	}
}

// TestValidateRetryScheduleDefault: the spec's schedule is a valid one, so
// the bounds never reject the default.
func TestValidateRetryScheduleDefault(t *testing.T) {
	if err := jobs.ValidateRetrySchedule(jobs.RetrySchedule); err != nil {
		t.Fatal(err)
	}
	if err := jobs.ValidateRetrySchedule(nil); err == nil {
		t.Fatal("an empty schedule is valid")
	}
}

// TestConfiguredRetrySchedule: a Service with a configured schedule attempts
// a failing delivery at exactly its offsets, then exhausts it.
func TestConfiguredRetrySchedule(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		rec := newReceiver(t, http.StatusServiceUnavailable)
		sched := []time.Duration{0, 2 * time.Second, 4 * time.Second, 9 * time.Second}
		svc := e.service(t, &fakeConverter{}, func(c *jobs.Config) { c.RetrySchedule = sched })
		if _, err := svc.CreateWebhook(ctx, alice, jobs.WebhookSettings{URL: rec.srv.URL}); err != nil {
			t.Fatal(err)
		}
		if err := svc.Fanout(ctx, alice.AccountID, alice.Mode, "0e8a3c6e-2f4b-4f54-9f53-00000000cccc", []byte(`{"event":"job.completed"}`)); err != nil {
			t.Fatal(err)
		}
		steps := []struct {
			advance time.Duration
			want    int
		}{
			{0, 1},
			{1999 * time.Millisecond, 0},
			{time.Millisecond, 1}, // 2 s
			{1999 * time.Millisecond, 0},
			{time.Millisecond, 1}, // 4 s
			{4999 * time.Millisecond, 0},
			{time.Millisecond, 1}, // 9 s: the last
			{time.Hour, 0},        // exhausted: the default's 1 m, 5 m... never come
			{3 * time.Hour, 0},
		}
		for i, st := range steps {
			e.clock.Add(st.advance)
			if got := svc.DeliverDue(ctx); got != st.want {
				t.Fatalf("step %d (+%v): %d attempts, want %d", i, st.advance, got, st.want)
			}
		}
		es, err := svc.ListWebhooks(ctx, alice)
		if err != nil {
			t.Fatal(err)
		}
		if len(rec.deliveries()) != len(sched) || es[0].ConsecutiveFailures != 1 {
			t.Fatalf("%d attempts, endpoint %+v; want %d attempts and one exhausted delivery", len(rec.deliveries()), es[0], len(sched))
		}
	})
}
