package finance_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/services/finance"
	"github.com/ledgerlane/platform/services/finance/recurring"
)

// TestForecastHandWorked: 1,000.00 today; pay 500 on the 15th and last
// day (semi-monthly), rent 800 monthly on the 1st, a 10.00 weekly
// subscription from tomorrow.
func TestForecastHandWorked(t *testing.T) {
	today := time.Date(2026, 5, 20, 10, 0, 0, 0, time.UTC)
	day := func(s string) time.Time { d, _ := finance.ParseDate(s); return d }
	rules := []recurring.Rule{
		{ID: "pay", Merchant: "Employer", IsActive: true, StreamType: recurring.StreamInflow, Frequency: finance.FrequencySemiMonthly,
			NextExpectedDate: day("2026-05-31"), ExpectedAmount: finance.Money{Amount: dec("500"), Currency: "USD"}},
		{ID: "rent", Merchant: "Landlord", IsActive: true, StreamType: recurring.StreamOutflow, Frequency: finance.FrequencyMonthly,
			NextExpectedDate: day("2026-06-01"), ExpectedAmount: finance.Money{Amount: dec("-800"), Currency: "USD"}},
		{ID: "sub", Merchant: "Stream", IsActive: true, StreamType: recurring.StreamOutflow, Frequency: finance.FrequencyWeekly,
			NextExpectedDate: day("2026-05-21"), ExpectedAmount: finance.Money{Amount: dec("-10"), Currency: "USD"}},
		{ID: "eur", IsActive: true, StreamType: recurring.StreamOutflow, Frequency: finance.FrequencyMonthly,
			NextExpectedDate: day("2026-05-25"), ExpectedAmount: finance.Money{Amount: dec("-99"), Currency: "EUR"}},
	}
	start := dec("1000")
	f := recurring.ForecastCashFlow(rules, &start, "USD", today, 14) // May 21 – Jun 3
	// May 21 −10 → 990; May 28 −10 → 980; May 31 +500 → 1480; Jun 1 −800 → 680.
	want := map[string]string{"2026-05-21": "990", "2026-05-28": "980", "2026-05-31": "1480", "2026-06-01": "680", "2026-06-03": "680"}
	if len(f.Points) != 14 || f.Points[0].Date.Format(finance.DateLayout) != "2026-05-21" {
		t.Fatalf("%d points from %v", len(f.Points), f.Points[0].Date)
	}
	for _, p := range f.Points {
		if w, ok := want[p.Date.Format(finance.DateLayout)]; ok && !p.ProjectedBalance.Equal(dec(w)) {
			t.Errorf("%s: %s, want %s", p.Date.Format(finance.DateLayout), p.ProjectedBalance, w)
		}
	}
	if !f.ProjectedEndBalance.Equal(dec("680")) || len(f.RecurringItems) != 3 || len(f.Projections) != 3 {
		t.Errorf("end %s items %d projections %d", f.ProjectedEndBalance, len(f.RecurringItems), len(f.Projections))
	}
	// 30 days (to Jun 19): pay May 31, Jun 15 = 1000; rent 800; subs May 21, 28, Jun 4, 11, 18 = 50.
	p30 := f.Projections[0]
	if p30.PeriodDays != 30 || !p30.ExpectedIncome.Equal(dec("1000")) || !p30.ExpectedExpenses.Equal(dec("850")) ||
		!p30.NetCashFlow.Equal(dec("150")) || !p30.ProjectedBalance.Equal(dec("1150")) {
		t.Errorf("30 days %+v", p30)
	}
	unknown := recurring.ForecastCashFlow(rules, nil, "USD", today, 14)
	if unknown.StartingBalanceAvailable || unknown.StartingBalance != nil || unknown.ProjectedEndBalance != nil ||
		unknown.Points[0].ProjectedBalance != nil || unknown.Projections[0].ProjectedBalance != nil ||
		!unknown.Projections[0].ExpectedIncome.Equal(dec("1000")) {
		t.Errorf("unknown start: %+v", unknown.Projections[0])
	}
}

