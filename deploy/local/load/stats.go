package load

import (
	"slices"
	"sync"
	"time"
)

// stats collects one scenario's results. Every latency is kept (a bounded
// run at a few thousand requests a second is a few megabytes), so the
// percentiles are exact rather than estimated from buckets.
type stats struct {
	mu        sync.Mutex
	latencies []time.Duration
	statuses  map[int]int // 0 counts transport errors (no answer)
}

func (s *stats) record(status int, d time.Duration) {
	s.mu.Lock()
	if s.statuses == nil {
		s.statuses = map[int]int{}
	}
	s.latencies = append(s.latencies, d)
	s.statuses[status]++
	s.mu.Unlock()
}

// Summary is what the report shows for one scenario.
type Summary struct {
	Requests           int
	PerSecond          float64
	P50, P90, P99, Max time.Duration
	Statuses           map[int]int // 0: transport error
}

func (s *stats) summary(elapsed time.Duration) Summary {
	s.mu.Lock()
	defer s.mu.Unlock()
	sum := Summary{Requests: len(s.latencies), Statuses: map[int]int{}}
	for k, v := range s.statuses {
		sum.Statuses[k] = v
	}
	if elapsed > 0 {
		sum.PerSecond = float64(len(s.latencies)) / elapsed.Seconds()
	}
	sorted := slices.Clone(s.latencies)
	slices.Sort(sorted)
	sum.P50, sum.P90, sum.P99 = percentile(sorted, 50), percentile(sorted, 90), percentile(sorted, 99)
	if len(sorted) > 0 {
		sum.Max = sorted[len(sorted)-1]
	}
	return sum
}

// percentile is the nearest-rank percentile p (0 < p <= 100) of sorted: the
// smallest value at least p% of the values are at or below. Empty: 0.
func percentile(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	// ceil(p*n/100) in integers, as a 1-based rank.
	rank := (p*len(sorted) + 99) / 100
	if rank < 1 {
		rank = 1
	}
	return sorted[rank-1]
}
