package budgets

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/ledgerlane/platform/services/finance"
	"github.com/ledgerlane/platform/services/finance/recurring"
)

// BudgetProgress is a budget's figures for one period. Amounts are exact
// decimals in the budget's currency; spend is positive.
type BudgetProgress struct {
	BudgetID        string
	MethodType      string
	Currency        string
	TotalIncome     decimal.Decimal
	TotalAllocated  decimal.Decimal
	TotalSpent      decimal.Decimal
	Remaining       decimal.Decimal
	ExpectedIncome  *decimal.Decimal
	AnomalyTotal    decimal.Decimal
	MethodMeta      MethodMeta
	Groups          []GroupProgress
	Anomalies       []BudgetAnomaly
	PeriodStart     time.Time
	PeriodEnd       time.Time
	PeriodLabel     string
	IsCurrentPeriod bool
}

// GroupProgress is one target group's figures for the period.
type GroupProgress struct {
	GroupID                string
	GroupName              string
	Role                   string
	Allocated              decimal.Decimal
	Spent                  decimal.Decimal
	Remaining              decimal.Decimal
	RolloverAmount         decimal.Decimal
	UpcomingRecurringTotal decimal.Decimal
	// SpentPercentage is spent / allocated × 100, exact; nil when nothing
	// is allocated. It is rounded once, at the edge of the response.
	SpentPercentage *decimal.Decimal
	PhaseActive     bool
	Items           []ItemProgress
}

// ItemProgress is one item's allocation and spend in the period.
type ItemProgress struct {
	ItemID     string
	CategoryID string
	Allocated  decimal.Decimal
	Spent      decimal.Decimal
}

// Anomaly statuses.
const (
	// AnomalyFlagged: counted in the group's spent; the app asks the user.
	AnomalyFlagged = "flagged"
	// AnomalyCovered: absorbed by a goal's spending-plan line, so it is not
	// counted in the group's spent.
	AnomalyCovered = "covered"
)

// BudgetAnomaly is a spend far outside its category's usual pattern.
type BudgetAnomaly struct {
	TransactionID     string
	CategoryID        string
	Amount            decimal.Decimal // the spend, positive
	TransactionDate   time.Time
	Status            string
	CoveredByGoal     string // goal id
	CoveredByPlanLine string // the plan line's name
}

// Anomaly rule: a spend is anomalous when it exceeds the median of its
// usual spends by more than AnomalyK × their median absolute deviation
// (MAD), the MAD floored at a tenth of the median. Its usual spends are the
// same merchant's in the same category over the AnomalyLookbackMonths
// before the period when there are at least AnomalyMinHistory of them,
// else the category's; with fewer than that, nothing is flagged.
const (
	AnomalyLookbackMonths = 6
	AnomalyK              = 5
	AnomalyMinHistory     = 8
)

// ProgressInput is everything one period's progress is computed from.
// Rows, totals and candidates are already filtered by the grant (hidden
// accounts and categories gone).
type ProgressInput struct {
	Budget     Budget // items of hidden categories removed
	Period     Period
	Today      time.Time
	Categories []finance.Category // the categories the grant shows
	// Totals are the period's counted flow totals (SumFlows, CountedOnly);
	// Candidates its counted outflows above their category's anomaly floor
	// (ListAnomalyCandidates); Baseline the anomaly thresholds of the
	// AnomalyLookbackMonths before the period. The service reads these from
	// the store. When Totals is nil they are computed from Rows (the
	// period's rows) and History (the look-back's rows) instead.
	Totals     []finance.FlowTotal
	Candidates []finance.BudgetRow
	Baseline   AnomalyBaseline
	Rows       []finance.BudgetRow
	History    []finance.BudgetRow
	Rules      []recurring.Rule
	Goals      []Goal // visible goals, for spending-plan coverage
	// Rollover is the previous period's remaining per group id (only read
	// when the budget has FeatureRollover).
	Rollover map[string]decimal.Decimal
}

// counter decides where counted totals and rows go.
type counter struct {
	currency string
	parent   map[string]string // category id → parent id
	typeTag  map[string]string
	itemOf   map[string][2]int // category id → (group, item) index
}

