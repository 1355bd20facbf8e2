package finance_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/ledgerlane/platform/services/finance/insights"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/services/finance"
)

// expectedReport recomputes income, expenses, count and per-top-category
// spend in USD from GET /v1/transactions and GET /v1/categories under c:
// the rules of services/finance/README.md ("Insights"), written again.
func expectedReport(t *testing.T, e env, c finance.Caller, start, end string) (income, expenses decimal.Decimal, count int, spend map[string]decimal.Decimal) {
	t.Helper()
	cats, err := e.svc.ListCategories(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	parent, tag := map[string]string{}, map[string]string{}
	for _, cat := range cats.Data {
		parent[cat.ID], tag[cat.ID] = cat.ParentID, cat.TypeTag
	}
	rows := all(t, e, c, finance.TransactionQuery{StartDate: start, EndDate: end})
	sliced := map[string]bool{}
	for _, r := range rows {
		if r.SplitParentID != "" {
			sliced[r.SplitParentID] = true
		}
	}
	spend = map[string]decimal.Decimal{}
	for _, r := range rows {
		if r.Amount.Currency != "USD" || r.CategoryID == "" || sliced[r.ID] || (r.TransferPairID != "" && r.Amount.Amount.IsPositive()) {
			continue
		}
		top := r.CategoryID
		if parent[top] != "" {
			top = parent[top]
		}
		switch tag[top] {
		case finance.CategoryTransfer:
			continue
		case finance.CategoryIncome:
			income = income.Add(r.Amount.Amount)
		default:
			expenses = expenses.Sub(r.Amount.Amount)
			spend[top] = spend[top].Sub(r.Amount.Amount)
		}
		count++
	}
	return income, expenses, count, spend
}

func TestInsightsReconcileWithTransactions(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	hiding := debtGrant(t, e) // hides the mortgage and Housing
	for _, c := range []finance.Caller{e.read, e.redacted, hiding} {
		for _, month := range []string{"", "2026-04", "2026-01", "2025-06"} {
			res, err := e.insights.GetMonthSummary(ctx, c, month, "")
			if err != nil {
				t.Fatal(err)
			}
			s := res.Data
			start, _ := finance.ParseDate(s.Month + "-01")
			end := start.AddDate(0, 1, -1)
			income, expenses, count, _ := expectedReport(t, e, c, s.Month+"-01", end.Format(finance.DateLayout))
			if s.Currency != "USD" || !s.TotalIncome.Equal(income) || !s.TotalExpenses.Equal(expenses) ||
				!s.NetSavings.Equal(income.Sub(expenses)) || s.TransactionCount != count {
				t.Errorf("%s under %s: %+v; want income %s expenses %s count %d", s.Month, c.GrantID, s, income, expenses, count)
			}
			if s.SavingsRate == nil || !s.SavingsRate.Equal(finance.DivRoundBank(s.NetSavings.Mul(decimal.NewFromInt(100)), income, 2)) {
				t.Errorf("%s savings rate %v", s.Month, s.SavingsRate)
			}
			if res.Filtered != (c != e.read) {
				t.Errorf("%s under %s: filtered %v", s.Month, c.GrantID, res.Filtered)
			}
		}
		for _, r := range [][2]string{{"", ""}, {"2026-01-01", "2026-03-31"}, {"2025-05-20", "2026-05-19"}} {
			res, err := e.insights.GetSpendingByCategory(ctx, c, insights.SpendingQuery{StartDate: r[0], EndDate: r[1]})
			if err != nil {
				t.Fatal(err)
			}
			start, end := r[0], r[1]
			if start == "" {
				start, end = "2026-05-01", "2026-05-20"
			}
			_, expenses, _, spend := expectedReport(t, e, c, start, end)
			total, pct := decimal.Zero, decimal.Zero
			for _, l := range res.Data {
				if !l.Amount.Equal(spend[l.CategoryID]) || l.Currency != "USD" || l.CategoryName == "" {
					t.Errorf("%v %s: %s, want %s", r, l.CategoryName, l.Amount, spend[l.CategoryID])
				}
				delete(spend, l.CategoryID)
				total = total.Add(l.Amount)
				pct = pct.Add(l.Percentage)
			}
			for id, amt := range spend {
				if amt.IsPositive() {
					t.Errorf("%v: category %s (%s) missing", r, id, amt)
				} else {
					total = total.Add(amt) // refunds above spend are left out
				}
			}
			if !total.Equal(expenses) || !pct.Equal(decimal.NewFromInt(100)) {
				t.Errorf("%v: total %s vs expenses %s, percentages %s", r, total, expenses, pct)
			}
		}
	}
}

func TestInsightRules(t *testing.T) {
	cats := []finance.Category{
		{ID: "inc", Name: "Income", TypeTag: finance.CategoryIncome}, {ID: "pay", ParentID: "inc", Name: "Paycheck", TypeTag: finance.CategoryIncome},
		{ID: "food", Name: "Food", TypeTag: finance.CategoryExpense}, {ID: "cafe", ParentID: "food", Name: "Cafe", TypeTag: finance.CategoryExpense},
		{ID: "home", Name: "Home", TypeTag: finance.CategoryExpense},
		{ID: "xfer", Name: "Transfers", TypeTag: finance.CategoryTransfer},
	}
	row := func(id, cat, amt string) finance.BudgetRow {
		return finance.BudgetRow{ID: id, CategoryID: cat, Amount: finance.Money{Amount: dec(amt), Currency: "USD"}}
	}
	rows := []finance.BudgetRow{
		row("p1", "pay", "3000"),
		row("f1", "food", "-100"), row("c1", "cafe", "-50.50"), row("c2", "cafe", "10.25"), // a refund nets
		row("h1", "home", "-1000"),
		row("x1", "xfer", "-500"), // a transfer category: out
		{ID: "t1", CategoryID: "home", TransferPairID: "t2", Amount: finance.Money{Amount: dec("-200"), Currency: "USD"}}, // outgoing leg counts
		{ID: "t2", CategoryID: "home", TransferPairID: "t1", Amount: finance.Money{Amount: dec("200"), Currency: "USD"}},  // incoming leg does not
		row("u1", "", "-70"), // uncategorized: not counted
		{ID: "e1", CategoryID: "food", Amount: finance.Money{Amount: dec("-40"), Currency: "EUR"}}, // another currency
		row("s0", "food", "-90"), // a split parent whose slices are present
		{ID: "s1", CategoryID: "food", SplitParentID: "s0", Amount: finance.Money{Amount: dec("-60"), Currency: "USD"}},
		{ID: "s2", CategoryID: "home", SplitParentID: "s0", Amount: finance.Money{Amount: dec("-30"), Currency: "USD"}},
	}
	s := insights.SummarizeMonth("2026-05", "USD", rows, cats)
	// expenses: 100 + 50.50 − 10.25 + 1000 + 200 + 60 + 30 = 1430.25
	if !s.TotalIncome.Equal(dec("3000")) || !s.TotalExpenses.Equal(dec("1430.25")) || !s.NetSavings.Equal(dec("1569.75")) ||
		!s.SavingsRate.Equal(dec("52.32")) || s.TransactionCount != 8 { // 52.325: the tie goes to the even 2
		t.Errorf("summary %+v rate %v", s, s.SavingsRate)
	}
	lines := insights.SpendingByCategory("USD", rows, cats)
	// Home 1230 (86.00 %), Food 200.25 (14.00 %): 1230/1430.25 = 85.999…
	if len(lines) != 2 || lines[0].CategoryID != "home" || !lines[0].Amount.Equal(dec("1230")) ||
		lines[1].CategoryID != "food" || !lines[1].Amount.Equal(dec("200.25")) ||
		!lines[0].Percentage.Add(lines[1].Percentage).Equal(dec("100")) || !lines[0].Percentage.Equal(dec("86")) {
		t.Errorf("lines %+v", lines)
	}
	if s := insights.SummarizeMonth("2026-05", "USD", nil, cats); s.SavingsRate != nil || s.TransactionCount != 0 {
		t.Errorf("empty month %+v", s)
	}
}

func TestSpendingPercentagesSumTo100(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 100))
	cats := []finance.Category{}
	for i := range 30 {
		cats = append(cats, finance.Category{ID: uuid.NewString(), Name: "c" + decimal.NewFromInt(int64(i)).String(), TypeTag: finance.CategoryExpense})
	}
	for trial := range 500 {
		var rows []finance.BudgetRow
		for range 1 + r.IntN(60) {
			amt := decimal.New(-int64(1+r.IntN(100000)), -2)
			if r.IntN(10) == 0 {
				amt = amt.Neg() // a refund
			}
			rows = append(rows, finance.BudgetRow{ID: uuid.NewString(), CategoryID: cats[r.IntN(len(cats))].ID,
				Amount: finance.Money{Amount: amt, Currency: "USD"}})
		}
		lines := insights.SpendingByCategory("USD", rows, cats)
		sum, total := decimal.Zero, decimal.Zero
		for _, l := range lines {
			sum = sum.Add(l.Percentage)
			total = total.Add(l.Amount)
		}
		for _, l := range lines {
			exact := l.Amount.Mul(decimal.NewFromInt(100)).DivRound(total, 10)
			if l.Percentage.Sub(exact).Abs().GreaterThanOrEqual(dec("0.01")) || l.Percentage.Exponent() < -2 {
				t.Fatalf("trial %d: %s%% for exact %s", trial, l.Percentage, exact)
			}
		}
		if len(lines) > 0 && !sum.Equal(decimal.NewFromInt(100)) {
			t.Fatalf("trial %d: percentages sum to %s", trial, sum)
		}
	}
}

