package recurring

import (
	"context"
	"errors"
	"time"

	"github.com/shopspring/decimal"

	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/services/finance"
)

// Cash-flow forecast: GET /v1/insights/cash-flow-forecast.
const (
	DefaultForecastDays = 90
	MaxForecastDays     = 365
)

// ForecastProjectionDays are the horizons of the forecast's projections.
var ForecastProjectionDays = []int{30, 60, 90}

// CashFlowPoint is one forecast day.
type CashFlowPoint struct {
	Date             time.Time
	ProjectedBalance *decimal.Decimal // nil when the starting balance is unknown
	Income           decimal.Decimal
	Expenses         decimal.Decimal // positive
}

// CashFlowProjection sums the forecast up to a horizon.
type CashFlowProjection struct {
	PeriodDays       int
	ExpectedIncome   decimal.Decimal
	ExpectedExpenses decimal.Decimal
	NetCashFlow      decimal.Decimal
	ProjectedBalance *decimal.Decimal
}

// RecurringCashFlowItem is a stream feeding the forecast.
type RecurringCashFlowItem struct {
	Merchant     string
	Amount       decimal.Decimal // signed: inflows positive, outflows negative
	Frequency    string
	StreamType   string
	NextExpected time.Time
}

// CashFlowForecast is the forecast answer.
type CashFlowForecast struct {
	Points                   []CashFlowPoint
	StartingBalance          *decimal.Decimal
	ProjectedEndBalance      *decimal.Decimal
	StartingBalanceAvailable bool
	Currency                 string
	Projections              []CashFlowProjection
	RecurringItems           []RecurringCashFlowItem
}

// ForecastCashFlow projects days days after today (today excluded: its
// rows are in the starting balance) from starting (nil: unknown) through
// the active rules' occurrences in currency. Each point carries that day's
// expected income and expenses and, when the start is known, the balance
// after them. Projections cover 30, 60 and 90 days whatever days is.
func ForecastCashFlow(rules []Rule, starting *decimal.Decimal, currency string, today time.Time, days int) CashFlowForecast {
	today = finance.Day(today)
	horizon := max(days, ForecastProjectionDays[len(ForecastProjectionDays)-1])
	end := today.AddDate(0, 0, horizon)
	income := make([]decimal.Decimal, horizon+1)
	expenses := make([]decimal.Decimal, horizon+1)
	f := CashFlowForecast{Currency: currency, StartingBalance: starting, StartingBalanceAvailable: starting != nil}
	for _, r := range rules {
		if !r.IsActive || r.ExpectedAmount.Currency != currency ||
			(r.StreamType != StreamInflow && r.StreamType != StreamOutflow) {
			continue
		}
		var next time.Time
		for d, n := finance.Day(r.NextExpectedDate), 0; !d.After(end) && n < 2000; d, n = finance.NextOccurrence(d, r.Frequency), n+1 {
			if !d.After(today) {
				continue
			}
			i := int(d.Sub(today).Hours() / 24)
			amt := r.ExpectedAmount.Amount.Abs()
			if r.StreamType == StreamInflow {
				income[i] = income[i].Add(amt)
			} else {
				expenses[i] = expenses[i].Add(amt)
			}
			if next.IsZero() {
				next = d
			}
		}
		if next.IsZero() {
			continue // nothing expected in the horizon
		}
		amt := r.ExpectedAmount.Amount.Abs()
		if r.StreamType == StreamOutflow {
			amt = amt.Neg()
		}
		f.RecurringItems = append(f.RecurringItems, RecurringCashFlowItem{Merchant: r.Merchant, Amount: amt,
			Frequency: r.Frequency, StreamType: r.StreamType, NextExpected: next})
	}
	var inSum, outSum decimal.Decimal
	bal := decimal.Zero
	if starting != nil {
		bal = *starting
	}
	pi := 0
	for i := 1; i <= horizon; i++ {
		inSum, outSum = inSum.Add(income[i]), outSum.Add(expenses[i])
		bal = bal.Add(income[i]).Sub(expenses[i])
		if i <= days {
			p := CashFlowPoint{Date: today.AddDate(0, 0, i), Income: income[i], Expenses: expenses[i]}
			if starting != nil {
				b := bal
				p.ProjectedBalance = &b
				f.ProjectedEndBalance = &b
			}
			f.Points = append(f.Points, p)
		}
		if pi < len(ForecastProjectionDays) && i == ForecastProjectionDays[pi] {
			pr := CashFlowProjection{PeriodDays: i, ExpectedIncome: inSum, ExpectedExpenses: outSum, NetCashFlow: inSum.Sub(outSum)}
			if starting != nil {
				b := bal
				pr.ProjectedBalance = &b
			}
			f.Projections = append(f.Projections, pr)
			pi++
		}
	}
	return f
}