func newCounter(b Budget, cats []finance.Category) counter {
	c := counter{currency: b.Currency, parent: map[string]string{}, typeTag: map[string]string{},
		itemOf: map[string][2]int{}}
	for _, cat := range cats {
		c.parent[cat.ID] = cat.ParentID
		c.typeTag[cat.ID] = cat.TypeTag
	}
	for gi, g := range b.Groups {
		for ii, it := range g.Items {
			c.itemOf[it.CategoryID] = [2]int{gi, ii}
		}
	}
	return c
}

// countsTotal reports whether a total counts at all: counted rows
// (CountsTowardBudgets), categorized, in the budget's currency.
func (c counter) countsTotal(t finance.FlowTotal) bool {
	return t.Counted && t.CategoryID != "" && t.Currency == c.currency
}

// item finds the item a row's category counts toward: its own, else its
// parent's.
func (c counter) item(cat string) ([2]int, bool) {
	if ix, ok := c.itemOf[cat]; ok {
		return ix, true
	}
	if p := c.parent[cat]; p != "" {
		ix, ok := c.itemOf[p]
		return ix, ok
	}
	return [2]int{}, false
}

func (c counter) isIncome(cat string) bool {
	if c.typeTag[cat] == finance.CategoryIncome {
		return true
	}
	p := c.parent[cat]
	return p != "" && c.typeTag[p] == finance.CategoryIncome
}

// ComputeProgress computes one period's progress. It is a pure function of
// its input: the same rows always give the same figures.
func ComputeProgress(in ProgressInput) BudgetProgress {
	b := in.Budget
	today := finance.Day(in.Today)
	isCurrent := in.Period.Contains(today)
	out := BudgetProgress{BudgetID: b.ID, MethodType: b.MethodType, Currency: b.Currency,
		MethodMeta: MetaFor(b.MethodType), PeriodStart: in.Period.Start, PeriodEnd: in.Period.End,
		PeriodLabel: in.Period.Label, IsCurrentPeriod: isCurrent}
	c := newCounter(b, in.Categories)
	if in.Totals == nil {
		in = withFlowsFromRows(in)
	}
	spent, totalIncome := spendAndIncome(c, b, in.Totals)
	out.TotalIncome = totalIncome
	if b.HasFeature(FeatureAnomalies) {
		out.Anomalies, out.AnomalyTotal = coverAnomalies(c, in, spent)
	}
	basis := decimal.Max(out.TotalIncome, decimal.Zero)
	if b.ExpectedMonthlyIncome != nil {
		e := b.incomeForPeriod(finance.Money{Amount: *b.ExpectedMonthlyIncome, Currency: b.Currency}).Amount
		out.ExpectedIncome = &e
		basis = e
	}
	alloc := allocations(b, basis)
	upcoming := upcomingByGroup(c, b, in.Period, today, in.Rules)
	phases := phaseRule{budget: b, isCurrent: isCurrent, savingsDone: savingsDone(b, spent, alloc)}
	for gi, g := range b.Groups {
		gp := GroupProgress{GroupID: g.ID, GroupName: g.Name, Role: g.Role, Allocated: alloc[gi],
			UpcomingRecurringTotal: upcoming[gi]}
		for ii, it := range g.Items {
			gp.Spent = gp.Spent.Add(spent[gi][ii])
			gp.Items = append(gp.Items, ItemProgress{ItemID: it.ID, CategoryID: it.CategoryID,
				Allocated: it.AllocatedAmount, Spent: spent[gi][ii]})
		}
		if b.HasFeature(FeatureRollover) {
			gp.RolloverAmount = in.Rollover[g.ID]
		}
		gp.Remaining = gp.Allocated.Add(gp.RolloverAmount).Sub(gp.Spent)
		if gp.Allocated.IsPositive() {
			pct := gp.Spent.Mul(decNum(100)).Div(gp.Allocated)
			gp.SpentPercentage = &pct
		}
		gp.PhaseActive = phases.active(g, gp)
		out.TotalAllocated = out.TotalAllocated.Add(gp.Allocated)
		out.TotalSpent = out.TotalSpent.Add(gp.Spent)
		out.Remaining = out.Remaining.Add(gp.Remaining)
		out.Groups = append(out.Groups, gp)
	}
	if b.HasFeature(FeatureAssignAll) {
		out.Remaining = basis.Sub(out.TotalAllocated)
	}
	return out
}

