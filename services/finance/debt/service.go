package debt

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ledgerlane/platform/services/finance"
	"github.com/shopspring/decimal"
)

// Config assembles a Service from the kernel, which gives it the caller's
// scope, the clock and store failures, and the subdomain's Store.
type Config = finance.Subdomain[Store]

// Service answers the debt routes with the caller's grant applied.
type Service struct {
	k     *finance.Service
	store Store
}

// NewService returns a Service from cfg.
func NewService(cfg Config) *Service { return &Service{k: cfg.Kernel, store: cfg.Store} }

// MaxPayoffDebts bounds liability_ids and custom_order.
const MaxPayoffDebts = 100

// maxPayoffBudget bounds a plan's monthly amounts (a trillion).
var maxPayoffBudget = decimal.New(1, 12)

// PayoffRequest is POST /v1/debt/payoff-plan as sent.
type PayoffRequest struct {
	LiabilityIDs       []string
	Strategy           string
	CustomOrder        []string
	TotalMonthlyBudget string // "" = not given
	ExtraMonthlyPay    string // "" = not given
}

// debtView is the user's debt accounts and their terms as a scope sees
// them.
type debtView struct {
	accounts    []finance.Account
	liabilities map[string]Liability
	hidden      bool // the grant hides a debt account
}

func (s *Service) debts(ctx context.Context, c finance.Caller, sc finance.Scope) (debtView, error) {
	var v debtView
	accts, err := s.store.ListAccounts(ctx, c.UserID)
	if err != nil {
		return v, finance.Internal("list accounts", err)
	}
	ls, err := s.store.ListLiabilities(ctx, c.UserID)
	if err != nil {
		return v, finance.Internal("list liabilities", err)
	}
	v.liabilities = map[string]Liability{}
	for _, l := range ls {
		v.liabilities[l.AccountID] = l
	}
	for _, a := range accts {
		if !IsDebtAccount(a.Type) {
			continue
		}
		if sc.HidesAccount(a.ID) {
			v.hidden = true
			continue
		}
		v.accounts = append(v.accounts, a)
	}
	return v, nil
}

// interestCategories are the interest-charge category and its children.
func interestCategories(cats []finance.Category) []string {
	var root string
	for _, c := range cats {
		if c.IsSystem() && c.Name == InterestChargeCategoryName {
			root = c.ID
		}
	}
	if root == "" {
		return nil
	}
	ids := []string{root}
	for _, c := range cats {
		if c.ParentID == root {
			ids = append(ids, c.ID)
		}
	}
	return ids
}

// GetDebtSummary answers GET /v1/debt/summary. Debts on accounts the grant
// excludes are left out; interest charges in excluded categories are not
// counted. filtered is true when leaving them out changed a figure.
func (s *Service) GetDebtSummary(ctx context.Context, c finance.Caller) (finance.Result[DebtSummary], error) {
	var res finance.Result[DebtSummary]
	sc, err := s.k.Scope(ctx, c, true)
	if err != nil {
		return res, err
	}
	v, err := s.debts(ctx, c, sc)
	if err != nil {
		return res, err
	}
	cats, err := s.store.ListCategories(ctx, c.UserID)
	if err != nil {
		return res, finance.Internal("list categories", err)
	}
	today := finance.Day(s.k.Now())
	f := finance.TransactionFilter{StartDate: time.Date(today.Year(), 1, 1, 0, 0, 0, 0, time.UTC), EndDate: today,
		ExcludeAccountIDs: sc.ExcludedAccounts()}
	type ytd struct {
		sum decimal.Decimal
		any bool
	}
	interest := map[string]*ytd{}
	droppedInterest := false
	for _, catID := range interestCategories(cats) {
		f.CategoryID = catID
		rows, err := s.store.ListBudgetRows(ctx, c.UserID, f)
		if err != nil {
			return res, finance.Internal("list interest rows", err)
		}
		for _, r := range rows {
			if sc.HidesCategory(catID) {
				droppedInterest = true
				continue
			}
			y := interest[r.AccountID]
			if y == nil {
				y = &ytd{}
				interest[r.AccountID] = y
			}
			y.sum = y.sum.Sub(r.Amount.Amount) // a charge is negative on the account
			y.any = true
		}
	}
	in := make([]DebtInput, 0, len(v.accounts))
	for _, a := range v.accounts {
		d := DebtInput{Account: a}
		if l, ok := v.liabilities[a.ID]; ok {
			d.Liability = &l
		}
		if y := interest[a.ID]; y != nil {
			d.YTDInterest, d.HadInterest = y.sum, y.any
		}
		in = append(in, d)
	}
	res.Data = SummarizeDebts(in, today)
	res.Filtered = v.hidden || droppedInterest
	return res, nil
}

