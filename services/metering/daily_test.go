package metering_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ledgerlane/platform/services/metering"
	"github.com/ledgerlane/platform/services/metering/admission/quota"
)

// TestBuildDailyProperty: for random counters (windows of either plan
// kind, days shared by two windows after a plan change, several keys, the
// test pool), the period's daily series adds up exactly to the period's
// total, each key's series to its share, the shares to the whole, and the
// last-N-days series has N days with every unit of those days.
func TestBuildDailyProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 32))
	creds := []string{"a", "b", "c", ""}
	for round := range 500 {
		now := time.Date(2026, time.Month(1+rng.IntN(12)), 1+rng.IntN(28), rng.IntN(24), 0, 0, 0, time.UTC)
		start, end := quota.Period(rng.IntN(2) == 0, time.Date(2025, 1, 1+rng.IntN(31), 0, 0, 0, 0, time.UTC), now)
		l := quota.Limits{PeriodStart: start, PeriodEnd: end}
		var c quota.DailyCounts
		// An earlier window (a plan change may end it on the current
		// window's first day), then the current one.
		prevStart := start.AddDate(0, -1, -rng.IntN(10))
		for _, w := range []struct{ from, to time.Time }{{prevStart, start}, {start, now}} {
			win := quota.WindowDays{Start: w.from}
			for d := w.from; !d.After(w.to); d = d.AddDate(0, 0, 1) {
				for _, id := range creds {
					if rng.IntN(3) == 0 {
						n := int64(1 + rng.IntN(50))
						win.Days = append(win.Days, quota.UsageDay{Day: d, CredentialID: id, Units: n})
						win.Used += n
					}
				}
			}
			c.Live = append(c.Live, win)
		}
		for d := now.AddDate(0, 0, -200); !d.After(now); d = d.AddDate(0, 0, 1+rng.IntN(20)) {
			n := int64(1 + rng.IntN(5))
			c.Test.Days = append(c.Test.Days, quota.UsageDay{Day: time.Date(d.Year(), d.Month(), d.Day(), 0, 0, 0, 0, time.UTC), CredentialID: creds[rng.IntN(3)], Units: n})
			c.Test.Used += n
		}
		today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
		period := func(q metering.DailyQuery) metering.DailyUsage {
			return metering.BuildDaily(c, l, start, today, q)
		}
		all := period(metering.DailyQuery{})
		if all.PeriodLive != c.Live[1].Used || all.PeriodUndated != 0 || all.TestUsed != c.Test.Used {
			t.Fatalf("round %d: period %d (undated %d), test %d; counters %d, %d", round, all.PeriodLive, all.PeriodUndated, all.TestUsed, c.Live[1].Used, c.Test.Used)
		}
		if got := sumLive(all); got != all.PeriodLive {
			t.Fatalf("round %d: the period's days add up to %d, the period's total is %d", round, got, all.PeriodLive)
		}
		if want := int(today.Sub(start).Hours()/24) + 1; len(all.Days) != want {
			t.Fatalf("round %d: %d days from %v to %v, want %d", round, len(all.Days), start, today, want)
		}
		var shares, credTotals int64
		for _, id := range creds[:3] { // "" asks for every key; its units are counted below
			one := period(metering.DailyQuery{CredentialID: id})
			if got := sumLive(one); got != one.PeriodLive {
				t.Fatalf("round %d: key %q's days add up to %d, its period total is %d", round, id, got, one.PeriodLive)
			}
			shares += one.PeriodLive
		}
		for _, cu := range all.Credentials {
			if cu.Mode == metering.ModeLive {
				credTotals += cu.Units
				if cu.CredentialID == "" {
					shares += cu.Units
				}
			}
		}
		if shares != all.PeriodLive || credTotals != all.PeriodLive {
			t.Fatalf("round %d: key shares %d, key totals %d, period %d", round, shares, credTotals, all.PeriodLive)
		}
		// The last 90 days take every window's units of those days.
		from := today.AddDate(0, 0, -89)
		last := metering.BuildDaily(c, l, from, today, metering.DailyQuery{Days: 90})
		var want, wantTest int64
		for _, w := range c.Live {
			for _, d := range w.Days {
				if !d.Day.Before(from) {
					want += d.Units
				}
			}
		}
		for _, d := range c.Test.Days {
			if !d.Day.Before(from) {
				wantTest += d.Units
			}
		}
		var gotTest int64
		for _, d := range last.Days {
			gotTest += d.Test
		}
		if len(last.Days) != 90 || sumLive(last) != want || gotTest != wantTest {
			t.Fatalf("round %d: 90 days: %d days, live %d (want %d), test %d (want %d)", round, len(last.Days), sumLive(last), want, gotTest, wantTest)
		}
	}
}

// TestBuildDailyUndated: units a window counted before it kept days are
// in the period's total and said apart, never put on a day.
func TestBuildDailyUndated(t *testing.T) {
	start := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	l := quota.Limits{PeriodStart: start, PeriodEnd: start.AddDate(0, 1, 0)}
	c := quota.DailyCounts{Live: []quota.WindowDays{{Start: start, Used: 12,
		Days: []quota.UsageDay{{Day: start.AddDate(0, 0, 2), CredentialID: "k", Units: 5}}}}}
	got := metering.BuildDaily(c, l, start, start.AddDate(0, 0, 3), metering.DailyQuery{})
	if got.PeriodLive != 12 || got.PeriodUndated != 7 || sumLive(got) != 5 || got.Days[2].Live != 5 {
		t.Fatalf("%+v", got)
	}
}

func sumLive(u metering.DailyUsage) int64 {
	var n int64
	for _, d := range u.Days {
		n += d.Live
	}
	return n
}