// withFlowsFromRows is in with the period's totals, anomaly candidates and
// baseline computed from its rows, for a caller that passed rows rather
// than what the store sums.
func withFlowsFromRows(in ProgressInput) ProgressInput {
	last := in.Period.End.AddDate(0, 0, -1)
	in.Totals = finance.SumFlowRows(in.Rows, finance.FlowQuery{From: in.Period.Start, To: last, CountedOnly: true})
	sliced := finance.SlicedParents(in.Rows)
	in.Candidates = nil
	for _, r := range in.Rows {
		if in.Period.Contains(r.Date) && finance.CountsTowardBudgets(r, sliced[r.ID]) {
			in.Candidates = append(in.Candidates, r)
		}
	}
	in.Baseline = BuildAnomalyBaseline(in.Budget.Currency, in.History)
	return in
}

// spendAndIncome splits the counted totals: income categories add to the
// income, every other category's outflow to the spend of the item it
// counts toward (spent[group][item]).
func spendAndIncome(c counter, b Budget, totals []finance.FlowTotal) ([][]decimal.Decimal, decimal.Decimal) {
	var income decimal.Decimal
	spent := make([][]decimal.Decimal, len(b.Groups))
	for gi, g := range b.Groups {
		spent[gi] = make([]decimal.Decimal, len(g.Items))
	}
	for _, t := range totals {
		if !c.countsTotal(t) {
			continue
		}
		if c.isIncome(t.CategoryID) {
			income = income.Add(t.Net)
			continue
		}
		if ix, ok := c.item(t.CategoryID); ok {
			spent[ix[0]][ix[1]] = spent[ix[0]][ix[1]].Sub(t.Net)
		}
	}
	return spent, income
}

// coverAnomalies finds the period's anomalies and their total; a covered
// anomaly (a goal's spending plan pays for it) leaves the spend.
func coverAnomalies(c counter, in ProgressInput, spent [][]decimal.Decimal) ([]BudgetAnomaly, decimal.Decimal) {
	var total decimal.Decimal
	anomalies := findAnomalies(c, in.Period, in.Candidates, in.Baseline, in.Goals)
	for _, a := range anomalies {
		total = total.Add(a.Amount)
		if a.Status == AnomalyCovered {
			ix, _ := c.item(a.CategoryID)
			spent[ix[0]][ix[1]] = spent[ix[0]][ix[1]].Sub(a.Amount)
		}
	}
	return anomalies, total
}

// allocations is each group's allocation from the income basis (the
// expected income when the budget has one, else what came in, never below
// zero): percent and amount groups first, then remainder groups share
// what they leave.
func allocations(b Budget, basis decimal.Decimal) []decimal.Decimal {
	places := finance.MinorUnit(b.Currency)
	alloc := make([]decimal.Decimal, len(b.Groups))
	var fixed decimal.Decimal
	for gi, g := range b.Groups {
		switch g.AllocationType {
		case AllocPercent:
			alloc[gi] = basis.Mul(g.AllocationValue).Div(decNum(100)).Round(places)
		case AllocRemainder:
			continue
		default:
			for _, it := range g.Items {
				alloc[gi] = alloc[gi].Add(it.AllocatedAmount)
			}
		}
		fixed = fixed.Add(alloc[gi])
	}
	for gi, g := range b.Groups {
		if g.AllocationType == AllocRemainder {
			alloc[gi] = decimal.Max(basis.Sub(fixed), decimal.Zero)
		}
	}
	return alloc
}

