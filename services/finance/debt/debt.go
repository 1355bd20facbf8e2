// Package debt is the finance subdomain of liabilities: the terms of each
// debt account (APR, promotional rate, minimum payment rule), the debt
// summary (GET /v1/debt/summary) and the payoff simulation (POST
// /v1/debt/payoff-plan), with its exact minor-unit arithmetic.
//
// It owns its Store (liability terms) and reads the kernel's accounts,
// categories and rows; it imports the finance root (the kernel) and no
// other subdomain. Its memory and postgres parts are memory/debt.go and
// postgres/debt.go, checked by conformance/debt.go.
package debt

import (
	"cmp"
	"math"
	"math/bits"
	"slices"
	"time"

	"github.com/ledgerlane/platform/services/finance"
	"github.com/shopspring/decimal"
)

// Liability is what a payoff needs to know about one debt account (a credit
// or loan account) beyond its balance and currency, which the account
// carries. Its id is the account's id: one account is one debt, so the
// liability_id of the debt routes is an account id.
//
// The minimum payment rule: each month, after interest, the minimum is
// max(MinPaymentFloor, MinPaymentPercent % of the balance, rounded half-even
// to the minor unit), capped at what is owed. A loan's fixed installment is
// a floor with no percent; a card's "2 % or $35" is both.
type Liability struct {
	AccountID string
	UserID    string
	// APR is the annual percentage rate in percent ("24.99"); nil when the
	// institution did not report one.
	APR *decimal.Decimal
	// PromoAPR applies on payment dates up to and including PromoEndsOn.
	PromoAPR          *decimal.Decimal
	PromoEndsOn       *time.Time // a date; required with PromoAPR
	MinPaymentFloor   decimal.Decimal
	MinPaymentPercent decimal.Decimal
	CreatedAt         time.Time
	UpdatedAt         time.Time
}

// IsDebtAccount reports whether accounts of type t are debts.
func IsDebtAccount(t string) bool { return t == finance.AccountCredit || t == finance.AccountLoan }

// RateOn is the APR (percent) in effect on date d: the promotional rate up to
// its end date, the regular one after; nil when no APR is known.
func (l Liability) RateOn(d time.Time) *decimal.Decimal {
	if l.PromoAPR != nil && l.PromoEndsOn != nil && !finance.Day(d).After(finance.Day(*l.PromoEndsOn)) {
		return l.PromoAPR
	}
	return l.APR
}

// InterestChargeCategoryName names the system category of interest charges:
// a row on a debt account in it (or in a subcategory of it) is an interest
// charge, counted by the debt summary's year-to-date interest.
const InterestChargeCategoryName = "Loan Interest"

// MonthlyInterest is one month's interest on balance at apr percent a year:
// balance × apr / 100 / 12, rounded half-even (banker's rounding) to the
// currency's minor unit. Computed exactly before the one rounding.
func MonthlyInterest(balance, apr decimal.Decimal, currency string) decimal.Decimal {
	unit := finance.MinorUnit(currency)
	return fromMinor(monthlyRate(apr).apply(toMinor(balance, unit)), unit)
}

// MinimumPayment is the minimum due on owed (the balance after this month's
// interest) under l's rule, capped at owed.
func (l Liability) MinimumPayment(owed decimal.Decimal, currency string) decimal.Decimal {
	if !owed.IsPositive() {
		return decimal.Zero
	}
	return decimal.Min(l.minimumDue(owed, currency), owed)
}

// minimumDue is the rule's minimum before the cap at what is owed.
func (l Liability) minimumDue(owed decimal.Decimal, currency string) decimal.Decimal {
	unit := finance.MinorUnit(currency)
	return decimal.Max(l.MinPaymentFloor, fromMinor(percentRate(l.MinPaymentPercent).apply(toMinor(owed, unit)), unit))
}

