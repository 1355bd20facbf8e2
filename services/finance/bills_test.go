package finance_test

import (
	"context"
	"testing"
	"time"

	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/services/finance"
	"github.com/ledgerlane/platform/services/finance/recurring"
)

func TestUpcomingBillsRule(t *testing.T) {
	today := time.Date(2026, 5, 20, 9, 0, 0, 0, time.UTC)
	day := func(s string) time.Time { d, _ := finance.ParseDate(s); return d }
	rule := func(id, freq, next string, stream string, active bool) recurring.Rule {
		return recurring.Rule{ID: id, Merchant: id, Frequency: freq, StreamType: stream, IsActive: active,
			NextExpectedDate: day(next), ExpectedAmount: finance.Money{Amount: dec("-10.50"), Currency: "USD"}}
	}
	rules := []recurring.Rule{
		rule("monthly", finance.FrequencyMonthly, "2026-05-25", recurring.StreamOutflow, true),
		rule("stale", finance.FrequencyMonthly, "2026-02-03", recurring.StreamOutflow, true), // rolls to 2026-06-03
		rule("weekly", finance.FrequencyWeekly, "2026-05-20", recurring.StreamOutflow, true),
		rule("semi", finance.FrequencySemiMonthly, "2026-05-15", recurring.StreamOutflow, true),
		rule("yearly", finance.FrequencyAnnually, "2026-12-01", recurring.StreamOutflow, true),   // outside
		rule("salary", finance.FrequencySemiMonthly, "2026-05-29", recurring.StreamInflow, true), // income: not a bill
		rule("ended", finance.FrequencyMonthly, "2026-05-22", recurring.StreamOutflow, false),
	}
	got := recurring.UpcomingBills(rules, today, 14) // through 2026-06-03
	var lines []string
	for _, b := range got {
		lines = append(lines, b.ExpectedDate.Format("01-02")+" "+b.RuleID)
		if !b.ExpectedAmount.Amount.Equal(dec("10.50")) {
			t.Errorf("amount %s", b.ExpectedAmount.Amount)
		}
	}
	want := []string{"05-20 weekly", "05-25 monthly", "05-27 weekly", "05-31 semi", "06-03 stale", "06-03 weekly"}
	if len(lines) != len(want) {
		t.Fatalf("bills %v, want %v", lines, want)
	}
	for i := range want {
		if lines[i] != want[i] {
			t.Fatalf("bills %v, want %v", lines, want)
		}
	}
}

func TestListUpcomingBills(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	res, err := e.recurring.ListUpcomingBills(ctx, e.read, 0)
	if err != nil {
		t.Fatal(err)
	}
	// 30 days: each of the eight monthly outflow rules once (the salary is
	// income), and none before today.
	if len(res.Data) != 8 || res.Filtered || len(res.RedactedFields) != 0 {
		t.Fatalf("%d bills, filtered %v", len(res.Data), res.Filtered)
	}
	today := finance.Day(now)
	for i, b := range res.Data {
		if b.ExpectedDate.Before(today) || b.ExpectedDate.After(today.AddDate(0, 0, 30)) || !b.ExpectedAmount.Amount.IsPositive() ||
			b.Merchant == "" || b.LogoURL == "" || (i > 0 && b.ExpectedDate.Before(res.Data[i-1].ExpectedDate)) {
			t.Errorf("bill %+v", b)
		}
	}
	long, err := e.recurring.ListUpcomingBills(ctx, e.read, 90)
	if err != nil || len(long.Data) < 24 {
		t.Fatalf("90 days: %d %v", len(long.Data), err)
	}

	// The redacted grant hides Health (the gym) and redacts institutions:
	// the Rocket Mortgage payment keeps its amount but loses its names.
	red, err := e.recurring.ListUpcomingBills(ctx, e.redacted, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(red.Data) != 7 || !red.Filtered || len(red.RedactedFields) != 1 {
		t.Fatalf("redacted: %d %v %v", len(red.Data), red.Filtered, red.RedactedFields)
	}
	for _, b := range red.Data {
		if b.Merchant == "24 Hour Fitness" || (b.ExpectedAmount.Amount.Equal(dec("2145.67")) && (b.Merchant != "" || b.LogoURL != "")) {
			t.Errorf("redacted bill %+v", b)
		}
	}

	for _, n := range []int32{-1, 366} {
		_, err := e.recurring.ListUpcomingBills(ctx, e.read, n)
		wantProblem(t, err, problem.InvalidInput, "days_ahead")
	}
}