func TestInsightInputErrors(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	month := func(m, cur string) func() error {
		return func() error { _, err := e.insights.GetMonthSummary(ctx, e.read, m, cur); return err }
	}
	spending := func(q insights.SpendingQuery) func() error {
		return func() error { _, err := e.insights.GetSpendingByCategory(ctx, e.read, q); return err }
	}
	tests := []struct {
		name  string
		call  func() error
		field string
	}{
		{"month not YYYY-MM", month("2026-5", ""), "month"},
		{"month 13", month("2026-13", ""), "month"},
		{"month before 1970", month("1969-12", ""), "month"},
		{"month too far ahead", month("2027-06", ""), "month"},
		{"bad currency", month("", "usd"), "currency"},
		{"bad start", spending(insights.SpendingQuery{StartDate: "2026-02-30"}), "start_date"},
		{"bad end", spending(insights.SpendingQuery{EndDate: "yesterday"}), "end_date"},
		{"start after end", spending(insights.SpendingQuery{StartDate: "2026-05-02", EndDate: "2026-05-01"}), "start_date"},
		{"start after today", spending(insights.SpendingQuery{StartDate: "2026-06-01"}), "start_date"},
		{"over a year", spending(insights.SpendingQuery{StartDate: "2025-01-01", EndDate: "2026-01-02"}), "end_date"},
		{"ancient", spending(insights.SpendingQuery{StartDate: "1899-12-31", EndDate: "1900-01-01"}), "start_date"},
		{"bad currency", spending(insights.SpendingQuery{Currency: "EURO"}), "currency"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { wantProblem(t, tc.call(), problem.InvalidInput, tc.field) })
	}
	// EUR on demand: the Berlin account's spending.
	res, err := e.insights.GetMonthSummary(ctx, e.read, "2026-04", "EUR")
	if err != nil || res.Data.Currency != "EUR" || !res.Data.TotalExpenses.IsPositive() {
		t.Errorf("EUR: %+v %v", res.Data, err)
	}
}