// DebtCurrencySummary is the debt summary of one currency.
type DebtCurrencySummary struct {
	Currency                   string
	TotalDebt                  decimal.Decimal
	DebtCount                  int
	TotalYTDInterestPaid       decimal.Decimal
	YTDInterestDebtCount       int
	EstimatedMonthlyInterest   decimal.Decimal
	EstimatedInterestDebtCount int
}

// DebtSummary is GET /v1/debt/summary.
type DebtSummary struct {
	Summaries      []DebtCurrencySummary // by currency code
	TotalDebtCount int
}

// DebtInput is one debt account with its liability terms (nil when none are
// stored) and its year-to-date interest charges (positive = charged).
type DebtInput struct {
	Account     finance.Account
	Liability   *Liability
	YTDInterest decimal.Decimal
	HadInterest bool // at least one interest-charge row this year
}

// SummarizeDebts computes the debt summary on date today. A debt counts in
// debt_count and total_debt when it owes (balance > 0); year-to-date
// interest counts every debt account that had charges, owing or not; the
// estimate is Σ per debt of MonthlyInterest(balance, APR in effect today).
func SummarizeDebts(debts []DebtInput, today time.Time) DebtSummary {
	by := map[string]*DebtCurrencySummary{}
	for _, d := range debts {
		cur := d.Account.Balance.Currency
		if cur == "" {
			cur = d.Account.Currency
		}
		s := by[cur]
		if s == nil {
			s = &DebtCurrencySummary{Currency: cur}
			by[cur] = s
		}
		bal := d.Account.Balance.Amount
		if bal.IsPositive() {
			s.TotalDebt = s.TotalDebt.Add(bal)
			s.DebtCount++
			if d.Liability != nil {
				if apr := d.Liability.RateOn(today); apr != nil {
					s.EstimatedMonthlyInterest = s.EstimatedMonthlyInterest.Add(MonthlyInterest(bal, *apr, cur))
					s.EstimatedInterestDebtCount++
				}
			}
		}
		if d.HadInterest {
			s.TotalYTDInterestPaid = s.TotalYTDInterestPaid.Add(d.YTDInterest)
			s.YTDInterestDebtCount++
		}
	}
	var out DebtSummary
	for _, s := range by {
		out.Summaries = append(out.Summaries, *s)
		out.TotalDebtCount += s.DebtCount
	}
	slices.SortFunc(out.Summaries, func(a, b DebtCurrencySummary) int { return cmp.Compare(a.Currency, b.Currency) })
	return out
}

// Payoff strategies.
const (
	StrategyAvalanche = "avalanche"
	StrategySnowball  = "snowball"
	StrategyCustom    = "custom"
)

// PayoffHorizonMonths caps a payoff simulation: 50 years.
const PayoffHorizonMonths = 600

// Reasons a requested liability is left out of a plan.
const (
	ExcludedNotFound         = "not_found"         // unknown, hidden by the grant, or not a debt account
	ExcludedCurrencyMismatch = "currency_mismatch" // owed in another currency than the plan's
	ExcludedNoAPR            = "no_apr"            // no interest rate known
	ExcludedNothingOwed      = "nothing_owed"      // balance zero or below
)

// PayoffDebt is one debt entering a simulation.
type PayoffDebt struct {
	ID        string
	Balance   decimal.Decimal // owed, > 0
	Liability Liability       // APR set
}

// PayoffInput is a plan request resolved against the user's debts.
type PayoffInput struct {
	Debts       []PayoffDebt
	Currency    string
	Strategy    string
	CustomOrder []string // strategy custom: ids first in this order
	// Exactly one of Budget (total per month) and Extra (on top of the
	// first month's minimums) is set.
	Budget *decimal.Decimal
	Extra  *decimal.Decimal
	// Today: month 1 of the plan is the calendar month after today's, its
	// payment made on the 1st.
	Today   time.Time
	Horizon int // 0: PayoffHorizonMonths
}

