package finance_test

import (
	"context"
	"testing"
	"time"

	"github.com/ledgerlane/platform/services/finance/debt"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/services/finance"
)

// debtGrant adds a grant that hides the mortgage and the Housing category
// (and with it Loan Interest).
func debtGrant(t *testing.T, e env) finance.Caller {
	t.Helper()
	g := finance.Grant{ID: uuid.NewString(), UserID: e.demo.UserID, CreatedAt: now,
		ExcludedAccountIDs:  []string{e.demo.AccountIDs.Mortgage},
		ExcludedCategoryIDs: []string{e.demo.CategoryIDs["Housing"]}}
	if err := e.store.CreateGrant(context.Background(), g); err != nil {
		t.Fatal(err)
	}
	return finance.Caller{UserID: e.demo.UserID, GrantID: g.ID, OwnerAccountID: tenant}
}

// expectedSummary recomputes the USD debt summary from what the grant shows
// through the other routes: GET /v1/accounts and GET /v1/transactions.
func expectedSummary(t *testing.T, e env, c finance.Caller) debt.DebtCurrencySummary {
	t.Helper()
	ctx := context.Background()
	accts, err := e.svc.ListAccounts(ctx, c, finance.PageQuery{PageSize: size(finance.MaxPageSize)})
	if err != nil {
		t.Fatal(err)
	}
	ls, err := e.store.ListLiabilities(ctx, e.demo.UserID)
	if err != nil {
		t.Fatal(err)
	}
	terms := map[string]debt.Liability{}
	for _, l := range ls {
		terms[l.AccountID] = l
	}
	want := debt.DebtCurrencySummary{Currency: "USD"}
	debtAccounts := map[string]bool{}
	for _, a := range accts.Data {
		if !debt.IsDebtAccount(a.Type) {
			continue
		}
		debtAccounts[a.ID] = true
		if a.Balance.Amount.IsPositive() {
			want.TotalDebt = want.TotalDebt.Add(a.Balance.Amount)
			want.DebtCount++
			if l, ok := terms[a.ID]; ok && l.RateOn(now) != nil {
				want.EstimatedMonthlyInterest = want.EstimatedMonthlyInterest.Add(
					a.Balance.Amount.Mul(*l.RateOn(now)).Div(decimal.NewFromInt(1200)).RoundBank(2))
				want.EstimatedInterestDebtCount++
			}
		}
	}
	rows := all(t, e, c, finance.TransactionQuery{CategoryID: e.demo.CategoryIDs["Loan Interest"],
		StartDate: "2026-01-01", EndDate: now.Format(finance.DateLayout)})
	charged := map[string]bool{}
	for _, r := range rows {
		if debtAccounts[r.AccountID] {
			want.TotalYTDInterestPaid = want.TotalYTDInterestPaid.Sub(r.Amount.Amount)
			charged[r.AccountID] = true
		}
	}
	want.YTDInterestDebtCount = len(charged)
	return want
}

func TestDebtSummaryReconciles(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	hiding := debtGrant(t, e)
	for _, tc := range []struct {
		name     string
		c        finance.Caller
		filtered bool
	}{
		{"read", e.read, false},
		{"redacted (excludes the brokerage and Health: no debt figure changes)", e.redacted, false},
		{"hides the mortgage and Housing", hiding, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := e.debt.GetDebtSummary(ctx, tc.c)
			if err != nil {
				t.Fatal(err)
			}
			if res.Filtered != tc.filtered || len(res.Data.Summaries) != 1 {
				t.Fatalf("filtered %v, summaries %+v", res.Filtered, res.Data.Summaries)
			}
			got, want := res.Data.Summaries[0], expectedSummary(t, e, tc.c)
			if got.Currency != want.Currency || !got.TotalDebt.Equal(want.TotalDebt) || got.DebtCount != want.DebtCount ||
				!got.TotalYTDInterestPaid.Equal(want.TotalYTDInterestPaid) || got.YTDInterestDebtCount != want.YTDInterestDebtCount ||
				!got.EstimatedMonthlyInterest.Equal(want.EstimatedMonthlyInterest) ||
				got.EstimatedInterestDebtCount != want.EstimatedInterestDebtCount || res.Data.TotalDebtCount != want.DebtCount {
				t.Errorf("summary\n got %+v\nwant %+v", got, want)
			}
			t.Logf("%+v", got)
		})
	}
	read, _ := e.debt.GetDebtSummary(ctx, e.read)
	s := read.Data.Summaries[0]
	// The demo: two cards, the mortgage, a car loan and a student loan owe;
	// the mortgage and both loans were charged interest this year.
	if s.DebtCount != 5 || s.YTDInterestDebtCount != 3 || s.EstimatedInterestDebtCount != 5 {
		t.Errorf("demo summary %+v", s)
	}
	hidden, _ := e.debt.GetDebtSummary(ctx, hiding)
	if h := hidden.Data.Summaries[0]; h.DebtCount != 4 || !h.TotalYTDInterestPaid.IsZero() || h.YTDInterestDebtCount != 0 {
		t.Errorf("hidden summary %+v", h)
	}
}

