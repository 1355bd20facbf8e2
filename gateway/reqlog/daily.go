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
	// ByRoute and ByCredential are each route's and credential's own
	// Counts ("mode/class"): the series of one route or key.
	ByRoute, ByCredential map[string]map[string]int64
}

// dailyFields are the hash fields an entry counts in: its mode and class,
// and the same under its route and under its credential.
func dailyFields(e Entry) [3]string {
	mc := e.Mode + "/" + Class(e.Status)
	return [3]string{
		"m " + mc,
		"r " + e.Route + " " + mc,
		"k " + e.CredentialID + " " + mc,
	}
}

// dayKey is the UTC date of t, as the daily counters name it.
func dayKey(t time.Time) string { return t.UTC().Format(time.DateOnly) }

// addField adds n to the counters a field names. Route and credential
// fields written before they carried the class ("r route mode") count as
// that mode's ok.
func (d *Day) addField(field string, n int64) {
	kind, rest, _ := strings.Cut(field, " ")
	if kind == "m" {
		d.Counts[rest] += n
		return
	}
	i := strings.LastIndexByte(rest, ' ')
	if i < 0 {
		return
	}
	name, mc := rest[:i], rest[i+1:]
	mode, _, classed := strings.Cut(mc, "/")
	if !classed {
		mc = mode + "/ok"
	}
	switch kind {
	case "r":
		d.Routes[name+" "+mode] += n
		addTo(d.ByRoute, name, mc, n)
	case "k":
		d.Credentials[name+" "+mode] += n
		addTo(d.ByCredential, name, mc, n)
	}
}

func addTo(m map[string]map[string]int64, name, mc string, n int64) {
	if m[name] == nil {
		m[name] = map[string]int64{}
	}
	m[name][mc] += n
}

func newDay(date time.Time) Day {
	return Day{Date: date, Counts: map[string]int64{}, Routes: map[string]int64{}, Credentials: map[string]int64{},
		ByRoute: map[string]map[string]int64{}, ByCredential: map[string]map[string]int64{}}
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
