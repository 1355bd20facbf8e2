package seed

import (
	"context"
	"fmt"
	"time"

	"github.com/shopspring/decimal"

	"github.com/ledgerlane/platform/services/finance"
	"github.com/ledgerlane/platform/services/finance/budgets"
)

// DemoBudgets names the demo user's budgets and goals.
type DemoBudgets struct {
	// Active is an envelope budget on calendar months, created three
	// months before the current one (so rollover runs over three closed
	// periods).
	Active string
	// Archived are a 50/30/20 budget on months from the 15th (archived when
	// Active was made) and a biweekly pay-yourself-first budget before it.
	Archived []string
	// Goals by name: "emergency" (account-driven on savings), "mortgage"
	// (debt payoff on the mortgage: the target is what was owed when the
	// goal started), "retirement" (account-driven on the
	// brokerage only: hidden under the redacted grant), "laptop"
	// (budget-driven, with a spending-plan line that covers the Apple
	// Store anomaly) and "japan" (manual, completed).
	Goals map[string]string
	// Anomalies: the two unusual spends of the current month: "apple"
	// (covered by the laptop goal) and "costco" (flagged).
	Anomalies map[string]string
}

// demoPlans holds what budgetsAndGoals made, for write.
type demoPlans struct {
	budgets []budgets.Budget
	goals   []budgets.Goal
}

// demoAnomalies adds the current month's two unusual spends.
func (b *builder) demoAnomalies() {
	d := b.today.AddDate(0, 0, -2)
	if d.Month() != b.today.Month() {
		d = b.today
	}
	b.demo.Budgets.Anomalies = map[string]string{}
	b.demo.Budgets.Anomalies["apple"] = b.add(txSpec{acct: b.card, date: d, amount: decimal.RequireFromString("-1899.00"),
		m:        merchant{name: "Apple Store", display: "Apple", descriptor: "APPLE STORE #R090 PORTLAND OR", channel: "in store"},
		category: "Shopping"})
	b.demo.Budgets.Anomalies["costco"] = b.add(txSpec{acct: b.card, date: d, amount: decimal.RequireFromString("-612.40"),
		m:        merchant{name: "Costco", display: "Costco", descriptor: "COSTCO WHSE #0008 CLACKAMAS OR", channel: "in store"},
		category: "Groceries"})
}

// monthlyAverages averages the three full months before the month of at,
// as finance.Service does for a method switch: spend per top-level category
// (the savings category on its own) and income.
func (b *builder) monthlyAverages(at time.Time) (map[string]decimal.Decimal, decimal.Decimal) {
	end := time.Date(at.Year(), at.Month(), 1, 0, 0, 0, 0, time.UTC)
	start := end.AddDate(0, -3, 0)
	parent, tag := map[string]string{}, map[string]string{}
	for _, c := range b.categories {
		parent[c.ID], tag[c.ID] = c.ParentID, c.TypeTag
	}
	savings := b.demo.CategoryIDs["Savings & Investments"]
	spend := map[string]decimal.Decimal{}
	var income decimal.Decimal
	for _, t := range b.txs {
		if t.Date.Before(start) || !t.Date.Before(end) || t.Amount.Currency != "USD" || t.CategoryID == "" ||
			(t.TransferPairID != "" && t.Amount.Amount.IsPositive()) {
			continue
		}
		top := t.CategoryID
		if parent[top] != "" && top != savings {
			top = parent[top]
		}
		if tag[t.CategoryID] == finance.CategoryIncome || tag[parent[t.CategoryID]] == finance.CategoryIncome {
			income = income.Add(t.Amount.Amount)
			continue
		}
		spend[top] = spend[top].Sub(t.Amount.Amount)
	}
	for k, v := range spend {
		spend[k] = v.Div(decimal.NewFromInt(3))
	}
	return spend, income.Div(decimal.NewFromInt(3)).Round(2)
}

