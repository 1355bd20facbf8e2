package billing

import "time"

// Calendar counts bank business days, on which direct debits move. Weekends
// (Saturday and Sunday, in UTC) are never business days; Holiday, when set,
// names further closed days (it is asked about dates at midnight UTC).
//
// No holiday list ships with the service: each scheme closes on its own days
// (the US Federal Reserve's, TARGET2's, the UK's bank holidays), and a real
// processor reports the date it expects a payment to settle on, which a
// deployment's adapter passes on. Without one, a holiday delays settlement by
// a day at most, which the sandbox's outcomes do not depend on. docs/billing.md.
type Calendar struct {
	Holiday func(day time.Time) bool
}

// BusinessDay reports whether t's UTC date is a business day.
func (c Calendar) BusinessDay(t time.Time) bool {
	t = t.UTC()
	switch t.Weekday() {
	case time.Saturday, time.Sunday:
		return false
	}
	if c.Holiday != nil && c.Holiday(time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)) {
		return false
	}
	return true
}

// AddBusinessDays returns the time n business days after t, at t's time of
// day (UTC): a payment started on a Friday with n = 3 is due on Wednesday.
// Days are counted from t's date, whether or not that is itself a business
// day. n <= 0 returns t.
func (c Calendar) AddBusinessDays(t time.Time, n int) time.Time {
	t = t.UTC()
	for n > 0 {
		t = t.AddDate(0, 0, 1)
		if c.BusinessDay(t) {
			n--
		}
	}
	return t
}
