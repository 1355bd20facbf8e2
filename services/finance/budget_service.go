package finance

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/ledgerlane/platform/pkg/problem"
)

// BudgetView is a budget as answered: the grant's hidden categories' items
// left out, and each item's spend in the current period.
type BudgetView struct {
	Budget
	// ItemSpent is each item's spent_amount in the period containing today.
	ItemSpent map[string]decimal.Decimal
}

// SwitchResult is the answer of the budget method switch.
type SwitchResult struct {
	NewBudgetID            string
	PreviousBudgetArchived bool
}

// MaxFutureMonths is how far ahead ?month may look: a year past the current
// period (upcoming recurring outflows only).
const MaxFutureMonths = 12

// ListBudgets answers GET /v1/budgets (ours): the active budget first, then
// archived ones, newest first.
func (s *Service) ListBudgets(ctx context.Context, c Caller, q PageQuery) (Page[BudgetView], error) {
	var page Page[BudgetView]
	sc, err := s.Scope(ctx, c, true)
	if err != nil {
		return page, err
	}
	pager, err := NewPager[budgetCursor](s, q)
	if err != nil {
		return page, err
	}
	after, err := pager.After(c, "/v1/budgets")
	if err != nil {
		return page, err
	}
	all, err := s.store.ListBudgets(ctx, c.UserID)
	if err != nil {
		return page, Internal("list budgets", err)
	}
	if after != nil {
		at, _ := time.Parse(time.RFC3339Nano, after.CreatedAt)
		pos := Budget{ID: after.ID, IsActive: after.Active, CreatedAt: at}
		i := 0
		for i < len(all) && CompareBudgets(all[i], pos) <= 0 {
			i++
		}
		all = all[i:]
	}
	if all, page.NextCursor, err = Cut(ctx, pager, all, func(b Budget) budgetCursor {
		return budgetCursor{ID: b.ID, Active: b.IsActive, CreatedAt: b.CreatedAt.UTC().Format(time.RFC3339Nano)}
	}); err != nil {
		return page, err
	}
	page.HasMore = page.NextCursor != ""
	for _, b := range all {
		v, err := s.budgetView(ctx, c, sc, b)
		if err != nil {
			return page, err
		}
		page.Data = append(page.Data, v)
	}
	page.RedactedFields = sc.Redacted(FieldConnectionInstitution)
	page.Filtered = sc.grant.Filtered()
	return page, nil
}

type budgetCursor struct {
	ID        string `json:"i"`
	Active    bool   `json:"a"`
	CreatedAt string `json:"c"`
}

func (p budgetCursor) Valid() bool {
	_, err := time.Parse(time.RFC3339Nano, p.CreatedAt)
	return err == nil && IsUUID(p.ID)
}

// GetBudget answers GET /v1/budgets/{id}.
func (s *Service) GetBudget(ctx context.Context, c Caller, id string) (Result[BudgetView], error) {
	var res Result[BudgetView]
	sc, err := s.Scope(ctx, c, true)
	if err != nil {
		return res, err
	}
	b, err := s.loadBudget(ctx, c, id)
	if err != nil {
		return res, err
	}
	if res.Data, err = s.budgetView(ctx, c, sc, b); err != nil {
		return res, err
	}
	res.RedactedFields = sc.Redacted(FieldConnectionInstitution)
	res.Filtered = sc.grant.Filtered()
	return res, nil
}

func (s *Service) loadBudget(ctx context.Context, c Caller, id string) (Budget, error) {
	id, err := RequiredUUID(id, "id")
	if err != nil {
		return Budget{}, err
	}
	b, err := s.store.GetBudget(ctx, c.UserID, id)
	if errors.Is(err, ErrNotFound) {
		return b, problem.New(problem.NotFound, "budget not found")
	}
	if err != nil {
		return b, Internal("get budget", err)
	}
	return b, nil
}

// visibleBudget leaves out the items of categories the grant hides, and
// free text naming a redacted institution.
func (sc Scope) visibleBudget(b Budget) Budget {
	groups := make([]TargetGroup, 0, len(b.Groups))
	redact := sc.grant.Redacts(FieldConnectionInstitution)
	for _, g := range b.Groups {
		items := make([]BudgetItem, 0, len(g.Items))
		for _, it := range g.Items {
			if !sc.HidesCategory(it.CategoryID) {
				items = append(items, it)
			}
		}
		g.Items = items
		if redact && sc.NamesInstitution(g.Name) {
			g.Name = ""
		}
		groups = append(groups, g)
	}
	b.Groups = groups
	if redact && sc.NamesInstitution(b.Name) {
		b.Name = ""
	}
	return b
}

func (s *Service) budgetView(ctx context.Context, c Caller, sc Scope, b Budget) (BudgetView, error) {
	b = sc.visibleBudget(b)
	v := BudgetView{Budget: b, ItemSpent: map[string]decimal.Decimal{}}
	if !b.IsActive {
		return v, nil // an archived budget has no current period
	}
	p, err := s.progress(ctx, c, sc, b, b.PeriodContaining(s.now()))
	if err != nil {
		return v, err
	}
	for _, g := range p.Groups {
		for _, it := range g.Items {
			v.ItemSpent[it.ItemID] = it.Spent
		}
	}
	return v, nil
}