// CreatePayoffPlan answers POST /v1/debt/payoff-plan: a computation over
// the user's visible debts; nothing is stored.
func (s *Service) CreatePayoffPlan(ctx context.Context, c finance.Caller, req PayoffRequest) (finance.Result[PayoffPlan], error) {
	var res finance.Result[PayoffPlan]
	sc, err := s.k.Scope(ctx, c, false)
	if err != nil {
		return res, err
	}
	pr, err := readPayoffRequest(req)
	if err != nil {
		return res, err
	}
	v, err := s.debts(ctx, c, sc)
	if err != nil {
		return res, err
	}
	ids, filtered := plannedIDs(v, sc, pr.ids)
	res.Filtered = filtered
	for i, id := range pr.order {
		if !slices.Contains(ids, id) {
			return res, finance.Invalid("custom_order", "custom_order["+strconv.Itoa(i)+"] is not one of liability_ids")
		}
	}
	in := PayoffInput{Strategy: pr.strategy, CustomOrder: pr.order, Today: s.k.Now()}
	var excluded []PayoffExcluded
	in.Currency, in.Debts, excluded = plannableDebts(v, ids)
	if in.Currency != "" && -pr.amount.Exponent() > finance.MinorUnit(in.Currency) {
		return res, finance.Invalid(pr.field, pr.field+" has more decimal places than "+in.Currency+" allows")
	}
	if pr.field == "total_monthly_budget" {
		in.Budget = &pr.amount
	} else {
		in.Extra = &pr.amount
	}
	plan := SimulatePayoff(in)
	plan.Excluded = excluded
	if len(in.Debts) == 0 {
		plan.Assumptions = append(plan.Assumptions, "No requested debt can be planned: see excluded.")
	}
	res.Data = plan
	return res, nil
}

// payoffRequest is a PayoffRequest checked on its own.
type payoffRequest struct {
	ids, order []string // liability ids (none is all) and the custom order
	strategy   string
	field      string // total_monthly_budget or extra_monthly_payment, whichever was sent
	amount     decimal.Decimal
}

// readPayoffRequest checks the ids, the strategy (custom_order with
// custom only, and required there) and that exactly one of the monthly
// amounts was sent.
func readPayoffRequest(req PayoffRequest) (payoffRequest, error) {
	var pr payoffRequest
	var err error
	if pr.ids, err = payoffIDs(req.LiabilityIDs, "liability_ids"); err != nil {
		return pr, err
	}
	pr.strategy = req.Strategy
	switch pr.strategy {
	case StrategyAvalanche, StrategySnowball, StrategyCustom:
	default:
		return pr, finance.Invalid("strategy", "strategy must be one of avalanche, snowball, custom")
	}
	if pr.order, err = payoffIDs(req.CustomOrder, "custom_order"); err != nil {
		return pr, err
	}
	switch {
	case pr.strategy == StrategyCustom && len(pr.order) == 0:
		return pr, finance.Invalid("custom_order", "custom_order is required when strategy is custom")
	case pr.strategy != StrategyCustom && len(pr.order) > 0:
		return pr, finance.Invalid("custom_order", "custom_order is only allowed when strategy is custom")
	}
	if (req.TotalMonthlyBudget == "") == (req.ExtraMonthlyPay == "") {
		return pr, finance.Invalid("total_monthly_budget", "send exactly one of total_monthly_budget and extra_monthly_payment")
	}
	pr.field = "total_monthly_budget"
	raw := req.TotalMonthlyBudget
	if raw == "" {
		pr.field, raw = "extra_monthly_payment", req.ExtraMonthlyPay
	}
	if pr.amount, err = planAmount(raw, pr.field); err != nil {
		return pr, err
	}
	return pr, nil
}

