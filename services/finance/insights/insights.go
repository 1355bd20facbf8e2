// Package insights is the finance subdomain of the month reports: the month
// summary (GET /v1/insights/month-summary) and spending by category (GET
// /v1/insights/spending-by-category), computed from the kernel's flow
// totals. It keeps nothing of its own: its Store is the kernel reads it
// needs. It imports the finance root (the kernel) and no other subdomain.
// (Upcoming bills and the cash-flow forecast, also insight routes, belong
// to the recurring streams.)
package insights

import (
	"cmp"
	"slices"

	"github.com/ledgerlane/platform/services/finance"
	"github.com/shopspring/decimal"
)

// MonthSummary is GET /v1/insights/month-summary.
type MonthSummary struct {
	Month            string // YYYY-MM
	Currency         string
	TotalIncome      decimal.Decimal
	TotalExpenses    decimal.Decimal
	NetSavings       decimal.Decimal
	SavingsRate      *decimal.Decimal // nil when there is no income
	TransactionCount int
}

// CategorySpend is one line of GET /v1/insights/spending-by-category.
type CategorySpend struct {
	CategoryID   string
	CategoryName string
	Currency     string
	Amount       decimal.Decimal
	Percentage   decimal.Decimal // 2 places; the lines sum to exactly 100
}

// insightCounter applies the budgets' counting rules to reports.
type insightCounter struct {
	currency string
	cats     map[string]finance.Category
}

func newInsightCounter(currency string, cats []finance.Category) insightCounter {
	c := insightCounter{currency: currency, cats: map[string]finance.Category{}}
	for _, cat := range cats {
		c.cats[cat.ID] = cat
	}
	return c
}

// top is the top-level category of cat (itself when it has no parent).
func (c insightCounter) top(cat string) string {
	if p := c.cats[cat].ParentID; p != "" {
		return p
	}
	return cat
}

func (c insightCounter) tag(cat string) string { return c.cats[c.top(cat)].TypeTag }

// kind classifies a total: "income", "expense", or "" when its rows do not
// count. Rows count when they are in the report's currency, categorized,
// counted by CountsTowardBudgets (not a split parent whose slices are
// present, not the incoming leg of a transfer between the user's own
// accounts), and not in a transfer category (card payments, savings
// transfers, top-ups: money moving between the user's own accounts).
// Income: an income category (or a child of one); expense: any other
// counted category, so refunds (positive rows) net against spending.
func (c insightCounter) kind(t finance.FlowTotal) string {
	if t.Currency != c.currency || t.CategoryID == "" || !t.Counted {
		return ""
	}
	switch c.tag(t.CategoryID) {
	case finance.CategoryIncome:
		return finance.CategoryIncome
	case finance.CategoryTransfer:
		return ""
	}
	return finance.CategoryExpense
}

// allRows selects every row: the pure functions over rows sum them all.
var allRows = finance.FlowQuery{}

// SummarizeMonth totals rows (one month's, already privacy-filtered) in
// currency; SummarizeMonthTotals says how.
func SummarizeMonth(month, currency string, rows []finance.BudgetRow, cats []finance.Category) MonthSummary {
	return SummarizeMonthTotals(month, currency, finance.SumFlowRows(rows, allRows), cats)
}

// SummarizeMonthTotals totals one month's flow totals (already
// privacy-filtered) in currency: income, expenses, net savings = income −
// expenses, savings rate = net savings / income × 100 rounded half-even to
// 2 places (nil without income above zero), and how many rows counted.
func SummarizeMonthTotals(month, currency string, totals []finance.FlowTotal, cats []finance.Category) MonthSummary {
	c := newInsightCounter(currency, cats)
	s := MonthSummary{Month: month, Currency: currency}
	for _, t := range totals {
		switch c.kind(t) {
		case finance.CategoryIncome:
			s.TotalIncome = s.TotalIncome.Add(t.Net)
		case finance.CategoryExpense:
			s.TotalExpenses = s.TotalExpenses.Sub(t.Net)
		default:
			continue
		}
		s.TransactionCount += t.Rows
	}
	s.NetSavings = s.TotalIncome.Sub(s.TotalExpenses)
	if s.TotalIncome.IsPositive() {
		rate := finance.DivRoundBank(s.NetSavings.Mul(decimal.NewFromInt(100)), s.TotalIncome, 2)
		s.SavingsRate = &rate
	}
	return s
}

// SpendingByCategory groups rows (already privacy-filtered) as
// SpendingByCategoryTotals does.
func SpendingByCategory(currency string, rows []finance.BudgetRow, cats []finance.Category) []CategorySpend {
	return SpendingByCategoryTotals(currency, finance.SumFlowRows(rows, allRows), cats)
}

// SpendingByCategoryTotals groups the counted expense totals by top-level
// category (subcategories roll up): amount = −Σ amount (refunds net).
// Categories whose net spending is not above zero are left out.
// Percentages are each line's share of the total, rounded to 2 places by
// largest remainder so they sum to exactly 100. Ordered by amount, largest
// first, then name, then id.
func SpendingByCategoryTotals(currency string, totals []finance.FlowTotal, cats []finance.Category) []CategorySpend {
	c := newInsightCounter(currency, cats)
	by := map[string]decimal.Decimal{}
	for _, t := range totals {
		if c.kind(t) == finance.CategoryExpense {
			top := c.top(t.CategoryID)
			by[top] = by[top].Sub(t.Net)
		}
	}
	var out []CategorySpend
	total := decimal.Zero
	for id, amt := range by {
		if amt.IsPositive() {
			out = append(out, CategorySpend{CategoryID: id, CategoryName: c.cats[id].Name, Currency: currency, Amount: amt})
			total = total.Add(amt)
		}
	}
	slices.SortFunc(out, func(a, b CategorySpend) int {
		if x := b.Amount.Cmp(a.Amount); x != 0 {
			return x
		}
		if x := cmp.Compare(a.CategoryName, b.CategoryName); x != 0 {
			return x
		}
		return cmp.Compare(a.CategoryID, b.CategoryID)
	})
	setPercentages(out, total)
	return out
}

// setPercentages gives each line its share of total in hundredths of a
// percent, by largest remainder: floor every share, then hand the
// hundredths still missing from 100.00 to the largest remainders (ties:
// the earlier line).
func setPercentages(lines []CategorySpend, total decimal.Decimal) {
	if len(lines) == 0 || !total.IsPositive() {
		return
	}
	type rem struct {
		i int
		r decimal.Decimal
	}
	rems := make([]rem, len(lines))
	var sum int64
	for i, l := range lines {
		q, r := l.Amount.Mul(decimal.NewFromInt(10000)).QuoRem(total, 0) // hundredths of a percent
		lines[i].Percentage = q.Shift(-2)
		sum += q.IntPart()
		rems[i] = rem{i, r}
	}
	slices.SortStableFunc(rems, func(a, b rem) int { return b.r.Cmp(a.r) })
	for k := 0; sum < 10000 && k < len(rems); k++ {
		lines[rems[k].i].Percentage = lines[rems[k].i].Percentage.Add(decimal.New(1, -2))
		sum++
	}
}