// GetCashFlowForecast answers GET /v1/insights/cash-flow-forecast. Without
// account_id it projects the cash the grant shows: the depository accounts
// in the user's main currency, and the recurring rules on them; with it,
// that account (not-found when hidden or unknown) and its rules, in its
// currency. The starting balance is the accounts' current balance; when
// an included account has never reported one (no balance_as_of), it is
// unknown: starting_balance_available is false and no balance figure is
// given, only the expected flows.
func (s *Service) GetCashFlowForecast(ctx context.Context, c finance.Caller, daysAhead int32, accountID string) (finance.Result[CashFlowForecast], error) {
	var res finance.Result[CashFlowForecast]
	sc, err := s.k.Scope(ctx, c, true)
	if err != nil {
		return res, err
	}
	if daysAhead, err = daysAheadOr(daysAhead, DefaultForecastDays, MaxForecastDays); err != nil {
		return res, err
	}
	if accountID, err = finance.OptionalUUID(accountID, "account_id"); err != nil {
		return res, err
	}
	accts, err := s.store.ListAccounts(ctx, c.UserID)
	if err != nil {
		return res, finance.Internal("list accounts", err)
	}
	var currency string
	included, hiddenCash := map[string]bool{}, map[string]bool{}
	if accountID != "" {
		a, err := s.store.GetAccount(ctx, c.UserID, accountID)
		if errors.Is(err, finance.ErrNotFound) || (err == nil && sc.HidesAccount(a.ID)) {
			return res, problem.New(problem.NotFound, "account not found")
		}
		if err != nil {
			return res, finance.Internal("get account", err)
		}
		currency = a.Currency
		included[a.ID] = true
	} else {
		if currency, err = s.k.MainCurrency(ctx, c, sc); err != nil {
			return res, err
		}
		for _, a := range accts {
			if a.Type != finance.AccountDepository || a.Currency != currency {
				continue
			}
			if sc.HidesAccount(a.ID) {
				hiddenCash[a.ID] = true
				continue
			}
			included[a.ID] = true
		}
	}
	var starting *decimal.Decimal
	known := true
	sum := decimal.Zero
	for _, a := range accts {
		if !included[a.ID] {
			continue
		}
		if a.BalanceAsOf == nil || a.Balance.Currency != currency {
			known = false
		}
		sum = sum.Add(a.Balance.Amount)
	}
	if known {
		starting = &sum
	}
	rules, err := s.Rules(ctx, c.UserID)
	if err != nil {
		return res, err
	}
	var visible, hidden []Rule
	for _, r := range rules {
		switch {
		case hiddenCash[r.AccountID]:
			hidden = append(hidden, r)
		case !included[r.AccountID]:
		case sc.HidesCategory(r.CategoryID):
			hidden = append(hidden, r)
		default:
			visible = append(visible, r)
		}
	}
	now := s.k.Now()
	res.Data = ForecastCashFlow(visible, starting, currency, now, int(daysAhead))
	res.Filtered = len(hiddenCash) > 0 || len(ForecastCashFlow(hidden, nil, currency, now, int(daysAhead)).RecurringItems) > 0
	if sc.Grant().Redacts(finance.FieldConnectionInstitution) {
		for i := range res.Data.RecurringItems {
			if sc.NamesInstitution(res.Data.RecurringItems[i].Merchant) {
				res.Data.RecurringItems[i].Merchant = ""
			}
		}
	}
	res.RedactedFields = sc.Redacted(finance.FieldConnectionInstitution)
	return res, nil
}
