package budgets

import (
	"time"

	"github.com/shopspring/decimal"

	"github.com/ledgerlane/platform/services/finance"
)

// Goal statuses, types, tracking modes and link roles (ours; the spec gives
// only budget_driven).
const (
	GoalActive    = "active"
	GoalPaused    = "paused"
	GoalCompleted = "completed"

	GoalSavings    = "savings"
	GoalPurchase   = "purchase"
	GoalDebtPayoff = "debt_payoff"

	// TrackManual: current_amount is what the user last entered.
	TrackManual = "manual"
	// TrackAccountDriven: current_amount is the balances of the linked
	// funding accounts, plus, for payoff links, target_amount minus what
	// the payoff accounts still owe (the target being what was owed when
	// the goal started), never below zero.
	TrackAccountDriven = "account_driven"
	// TrackBudgetDriven: current_amount is the amount saved before tracking
	// plus, for each month since the goal was created, each active budget
	// link's contribution: what moved through the linked item's category
	// that month, up to the link's contribution_amount.
	TrackBudgetDriven = "budget_driven"

	FundingAccount = "account"
	FundingBudget  = "budget"
	FundingManual  = "manual"

	LinkRoleFunding = "funding" // the account holds the goal's money
	LinkRolePayoff  = "payoff"  // the account is the debt being paid off
)

// Goal is a savings, purchase or debt-payoff goal.
type Goal struct {
	ID                string
	UserID            string
	Name              string
	Description       string
	GoalType          string
	Status            string
	TargetAmount      decimal.Decimal
	CurrentAmount     decimal.Decimal // manual: the amount; budget_driven: saved before tracking
	Currency          string
	TargetDate        *time.Time
	FundingSourceType string
	TrackingMode      string
	SortOrder         int32
	ShowInDigest      bool
	AccountLinks      []GoalAccountLink
	BudgetLinks       []GoalBudgetLink
	SpendingPlan      []GoalPlanLine
	Version           int64
	CreatedAt         time.Time
	UpdatedAt         time.Time
	CompletedAt       *time.Time
	// LastWrite fingerprints the last PATCH under an Idempotency-Key
	// (write_mark.go); nil when the last PATCH had none. Not on the wire.
	LastWrite *finance.WriteMark
}

// NilEmptyLinks makes each empty link list nil: a goal without links is
// stored, read and compared the same whichever store it went through.
func (g *Goal) NilEmptyLinks() {
	if len(g.AccountLinks) == 0 {
		g.AccountLinks = nil
	}
	if len(g.BudgetLinks) == 0 {
		g.BudgetLinks = nil
	}
	if len(g.SpendingPlan) == 0 {
		g.SpendingPlan = nil
	}
}

// GoalAccountLink ties a goal to an account. AccountType is filled in from
// the account when read.
type GoalAccountLink struct {
	AccountID   string `json:"account_id"`
	AccountType string `json:"account_type,omitempty"`
	LinkRole    string `json:"link_role"`
}

// GoalBudgetLink ties a goal to a budget item that funds it.
type GoalBudgetLink struct {
	BudgetItemID       string          `json:"budget_item_id"`
	ContributionAmount decimal.Decimal `json:"contribution_amount"`
	IsActive           bool            `json:"is_active"`
}

// GoalPlanLine is one line of a goal's spending plan: spend in its category
// up to PlannedAmount per budget period is the goal's, not the budget's.
type GoalPlanLine struct {
	Name          string          `json:"name"`
	CategoryID    string          `json:"category_id"`
	PlannedAmount decimal.Decimal `json:"planned_amount"`
}

// GoalPosition is the keyset position of ListGoals: sort order, then id.
type GoalPosition struct {
	SortOrder int32
	ID        string
}

// GoalProgress is a goal's computed progress.
type GoalProgress struct {
	CurrentAmount   decimal.Decimal
	TargetAmount    decimal.Decimal
	RemainingAmount decimal.Decimal
	// ProgressPct is current / target × 100, exact; nil for a zero target.
	ProgressPct               *decimal.Decimal
	MonthlyContributionNeeded *decimal.Decimal // nil without a target date
	MonthlyShortfall          *decimal.Decimal // nil without a target date
	DaysRemaining             *int
	ProjectedCompletionDate   *time.Time
	LastContributionAt        *time.Time
}

// GoalFacts are the measured inputs of a goal's progress.
type GoalFacts struct {
	Current decimal.Decimal
	// MonthlyContributions are the last three full calendar months'
	// contributions, oldest first.
	MonthlyContributions []decimal.Decimal
	LastContributionAt   *time.Time
}

// ComputeGoalProgress derives a goal's progress from its measured facts:
//   - remaining = max(target − current, 0);
//   - monthly_contribution_needed = remaining / the whole months from today
//     to target_date (at least 1), rounded up to the minor unit;
//   - the contribution rate is the mean of the last three full months'
//     contributions; monthly_shortfall = max(needed − rate, 0);
//   - projected_completion_date = today + ceil(remaining / rate) months,
//     absent when the rate is zero or negative (or nothing remains);
//   - days_remaining = days from today to target_date, never negative.
func ComputeGoalProgress(g Goal, f GoalFacts, today time.Time) GoalProgress {
	today = finance.Day(today)
	places := finance.MinorUnit(g.Currency)
	p := GoalProgress{CurrentAmount: f.Current, TargetAmount: g.TargetAmount, LastContributionAt: f.LastContributionAt}
	p.RemainingAmount = decimal.Max(g.TargetAmount.Sub(f.Current), decimal.Zero)
	if g.TargetAmount.IsPositive() {
		pct := f.Current.Mul(decNum(100)).Div(g.TargetAmount)
		p.ProgressPct = &pct
	}
	var rate decimal.Decimal
	if n := len(f.MonthlyContributions); n > 0 {
		for _, c := range f.MonthlyContributions {
			rate = rate.Add(c)
		}
		rate = rate.Div(decNum(int64(n)))
	}
	if g.TargetDate != nil {
		target := finance.Day(*g.TargetDate)
		days := int(target.Sub(today).Hours() / 24)
		if days < 0 {
			days = 0
		}
		p.DaysRemaining = &days
		months := WholeMonths(today, target)
		if months < 1 {
			months = 1
		}
		need := ceilTo(p.RemainingAmount.Div(decNum(int64(months))), places)
		short := decimal.Max(need.Sub(rate), decimal.Zero).Round(places)
		p.MonthlyContributionNeeded, p.MonthlyShortfall = &need, &short
	}
	if rate.IsPositive() && p.RemainingAmount.IsPositive() {
		months := p.RemainingAmount.Div(rate).Ceil().IntPart()
		if months <= 1200 { // a century out is no projection
			d := today.AddDate(0, int(months), 0)
			p.ProjectedCompletionDate = &d
		}
	}
	return p
}

// WholeMonths counts the whole calendar months from a to b (0 when b is
// not a month after a).
func WholeMonths(a, b time.Time) int {
	n := (b.Year()-a.Year())*12 + int(b.Month()) - int(a.Month())
	for n > 0 && a.AddDate(0, n, 0).After(b) {
		n--
	}
	if n < 0 {
		return 0
	}
	return n
}

// ceilTo rounds d up (away from zero for positives) to places digits.
func ceilTo(d decimal.Decimal, places int32) decimal.Decimal {
	return d.Shift(places).Ceil().Shift(-places)
}