// savingsDone reports whether every savings group has reached its
// allocation.
func savingsDone(b Budget, spent [][]decimal.Decimal, alloc []decimal.Decimal) bool {
	done := true
	for gi, g := range b.Groups {
		var s decimal.Decimal
		for _, v := range spent[gi] {
			s = s.Add(v)
		}
		if g.Role == RoleSavings && s.LessThan(alloc[gi]) {
			done = false
		}
	}
	return done
}

// phaseRule decides whether a group's phase is active.
type phaseRule struct {
	budget      Budget
	isCurrent   bool
	savingsDone bool
}

// active: only in the current period; with phases, savings groups until
// they reach their allocation and the others once savings are done; with
// rollover, while money remains; otherwise always.
func (p phaseRule) active(g TargetGroup, gp GroupProgress) bool {
	switch {
	case !p.isCurrent:
		return false
	case p.budget.HasFeature(FeaturePhases) && g.Role == RoleSavings:
		return gp.Spent.LessThan(gp.Allocated)
	case p.budget.HasFeature(FeaturePhases):
		return p.savingsDone
	case p.budget.HasFeature(FeatureRollover):
		return gp.Remaining.IsPositive()
	default:
		return true
	}
}

// AnomalyBaseline is the anomaly rule's thresholds learned from a
// look-back: per category, and per category and merchant, each only where
// there are at least AnomalyMinHistory spends to learn from.
type AnomalyBaseline struct {
	ByCategory map[string]decimal.Decimal
	ByMerchant map[string]decimal.Decimal // key: category id + "|" + merchant
}

// BuildAnomalyBaseline learns the thresholds from history: the counted
// outflows (CountsTowardBudgets, categorized) in currency.
func BuildAnomalyBaseline(currency string, history []finance.BudgetRow) AnomalyBaseline {
	sliced := finance.SlicedParents(history)
	byCat := map[string][]decimal.Decimal{}
	byMerchant := map[string][]decimal.Decimal{}
	for _, r := range history {
		if r.Amount.Currency != currency || r.CategoryID == "" || !finance.CountsTowardBudgets(r, sliced[r.ID]) ||
			!r.Amount.Amount.IsNegative() {
			continue
		}
		byCat[r.CategoryID] = append(byCat[r.CategoryID], r.Amount.Amount.Neg())
		if r.Merchant != "" {
			k := r.CategoryID + "|" + r.Merchant
			byMerchant[k] = append(byMerchant[k], r.Amount.Amount.Neg())
		}
	}
	b := AnomalyBaseline{ByCategory: map[string]decimal.Decimal{}, ByMerchant: map[string]decimal.Decimal{}}
	for k, h := range byCat {
		if len(h) >= AnomalyMinHistory {
			b.ByCategory[k] = AnomalyThreshold(h)
		}
	}
	for k, h := range byMerchant {
		if len(h) >= AnomalyMinHistory {
			b.ByMerchant[k] = AnomalyThreshold(h)
		}
	}
	return b
}

// Threshold is the spend above which a spend at merchant in cat is
// anomalous: the merchant's threshold when it has one, else the
// category's; false when neither has enough history.
func (b AnomalyBaseline) Threshold(cat, merchant string) (decimal.Decimal, bool) {
	if t, ok := b.ByMerchant[cat+"|"+merchant]; ok {
		return t, true
	}
	t, ok := b.ByCategory[cat]
	return t, ok
}

// Floors is, per category, the lowest threshold any spend in it can meet:
// only spends above it can be anomalies, so only those are read.
func (b AnomalyBaseline) Floors() map[string]decimal.Decimal {
	out := map[string]decimal.Decimal{}
	for cat, t := range b.ByCategory {
		out[cat] = t
	}
	for k, t := range b.ByMerchant {
		cat, _, _ := strings.Cut(k, "|")
		if f, ok := out[cat]; !ok || t.LessThan(f) {
			out[cat] = t
		}
	}
	return out
}