// PayoffDebtResult is one debt's outcome.
type PayoffDebtResult struct {
	LiabilityID          string
	PayoffMonth          int        // 0 when not paid off within the horizon
	PayoffDate           *time.Time // the payment date of the payoff month
	TotalInterest        decimal.Decimal
	TotalPaid            decimal.Decimal
	PayoffOrder          int // 1.. by payoff month, then strategy order; 0 if never
	NegativeAmortization bool
}

// PayoffTimelineEntry is the state after one month's payments.
type PayoffTimelineEntry struct {
	Month              string // YYYY-MM
	TotalBalance       decimal.Decimal
	CumulativeInterest decimal.Decimal
	Balances           []PayoffBalance // in the input's debt order
}

// PayoffBalance is one debt's balance in a timeline entry.
type PayoffBalance struct {
	LiabilityID string
	Balance     decimal.Decimal
}

// PayoffExcluded is a requested liability left out, with its reason.
type PayoffExcluded struct {
	LiabilityID string
	Reason      string
}

// PayoffPlan is a computed plan.
type PayoffPlan struct {
	Debts                  []PayoffDebtResult // in the input's order
	DebtFreeDate           *time.Time
	TotalInterest          decimal.Decimal
	TotalPaid              decimal.Decimal
	BaselineTotalInterest  decimal.Decimal
	InterestSavedVsMinimum decimal.Decimal
	MinimumRequiredBudget  decimal.Decimal
	Currency               string
	BudgetInsufficient     bool
	PlanFeasible           bool
	HorizonExceeded        bool
	Assumptions            []string
	Timeline               []PayoffTimelineEntry
	Excluded               []PayoffExcluded
}

// firstMinimums is Σ of the month-1 minimums (after month-1 interest).
func firstMinimums(in PayoffInput) decimal.Decimal {
	pay := paymentDate(in.Today, 1)
	var sum decimal.Decimal
	for _, d := range in.Debts {
		owed := d.Balance
		if r := d.Liability.RateOn(pay); r != nil {
			owed = owed.Add(MonthlyInterest(owed, *r, in.Currency))
		}
		sum = sum.Add(d.Liability.MinimumPayment(owed, in.Currency))
	}
	return sum
}

// paymentDate is the 1st of the k-th month after today's month.
func paymentDate(today time.Time, k int) time.Time {
	t := finance.Day(today)
	return time.Date(t.Year(), t.Month()+time.Month(k), 1, 0, 0, 0, 0, time.UTC)
}

// SimulatePayoff runs the month-by-month plan. Each month, in this order:
//  1. every open debt accrues MonthlyInterest on its opening balance at the
//     APR in effect on the payment date;
//  2. every open debt is due its minimum (MinimumPayment on the balance
//     after interest, capped at it); minimums are paid in target order
//     while the budget lasts;
//  3. what is left of the month's budget goes to the first open debt in
//     target order, up to what it owes, then the next, so money a payoff
//     frees rolls on in the same month.
//
// Target order: avalanche, the APR in effect that month, highest first
// (then smaller balance, then id); snowball, the starting balance, smallest
// first (then higher APR, then id); custom, CustomOrder, then the rest as
// avalanche. The budget is the same every month: a total, or the month-1
// minimums plus Extra.
func SimulatePayoff(in PayoffInput) PayoffPlan {
	horizon := in.Horizon
	if horizon <= 0 {
		horizon = PayoffHorizonMonths
	}
	plan := PayoffPlan{Currency: in.Currency, MinimumRequiredBudget: firstMinimums(in)}
	budget := plan.MinimumRequiredBudget
	if in.Budget != nil {
		budget = *in.Budget
	} else if in.Extra != nil {
		budget = budget.Add(*in.Extra)
	}
	plan.BudgetInsufficient = budget.LessThan(plan.MinimumRequiredBudget)

	res := simulate(in, horizon, &budget, true)
	base := simulate(in, horizon, nil, false)
	plan.Debts = res.debts
	plan.Timeline = res.timeline
	plan.TotalInterest, plan.TotalPaid = res.interest, res.paid
	plan.BaselineTotalInterest = base.interest
	plan.InterestSavedVsMinimum = base.interest.Sub(res.interest)
	plan.HorizonExceeded = !res.done
	plan.PlanFeasible = res.done && !plan.BudgetInsufficient && len(in.Debts) > 0
	if res.done && len(in.Debts) > 0 {
		d := paymentDate(in.Today, res.months)
		plan.DebtFreeDate = &d
	}
	plan.Assumptions = payoffAssumptions(in, horizon, plan, base.done)
	return plan
}

