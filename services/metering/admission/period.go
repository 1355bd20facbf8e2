// Package meter enforces an account's limits in Redis: the token bucket, the
// live quota window or the test pool, overage and its spend cap, and the
// idempotency reservation of a write, all decided by one Lua script in one
// round trip. The metering service owns these rules; the gateway runs them at
// the edge (so a cached credential costs no gRPC hop), and the metering
// service reads the same counters for GET /v1/usage.
package admission

import (
	"time"

	"github.com/ledgerlane/platform/services/metering/admission/quota"
)

// TestPool is the one-time allowance shared by an account's test credentials.
const TestPool = quota.TestPool

// Period returns the quota window [start, end) that contains now
// (quota.Period).
func Period(calendarMonth bool, anchor, now time.Time) (start, end time.Time) {
	return quota.Period(calendarMonth, anchor, now)
}
