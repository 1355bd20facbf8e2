package local_test

import (
	"os"
	"testing"
	"time"

	"github.com/ledgerlane/platform/deploy/local"
)

// sweepInstants are the instants the date sweep seeds the demo at: the
// calendar's edges, the DST changes of the demo's time zones (Portland and
// Berlin; the service counts days in UTC, and the sweep proves nothing
// leans on local time), and the instant main first went red. Each stays at
// least half an hour from a UTC midnight, so a check never straddles two
// days on its ticking clock.
var sweepInstants = []struct {
	name string
	at   time.Time
}{
	{"end of January", time.Date(2026, 1, 31, 22, 0, 0, 0, time.UTC)},
	{"end of a 30-day month", time.Date(2026, 4, 30, 23, 15, 0, 0, time.UTC)},
	{"end of February", time.Date(2027, 2, 28, 23, 0, 0, 0, time.UTC)},
	{"29 February", time.Date(2028, 2, 29, 12, 0, 0, 0, time.UTC)},
	{"1 March after a leap day", time.Date(2028, 3, 1, 0, 45, 0, 0, time.UTC)},
	{"US DST starts (Portland)", time.Date(2026, 3, 8, 10, 30, 0, 0, time.UTC)},
	{"EU DST starts (Berlin)", time.Date(2026, 3, 29, 1, 30, 0, 0, time.UTC)},
	{"EU DST ends (Berlin)", time.Date(2026, 10, 25, 1, 30, 0, 0, time.UTC)},
	{"US DST ends (Portland)", time.Date(2026, 11, 1, 9, 30, 0, 0, time.UTC)},
	{"New Year's Eve", time.Date(2026, 12, 31, 23, 15, 0, 0, time.UTC)},
	{"New Year", time.Date(2027, 1, 1, 0, 45, 0, 0, time.UTC)},
	{"a Sunday", time.Date(2026, 6, 14, 12, 0, 0, 0, time.UTC)},
	{"the morning main went red", time.Date(2026, 11, 28, 3, 56, 0, 0, time.UTC)},
}

// TestDateSweep seeds the demo stack at each of sweepInstants, and at noon
// (UTC) a year after the day the suite runs, and runs the end-to-end checks
// whose answers depend on the date: budget progress and goals, debt and
// year-to-date interest, month summaries, bills and the cash-flow forecast,
// net worth and its history, recurring streams, and the lost-answer
// replays. Every check gets a stack of its own on the memory store; the
// PostgreSQL store runs the same checks at every third instant and the
// last (the stores' date arithmetic is SQL there). A failure names its
// instant; `LOCAL_TEST_NOW=<instant> go test -run <Test> .` reruns any
// end-to-end test there (docs/testing.md).
func TestDateSweep(t *testing.T) {
	if testing.Short() {
		t.Skip("the date sweep boots about a hundred stacks; -short skips it")
	}
	if raceEnabled && os.Getenv("DATE_SWEEP_UNDER_RACE") == "" {
		// Its checks run under -race in their own end-to-end tests; here
		// they vary only the date, and the detector would make the sweep
		// the slowest part of make test.
		t.Skip("the date sweep runs without -race (make test-dates, which make test runs); DATE_SWEEP_UNDER_RACE=1 runs it here")
	}
	redisURL := reachableRedis(t)
	instants := append(sweepInstants, struct {
		name string
		at   time.Time
	}{"a year from today", time.Now().UTC().Truncate(24*time.Hour).AddDate(1, 0, 0).Add(12 * time.Hour)})
	checks := []struct {
		name string
		run  func(t *testing.T, st *local.Stack)
	}{
		{"budgets", budgetsEndToEnd},
		{"debt", debtEndToEnd},
		{"insights", insightsEndToEnd},
		{"net worth", netWorthEndToEnd},
		{"recurring", recurringEndToEnd},
		{"replay", func(t *testing.T, st *local.Stack) { financePatchRetriedAfterALostAnswer(t, st, redisURL) }},
	}
	for i, in := range instants {
		stores := []bool{false}
		if i%3 == 0 || i == len(instants)-1 {
			stores = append(stores, true)
		}
		t.Run(in.at.Format(time.RFC3339)+" "+in.name, func(t *testing.T) {
			for _, withDB := range stores {
				store := "memory"
				if withDB {
					store = "postgres"
				}
				for _, c := range checks {
					t.Run(store+"/"+c.name, func(t *testing.T) {
						c.run(t, stack(t, withDB, func(cfg *local.Config) {
							cfg.Now, cfg.SandboxInterval, cfg.DemoPlan, cfg.RedisURL = local.TickingClock(in.at), -1, "scale", redisURL
							cfg.RecurringInterval = -1 // the recurring check runs the job itself
						}))
					})
				}
			}
		})
	}
}