// findAnomalies applies the anomaly rule to the period's counted outflows
// in the budget's items and lets the goals' spending-plan lines absorb
// what they can, in date order: a line absorbs a spend in its category (or
// a subcategory) while what it absorbed this period stays within its
// planned amount.
func findAnomalies(c counter, p Period, candidates []finance.BudgetRow, base AnomalyBaseline, goals []Goal) []BudgetAnomaly {
	var out []BudgetAnomaly
	for _, r := range candidates {
		spend := r.Amount.Amount.Neg()
		if r.Amount.Currency != c.currency || r.CategoryID == "" || !spend.IsPositive() || !p.Contains(r.Date) {
			continue
		}
		if _, ok := c.item(r.CategoryID); !ok {
			continue
		}
		if t, ok := base.Threshold(r.CategoryID, r.Merchant); ok && spend.GreaterThan(t) {
			out = append(out, BudgetAnomaly{TransactionID: r.ID, CategoryID: r.CategoryID, Amount: spend,
				TransactionDate: r.Date, Status: AnomalyFlagged})
		}
	}
	slices.SortFunc(out, func(a, b BudgetAnomaly) int {
		return cmp.Or(a.TransactionDate.Compare(b.TransactionDate), cmp.Compare(a.TransactionID, b.TransactionID))
	})
	goals = slices.Clone(goals)
	slices.SortFunc(goals, func(a, b Goal) int { return cmp.Or(cmp.Compare(a.SortOrder, b.SortOrder), cmp.Compare(a.ID, b.ID)) })
	absorbed := map[[2]int]decimal.Decimal{}
	for i := range out {
		a := &out[i]
	search:
		for gi, g := range goals {
			if g.Status != GoalActive {
				continue
			}
			for li, l := range g.SpendingPlan {
				if l.CategoryID != a.CategoryID && l.CategoryID != c.parent[a.CategoryID] {
					continue
				}
				key := [2]int{gi, li}
				if absorbed[key].Add(a.Amount).GreaterThan(l.PlannedAmount) {
					continue
				}
				absorbed[key] = absorbed[key].Add(a.Amount)
				a.Status, a.CoveredByGoal, a.CoveredByPlanLine = AnomalyCovered, g.ID, l.Name
				break search
			}
		}
	}
	return out
}

// AnomalyThreshold is the spend above which a spend in a category with
// history h is anomalous: median + K × max(MAD, median/10).
func AnomalyThreshold(h []decimal.Decimal) decimal.Decimal {
	med := median(h)
	dev := make([]decimal.Decimal, len(h))
	for i, v := range h {
		dev[i] = v.Sub(med).Abs()
	}
	mad := decimal.Max(median(dev), med.Div(decNum(10)))
	return med.Add(mad.Mul(decNum(AnomalyK)))
}

func median(v []decimal.Decimal) decimal.Decimal {
	if len(v) == 0 {
		return decimal.Zero
	}
	s := slices.Clone(v)
	slices.SortFunc(s, func(a, b decimal.Decimal) int { return a.Cmp(b) })
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return s[n/2-1].Add(s[n/2]).Div(decNum(2))
}

// upcomingByGroup sums, per group, the outflows active recurring rules still
// expect before the period ends: occurrences from the rule's next expected
// date, on or after today and the period's start. Past periods expect
// nothing.
func upcomingByGroup(c counter, b Budget, p Period, today time.Time, rules []recurring.Rule) []decimal.Decimal {
	out := make([]decimal.Decimal, len(b.Groups))
	if !p.End.After(today) {
		return out
	}
	from := p.Start
	if today.After(from) {
		from = today
	}
	for _, r := range rules {
		if !r.IsActive || r.StreamType != recurring.StreamOutflow || r.ExpectedAmount.Currency != b.Currency || r.CategoryID == "" {
			continue
		}
		ix, ok := c.item(r.CategoryID)
		if !ok {
			continue
		}
		for d, n := finance.Day(r.NextExpectedDate), 0; d.Before(p.End) && n < 400; d, n = finance.NextOccurrence(d, r.Frequency), n+1 {
			if !d.Before(from) {
				out[ix[0]] = out[ix[0]].Add(r.ExpectedAmount.Amount.Abs())
			}
		}
	}
	return out
}

func decNum(n int64) decimal.Decimal { return decimal.NewFromInt(n) }
