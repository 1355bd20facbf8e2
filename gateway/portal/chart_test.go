package portal

import (
	"testing"
	"testing/quick"

	edgev1 "github.com/ledgerlane/platform/proto/edge/v1"
)

// The daily chart's stacks never leave the chart, the busiest day fills
// it, and its totals are the days' sums.
func TestRequestChartProperties(t *testing.T) {
	f := func(counts [][3]uint16) bool {
		var days []*edgev1.DayRequestCount
		var live, test int64
		for _, c := range counts {
			days = append(days, &edgev1.DayRequestCount{Date: "2026-11-28", LiveOk: int32(c[0]), LiveClientError: int32(c[1]), TestOk: int32(c[2])})
			live += int64(c[0]) + int64(c[1])
			test += int64(c[2])
		}
		ch := newRequestChart(days)
		if ch.Live != live || ch.Test != test || len(ch.Bars) != len(days) {
			return false
		}
		full := false
		for _, b := range ch.Bars {
			h := b.OK + b.Errors + b.Test
			if h > 100.000001 || b.TestY < -0.000001 || b.OK < 0 || b.Errors < 0 || b.Test < 0 {
				return false
			}
			full = full || h > 99.999
		}
		return ch.Busiest == 0 || full
	}
	if err := quick.Check(f, &quick.Config{MaxCount: 2000}); err != nil {
		t.Error(err)
	}
}
