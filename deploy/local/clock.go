package local

import "time"

// TestInstant is where the test suites' stacks start their clocks unless
// they name another instant: a Wednesday afternoon (UTC) well inside a
// month, so that a test run never crosses a day. The demo seed lays its two
// years of data up to the stack's clock (Config.Now), so which row is the
// newest, which month is "the previous one" and what is due next are fixed
// by the clock, not by the day a suite runs (docs/testing.md). `make run`
// keeps the real clock.
var TestInstant = time.Date(2026, 5, 20, 14, 30, 0, 0, time.UTC)

// TickingClock is a clock that reads at when it is made and moves on with
// the monotonic clock: dates are pinned while TTLs, leases, retry schedules
// and deadlines pass as they do in production.
func TickingClock(at time.Time) func() time.Time {
	at, start := at.UTC(), time.Now()
	return func() time.Time { return at.Add(time.Since(start)) }
}
