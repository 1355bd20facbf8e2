package finance

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/shopspring/decimal"
)

// FlowTotal sums a set of a user's rows sharing an account, a category, a
// currency and whether they count toward budgets and reports, over a span
// of days (or one calendar month).
type FlowTotal struct {
	Month      time.Time // the 1st, UTC, when summed by month; zero otherwise
	AccountID  string
	CategoryID string // "" for uncategorized rows
	Currency   string
	// Counted: the rows count toward budgets and reports (CountsTowardBudgets).
	Counted  bool
	Net      decimal.Decimal
	Rows     int // how many rows
	Inflows  int // rows with amount > 0
	Outflows int // rows with amount < 0
}

// FlowQuery selects the rows a FlowTotal sums.
type FlowQuery struct {
	From, To time.Time // inclusive days (zero: unbounded, in SumFlowRows only)
	ByMonth  bool      // one total per calendar month too
	// AccountIDs keeps only rows on these accounts (nil: every one).
	AccountIDs []string
	// CategoryIDs keeps only rows in these categories (nil: every one).
	CategoryIDs []string
	Currency    string // "" for every currency
	CountedOnly bool
	// Privacy scope, as in TransactionFilter.
	ExcludeAccountIDs  []string
	ExcludeCategoryIDs []string
}

// EndOfTime bounds a flow range that has no end: PostgreSQL's dates reach
// further, but no row is dated after it.
var EndOfTime = time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)

// FlowStore sums rows in the store, so budgets, goals and the reports read
// a few hundred totals instead of a month or a year of rows (embedded in
// Store). The PostgreSQL store keeps the totals by trigger (migration
// 00011); the memory store sums its rows with SumFlowRows.
type FlowStore interface {
	// ListBudgetRows returns the user's rows matching f (its privacy,
	// account, category and date conditions) as narrow BudgetRows, in no
	// particular order.
	ListBudgetRows(ctx context.Context, userID string, f TransactionFilter) ([]BudgetRow, error)

	// SumFlows totals the user's rows q selects, ordered by month, account,
	// category, currency, counted.
	SumFlows(ctx context.Context, userID string, q FlowQuery) ([]FlowTotal, error)
	// LastFlowDay is the latest day in q's range with a row q selects whose
	// amount is above zero (inflow) or below zero (!inflow); nil if none.
	LastFlowDay(ctx context.Context, userID string, q FlowQuery, inflow bool) (*time.Time, error)
	// FlowVersion changes whenever a row of the user dated in [from, to]
	// is written. Budget anomaly baselines are cached against it.
	FlowVersion(ctx context.Context, userID string, from, to time.Time) (string, error)
	// ListAnomalyCandidates returns the user's counted outflows matching f
	// (privacy and dates) whose category has a floor and whose spend
	// (−amount) is above it, in no particular order.
	ListAnomalyCandidates(ctx context.Context, userID string, f TransactionFilter, floors map[string]decimal.Decimal) ([]BudgetRow, error)
}

// CountsTowardBudgets is the row-level half of the counting rule shared by
// budgets, goals and the reports: a row counts unless it is a split parent
// whose slices are present (they count instead) or the incoming leg of a
// transfer between the user's own accounts (the outgoing leg already
// counted the money). Currency and category are the reader's to check.
func CountsTowardBudgets(r BudgetRow, hasSlices bool) bool {
	return !hasSlices && !(r.TransferPairID != "" && r.Amount.Amount.IsPositive())
}

// SlicedParents is the set of ids of rows whose slices are among rows.
func SlicedParents(rows []BudgetRow) map[string]bool {
	out := map[string]bool{}
	for _, r := range rows {
		if r.SplitParentID != "" {
			out[r.SplitParentID] = true
		}
	}
	return out
}