type simResult struct {
	debts    []PayoffDebtResult
	timeline []PayoffTimelineEntry
	interest decimal.Decimal
	paid     decimal.Decimal
	done     bool
	months   int
}

// The simulation runs in integer minor units (cents for USD): every amount
// it handles is a whole number of them (balances and budgets are rounded to
// the minor unit on the way in, interest and percent minimums are rounded
// half-even to it), so int64 arithmetic is exact and avoids a decimal
// allocation per operation. Rates are exact fractions: an APR with up to 6
// decimal places (more are rounded half-even to 6) over 1200 × 10^6.
// Products go through 128 bits (math/bits), so nothing overflows.

const rateScale = 1_000_000 // rates are kept to 6 decimal places

// frac is an exact rate num/den.
type frac struct{ num, den uint64 }

func monthlyRate(apr decimal.Decimal) frac {
	n := apr.Shift(6).RoundBank(0).IntPart()
	if n < 0 {
		n = 0
	}
	return frac{uint64(n), 1200 * rateScale}
}

func percentRate(pct decimal.Decimal) frac {
	n := pct.Shift(6).RoundBank(0).IntPart()
	if n < 0 {
		n = 0
	}
	return frac{uint64(n), 100 * rateScale}
}

// apply returns v × f rounded half-even to a whole minor unit.
func (f frac) apply(v int64) int64 {
	if v <= 0 || f.num == 0 {
		return 0
	}
	hi, lo := bits.Mul64(uint64(v), f.num)
	if hi >= f.den { // a quotient past 2^64: far beyond any real balance
		return math.MaxInt64 / 4
	}
	q, r := bits.Div64(hi, lo, f.den)
	if 2*r > f.den || (2*r == f.den && q%2 == 1) {
		q++
	}
	return int64(q)
}

// simDebt is a debt during a simulation, in minor units.
type simDebt struct {
	id        string
	start     int64
	balance   int64
	interest  int64
	paid      int64
	month     int
	negAm     bool
	floor     int64
	pct       frac
	regular   frac
	promo     frac
	promoEnds time.Time // zero: no promotion
	order     int       // payoff order, 0 while open
}

func (d *simDebt) rate(pay time.Time) frac {
	if !d.promoEnds.IsZero() && !pay.After(d.promoEnds) {
		return d.promo
	}
	return d.regular
}

// minimumDue is the rule's minimum on owed before the cap.
func (d *simDebt) minimumDue(owed int64) int64 {
	return max(d.floor, d.pct.apply(owed))
}

func toMinor(v decimal.Decimal, unit int32) int64 { return v.Shift(unit).RoundBank(0).IntPart() }

func fromMinor(v int64, unit int32) decimal.Decimal { return decimal.New(v, -unit) }