// plannedIDs are the debts to plan and whether the grant filtered them:
// none requested is every visible debt with terms and a balance (a debt
// the grant hides is left out of "all"); a requested one the grant
// excludes is filtered.
func plannedIDs(v debtView, sc finance.Scope, ids []string) ([]string, bool) {
	filtered := false
	if len(ids) == 0 {
		filtered = v.hidden
		for _, a := range v.accounts {
			if _, ok := v.liabilities[a.ID]; ok && a.Balance.Amount.IsPositive() {
				ids = append(ids, a.ID)
			}
		}
		return ids, filtered
	}
	for _, id := range ids {
		if slices.Contains(sc.ExcludedAccounts(), id) {
			filtered = true
		}
	}
	return ids, filtered
}

// plannableDebts splits ids into the debts the plan can run, in the
// currency of the first one found, and those it excludes with why: not
// found, another currency, no APR, nothing owed.
func plannableDebts(v debtView, ids []string) (string, []PayoffDebt, []PayoffExcluded) {
	byID := map[string]finance.Account{}
	for _, a := range v.accounts {
		byID[a.ID] = a
	}
	var currency string
	var debts []PayoffDebt
	var excluded []PayoffExcluded
	for _, id := range ids {
		a, ok := byID[id]
		if !ok {
			excluded = append(excluded, PayoffExcluded{id, ExcludedNotFound})
			continue
		}
		if currency == "" {
			currency = a.Balance.Currency
		}
		l, hasTerms := v.liabilities[id]
		switch {
		case a.Balance.Currency != currency:
			excluded = append(excluded, PayoffExcluded{id, ExcludedCurrencyMismatch})
		case !hasTerms || l.APR == nil:
			excluded = append(excluded, PayoffExcluded{id, ExcludedNoAPR})
		case !a.Balance.Amount.IsPositive():
			excluded = append(excluded, PayoffExcluded{id, ExcludedNothingOwed})
		default:
			debts = append(debts, PayoffDebt{ID: id, Balance: a.Balance.Amount, Liability: l})
		}
	}
	return currency, debts, excluded
}

func payoffIDs(ids []string, field string) ([]string, error) {
	if len(ids) > MaxPayoffDebts {
		return nil, finance.Invalid(field, field+" may name at most "+strconv.Itoa(MaxPayoffDebts)+" liabilities")
	}
	out := make([]string, 0, len(ids))
	for i, id := range ids {
		f := field + "[" + strconv.Itoa(i) + "]"
		id, err := finance.RequiredUUID(id, f)
		if err != nil {
			return nil, err
		}
		if slices.Contains(out, id) {
			return nil, finance.Invalid(f, f+" repeats a liability")
		}
		out = append(out, id)
	}
	return out, nil
}

// planAmount parses a plain decimal amount ("250", "250.00"): no sign
// but an optional leading minus (refused), no exponent, no separators.
func planAmount(s, field string) (decimal.Decimal, error) {
	bad := finance.Invalid(field, field+" must be a decimal amount string such as \"500.00\", at least 0")
	if s == "" || strings.ContainsAny(s, "eE+_, ") || strings.HasPrefix(s, ".") || strings.HasSuffix(s, ".") {
		return decimal.Zero, bad
	}
	d, err := decimal.NewFromString(s)
	if err != nil || d.IsNegative() || d.GreaterThan(maxPayoffBudget) {
		return decimal.Zero, bad
	}
	if field == "total_monthly_budget" && !d.IsPositive() {
		return decimal.Zero, finance.Invalid(field, "total_monthly_budget must be above 0")
	}
	return d, nil
}
