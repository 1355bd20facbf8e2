// Package meter enforces an account's limits in Redis: the token bucket, the
// live quota window or the test pool, overage and its spend cap, and the
// idempotency reservation of a write, all decided by one Lua script in one
// round trip. The metering service owns these rules; the gateway runs them at
// the edge (so a cached credential costs no gRPC hop), and the metering
// service reads the same counters for GET /v1/usage.
package admission

import "time"

// TestPool is the one-time allowance shared by an account's test credentials.
const TestPool = 250

// Period returns the quota window [start, end) that contains now: the UTC
// calendar month when calendarMonth, else the month that starts on the
// billing anniversary's day (clamped to the month's last day, so an anchor on
// the 31st starts on the 30th in April).
func Period(calendarMonth bool, anchor, now time.Time) (start, end time.Time) {
	now = now.UTC()
	if calendarMonth {
		start = time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
		return start, start.AddDate(0, 1, 0)
	}
	day := anchor.UTC().Day()
	start = anniversary(now.Year(), now.Month(), day)
	if start.After(now) {
		y, m := now.Year(), now.Month()-1
		if m == 0 {
			y, m = y-1, 12
		}
		start = anniversary(y, m, day)
	}
	y, m := start.Year(), start.Month()+1
	if m == 13 {
		y, m = y+1, 1
	}
	return start, anniversary(y, m, day)
}

func anniversary(y int, m time.Month, day int) time.Time {
	last := time.Date(y, m+1, 0, 0, 0, 0, 0, time.UTC).Day()
	if day > last {
		day = last
	}
	return time.Date(y, m, day, 0, 0, 0, 0, time.UTC)
}