func TestCashFlowForecastService(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	res, err := e.recurring.GetCashFlowForecast(ctx, e.read, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	f := res.Data
	// The starting balance is the USD cash the grant shows: checking + savings.
	accts, err := e.svc.ListAccounts(ctx, e.read, finance.PageQuery{})
	if err != nil {
		t.Fatal(err)
	}
	cash := decimal.Zero
	for _, a := range accts.Data {
		if a.Type == finance.AccountDepository && a.Currency == "USD" {
			cash = cash.Add(a.Balance.Amount)
		}
	}
	if !f.StartingBalanceAvailable || !f.StartingBalance.Equal(cash) || f.Currency != "USD" || len(f.Points) != 90 || res.Filtered {
		t.Fatalf("forecast: start %v (cash %s), %d points, filtered %v", f.StartingBalance, cash, len(f.Points), res.Filtered)
	}
	// Checking's rules: salary, mortgage, electricity, internet.
	if len(f.RecurringItems) != 4 {
		t.Errorf("items %+v", f.RecurringItems)
	}
	bal := cash
	for _, p := range f.Points {
		bal = bal.Add(p.Income).Sub(p.Expenses)
		if !p.ProjectedBalance.Equal(bal) {
			t.Fatalf("%s: %s, want %s", p.Date, p.ProjectedBalance, bal)
		}
	}
	if !f.ProjectedEndBalance.Equal(bal) || !f.Projections[2].ProjectedBalance.Equal(bal) {
		t.Errorf("end %s, 90-day %s, want %s", f.ProjectedEndBalance, f.Projections[2].ProjectedBalance, bal)
	}

	// The redacted grant hides the brokerage and Health: no cash figure
	// changes; the Rocket Mortgage stream loses its merchant.
	red, err := e.recurring.GetCashFlowForecast(ctx, e.redacted, 30, "")
	if err != nil || red.Filtered || len(red.RedactedFields) != 1 {
		t.Fatalf("redacted: %v %v %v", red.Filtered, red.RedactedFields, err)
	}
	for _, it := range red.Data.RecurringItems {
		if it.Amount.Equal(dec("-2145.67")) && it.Merchant != "" {
			t.Errorf("mortgage merchant %q", it.Merchant)
		}
	}
	// A grant hiding savings: filtered, and the start is checking alone.
	g := finance.Grant{ID: uuid.NewString(), UserID: e.demo.UserID, CreatedAt: now, ExcludedAccountIDs: []string{e.demo.AccountIDs.Savings}}
	if err := e.store.CreateGrant(ctx, g); err != nil {
		t.Fatal(err)
	}
	hiding := finance.Caller{UserID: e.demo.UserID, GrantID: g.ID, OwnerAccountID: tenant}
	h, err := e.recurring.GetCashFlowForecast(ctx, hiding, 30, "")
	if err != nil || !h.Filtered {
		t.Fatalf("hiding savings: %v %v", h.Filtered, err)
	}
	_, err = e.recurring.GetCashFlowForecast(ctx, hiding, 30, e.demo.AccountIDs.Savings)
	wantProblem(t, err, problem.NotFound, "")

	// One account, and an account that never reported a balance.
	eur, err := e.recurring.GetCashFlowForecast(ctx, e.read, 10, e.demo.AccountIDs.EuroChecking)
	if err != nil || eur.Data.Currency != "EUR" || !eur.Data.StartingBalanceAvailable || len(eur.Data.Points) != 10 {
		t.Fatalf("eur: %+v %v", eur.Data, err)
	}
	fresh := finance.Account{ID: uuid.NewString(), UserID: e.demo.UserID, ConnectionID: e.demo.ConnectionIDs.Manual,
		Name: "New account", Type: finance.AccountDepository, Currency: "USD", CreatedAt: now, UpdatedAt: now}
	if err := e.store.CreateAccount(ctx, fresh); err != nil {
		t.Fatal(err)
	}
	nb, err := e.recurring.GetCashFlowForecast(ctx, e.read, 10, fresh.ID)
	if err != nil || nb.Data.StartingBalanceAvailable || nb.Data.StartingBalance != nil || nb.Data.Points[0].ProjectedBalance != nil {
		t.Fatalf("no balance: %+v %v", nb.Data, err)
	}
	for _, n := range []int32{-1, 366} {
		_, err := e.recurring.GetCashFlowForecast(ctx, e.read, n, "")
		wantProblem(t, err, problem.InvalidInput, "days_ahead")
	}
	_, err = e.recurring.GetCashFlowForecast(ctx, e.read, 0, "checking")
	wantProblem(t, err, problem.InvalidInput, "account_id")
}