// SumFlowRows is SumFlows over rows: all of a user's rows (whether a parent
// has slices is decided among them), of which q selects.
func SumFlowRows(rows []BudgetRow, q FlowQuery) []FlowTotal {
	sliced := SlicedParents(rows)
	type key struct {
		month                       time.Time
		account, category, currency string
		counted                     bool
	}
	sums := map[key]*FlowTotal{}
	for _, r := range rows {
		counted := CountsTowardBudgets(r, sliced[r.ID])
		if !q.selects(r, counted) {
			continue
		}
		k := key{account: r.AccountID, category: r.CategoryID, currency: r.Amount.Currency, counted: counted}
		if q.ByMonth {
			d := Day(r.Date)
			k.month = time.Date(d.Year(), d.Month(), 1, 0, 0, 0, 0, time.UTC)
		}
		t := sums[k]
		if t == nil {
			t = &FlowTotal{Month: k.month, AccountID: k.account, CategoryID: k.category, Currency: k.currency, Counted: counted}
			sums[k] = t
		}
		t.Net = t.Net.Add(r.Amount.Amount)
		t.Rows++
		switch r.Amount.Amount.Sign() {
		case 1:
			t.Inflows++
		case -1:
			t.Outflows++
		}
	}
	out := make([]FlowTotal, 0, len(sums))
	for _, t := range sums {
		out = append(out, *t)
	}
	slices.SortFunc(out, CompareFlowTotals)
	return out
}

// LastFlowRow is LastFlowDay over rows (all of a user's rows).
func LastFlowRow(rows []BudgetRow, q FlowQuery, inflow bool) *time.Time {
	sliced := SlicedParents(rows)
	var last *time.Time
	for _, r := range rows {
		if !q.selects(r, CountsTowardBudgets(r, sliced[r.ID])) {
			continue
		}
		if s := r.Amount.Amount.Sign(); (inflow && s > 0) || (!inflow && s < 0) {
			if d := Day(r.Date); last == nil || d.After(*last) {
				last = &d
			}
		}
	}
	return last
}

func (q FlowQuery) selects(r BudgetRow, counted bool) bool {
	d := Day(r.Date)
	switch {
	case !q.From.IsZero() && d.Before(Day(q.From)), !q.To.IsZero() && d.After(Day(q.To)):
		return false
	case q.CountedOnly && !counted:
		return false
	case q.AccountIDs != nil && !slices.Contains(q.AccountIDs, r.AccountID):
		return false
	case q.Currency != "" && r.Amount.Currency != q.Currency:
		return false
	case q.CategoryIDs != nil && !slices.Contains(q.CategoryIDs, r.CategoryID):
		return false
	case slices.Contains(q.ExcludeAccountIDs, r.AccountID):
		return false
	case r.CategoryID != "" && slices.Contains(q.ExcludeCategoryIDs, r.CategoryID):
		return false
	}
	return true
}

// CompareFlowTotals is SumFlows' order.
func CompareFlowTotals(a, b FlowTotal) int {
	return cmp.Or(a.Month.Compare(b.Month), cmp.Compare(a.AccountID, b.AccountID),
		cmp.Compare(a.CategoryID, b.CategoryID), cmp.Compare(a.Currency, b.Currency), compareBool(a.Counted, b.Counted))
}

func compareBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// BudgetRow is the part of a transaction budgets and goals count: a narrow
// read of the transactions table (Store.ListBudgetRows).
type BudgetRow struct {
	ID         string
	AccountID  string
	CategoryID string
	Merchant   string
	// BankMerchant is the merchant as the bank reported it where the user
	// renamed the row (Transaction.ProviderMerchantName); empty otherwise.
	BankMerchant   string
	Amount         Money
	Date           time.Time
	IsPending      bool
	TransferPairID string
	SplitParentID  string
}

// Counterparty is who the row's money went to or came from as the bank
// names it: a user's rename of one row ("Netflix (work lunch)") labels
// that row, it does not make the charge another payee's, so recurring
// streams group by this.
func (r *BudgetRow) Counterparty() string {
	if r.BankMerchant != "" {
		return r.BankMerchant
	}
	return r.Merchant
}
