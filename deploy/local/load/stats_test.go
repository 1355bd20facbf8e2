package load

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		out := make([]time.Duration, len(v))
		for i, x := range v {
			out[i] = time.Duration(x) * time.Millisecond
		}
		return out
	}
	tests := []struct {
		name   string
		sorted []time.Duration
		p      int
		want   time.Duration
	}{
		{"empty", nil, 50, 0},
		{"one", ms(7), 99, 7 * time.Millisecond},
		{"median of four", ms(1, 2, 3, 4), 50, 2 * time.Millisecond},
		{"p90 of ten", ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 90, 9 * time.Millisecond},
		{"p99 of ten", ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 99, 10 * time.Millisecond},
		{"p100 is max", ms(1, 5, 9), 100, 9 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := percentile(tt.sorted, tt.p); got != tt.want {
				t.Fatalf("percentile(%v, %d) = %v, want %v", tt.sorted, tt.p, got, tt.want)
			}
		})
	}
}

// For any sample: p50 <= p90 <= p99 <= max, each percentile is one of the
// values, and at least p% of the values are at or below it.
func TestSummaryProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		var s stats
		n := 1 + rng.IntN(500)
		for range n {
			s.record(200+rng.IntN(3)*100, time.Duration(rng.IntN(1e7)))
		}
		sum := s.summary(time.Second)
		if !(sum.P50 <= sum.P90 && sum.P90 <= sum.P99 && sum.P99 <= sum.Max) || sum.Requests != n {
			t.Fatalf("summary out of order: %+v", sum)
		}
		total := 0
		for _, c := range sum.Statuses {
			total += c
		}
		if total != n {
			t.Fatalf("statuses add up to %d, want %d", total, n)
		}
		for _, p := range []struct {
			pct int
			v   time.Duration
		}{{50, sum.P50}, {90, sum.P90}, {99, sum.P99}} {
			if !slices.Contains(s.latencies, p.v) {
				t.Fatalf("p%d %v is not a sample", p.pct, p.v)
			}
			atOrBelow := 0
			for _, l := range s.latencies {
				if l <= p.v {
					atOrBelow++
				}
			}
			if atOrBelow*100 < p.pct*n {
				t.Fatalf("p%d %v: only %d of %d at or below", p.pct, p.v, atOrBelow, n)
			}
		}
	}
}

func TestVersionOf(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{`{"id":"t1","version":3}`, 3, true},
		{`{"id":"t1","version":"12"}`, 12, true},
		{`{"data":{"id":"t1","version":7},"filtered":false}`, 7, true},
		{`{"data":{"id":"t1","version":"8"}}`, 8, true},
		{`{"data":{"id":"t1"}}`, 0, false},
		{`{"id":"t1"}`, 0, false},
		{`{"version":"x"}`, 0, false},
		{`not json`, 0, false},
	}
	for _, tt := range tests {
		if got, ok := versionOf([]byte(tt.in)); got != tt.want || ok != tt.ok {
			t.Errorf("versionOf(%s) = %d, %v; want %d, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}