// budgetsAndGoals makes the demo's budgets (one active, two archived) and
// goals.
func (b *builder) budgetsAndGoals() {
	thisMonth := time.Date(b.today.Year(), b.today.Month(), 1, 0, 0, 0, 0, time.UTC)
	type spec struct {
		key, method, period string
		created             time.Time
	}
	specs := []spec{
		{"pyf", budgets.MethodPayYourselfFirst, budgets.PeriodBiweekly, thisMonth.AddDate(0, -20, 0)},
		{"503020", budgets.MethodFiftyThirtyTwenty, budgets.PeriodMonthlyAnchored, thisMonth.AddDate(0, -11, 0)},
		{"envelope", budgets.MethodEnvelope, budgets.PeriodMonthly, thisMonth.AddDate(0, -3, 0)},
	}
	for i, s := range specs {
		created := s.created.Add(10 * time.Hour)
		spend, income := b.monthlyAverages(created)
		n := 0
		newID := func() string { n++; return b.id(fmt.Sprintf("budget/%s/%d", s.key, n)) }
		bud := budgets.NewBudget(budgets.BudgetTemplate{Method: s.method, UserID: b.user.ID, Currency: "USD",
			Categories: b.categories, MonthlySpend: spend, MonthlyIncome: &income, NewID: newID, Now: created})
		bud.PeriodType = s.period
		switch s.period {
		case budgets.PeriodBiweekly:
			bud.PeriodAnchorDate = time.Date(created.Year(), created.Month(), 1, 0, 0, 0, 0, time.UTC)
		case budgets.PeriodMonthlyAnchored:
			bud.PeriodAnchorDay = 15
		}
		if i+1 < len(specs) {
			archived := specs[i+1].created.Add(10 * time.Hour)
			bud.IsActive, bud.ArchivedAt, bud.UpdatedAt, bud.Version = false, &archived, archived, 2
			b.demo.Budgets.Archived = append(b.demo.Budgets.Archived, bud.ID)
		} else {
			b.demo.Budgets.Active = bud.ID
		}
		b.plans.budgets = append(b.plans.budgets, bud)
	}
	active := b.plans.budgets[len(b.plans.budgets)-1]
	var savingsItem string
	for _, g := range active.Groups {
		for _, it := range g.Items {
			if it.CategoryID == b.demo.CategoryIDs["Savings & Investments"] {
				savingsItem = it.ID
			}
		}
	}

	dec := decimal.RequireFromString
	date := func(months int) *time.Time { d := thisMonth.AddDate(0, months, 0); return &d }
	created := thisMonth.AddDate(0, -5, 0).Add(9 * time.Hour)
	b.demo.Budgets.Goals = map[string]string{}
	goal := func(key string, g budgets.Goal) {
		g.ID, g.UserID, g.Version = b.id("goal/"+key), b.user.ID, 1
		if g.Currency == "" {
			g.Currency = "USD"
		}
		if g.Status == "" {
			g.Status = budgets.GoalActive
		}
		if g.CreatedAt.IsZero() {
			g.CreatedAt = created
		}
		g.UpdatedAt = g.CreatedAt
		if g.CompletedAt != nil {
			g.UpdatedAt = *g.CompletedAt
		}
		b.demo.Budgets.Goals[key] = g.ID
		b.plans.goals = append(b.plans.goals, g)
	}
	goal("emergency", budgets.Goal{Name: "Emergency fund", Description: "Six months of expenses",
		GoalType: budgets.GoalSavings, TargetAmount: dec("60000.00"), TargetDate: date(24),
		FundingSourceType: budgets.FundingAccount, TrackingMode: budgets.TrackAccountDriven, SortOrder: 1, ShowInDigest: true,
		AccountLinks: []budgets.GoalAccountLink{{AccountID: b.savings.ID, LinkRole: budgets.LinkRoleFunding}}})
	goal("laptop", budgets.Goal{Name: "New laptop", Description: "Replace the 2017 MacBook",
		GoalType: budgets.GoalPurchase, TargetAmount: dec("2400.00"), CurrentAmount: dec("600.00"), TargetDate: date(4),
		FundingSourceType: budgets.FundingBudget, TrackingMode: budgets.TrackBudgetDriven, SortOrder: 2, ShowInDigest: true,
		BudgetLinks:  []budgets.GoalBudgetLink{{BudgetItemID: savingsItem, ContributionAmount: dec("150.00"), IsActive: true}},
		SpendingPlan: []budgets.GoalPlanLine{{Name: "MacBook Pro", CategoryID: b.demo.CategoryIDs["Shopping"], PlannedAmount: dec("2000.00")}}})
	// A payoff goal's target is what was owed when it started.
	owedAtStart := b.mortgage.Balance.Amount
	for _, t := range b.txs {
		if t.AccountID == b.mortgage.ID && !t.Date.Before(finance.Day(created)) {
			owedAtStart = owedAtStart.Add(t.Amount.Amount)
		}
	}
	goal("mortgage", budgets.Goal{Name: "Pay off the mortgage", GoalType: budgets.GoalDebtPayoff,
		TargetAmount: owedAtStart, TargetDate: date(240), FundingSourceType: budgets.FundingAccount,
		TrackingMode: budgets.TrackAccountDriven, SortOrder: 3,
		AccountLinks: []budgets.GoalAccountLink{{AccountID: b.mortgage.ID, LinkRole: budgets.LinkRolePayoff}}})
	goal("retirement", budgets.Goal{Name: "Brokerage to 100k", GoalType: budgets.GoalSavings,
		TargetAmount: dec("100000.00"), TargetDate: date(72), FundingSourceType: budgets.FundingAccount,
		TrackingMode: budgets.TrackAccountDriven, SortOrder: 4,
		AccountLinks: []budgets.GoalAccountLink{{AccountID: b.brokerage.ID, LinkRole: budgets.LinkRoleFunding}}})
	done := thisMonth.AddDate(0, -2, 3).Add(14 * time.Hour)
	goal("japan", budgets.Goal{Name: "Japan trip", GoalType: budgets.GoalSavings, Status: budgets.GoalCompleted,
		TargetAmount: dec("4000.00"), CurrentAmount: dec("4200.00"), TargetDate: date(-1),
		FundingSourceType: budgets.FundingManual, TrackingMode: budgets.TrackManual, SortOrder: 5,
		CreatedAt: thisMonth.AddDate(-1, 0, 0).Add(9 * time.Hour), CompletedAt: &done})
}

func (b *builder) writeBudgets(ctx context.Context, s Store) error {
	for _, bud := range b.plans.budgets {
		if err := s.CreateBudget(ctx, bud); err != nil {
			return fmt.Errorf("seed: budget: %w", err)
		}
	}
	for _, g := range b.plans.goals {
		if err := s.CreateGoal(ctx, g); err != nil {
			return fmt.Errorf("seed: goal: %w", err)
		}
	}
	return nil
}
