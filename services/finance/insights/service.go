package insights

import (
	"context"
	"slices"
	"time"

	"github.com/ledgerlane/platform/services/finance"
)

// Store is what insights reads: the kernel's accounts, categories and flow
// totals.
type Store interface {
	ListAccounts(ctx context.Context, userID string) ([]finance.Account, error)
	ListCategories(ctx context.Context, userID string) ([]finance.Category, error)
	SumFlows(ctx context.Context, userID string, q finance.FlowQuery) ([]finance.FlowTotal, error)
}

// Config assembles a Service from the kernel, which gives it the caller's
// scope, the clock, the main currency and store failures, and the
// subdomain's Store.
type Config = finance.Subdomain[Store]

// Service answers the month reports with the caller's grant applied.
type Service struct {
	k     *finance.Service
	store Store
}

// NewService returns a Service from cfg.
func NewService(cfg Config) *Service { return &Service{k: cfg.Kernel, store: cfg.Store} }

// MaxSpendingRangeDays bounds GET /v1/insights/spending-by-category.
const MaxSpendingRangeDays = 366

func (s *Service) reportCurrency(ctx context.Context, c finance.Caller, sc finance.Scope, cur string) (string, error) {
	if cur == "" {
		return s.k.MainCurrency(ctx, c, sc)
	}
	if !finance.ValidCurrency(cur) {
		return "", finance.Invalid("currency", "currency must be an upper-case ISO 4217 code such as USD")
	}
	return cur, nil
}

// categoryTotals reads the user's categories and the flow totals of from
// to to in currency: all of them, and those the grant shows (reportTotals).
func (s *Service) categoryTotals(ctx context.Context, c finance.Caller, sc finance.Scope, currency string, from, to time.Time) (cats []finance.Category, all, visible []finance.FlowTotal, err error) {
	if cats, err = s.store.ListCategories(ctx, c.UserID); err != nil {
		return nil, nil, nil, finance.Internal("list categories", err)
	}
	all, visible, err = s.reportTotals(ctx, c, sc, currency, from, to)
	return cats, all, visible, err
}

// reportTotals sums the user's counted rows in currency between from and
// to (inclusive) with no privacy filter, and returns the totals with those
// the grant shows. Reports compute both so that filtered is true only when
// the grant's exclusions changed a figure.
func (s *Service) reportTotals(ctx context.Context, c finance.Caller, sc finance.Scope, currency string, from, to time.Time) (all, visible []finance.FlowTotal, err error) {
	all, err = s.store.SumFlows(ctx, c.UserID, finance.FlowQuery{From: from, To: to, Currency: currency, CountedOnly: true})
	if err != nil {
		return nil, nil, finance.Internal("sum flows", err)
	}
	for _, t := range all {
		if !sc.HidesAccount(t.AccountID) && !sc.HidesCategory(t.CategoryID) {
			visible = append(visible, t)
		}
	}
	return all, visible, nil
}

// GetMonthSummary answers GET /v1/insights/month-summary?month=&currency=.
// month is YYYY-MM from 1970-01 to 12 months ahead; empty is the current
// month (service clock, UTC).
func (s *Service) GetMonthSummary(ctx context.Context, c finance.Caller, month, currency string) (finance.Result[MonthSummary], error) {
	var res finance.Result[MonthSummary]
	sc, err := s.k.Scope(ctx, c, true)
	if err != nil {
		return res, err
	}
	today := finance.Day(s.k.Now())
	y, m := today.Year(), today.Month()
	if month != "" {
		if y, m, err = finance.ParseMonth(month); err != nil {
			return res, finance.Invalid("month", "month must be YYYY-MM, from 1970-01")
		}
		limit := time.Date(today.Year(), today.Month()+finance.MaxFutureMonths+1, 1, 0, 0, 0, 0, time.UTC)
		if !time.Date(y, m, 1, 0, 0, 0, 0, time.UTC).Before(limit) {
			return res, finance.Invalid("month", "month may be at most 12 months after the current one")
		}
	}
	if currency, err = s.reportCurrency(ctx, c, sc, currency); err != nil {
		return res, err
	}
	from := time.Date(y, m, 1, 0, 0, 0, 0, time.UTC)
	to := from.AddDate(0, 1, -1)
	cats, all, visible, err := s.categoryTotals(ctx, c, sc, currency, from, to)
	if err != nil {
		return res, err
	}
	label := from.Format("2006-01")
	res.Data = SummarizeMonthTotals(label, currency, visible, cats)
	if len(visible) != len(all) {
		full := SummarizeMonthTotals(label, currency, all, cats)
		res.Filtered = !sameSummary(full, res.Data)
	}
	return res, nil
}

