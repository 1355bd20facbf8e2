package finance_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/ledgerlane/platform/services/finance"
	"github.com/ledgerlane/platform/services/finance/debt"
	"github.com/ledgerlane/platform/services/finance/recurring"
)

// BenchmarkPayoffPlan600Months20Debts: the bar is ≤ 5 ms for a
// 600-month plan over 20 debts. The budget is the minimums, 10 cents below
// each debt's first interest (negative amortization), so no debt is paid
// off and all 600 months are simulated.
//
//	go test -run '^$' -bench PayoffPlan -benchtime 200x .
func BenchmarkPayoffPlan600Months20Debts(b *testing.B) {
	var debts []debt.PayoffDebt
	for i := range 20 {
		apr := decimal.New(int64(400+i*100), -2) // 4 % … 23 %
		bal := decimal.New(int64(500000+i*250000), -2)
		floor := bal.Mul(apr).Div(decimal.NewFromInt(1200)).Sub(decimal.New(10, -2)).Round(2)
		debts = append(debts, debt.PayoffDebt{ID: fmt.Sprintf("debt-%02d", i), Balance: bal,
			Liability: debt.Liability{APR: &apr, MinPaymentFloor: floor}})
	}
	var minimums decimal.Decimal
	for _, d := range debts {
		minimums = minimums.Add(d.Liability.MinPaymentFloor)
	}
	budget := minimums
	in := debt.PayoffInput{Debts: debts, Currency: "USD", Strategy: debt.StrategyAvalanche, Budget: &budget,
		Today: time.Date(2026, 5, 20, 0, 0, 0, 0, time.UTC), Horizon: 600}
	var took []time.Duration
	for b.Loop() {
		start := time.Now()
		p := debt.SimulatePayoff(in)
		took = append(took, time.Since(start))
		if len(p.Timeline) < 600 {
			b.Fatalf("%d months", len(p.Timeline))
		}
	}
	reportPercentiles(b, took)
}

// BenchmarkDetectStreams1M: recurring detection over a full history of
// 1,000,000 rows (the bar: ≤ 5 s on one core; run with -cpu 1):
// ten years of 40 subscriptions and pay streams plus noise at 200
// merchants.
//
//	go test -run '^$' -bench DetectStreams1M -benchtime 3x -cpu 1 .
func BenchmarkDetectStreams1M(b *testing.B) {
	rows := generatedHistory(1_000_000)
	today := time.Date(2026, 5, 20, 0, 0, 0, 0, time.UTC)
	b.ResetTimer()
	var took, cpu []time.Duration
	for b.Loop() {
		start, cpu0 := time.Now(), cpuTime()
		streams := recurring.DetectStreams(rows, today)
		took, cpu = append(took, time.Since(start)), append(cpu, cpuTime()-cpu0)
		if len(streams) < 40 {
			b.Fatalf("%d streams", len(streams))
		}
	}
	reportPercentiles(b, took)
	// On a shared machine wall time includes waiting for a core; the
	// process's CPU time is what one core spends.
	slices.Sort(cpu)
	b.ReportMetric(float64(cpu[len(cpu)/2].Microseconds())/1000, "cpu-p50-ms")
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func generatedHistory(n int) []finance.BudgetRow {
	r := rand.New(rand.NewPCG(1, 1))
	start := time.Date(2016, 5, 20, 0, 0, 0, 0, time.UTC)
	var rows []finance.BudgetRow
	for s := range 40 {
		d := start.AddDate(0, 0, s)
		amount := decimal.New(-int64(500+s*137), -2)
		for d.Before(start.AddDate(10, 0, 0)) {
			rows = append(rows, finance.BudgetRow{ID: fmt.Sprintf("s%d-%d", s, len(rows)), AccountID: "checking",
				Merchant: fmt.Sprintf("Subscription %c%c%c", 'a'+s%26, 'a'+s/26, 'x'), Amount: finance.Money{Amount: amount, Currency: "USD"}, Date: d})
			d = d.AddDate(0, 1, 0)
		}
	}
	for len(rows) < n {
		d := start.AddDate(0, 0, r.IntN(3652))
		m := r.IntN(200)
		rows = append(rows, finance.BudgetRow{ID: fmt.Sprintf("n%d", len(rows)), AccountID: "card",
			Merchant: fmt.Sprintf("Shop %c%c%c", 'a'+m%26, 'a'+m/26, 'x'), Amount: finance.Money{Amount: decimal.New(-int64(100+r.IntN(20000)), -2), Currency: "USD"}, Date: d})
	}
	return rows
}

// reportPercentiles adds p50 and p99 (milliseconds) to the benchmark's
// output.
func reportPercentiles(b *testing.B, took []time.Duration) {
	if len(took) == 0 {
		return
	}
	slices.Sort(took)
	at := func(q float64) float64 {
		i := int(q*float64(len(took))+0.5) - 1
		i = max(0, min(i, len(took)-1))
		return float64(took[i].Microseconds()) / 1000
	}
	b.ReportMetric(at(0.50), "p50-ms")
	b.ReportMetric(at(0.99), "p99-ms")
}
