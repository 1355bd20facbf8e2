// Package budgets owns budgets with their goals: the budget methods and the
// budget built from one, periods, progress (spend, allocations, rollover,
// anomalies and the recurring outflows still expected in a period), the
// frozen progress of closed periods, the allocations PATCH, and savings,
// purchase and debt-payoff goals with their account links, budget links
// and spending plans. Goals live here rather than in a package of their own
// because the two read each other: a goal's budget links name budget items,
// and a budget's anomalies are covered by goals' spending plans.
//
// It may import the kernel (finance) and recurring, whose rules give a
// period's upcoming recurring outflows (Config.Recurring); nothing else of
// finance. recurring never imports budgets: the direction is one way. The
// wiring (server), the wire (grpcapi), the stores and the demo seed import
// it.
package budgets

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/services/finance"
	"github.com/ledgerlane/platform/services/finance/recurring"
)

// Config assembles a Service.
type Config struct {
	// Kernel is the finance service: the caller's scope, categories, the
	// clock.
	Kernel *finance.Service
	// Recurring gives the recurring rules progress expects in a period.
	Recurring *recurring.Service
	Store     Store
	// Alerts publishes budget.threshold_reached; nil: thresholds are not
	// checked (no events wired).
	Alerts AlertPublisher
}

// Service answers the budget and goal routes with the caller's grant
// applied.
type Service struct {
	k         *finance.Service
	recurring *recurring.Service
	store     Store
	// baselines caches budget anomaly baselines (baseline.go).
	baselines *baselineCache
	alerts    AlertPublisher
}

// NewService returns a Service from cfg.
func NewService(cfg Config) *Service {
	return &Service{k: cfg.Kernel, recurring: cfg.Recurring, store: cfg.Store, baselines: &baselineCache{},
		alerts: cfg.Alerts}
}

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

