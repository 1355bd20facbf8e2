package reqlog

import (
	"strconv"
	"strings"
	"time"
)

// DailyKeep is how many days of daily counts are kept.
const DailyKeep = 90

// Class is a status class: what a chart tells apart.
func Class(status int) string {
	switch {
	case status >= 500:
		return "server_error"
	case status >= 400:
		return "client_error"
	}
	return "ok"
}

// Day is one UTC day's request counts of an account, by mode and class, by
// route and mode, and by credential and mode.
type Day struct {
	Date time.Time // midnight UTC
	// Counts are keyed "mode/class" (live/ok, test/client_error, …).
	Counts map[string]int64
	// Routes and Credentials are keyed "route mode" and "credential mode".
	Routes, Credentials map[string]int64
}

// counter names one daily count of an entry: its hash field.
func dailyFields(e Entry) [3]string {
	return [3]string{
		"m " + e.Mode + "/" + Class(e.Status),
		"r " + e.Route + " " + e.Mode,
		"k " + e.CredentialID + " " + e.Mode,
	}
}

// dayKey is the UTC date of t, as the daily counters name it.
func dayKey(t time.Time) string { return t.UTC().Format(time.DateOnly) }

// addField adds n to the counter a field names.
func (d *Day) addField(field string, n int64) {
	kind, rest, _ := strings.Cut(field, " ")
	switch kind {
	case "m":
		d.Counts[rest] += n
	case "r":
		d.Routes[rest] += n
	case "k":
		d.Credentials[rest] += n
	}
}

func newDay(date time.Time) Day {
	return Day{Date: date, Counts: map[string]int64{}, Routes: map[string]int64{}, Credentials: map[string]int64{}}
}

// days are the dates of the n days ending with to's, oldest first.
func days(to time.Time, n int) []time.Time {
	end := to.UTC().Truncate(24 * time.Hour)
	out := make([]time.Time, n)
	for i := range n {
		out[i] = end.AddDate(0, 0, i-n+1)
	}
	return out
}

func atoi64(s string) int64 { n, _ := strconv.ParseInt(s, 10, 64); return n }
