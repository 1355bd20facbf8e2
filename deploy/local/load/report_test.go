package load

import (
	"strings"
	"testing"
)

// A replay the rate limiter refused never reached the idempotency store, so
// it is reported apart and does not fail the run; any other non-replayed
// answer does.
func TestReplayVerdict(t *testing.T) {
	usage := UsageCheck{Accounts: 1, Matching: 1}
	tests := []struct {
		name                     string
		replays, misses, refused int64
		wantOK                   bool
		wantLine                 string
	}{
		{"all replayed", 4, 0, 0, true, "idempotency: OK, 4 of 4 finance-write replays"},
		{"some refused by the limiter", 4, 0, 9, true, "9 more refused by the rate limiter (429)"},
		{"one missed", 4, 1, 0, false, "idempotency: MISMATCH, 4 of 5"},
		{"missed and refused", 0, 1, 3, false, "idempotency: MISMATCH, 0 of 1"},
		{"none sent", 0, 0, 0, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := Result{Usage: usage, Replays: tt.replays, ReplayMisses: tt.misses, ReplaysRefused: tt.refused}
			if got := res.OK(); got != tt.wantOK {
				t.Errorf("OK() = %v, want %v", got, tt.wantOK)
			}
			var b strings.Builder
			if err := res.Print(&b); err != nil {
				t.Fatal(err)
			}
			if out := b.String(); tt.wantLine == "" && strings.Contains(out, "idempotency:") || !strings.Contains(out, tt.wantLine) {
				t.Errorf("report lacks %q:\n%s", tt.wantLine, out)
			}
		})
	}
}