// simulate runs the plan with a fixed monthly budget, or, with budget nil,
// the baseline: every debt paid its minimum only. Each month accrues
// interest, then pays in the strategy's order, until every debt is paid
// off or the horizon is reached.
func simulate(in PayoffInput, horizon int, budget *decimal.Decimal, withTimeline bool) simResult {
	unit := finance.MinorUnit(in.Currency)
	debts := newSimDebts(in.Debts, unit)
	var left0 int64
	if budget != nil {
		left0 = toMinor(*budget, unit)
	}
	var out simResult
	order := 0
	var cumulative int64
	month := 0
	open := make([]*simDebt, 0, len(debts))
	for month < horizon && anyOpen(debts) {
		month++
		pay := paymentDate(in.Today, month)
		var interest int64
		open, interest = accrueInterest(open[:0], debts, pay, month == 1)
		cumulative += interest
		targetOrder(open, in.Strategy, in.CustomOrder, pay)
		if budget == nil {
			payMinimums(open)
		} else {
			payFromBudget(open, left0)
		}
		for _, d := range open {
			if d.balance <= 0 && d.month == 0 {
				d.month = month
				order++
				d.order = order
			}
		}
		if withTimeline {
			out.timeline = append(out.timeline, timelineEntry(debts, pay, cumulative, unit))
		}
	}
	out.done = !anyOpen(debts)
	out.months = month
	summarize(&out, debts, in.Today, unit)
	return out
}

// newSimDebts are the debts in minor units, with their monthly rates.
func newSimDebts(in []PayoffDebt, unit int32) []*simDebt {
	debts := make([]*simDebt, len(in))
	for i, x := range in {
		l := x.Liability
		d := &simDebt{id: x.ID, start: toMinor(x.Balance, unit), floor: toMinor(l.MinPaymentFloor, unit),
			pct: percentRate(l.MinPaymentPercent)}
		d.balance = d.start
		if l.APR != nil {
			d.regular = monthlyRate(*l.APR)
		}
		if l.PromoAPR != nil && l.PromoEndsOn != nil {
			d.promo, d.promoEnds = monthlyRate(*l.PromoAPR), finance.Day(*l.PromoEndsOn)
		}
		debts[i] = d
	}
	return debts
}

// anyOpen reports whether any debt still has a balance.
func anyOpen(debts []*simDebt) bool {
	for _, d := range debts {
		if d.balance > 0 {
			return true
		}
	}
	return false
}

// accrueInterest adds a month's interest, at the rate in force on the
// payment date, to each debt with a balance, appending those to open;
// it returns them and the interest added. In the first month it notes the
// debts whose minimum rule falls short of the interest.
func accrueInterest(open, debts []*simDebt, pay time.Time, first bool) ([]*simDebt, int64) {
	var total int64
	for _, d := range debts {
		if d.balance <= 0 {
			continue
		}
		i := d.rate(pay).apply(d.balance)
		d.balance += i
		d.interest += i
		total += i
		if first {
			// The minimum rule itself falls short of the interest.
			d.negAm = d.minimumDue(d.balance) < i
		}
		open = append(open, d)
	}
	return open, total
}

// payMinimums pays each open debt its minimum (the baseline).
func payMinimums(open []*simDebt) {
	for _, d := range open {
		m := min(d.minimumDue(d.balance), d.balance)
		d.balance -= m
		d.paid += m
	}
}

// payFromBudget pays a month's budget: every minimum first, in order, then
// what is left to the debts in order.
func payFromBudget(open []*simDebt, left int64) {
	for _, d := range open {
		m := min(d.minimumDue(d.balance), d.balance, left)
		d.balance -= m
		d.paid += m
		left -= m
	}
	for _, d := range open {
		if left <= 0 {
			break
		}
		m := min(left, d.balance)
		d.balance -= m
		d.paid += m
		left -= m
	}
}

// timelineEntry is the month's balances after payment.
func timelineEntry(debts []*simDebt, pay time.Time, cumulative int64, unit int32) PayoffTimelineEntry {
	e := PayoffTimelineEntry{Month: pay.Format("2006-01"), CumulativeInterest: fromMinor(cumulative, unit),
		Balances: make([]PayoffBalance, len(debts))}
	var total int64
	for i, d := range debts {
		total += d.balance
		e.Balances[i] = PayoffBalance{LiabilityID: d.id, Balance: fromMinor(d.balance, unit)}
	}
	e.TotalBalance = fromMinor(total, unit)
	return e
}

