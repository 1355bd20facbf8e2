package finance

import (
	"fmt"
	"regexp"
	"strconv"
	"time"
)

// Calendar: dates without a time of day (UTC midnight), the month
// parameter, and how a recurring date steps by its frequency.

// DateLayout is the wire form of a calendar date.
const DateLayout = "2006-01-02"

// Day returns the calendar date of t as midnight UTC, the one form dates take
// in this package. The date is read in t's own location, so a local evening
// does not roll over to the next UTC day.
func Day(t time.Time) time.Time {
	y, m, d := t.Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// ParseDate parses a YYYY-MM-DD date.
func ParseDate(s string) (time.Time, error) {
	return time.ParseInLocation(DateLayout, s, time.UTC)
}

// MaxFutureMonths is how far ahead a ?month of budget progress or the month
// summary may look: a year past the current period (budgets see upcoming
// recurring outflows only).
const MaxFutureMonths = 12

var monthParam = regexp.MustCompile(`^([0-9]{4})-([0-9]{2})$`)

// ParseMonth reads ?month=YYYY-MM.
func ParseMonth(s string) (int, time.Month, error) {
	m := monthParam.FindStringSubmatch(s)
	if m == nil {
		return 0, 0, fmt.Errorf("not YYYY-MM")
	}
	y, _ := strconv.Atoi(m[1])
	mo, _ := strconv.Atoi(m[2])
	if mo < 1 || mo > 12 || y < 1970 {
		return 0, 0, fmt.Errorf("out of range")
	}
	return y, time.Month(mo), nil
}

// NextOccurrence steps a recurring date by its frequency. Semi-monthly
// dates fall on the 15th and the month's last day.
func NextOccurrence(d time.Time, freq string) time.Time {
	switch freq {
	case FrequencyWeekly:
		return d.AddDate(0, 0, 7)
	case FrequencyBiweekly:
		return d.AddDate(0, 0, 14)
	case FrequencySemiMonthly:
		if d.Day() < 15 {
			return time.Date(d.Year(), d.Month(), 15, 0, 0, 0, 0, time.UTC)
		}
		last := time.Date(d.Year(), d.Month()+1, 0, 0, 0, 0, 0, time.UTC)
		if d.Before(last) {
			return last
		}
		return time.Date(d.Year(), d.Month()+1, 15, 0, 0, 0, 0, time.UTC)
	case FrequencyAnnually:
		return addMonthsClamped(d, 12)
	case FrequencyQuarterly:
		return addMonthsClamped(d, 3)
	default:
		return addMonthsClamped(d, 1)
	}
}

// addMonthsClamped adds n months, keeping the day but clamping it to the
// target month's last day (Jan 31 + 1 month is Feb 28, not Mar 3).
func addMonthsClamped(d time.Time, n int) time.Time {
	first := time.Date(d.Year(), d.Month()+time.Month(n), 1, 0, 0, 0, 0, time.UTC)
	last := first.AddDate(0, 1, -1).Day()
	return time.Date(first.Year(), first.Month(), min(d.Day(), last), 0, 0, 0, 0, time.UTC)
}