// GetBudgetProgress answers GET /v1/budgets/{id}/progress. month (YYYY-MM)
// picks the period that starts in that month; empty means the period
// containing today.
func (s *Service) GetBudgetProgress(ctx context.Context, c Caller, id, month string) (Result[BudgetProgress], error) {
	var res Result[BudgetProgress]
	sc, err := s.Scope(ctx, c, true)
	if err != nil {
		return res, err
	}
	b, err := s.loadBudget(ctx, c, id)
	if err != nil {
		return res, err
	}
	b = sc.visibleBudget(b)
	today := Day(s.now())
	p := b.PeriodContaining(today)
	if month != "" {
		y, m, err := ParseMonth(month)
		if err != nil {
			return res, Invalid("month", "month must be YYYY-MM, from 1970-01")
		}
		p = b.PeriodStartingIn(y, m)
		limit := time.Date(today.Year(), today.Month()+MaxFutureMonths+1, 1, 0, 0, 0, 0, time.UTC)
		if !p.Start.Before(limit) {
			return res, Invalid("month", "month may be at most 12 months after the current one")
		}
	}
	if res.Data, err = s.progress(ctx, c, sc, b, p); err != nil {
		return res, err
	}
	res.RedactedFields = sc.Redacted(FieldConnectionInstitution)
	res.Filtered = sc.grant.Filtered()
	return res, nil
}

// progress computes (or, for a closed period, reads the frozen) progress of
// budget b (already visible-filtered) for period p under the caller's
// grant.
//
// A closed period (its end on or before today) is frozen the first time it
// is read: the figures are stored per budget, grant and period start, and
// every later read answers them, whatever edits arrive after. A snapshot at
// first read rather than a recomputation "as of the close": the store keeps
// no history of edits, so data as of the close cannot be rebuilt later.
func (s *Service) progress(ctx context.Context, c Caller, sc Scope, b Budget, p Period) (BudgetProgress, error) {
	today := Day(s.now())
	closed := !p.End.After(today)
	if closed {
		snap, err := s.store.GetProgressSnapshot(ctx, b.ID, c.GrantID, p.Start)
		if err == nil {
			var out BudgetProgress
			if err := json.Unmarshal(snap.Data, &out); err != nil {
				return out, Internal("decode progress snapshot", err)
			}
			return out, nil
		}
		if !errors.Is(err, ErrNotFound) {
			return BudgetProgress{}, Internal("get progress snapshot", err)
		}
	}
	in := ProgressInput{Budget: b, Period: p, Today: today}
	var err error
	if b.HasFeature(FeatureRollover) {
		first := b.PeriodContaining(b.CreatedAt)
		if p.Start.After(first.Start) {
			prev, err := s.progress(ctx, c, sc, b, b.Previous(p))
			if err != nil {
				return BudgetProgress{}, err
			}
			in.Rollover = map[string]decimal.Decimal{}
			for _, g := range prev.Groups {
				in.Rollover[g.GroupID] = g.Remaining
			}
		}
	}
	last := p.End.AddDate(0, 0, -1)
	in.Totals, err = s.store.SumFlows(ctx, c.UserID, FlowQuery{From: p.Start, To: last, Currency: b.Currency,
		CountedOnly: true, ExcludeAccountIDs: sc.excludedAccounts, ExcludeCategoryIDs: sc.excludedCategories})
	if err != nil {
		return BudgetProgress{}, Internal("sum flows", err)
	}
	if in.Totals == nil {
		in.Totals = []FlowTotal{} // read from the store: ComputeProgress must not sum Rows
	}
	if b.HasFeature(FeatureAnomalies) {
		if in.Baseline, err = s.anomalyBaseline(ctx, c, sc, b.Currency, p); err != nil {
			return BudgetProgress{}, err
		}
		if floors := in.Baseline.Floors(); len(floors) > 0 {
			f := TransactionFilter{ExcludeAccountIDs: sc.excludedAccounts, ExcludeCategoryIDs: sc.excludedCategories,
				StartDate: p.Start, EndDate: last}
			if in.Candidates, err = s.store.ListAnomalyCandidates(ctx, c.UserID, f, floors); err != nil {
				return BudgetProgress{}, Internal("list anomaly candidates", err)
			}
		}
		if in.Goals, err = s.visibleGoals(ctx, c, sc); err != nil {
			return BudgetProgress{}, err
		}
	}
	if in.Categories, err = s.visibleCategories(ctx, c, sc); err != nil {
		return BudgetProgress{}, err
	}
	if p.End.After(today) {
		rules, err := s.recurringRules(ctx, c.UserID)
		if err != nil {
			return BudgetProgress{}, err
		}
		for _, r := range rules {
			if !sc.HidesAccount(r.AccountID) && !sc.HidesCategory(r.CategoryID) {
				in.Rules = append(in.Rules, r)
			}
		}
	}
	out := ComputeProgress(in)
	if !closed {
		return out, nil
	}
	data, err := json.Marshal(out)
	if err != nil {
		return out, Internal("encode progress snapshot", err)
	}
	snap, err := s.store.SaveProgressSnapshot(ctx, ProgressSnapshot{BudgetID: b.ID, UserID: c.UserID,
		GrantID: c.GrantID, PeriodStart: p.Start, Data: data, CreatedAt: s.now()})
	if err != nil {
		return out, Internal("save progress snapshot", err)
	}
	var stored BudgetProgress
	if err := json.Unmarshal(snap.Data, &stored); err != nil {
		return out, Internal("decode progress snapshot", err)
	}
	return stored, nil
}