// ListBudgets answers GET /v1/budgets (ours): the active budget first, then
// archived ones, newest first.
func (s *Service) ListBudgets(ctx context.Context, c finance.Caller, q finance.PageQuery) (finance.Page[BudgetView], error) {
	var page finance.Page[BudgetView]
	l, err := finance.OpenList[budgetCursor](ctx, s.k, c, q, finance.ListRoute{Path: "/v1/budgets", WithCategories: true})
	if err != nil {
		return page, err
	}
	sc, pager, after := l.Scope, l.Pager, l.After
	all, err := s.store.ListBudgets(ctx, c.UserID)
	if err != nil {
		return page, finance.Internal("list budgets", err)
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
	if all, page.NextCursor, err = finance.Cut(ctx, pager, all, func(b Budget) budgetCursor {
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
	page.RedactedFields = sc.Redacted(finance.FieldConnectionInstitution)
	page.Filtered = sc.Grant().Filtered()
	return page, nil
}

type budgetCursor struct {
	ID        string `json:"i"`
	Active    bool   `json:"a"`
	CreatedAt string `json:"c"`
}

func (p budgetCursor) Valid() bool {
	_, err := time.Parse(time.RFC3339Nano, p.CreatedAt)
	return err == nil && finance.IsUUID(p.ID)
}

// scopedBudget opens a read of budget id: the caller's scope, and the
// budget as stored.
func (s *Service) scopedBudget(ctx context.Context, c finance.Caller, id string) (finance.Scope, Budget, error) {
	sc, err := s.k.Scope(ctx, c, true)
	if err != nil {
		return sc, Budget{}, err
	}
	b, err := s.loadBudget(ctx, c, id)
	return sc, b, err
}

// GetBudget answers GET /v1/budgets/{id}.
func (s *Service) GetBudget(ctx context.Context, c finance.Caller, id string) (finance.Result[BudgetView], error) {
	var res finance.Result[BudgetView]
	sc, b, err := s.scopedBudget(ctx, c, id)
	if err != nil {
		return res, err
	}
	if res.Data, err = s.budgetView(ctx, c, sc, b); err != nil {
		return res, err
	}
	res.RedactedFields = sc.Redacted(finance.FieldConnectionInstitution)
	res.Filtered = sc.Grant().Filtered()
	return res, nil
}

func (s *Service) loadBudget(ctx context.Context, c finance.Caller, id string) (Budget, error) {
	id, err := finance.RequiredUUID(id, "id")
	if err != nil {
		return Budget{}, err
	}
	b, err := s.store.GetBudget(ctx, c.UserID, id)
	if errors.Is(err, finance.ErrNotFound) {
		return b, problem.New(problem.NotFound, "budget not found")
	}
	if err != nil {
		return b, finance.Internal("get budget", err)
	}
	return b, nil
}

// visibleBudget leaves out the items of categories the grant hides, and
// free text naming a redacted institution.
func visibleBudget(sc finance.Scope, b Budget) Budget {
	groups := make([]TargetGroup, 0, len(b.Groups))
	redact := sc.Grant().Redacts(finance.FieldConnectionInstitution)
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

func (s *Service) budgetView(ctx context.Context, c finance.Caller, sc finance.Scope, b Budget) (BudgetView, error) {
	b = visibleBudget(sc, b)
	v := BudgetView{Budget: b, ItemSpent: map[string]decimal.Decimal{}}
	if !b.IsActive {
		return v, nil // an archived budget has no current period
	}
	p, err := s.progress(ctx, c, sc, b, b.PeriodContaining(s.k.Now()))
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
func (s *Service) GetBudgetProgress(ctx context.Context, c finance.Caller, id, month string) (finance.Result[BudgetProgress], error) {
	var res finance.Result[BudgetProgress]
	sc, b, err := s.scopedBudget(ctx, c, id)
	if err != nil {
		return res, err
	}
	b = visibleBudget(sc, b)
	today := finance.Day(s.k.Now())
	p := b.PeriodContaining(today)
	if month != "" {
		y, m, err := finance.ParseMonth(month)
		if err != nil {
			return res, finance.Invalid("month", "month must be YYYY-MM, from 1970-01")
		}
		p = b.PeriodStartingIn(y, m)
		limit := time.Date(today.Year(), today.Month()+finance.MaxFutureMonths+1, 1, 0, 0, 0, 0, time.UTC)
		if !p.Start.Before(limit) {
			return res, finance.Invalid("month", "month may be at most 12 months after the current one")
		}
	}
	if res.Data, err = s.progress(ctx, c, sc, b, p); err != nil {
		return res, err
	}
	res.RedactedFields = sc.Redacted(finance.FieldConnectionInstitution)
	res.Filtered = sc.Grant().Filtered()
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
func (s *Service) progress(ctx context.Context, c finance.Caller, sc finance.Scope, b Budget, p Period) (BudgetProgress, error) {
	today := finance.Day(s.k.Now())
	closed := !p.End.After(today)
	if closed {
		snap, err := s.store.GetProgressSnapshot(ctx, b.ID, c.GrantID, p.Start)
		if err == nil {
			var out BudgetProgress
			if err := json.Unmarshal(snap.Data, &out); err != nil {
				return out, finance.Internal("decode progress snapshot", err)
			}
			return out, nil
		}
		if !errors.Is(err, finance.ErrNotFound) {
			return BudgetProgress{}, finance.Internal("get progress snapshot", err)
		}
	}
	in := ProgressInput{Budget: b, Period: p, Today: today}
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
	if err := s.flows(ctx, c, sc, &in); err != nil {
		return BudgetProgress{}, err
	}
	if p.End.After(today) {
		rules, err := s.recurring.Rules(ctx, c.UserID)
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
		return out, finance.Internal("encode progress snapshot", err)
	}
	snap, err := s.store.SaveProgressSnapshot(ctx, ProgressSnapshot{BudgetID: b.ID, UserID: c.UserID,
		GrantID: c.GrantID, PeriodStart: p.Start, Data: data, CreatedAt: s.k.Now()})
	if err != nil {
		return out, finance.Internal("save progress snapshot", err)
	}
	var stored BudgetProgress
	if err := json.Unmarshal(snap.Data, &stored); err != nil {
		return out, finance.Internal("decode progress snapshot", err)
	}
	return stored, nil
}

// flows reads what the period's spend and income are counted from into in
// (its Budget and Period set): the counted flow totals, and with anomalies
// their candidates, baseline and the goals that may cover them; and the
// categories the grant shows.
func (s *Service) flows(ctx context.Context, c finance.Caller, sc finance.Scope, in *ProgressInput) error {
	b, p := in.Budget, in.Period
	last := p.End.AddDate(0, 0, -1)
	var err error
	in.Totals, err = s.store.SumFlows(ctx, c.UserID, finance.FlowQuery{From: p.Start, To: last, Currency: b.Currency,
		CountedOnly: true, ExcludeAccountIDs: sc.ExcludedAccounts(), ExcludeCategoryIDs: sc.ExcludedCategories()})
	if err != nil {
		return finance.Internal("sum flows", err)
	}
	if in.Totals == nil {
		in.Totals = []finance.FlowTotal{} // read from the store: ComputeProgress must not sum Rows
	}
	if b.HasFeature(FeatureAnomalies) {
		if in.Baseline, err = s.anomalyBaseline(ctx, c, sc, b.Currency, p); err != nil {
			return err
		}
		if floors := in.Baseline.Floors(); len(floors) > 0 {
			f := finance.TransactionFilter{ExcludeAccountIDs: sc.ExcludedAccounts(), ExcludeCategoryIDs: sc.ExcludedCategories(),
				StartDate: p.Start, EndDate: last}
			if in.Candidates, err = s.store.ListAnomalyCandidates(ctx, c.UserID, f, floors); err != nil {
				return finance.Internal("list anomaly candidates", err)
			}
		}
		if in.Goals, err = s.visibleGoals(ctx, c, sc); err != nil {
			return err
		}
	}
	if in.Categories, err = s.k.VisibleCategories(ctx, c, sc); err != nil {
		return err
	}
	return nil
}

// figures is the period's progress for the alert thresholds: spent and
// allocated exactly as progress computes them, without what they do not
// depend on (rollover, which moves only remaining, and the upcoming
// recurring outflows) and never frozen, so a check never snapshots a
// closed period before a client reads it.
func (s *Service) figures(ctx context.Context, c finance.Caller, sc finance.Scope, b Budget, p Period) (BudgetProgress, error) {
	in := ProgressInput{Budget: b, Period: p, Today: finance.Day(s.k.Now())}
	if err := s.flows(ctx, c, sc, &in); err != nil {
		return BudgetProgress{}, err
	}
	return ComputeProgress(in), nil
}

// SwitchBudgetMethod answers POST /v1/budgets/switch-method: it builds a new
// active budget of the method from the user's categories (allocations from
// the last three full months' spend, expected income from the previous
// budget or else the last three months' income) and archives the active
// one, in one atomic store step.
//
// thresholds are the new budget's alert_thresholds (ParseAlertThresholds);
// none gives DefaultAlertThresholds.
func (s *Service) SwitchBudgetMethod(ctx context.Context, c finance.Caller, method string, confirm *bool, thresholds []int32) (finance.Result[SwitchResult], error) {
	var res finance.Result[SwitchResult]
	sc, err := s.k.WriteScope(ctx, c)
	if err != nil {
		return res, err
	}
	if method == "" {
		return res, finance.Invalid("method", "method is required")
	}
	if !ValidMethod(method) {
		return res, finance.Invalid("method", "method must be one of fifty_thirty_twenty, pay_yourself_first, zero_based, envelope, kakeibo, fire, values_based, custom")
	}
	if confirm == nil || !*confirm {
		return res, finance.Invalid("confirm", "confirm must be true: the switch archives the current budget and creates a new one")
	}
	thresholds, err = ParseAlertThresholds(thresholds, "alert_thresholds")
	if err != nil {
		return res, err
	}
	now := s.k.Now()
	cats, err := s.store.ListCategories(ctx, c.UserID)
	if err != nil {
		return res, finance.Internal("list categories", err)
	}
	budgets, err := s.store.ListBudgets(ctx, c.UserID)
	if err != nil {
		return res, finance.Internal("list budgets", err)
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
	b.ID = c.DerivedID("budget")
	if len(thresholds) > 0 {
		b.AlertThresholds = thresholds
	}
	archived, err := s.store.SwitchBudget(ctx, b)
	if errors.Is(err, finance.ErrAlreadyExists) && c.IdempotencyKey != "" {
		// The same key switched already and its answer was lost after the
		// commit: answer what it did. Every switch archives the budget
		// active before it, so one was archived exactly when the new
		// budget is not the user's first.
		res.Data = SwitchResult{NewBudgetID: b.ID, PreviousBudgetArchived: len(budgets) > 1 ||
			(len(budgets) == 1 && budgets[0].ID != b.ID)}
		res.Filtered = sc.Grant().Filtered()
		return res, nil
	}
	if err != nil {
		return res, finance.Internal("switch budget", err)
	}
	res.Data = SwitchResult{NewBudgetID: b.ID, PreviousBudgetArchived: archived != ""}
	res.Filtered = sc.Grant().Filtered()
	s.AfterWrite(ctx, c.UserID) // new allocations: a group may start above a threshold
	return res, nil
}

// monthlyAverages is the average monthly spend per category (rolled up to
// the top level, the savings category on its own) and the average monthly
// income over the three full months before now, counted like progress.
func (s *Service) monthlyAverages(ctx context.Context, c finance.Caller, cats []finance.Category, currency string, now time.Time) (map[string]decimal.Decimal, decimal.Decimal, error) {
	end := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
	start := end.AddDate(0, -3, 0)
	totals, err := s.store.SumFlows(ctx, c.UserID, finance.FlowQuery{From: start, To: end.AddDate(0, 0, -1), Currency: currency, CountedOnly: true})
	if err != nil {
		return nil, decimal.Zero, finance.Internal("sum flows", err)
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
	return spend, income.Div(three).Round(finance.MinorUnit(currency)), nil
}

// MethodMeta is the view's method meta.
func (v BudgetView) MethodMeta() MethodMeta { return MetaFor(v.MethodType) }
