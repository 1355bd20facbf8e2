package metering

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/services/metering/admission/quota"
)

// MaxDailyDays is how far back GET /v1/usage/daily reaches.
const MaxDailyDays = 90

// DailyQuery is what GET /v1/usage/daily asks.
type DailyQuery struct {
	// Days is how many days up to today (1 to MaxDailyDays); 0 asks for
	// the current period's days, from its start to today.
	Days int
	// CredentialID narrows the days and totals to one credential of the
	// account; "" is every credential.
	CredentialID string
}

// DayUsage is one UTC day's metered units, live and test apart.
type DayUsage struct {
	Date       time.Time
	Live, Test int64
}

// CredentialUsage is one credential's units over the days answered.
type CredentialUsage struct {
	CredentialID string // "" for units counted before days were kept by credential
	Mode         string
	Units        int64
}

// DailyUsage is the metered units by day: the quota's own unit, as
// GET /v1/usage counts it (not requests: a batch item is a unit).
type DailyUsage struct {
	From, To               time.Time // the first and last day answered (00:00 UTC)
	PeriodStart, PeriodEnd time.Time
	Days                   []DayUsage // every day From..To, oldest first
	Credentials            []CredentialUsage
	// PeriodLive is the current period's live units: GET /v1/usage's used
	// for the account (or the credential's share). PeriodUndated is the
	// part counted before the counters kept days (an older gateway), which
	// no day shows; 0 otherwise.
	PeriodLive, PeriodUndated int64
	// TestUsed is the test pool's lifetime units (test_used), or the
	// credential's share: the pool has no period.
	TestUsed     int64
	CredentialID string
}

// DailyUsage answers the account's metered units per day (GET
// /v1/usage/daily). A credential id that is not one of the account's is
// not found, as an unknown one.
func (s *Service) DailyUsage(ctx context.Context, accountID string, q DailyQuery) (DailyUsage, error) {
	if q.Days < 0 || q.Days > MaxDailyDays {
		return DailyUsage{}, problem.New(problem.InvalidInput, fmt.Sprintf("days must be 1 to %d (or absent for the current period)", MaxDailyDays)).WithField("days")
	}
	if s.counters == nil {
		return DailyUsage{}, problem.New(problem.Unavailable, "usage counters are not configured")
	}
	l, err := s.Limits(ctx, accountID)
	if err != nil {
		return DailyUsage{}, err
	}
	if q.CredentialID != "" {
		creds, err := s.store.ListCredentials(ctx, accountID)
		if err != nil {
			return DailyUsage{}, err
		}
		if !slices.ContainsFunc(creds, func(c Credential) bool { return c.ID == q.CredentialID }) {
			return DailyUsage{}, problem.New(problem.NotFound, "no credential of this account has this id").WithField("credential_id")
		}
	}
	from, to := dailyRange(l, s.now(), q.Days)
	counts, err := s.counters.Daily(ctx, accountID, l, from)
	if err != nil {
		s.countersUnreachable(ctx, err)
		return DailyUsage{}, problem.New(problem.Unavailable, "usage counters are unreachable; retry shortly")
	}
	return BuildDaily(counts, l, from, to, q), nil
}

// dailyRange is the days a query answers: the last days up to today, or
// the current period's up to today.
func dailyRange(l quota.Limits, now time.Time, days int) (from, to time.Time) {
	to = utcDay(now)
	if days == 0 {
		return utcDay(l.PeriodStart), to
	}
	return to.AddDate(0, 0, -(days - 1)), to
}

func utcDay(t time.Time) time.Time {
	t = t.UTC()
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
}

// BuildDaily builds the series of days from..to (inclusive) out of the
// counters. Live days come from every window kept (two windows may share a
// day when the plan changed it), except when the days asked are the
// period's (q.Days == 0): then only the current window's, so that the
// period's live days add up exactly to PeriodLive less PeriodUndated.
func BuildDaily(c quota.DailyCounts, l quota.Limits, from, to time.Time, q DailyQuery) DailyUsage {
	out := DailyUsage{From: from, To: to, PeriodStart: l.PeriodStart, PeriodEnd: l.PeriodEnd, CredentialID: q.CredentialID}
	index := map[time.Time]int{}
	for d := from; !d.After(to); d = d.AddDate(0, 0, 1) {
		index[d] = len(out.Days)
		out.Days = append(out.Days, DayUsage{Date: d})
	}
	mine := func(d quota.UsageDay) bool { return q.CredentialID == "" || d.CredentialID == q.CredentialID }
	type credKey struct{ id, mode string }
	totals := map[credKey]int64{}
	add := func(w quota.WindowDays, mode string) {
		for _, d := range w.Days {
			i, ok := index[d.Day]
			if !ok || !mine(d) {
				continue
			}
			if mode == ModeLive {
				out.Days[i].Live += d.Units
			} else {
				out.Days[i].Test += d.Units
			}
			totals[credKey{d.CredentialID, mode}] += d.Units
		}
	}
	for _, w := range c.Live {
		current := w.Start.Equal(utcDay(l.PeriodStart))
		if current {
			var dated int64
			for _, d := range w.Days {
				if mine(d) {
					out.PeriodLive += d.Units
				}
				dated += d.Units
			}
			if q.CredentialID == "" {
				out.PeriodUndated = w.Used - dated
				out.PeriodLive = w.Used
			}
		}
		if q.Days == 0 && !current {
			continue
		}
		add(w, ModeLive)
	}
	add(c.Test, ModeTest)
	for _, d := range c.Test.Days {
		if mine(d) {
			out.TestUsed += d.Units
		}
	}
	if q.CredentialID == "" {
		out.TestUsed = c.Test.Used
	}
	for k, n := range totals {
		if n != 0 {
			out.Credentials = append(out.Credentials, CredentialUsage{CredentialID: k.id, Mode: k.mode, Units: n})
		}
	}
	slices.SortFunc(out.Credentials, func(a, b CredentialUsage) int {
		if a.Units != b.Units {
			return cmp.Compare(b.Units, a.Units)
		}
		if a.Mode != b.Mode {
			return strings.Compare(a.Mode, b.Mode)
		}
		return strings.Compare(a.CredentialID, b.CredentialID)
	})
	return out
}