// SwitchBudgetMethod answers POST /v1/budgets/switch-method: it builds a new
// active budget of the method from the user's categories (allocations from
// the last three full months' spend, expected income from the previous
// budget or else the last three months' income) and archives the active
// one, in one atomic store step.
func (s *Service) SwitchBudgetMethod(ctx context.Context, c Caller, method string, confirm *bool) (Result[SwitchResult], error) {
	var res Result[SwitchResult]
	sc, err := s.WriteScope(ctx, c)
	if err != nil {
		return res, err
	}
	if method == "" {
		return res, Invalid("method", "method is required")
	}
	if !ValidMethod(method) {
		return res, Invalid("method", "method must be one of fifty_thirty_twenty, pay_yourself_first, zero_based, envelope, kakeibo, fire, values_based, custom")
	}
	if confirm == nil || !*confirm {
		return res, Invalid("confirm", "confirm must be true: the switch archives the current budget and creates a new one")
	}
	now := s.now()
	cats, err := s.store.ListCategories(ctx, c.UserID)
	if err != nil {
		return res, Internal("list categories", err)
	}
	budgets, err := s.store.ListBudgets(ctx, c.UserID)
	if err != nil {
		return res, Internal("list budgets", err)
	}
	currency := "USD"
	var income *decimal.Decimal
	if len(budgets) > 0 && budgets[0].IsActive {
		currency, income = budgets[0].Currency, budgets[0].ExpectedMonthlyIncome
	}
	spend, avgIncome, err := s.monthlyAverages(ctx, c, cats, currency, now)
	if err != nil {
		return res, err
	}
	if income == nil && avgIncome.IsPositive() {
		income = &avgIncome
	}
	b := NewBudget(BudgetTemplate{Method: method, UserID: c.UserID, Currency: currency, Categories: cats,
		MonthlySpend: spend, MonthlyIncome: income, NewID: uuid.NewString, Now: now})
	b.ID = c.derivedID("budget")
	archived, err := s.store.SwitchBudget(ctx, b)
	if errors.Is(err, ErrAlreadyExists) && c.IdempotencyKey != "" {
		// The same key switched already and its answer was lost after the
		// commit: answer what it did. Every switch archives the budget
		// active before it, so one was archived exactly when the new
		// budget is not the user's first.
		res.Data = SwitchResult{NewBudgetID: b.ID, PreviousBudgetArchived: len(budgets) > 1 ||
			(len(budgets) == 1 && budgets[0].ID != b.ID)}
		res.Filtered = sc.grant.Filtered()
		return res, nil
	}
	if err != nil {
		return res, Internal("switch budget", err)
	}
	res.Data = SwitchResult{NewBudgetID: b.ID, PreviousBudgetArchived: archived != ""}
	res.Filtered = sc.grant.Filtered()
	return res, nil
}

// monthlyAverages is the average monthly spend per category (rolled up to
// the top level, the savings category on its own) and the average monthly
// income over the three full months before now, counted like progress.
func (s *Service) monthlyAverages(ctx context.Context, c Caller, cats []Category, currency string, now time.Time) (map[string]decimal.Decimal, decimal.Decimal, error) {
	end := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
	start := end.AddDate(0, -3, 0)
	totals, err := s.store.SumFlows(ctx, c.UserID, FlowQuery{From: start, To: end.AddDate(0, 0, -1), Currency: currency, CountedOnly: true})
	if err != nil {
		return nil, decimal.Zero, Internal("sum flows", err)
	}
	cl := classify(cats)
	cn := newCounter(Budget{Currency: currency}, cats)
	spend := map[string]decimal.Decimal{}
	var income decimal.Decimal
	for _, t := range totals {
		if !cn.countsTotal(t) {
			continue
		}
		if cn.isIncome(t.CategoryID) {
			income = income.Add(t.Net)
			continue
		}
		key := t.CategoryID
		if key != cl.savings && cn.parent[key] != "" {
			key = cn.parent[key]
		}
		spend[key] = spend[key].Sub(t.Net)
	}
	three := decNum(3)
	for k, v := range spend {
		spend[k] = v.Div(three)
	}
	return spend, income.Div(three).Round(MinorUnit(currency)), nil
}

// MethodMeta is the view's method meta.
func (v BudgetView) MethodMeta() MethodMeta { return MetaFor(v.MethodType) }