func TestPayoffPlanService(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	ids := e.demo.AccountIDs
	loans := e.demo.Debts

	// A EUR loan and a USD one without terms, to be excluded.
	eur := finance.Account{ID: uuid.NewString(), UserID: e.demo.UserID, ConnectionID: e.demo.ConnectionIDs.Manual,
		Name: "Kfz-Kredit", Type: finance.AccountLoan, Currency: "EUR",
		Balance: finance.Money{Amount: dec("8000"), Currency: "EUR"}, CreatedAt: now, UpdatedAt: now}
	bare := finance.Account{ID: uuid.NewString(), UserID: e.demo.UserID, ConnectionID: e.demo.ConnectionIDs.Manual,
		Name: "Family loan", Type: finance.AccountLoan, Currency: "USD",
		Balance: finance.Money{Amount: dec("2000"), Currency: "USD"}, CreatedAt: now, UpdatedAt: now}
	for _, a := range []finance.Account{eur, bare} {
		if err := e.store.CreateAccount(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	apr := dec("3.5")
	if err := e.store.PutLiability(ctx, debt.Liability{AccountID: eur.ID, UserID: e.demo.UserID, APR: &apr,
		MinPaymentFloor: dec("150"), CreatedAt: now, UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}

	t.Run("input errors", func(t *testing.T) {
		unknown := uuid.NewString()
		tests := []struct {
			name  string
			req   debt.PayoffRequest
			field string
		}{
			{"no strategy", debt.PayoffRequest{TotalMonthlyBudget: "500"}, "strategy"},
			{"bad strategy", debt.PayoffRequest{Strategy: "fastest", TotalMonthlyBudget: "500"}, "strategy"},
			{"no amount", debt.PayoffRequest{Strategy: "avalanche"}, "total_monthly_budget"},
			{"both amounts", debt.PayoffRequest{Strategy: "avalanche", TotalMonthlyBudget: "500", ExtraMonthlyPay: "5"}, "total_monthly_budget"},
			{"negative budget", debt.PayoffRequest{Strategy: "avalanche", TotalMonthlyBudget: "-500"}, "total_monthly_budget"},
			{"zero budget", debt.PayoffRequest{Strategy: "avalanche", TotalMonthlyBudget: "0"}, "total_monthly_budget"},
			{"exponent", debt.PayoffRequest{Strategy: "avalanche", TotalMonthlyBudget: "5e2"}, "total_monthly_budget"},
			{"not a number", debt.PayoffRequest{Strategy: "avalanche", ExtraMonthlyPay: "lots"}, "extra_monthly_payment"},
			{"too precise", debt.PayoffRequest{Strategy: "avalanche", ExtraMonthlyPay: "10.001"}, "extra_monthly_payment"},
			{"huge", debt.PayoffRequest{Strategy: "avalanche", ExtraMonthlyPay: "1000000000000.01"}, "extra_monthly_payment"},
			{"bad id", debt.PayoffRequest{Strategy: "avalanche", TotalMonthlyBudget: "500", LiabilityIDs: []string{"card"}}, "liability_ids[0]"},
			{"repeated id", debt.PayoffRequest{Strategy: "avalanche", TotalMonthlyBudget: "500",
				LiabilityIDs: []string{ids.Mortgage, ids.Mortgage}}, "liability_ids[1]"},
			{"custom without order", debt.PayoffRequest{Strategy: "custom", TotalMonthlyBudget: "500"}, "custom_order"},
			{"order without custom", debt.PayoffRequest{Strategy: "snowball", TotalMonthlyBudget: "500",
				CustomOrder: []string{ids.Mortgage}}, "custom_order"},
			{"order outside the ids", debt.PayoffRequest{Strategy: "custom", TotalMonthlyBudget: "500",
				LiabilityIDs: []string{ids.Mortgage}, CustomOrder: []string{unknown}}, "custom_order"},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				_, err := e.debt.CreatePayoffPlan(ctx, e.read, tc.req)
				wantProblem(t, err, problem.InvalidInput, tc.field)
			})
		}
	})

	t.Run("every debt with terms by default", func(t *testing.T) {
		res, err := e.debt.CreatePayoffPlan(ctx, e.read, debt.PayoffRequest{Strategy: "avalanche", ExtraMonthlyPay: "500"})
		if err != nil {
			t.Fatal(err)
		}
		p := res.Data
		// The EUR loan has terms too, but the plan is in USD (its first debt's).
		if len(p.Debts) != 5 || len(p.Excluded) != 1 || p.Excluded[0] != (debt.PayoffExcluded{LiabilityID: eur.ID,
			Reason: debt.ExcludedCurrencyMismatch}) || p.Currency != "USD" || !p.PlanFeasible || p.BudgetInsufficient ||
			p.DebtFreeDate == nil || !p.InterestSavedVsMinimum.IsPositive() || res.Filtered {
			t.Fatalf("plan: %d debts, excluded %v, feasible %v", len(p.Debts), p.Excluded, p.PlanFeasible)
		}
		// The highest APR (the Sapphire card at 24.99 %) takes the extra 500
		// in month 1: with its interest, more than that is paid on it.
		acct, err := e.store.GetAccount(ctx, e.demo.UserID, ids.CreditCard)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range p.Timeline[0].Balances {
			paid := acct.Balance.Amount.Add(debt.MonthlyInterest(acct.Balance.Amount, dec("24.99"), "USD")).Sub(b.Balance)
			if b.LiabilityID == ids.CreditCard && !paid.GreaterThan(dec("500")) {
				t.Errorf("card %s → %s in month 1", acct.Balance.Amount, b.Balance)
			}
		}
	})

	t.Run("exclusions", func(t *testing.T) {
		unknown := uuid.NewString()
		hiding := debtGrant(t, e)
		res, err := e.debt.CreatePayoffPlan(ctx, hiding, debt.PayoffRequest{Strategy: "custom", TotalMonthlyBudget: "4000",
			LiabilityIDs: []string{loans.CarLoan, eur.ID, bare.ID, unknown, ids.Mortgage, ids.Checking, loans.StudentLoan},
			CustomOrder:  []string{loans.StudentLoan}})
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]string{eur.ID: debt.ExcludedCurrencyMismatch, bare.ID: debt.ExcludedNoAPR,
			unknown: debt.ExcludedNotFound, ids.Mortgage: debt.ExcludedNotFound, ids.Checking: debt.ExcludedNotFound}
		if len(res.Data.Excluded) != len(want) || !res.Filtered || len(res.Data.Debts) != 2 {
			t.Fatalf("excluded %+v filtered %v debts %d", res.Data.Excluded, res.Filtered, len(res.Data.Debts))
		}
		for _, x := range res.Data.Excluded {
			if want[x.LiabilityID] != x.Reason {
				t.Errorf("%s excluded for %s, want %s", x.LiabilityID, x.Reason, want[x.LiabilityID])
			}
		}
		for _, d := range res.Data.Debts {
			if (d.LiabilityID == loans.StudentLoan) != (d.PayoffOrder == 1) {
				t.Errorf("custom order not followed: %+v", d)
			}
		}
	})

	t.Run("all debts under a grant hiding one", func(t *testing.T) {
		res, err := e.debt.CreatePayoffPlan(ctx, debtGrant(t, e), debt.PayoffRequest{Strategy: "avalanche", ExtraMonthlyPay: "100"})
		if err != nil || !res.Filtered || len(res.Data.Debts) != 4 {
			t.Fatalf("filtered %v, %d debts, %v", res.Filtered, len(res.Data.Debts), err)
		}
	})

	t.Run("the clock sets the first month", func(t *testing.T) {
		kernel := finance.NewService(finance.Config{Store: e.store, Clock: func() time.Time { return time.Date(2027, 12, 31, 23, 0, 0, 0, time.UTC) }})
		later := debt.NewService(debt.Config{Kernel: kernel, Store: e.store})
		res, err := later.CreatePayoffPlan(ctx, e.read, debt.PayoffRequest{Strategy: "snowball", ExtraMonthlyPay: "100",
			LiabilityIDs: []string{loans.CarLoan}})
		if err != nil {
			t.Fatal(err)
		}
		if res.Data.Timeline[0].Month != "2028-01" {
			t.Errorf("first month %s", res.Data.Timeline[0].Month)
		}
	})
}