// summarize fills out's per-debt results and totals.
func summarize(out *simResult, debts []*simDebt, today time.Time, unit int32) {
	var interest, paid int64
	for _, d := range debts {
		r := PayoffDebtResult{LiabilityID: d.id, TotalInterest: fromMinor(d.interest, unit),
			TotalPaid: fromMinor(d.paid, unit), PayoffMonth: d.month, NegativeAmortization: d.negAm}
		if d.month > 0 {
			r.PayoffOrder = d.order
			t := paymentDate(today, d.month)
			r.PayoffDate = &t
		}
		out.debts = append(out.debts, r)
		interest += d.interest
		paid += d.paid
	}
	out.interest, out.paid = fromMinor(interest, unit), fromMinor(paid, unit)
}

// cmp compares two rates exactly.
func (f frac) cmp(g frac) int {
	hi1, lo1 := bits.Mul64(f.num, g.den)
	hi2, lo2 := bits.Mul64(g.num, f.den)
	if c := cmp.Compare(hi1, hi2); c != 0 {
		return c
	}
	return cmp.Compare(lo1, lo2)
}

// targetOrder sorts the open debts into the order money goes to them.
func targetOrder(open []*simDebt, strategy string, custom []string, pay time.Time) {
	avalanche := func(a, b *simDebt) int {
		if c := b.rate(pay).cmp(a.rate(pay)); c != 0 {
			return c
		}
		if c := cmp.Compare(a.balance, b.balance); c != 0 {
			return c
		}
		return cmp.Compare(a.id, b.id)
	}
	switch strategy {
	case StrategySnowball:
		slices.SortFunc(open, func(a, b *simDebt) int {
			if c := cmp.Compare(a.start, b.start); c != 0 {
				return c
			}
			if c := b.rate(pay).cmp(a.rate(pay)); c != 0 {
				return c
			}
			return cmp.Compare(a.id, b.id)
		})
	case StrategyCustom:
		pos := func(d *simDebt) int {
			if i := slices.Index(custom, d.id); i >= 0 {
				return i
			}
			return len(custom)
		}
		slices.SortFunc(open, func(a, b *simDebt) int {
			if c := cmp.Compare(pos(a), pos(b)); c != 0 {
				return c
			}
			return avalanche(a, b)
		})
	default:
		slices.SortFunc(open, avalanche)
	}
}

func payoffAssumptions(in PayoffInput, horizon int, plan PayoffPlan, baselineDone bool) []string {
	a := []string{
		"Payments are made on the 1st of each month, starting the month after today.",
		"Each month interest accrues on the opening balance at APR / 12, rounded half-even to the currency's minor unit; a promotional APR applies on payment dates up to its end date.",
		"Every debt is paid its minimum (capped at what it owes); the rest of the budget goes to the strategy's target, and money freed by a payoff rolls to the next target in the same month.",
		"The monthly budget stays the same for the whole plan; no new charges are added to any debt.",
		"Only debts in " + in.Currency + " are planned; debts in other currencies are excluded.",
	}
	if in.Extra != nil {
		a = append(a, "The monthly budget is the first month's minimums plus extra_monthly_payment.")
	}
	if plan.BudgetInsufficient {
		a = append(a, "The budget is below the minimum payments: minimums are paid in target order while the budget lasts.")
	}
	if plan.HorizonExceeded {
		a = append(a, "The plan does not pay everything off within the horizon of "+decimal.NewFromInt(int64(horizon)).String()+" months; figures cover the horizon only.")
	}
	if !baselineDone {
		a = append(a, "Minimum payments alone do not pay everything off within the horizon: the baseline interest covers the horizon only.")
	}
	return a
}
