// Package quota holds the plain values of admission: an account's Limits as
// the credential lookup carries them, a Request to admit, the Usage the
// counters hold, a Changed mark of the alerts' set, the quota Period and
// the TestPool. It imports nothing but the standard library, so the
// metering service's domain packages (the root, billing, notify) use them
// without reaching admission's Redis client; admission, the Redis adapter,
// names them too (aliases) for the gateway.
package quota

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

// Limits is what one account may do, as of the credential lookup.
type Limits struct {
	Plan          string
	RatePerSecond int
	Burst         int
	// MonthlyQuota is the live volume included in [PeriodStart, PeriodEnd).
	MonthlyQuota int64
	// HardStop refuses live overage (Free, or a paid plan's billing setting).
	HardStop bool
	// OveragePer1000 is in minor units of Currency; OverageCapCents nil: no cap.
	OveragePer1000  int64
	OverageCapCents *int64
	Currency        string
	PeriodStart     time.Time
	PeriodEnd       time.Time
	TestQuota       int64
	// PaymentState is the account's payment standing when it narrows these
	// limits ("settling": introductory limits while a first direct debit
	// settles; "failed": Free limits after a failed payment), else empty.
	// It only words a refusal.
	PaymentState string
}

// Request describes one request to admit.
type Request struct {
	AccountID string
	Test      bool // a test credential: draws on the test pool
	Metered   bool // one of the four metered routes
	Limits    Limits
	// Units is how many conversions the request stands for: a batch's item
	// count, else 1 (0 means 1). A batch is admitted whole or refused whole.
	Units int64
	// IdempotencyKey, when set, reserves the key for Fingerprint within
	// IdempotencyScope: the credential's whole identity (see IdempotencyScope),
	// so one credential never replays another's stored answer.
	IdempotencyKey   string
	IdempotencyScope string
	Fingerprint      string
	// Attempt names this admission (NewAttempt), so that the client
	// library's retry of the script recognises its own earlier run and a
	// caller that gave up can Abandon it. Empty: Admit makes one.
	Attempt string
	// CredentialID is the credential the units are counted for, and At the
	// moment they were counted (zero: the counters' clock at admission).
	// They name the day-and-key field every change of the counter also
	// changes (UsageDay), so that whatever later gives units back (settle,
	// refund, abandon, reconcile) moves the same field it was counted in.
	CredentialID string
	At           time.Time
}

// UsageDay is the units one credential was counted for on one UTC day in
// one counter (a live window or the test pool). The counter's day fields
// always add up to its used count: every script that changes one changes
// the other by the same amount, atomically.
type UsageDay struct {
	Day          time.Time // 00:00 UTC
	CredentialID string    // "" when unknown (units counted before days were kept)
	Units        int64
}

// WindowDays is one counter's used count and its day fields.
type WindowDays struct {
	Start time.Time // the window's start; zero for the test pool
	Used  int64
	Days  []UsageDay
}

// DailyCounts is what the counters hold of an account's usage by day: the
// live windows still kept that end after the time asked for (oldest
// first, the current one last, present even when empty) and the test pool.
type DailyCounts struct {
	Live []WindowDays
	Test WindowDays
}

// Usage is what the counters say for one account.
type Usage struct {
	Used         int64
	OverageMilli int64 // accrued overage in thousandths of a minor unit
	TestUsed     int64
	// LiveBlocked: one more live conversion would be refused, because the
	// included volume is spent and no overage may flow (a hard stop, no
	// overage price, or the spend cap it would reach).
	LiveBlocked bool
}

// Changed is one account whose usage alerts need a look, and the version of
// its mark when it was read.
type Changed struct {
	AccountID string
	Version   float64
}