func sameSummary(a, b MonthSummary) bool {
	return a.TotalIncome.Equal(b.TotalIncome) && a.TotalExpenses.Equal(b.TotalExpenses) &&
		a.TransactionCount == b.TransactionCount
}

// SpendingQuery is GET /v1/insights/spending-by-category as sent.
type SpendingQuery struct {
	StartDate, EndDate string // YYYY-MM-DD, inclusive; optional
	Currency           string
}

// GetSpendingByCategory answers GET /v1/insights/spending-by-category.
// Both dates are optional: without either, the current month to today;
// with start_date only, through today; with end_date only, from the 1st of
// its month. start_date after end_date, or a range over
// MaxSpendingRangeDays days, is 400.
func (s *Service) GetSpendingByCategory(ctx context.Context, c finance.Caller, q SpendingQuery) (finance.Result[[]CategorySpend], error) {
	var res finance.Result[[]CategorySpend]
	sc, err := s.k.Scope(ctx, c, true)
	if err != nil {
		return res, err
	}
	from, err := finance.OptionalDate(q.StartDate, "start_date")
	if err != nil {
		return res, err
	}
	to, err := finance.OptionalDate(q.EndDate, "end_date")
	if err != nil {
		return res, err
	}
	today := finance.Day(s.k.Now())
	switch {
	case from.IsZero() && to.IsZero():
		from, to = time.Date(today.Year(), today.Month(), 1, 0, 0, 0, 0, time.UTC), today
	case to.IsZero():
		to = today
	case from.IsZero():
		from = time.Date(to.Year(), to.Month(), 1, 0, 0, 0, 0, time.UTC)
	}
	if from.After(to) {
		return res, finance.Invalid("start_date", "start_date is after end_date (end_date defaults to today)")
	}
	if to.Sub(from) >= MaxSpendingRangeDays*24*time.Hour {
		return res, finance.Invalid("end_date", "the range may cover at most 366 days")
	}
	if from.Year() < 1900 {
		return res, finance.Invalid("start_date", "start_date must be from 1900-01-01")
	}
	currency, err := s.reportCurrency(ctx, c, sc, q.Currency)
	if err != nil {
		return res, err
	}
	cats, all, visible, err := s.categoryTotals(ctx, c, sc, currency, from, to)
	if err != nil {
		return res, err
	}
	res.Data = SpendingByCategoryTotals(currency, visible, cats)
	if sc.Grant().Redacts(finance.FieldConnectionInstitution) {
		// A user's category may be named after a bank ("Chase fees").
		for i := range res.Data {
			if sc.NamesInstitution(res.Data[i].CategoryName) {
				res.Data[i].CategoryName = ""
			}
		}
	}
	res.RedactedFields = sc.Redacted(finance.FieldConnectionInstitution)
	if len(visible) != len(all) {
		full := SpendingByCategoryTotals(currency, all, cats)
		res.Filtered = !slices.EqualFunc(full, res.Data, func(a, b CategorySpend) bool {
			return a.CategoryID == b.CategoryID && a.Amount.Equal(b.Amount)
		})
	}
	return res, nil
}
