package budgets

import (
	"context"
	"errors"
	"time"

	"github.com/shopspring/decimal"
	"golang.org/x/sync/errgroup"

	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/services/finance"
)

// GoalView is a goal as answered, with its computed progress.
type GoalView struct {
	Goal
	Progress GoalProgress
}

// goalContext is what computing goals needs once per request.
type goalContext struct {
	accounts map[string]finance.Account
	items    map[string]BudgetItem // budget item id → item, over all budgets
	cats     []finance.Category
}

func (s *Service) goalContext(ctx context.Context, c finance.Caller, sc finance.Scope) (goalContext, error) {
	gc := goalContext{accounts: map[string]finance.Account{}, items: map[string]BudgetItem{}}
	accounts, err := s.store.ListAccounts(ctx, c.UserID)
	if err != nil {
		return gc, finance.Internal("list accounts", err)
	}
	for _, a := range accounts {
		gc.accounts[a.ID] = a
	}
	budgets, err := s.store.ListBudgets(ctx, c.UserID)
	if err != nil {
		return gc, finance.Internal("list budgets", err)
	}
	for _, b := range budgets {
		for _, g := range b.Groups {
			for _, it := range g.Items {
				gc.items[it.ID] = it
			}
		}
	}
	gc.cats, err = s.k.VisibleCategories(ctx, c, sc)
	return gc, err
}

// visibleGoal applies the grant to a goal: links to hidden accounts,
// budget links to items of hidden categories and plan lines in hidden
// categories are left out; a goal that was linked to accounts and has none
// left is hidden whole (ok false), exactly like one that does not exist.
func visibleGoal(sc finance.Scope, g Goal, items map[string]BudgetItem) (Goal, bool) {
	var accounts []GoalAccountLink
	for _, l := range g.AccountLinks {
		if !sc.HidesAccount(l.AccountID) {
			accounts = append(accounts, l)
		}
	}
	if len(g.AccountLinks) > 0 && len(accounts) == 0 {
		return g, false
	}
	g.AccountLinks = accounts
	var links []GoalBudgetLink
	for _, l := range g.BudgetLinks {
		if it, ok := items[l.BudgetItemID]; !ok || !sc.HidesCategory(it.CategoryID) {
			links = append(links, l)
		}
	}
	g.BudgetLinks = links
	var plan []GoalPlanLine
	for _, l := range g.SpendingPlan {
		if !sc.HidesCategory(l.CategoryID) {
			plan = append(plan, l)
		}
	}
	g.SpendingPlan = plan
	if sc.Grant().Redacts(finance.FieldConnectionInstitution) {
		if sc.NamesInstitution(g.Name) {
			g.Name = ""
		}
		if sc.NamesInstitution(g.Description) {
			g.Description = ""
		}
		for i := range g.SpendingPlan {
			if sc.NamesInstitution(g.SpendingPlan[i].Name) {
				g.SpendingPlan[i].Name = ""
			}
		}
	}
	return g, true
}

// visibleGoals is every goal the grant shows, for spending-plan coverage.
func (s *Service) visibleGoals(ctx context.Context, c finance.Caller, sc finance.Scope) ([]Goal, error) {
	all, err := s.store.ListGoals(ctx, c.UserID, nil, 0)
	if err != nil {
		return nil, finance.Internal("list goals", err)
	}
	var items map[string]BudgetItem
	if len(sc.ExcludedCategories()) > 0 {
		if gc, err := s.goalContext(ctx, c, sc); err != nil {
			return nil, err
		} else {
			items = gc.items
		}
	}
	var out []Goal
	for _, g := range all {
		if v, ok := visibleGoal(sc, g, items); ok {
			out = append(out, v)
		}
	}
	return out, nil
}

// goalViewParallelism bounds the goals of one page measured at once (each
// holds a database connection while it reads).
const goalViewParallelism = 4

// ListGoals answers GET /v1/goals, by sort order then id.
func (s *Service) ListGoals(ctx context.Context, c finance.Caller, q finance.PageQuery) (finance.Page[GoalView], error) {
	var page finance.Page[GoalView]
	l, err := finance.OpenList[goalCursor](ctx, s.k, c, q, finance.ListRoute{Path: "/v1/goals", WithCategories: true})
	if err != nil {
		return page, err
	}
	sc, pager, cur := l.Scope, l.Pager, l.After
	size := pager.Size
	var after *GoalPosition
	if cur != nil {
		after = &GoalPosition{SortOrder: cur.SortOrder, ID: cur.ID}
	}
	gc, err := s.goalContext(ctx, c, sc)
	if err != nil {
		return page, err
	}
	// Hidden goals are skipped, so a page reads on until it is full.
	var visible []Goal
	for len(visible) <= size {
		goals, err := s.store.ListGoals(ctx, c.UserID, after, size+1)
		if err != nil {
			return page, finance.Internal("list goals", err)
		}
		for _, g := range goals {
			after = &GoalPosition{SortOrder: g.SortOrder, ID: g.ID}
			if v, ok := visibleGoal(sc, g, gc.items); ok && len(visible) <= size {
				visible = append(visible, v)
			}
		}
		if len(goals) <= size {
			break
		}
	}
	// Each goal's measures are a few store reads: a page's run side by
	// side, so it answers in about the time of its slowest goal.
	page.Data = make([]GoalView, len(visible))
	eg, ectx := errgroup.WithContext(ctx)
	eg.SetLimit(goalViewParallelism)
	for i, g := range visible {
		eg.Go(func() error {
			view, err := s.goalView(ectx, c, sc, gc, g)
			page.Data[i] = view
			return err
		})
	}
	if err := eg.Wait(); err != nil {
		return finance.Page[GoalView]{}, err
	}
	if page.Data, page.NextCursor, err = finance.Cut(ctx, pager, page.Data, func(g GoalView) goalCursor {
		return goalCursor{SortOrder: g.SortOrder, ID: g.ID}
	}); err != nil {
		return page, err
	}
	page.HasMore = page.NextCursor != ""
	page.RedactedFields = sc.Redacted(finance.FieldConnectionInstitution)
	page.Filtered = sc.Grant().Filtered()
	return page, nil
}

type goalCursor struct {
	SortOrder int32  `json:"s"`
	ID        string `json:"i"`
}

func (p goalCursor) Valid() bool { return finance.IsUUID(p.ID) }

// GetGoal answers GET /v1/goals/{id}.
func (s *Service) GetGoal(ctx context.Context, c finance.Caller, id string) (finance.Result[GoalView], error) {
	var res finance.Result[GoalView]
	sc, err := s.k.Scope(ctx, c, true)
	if err != nil {
		return res, err
	}
	if id, err = finance.RequiredUUID(id, "id"); err != nil {
		return res, err
	}
	_, v, gc, err := s.readGoal(ctx, c, sc, id)
	if err != nil {
		return res, err
	}
	if res.Data, err = s.goalView(ctx, c, sc, gc, v); err != nil {
		return res, err
	}
	res.RedactedFields = sc.Redacted(finance.FieldConnectionInstitution)
	res.Filtered = sc.Grant().Filtered()
	return res, nil
}

// readGoal reads goal id as stored (g) and as the grant shows it (v), with
// the goal context both are read in. A goal the grant hides is not found.
func (s *Service) readGoal(ctx context.Context, c finance.Caller, sc finance.Scope, id string) (g, v Goal, gc goalContext, err error) {
	g, err = s.store.GetGoal(ctx, c.UserID, id)
	if errors.Is(err, finance.ErrNotFound) {
		return g, v, gc, problem.New(problem.NotFound, "goal not found")
	}
	if err != nil {
		return g, v, gc, finance.Internal("get goal", err)
	}
	if gc, err = s.goalContext(ctx, c, sc); err != nil {
		return g, v, gc, err
	}
	v, ok := visibleGoal(sc, g, gc.items)
	if !ok {
		return g, v, gc, problem.New(problem.NotFound, "goal not found")
	}
	return g, v, gc, nil
}

// goalView measures a visible goal and computes its progress. A goal found
// reached (unfiltered view) is marked completed once, at that moment.
func (s *Service) goalView(ctx context.Context, c finance.Caller, sc finance.Scope, gc goalContext, g Goal) (GoalView, error) {
	now := s.k.Now()
	facts, err := s.goalFacts(ctx, c, sc, gc, g, now)
	if err != nil {
		return GoalView{}, err
	}
	for i, l := range g.AccountLinks {
		if a, ok := gc.accounts[l.AccountID]; ok {
			g.AccountLinks[i].AccountType = a.Type
		}
	}
	if g.Status == GoalActive && g.CompletedAt == nil && g.TargetAmount.IsPositive() &&
		!facts.Current.LessThan(g.TargetAmount) && !sc.Grant().Filtered() {
		if err := s.store.MarkGoalCompleted(ctx, c.UserID, g.ID, now); err != nil {
			return GoalView{}, finance.Internal("mark goal completed", err)
		}
		at := now.UTC().Truncate(time.Microsecond)
		g.Status, g.CompletedAt = GoalCompleted, &at
	}
	return GoalView{Goal: g, Progress: ComputeGoalProgress(g, facts, now)}, nil
}

// goalFacts measures a goal by its tracking mode (goal.go).
func (s *Service) goalFacts(ctx context.Context, c finance.Caller, sc finance.Scope, gc goalContext, g Goal, now time.Time) (GoalFacts, error) {
	f := GoalFacts{Current: g.CurrentAmount, MonthlyContributions: make([]decimal.Decimal, 3)}
	w := newRateWindow(now)
	base := finance.FlowQuery{ExcludeAccountIDs: sc.ExcludedAccounts(), ExcludeCategoryIDs: sc.ExcludedCategories()}
	switch g.TrackingMode {
	case TrackAccountDriven:
		return f, s.accountGoalFacts(ctx, c, gc, g, w, base, &f)
	case TrackBudgetDriven:
		return f, s.budgetGoalFacts(ctx, c, gc, g, w, base, &f)
	default: // manual: no measured contributions
		f.MonthlyContributions = nil
		return f, nil
	}
}

// rateWindow is the three full months before now's month, over which a
// goal's contribution rate is measured.
type rateWindow struct {
	thisMonth time.Time // the first of now's month
	rateStart time.Time // three months before it
}

func newRateWindow(now time.Time) rateWindow {
	thisMonth := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
	return rateWindow{thisMonth: thisMonth, rateStart: thisMonth.AddDate(0, -3, 0)}
}

// monthIndex is 0..2 for a day in the three full months, -1 otherwise.
func (w rateWindow) monthIndex(d time.Time) int {
	if d.Before(w.rateStart) || !d.Before(w.thisMonth) {
		return -1
	}
	return (d.Year()-w.rateStart.Year())*12 + int(d.Month()) - int(w.rateStart.Month())
}

// noteContribution keeps d as f's last contribution day when it is the
// latest seen.
func noteContribution(f *GoalFacts, d time.Time) {
	if f.LastContributionAt == nil || d.After(*f.LastContributionAt) {
		f.LastContributionAt = &d
	}
}

// accountGoalFacts measures an account_driven goal: its current amount is
// its funding accounts' balance plus, for payoff links, how much of the
// target the debt no longer owes; its contributions are the accounts'
// net flows per month.
func (s *Service) accountGoalFacts(ctx context.Context, c finance.Caller, gc goalContext, g Goal, w rateWindow, base finance.FlowQuery, f *GoalFacts) error {
	f.Current = decimal.Zero
	var owed decimal.Decimal
	payoff := false
	var ids []string
	for _, l := range g.AccountLinks {
		a, ok := gc.accounts[l.AccountID]
		if !ok || a.Balance.Currency != g.Currency {
			continue
		}
		if l.LinkRole == LinkRolePayoff {
			payoff = true
			owed = owed.Add(a.Balance.Amount)
		} else {
			f.Current = f.Current.Add(a.Balance.Amount)
		}
		ids = append(ids, a.ID)
	}
	if len(ids) > 0 {
		if err := s.accountContributions(ctx, c, g, ids, w, base, f); err != nil {
			return err
		}
	}
	if payoff {
		f.Current = f.Current.Add(decimal.Max(g.TargetAmount.Sub(owed), decimal.Zero))
	}
	return nil
}

// accountContributions adds the accounts' net flow of each month of the
// window and notes the last day money came in over the past year. It sums
// the store's flow totals: a year of an account's rows at scale is tens of
// thousands.
func (s *Service) accountContributions(ctx context.Context, c finance.Caller, g Goal, ids []string, w rateWindow, base finance.FlowQuery, f *GoalFacts) error {
	q := base
	q.AccountIDs, q.Currency, q.From, q.To, q.ByMonth = ids, g.Currency, w.rateStart, w.thisMonth.AddDate(0, 0, -1), true
	flows, err := s.store.SumFlows(ctx, c.UserID, q)
	if err != nil {
		return finance.Internal("sum flows", err)
	}
	for _, m := range flows {
		if i := w.monthIndex(m.Month); i >= 0 {
			f.MonthlyContributions[i] = f.MonthlyContributions[i].Add(m.Net)
		}
	}
	q.From, q.To, q.ByMonth = w.thisMonth.AddDate(-1, 0, 0), finance.EndOfTime, false
	in, err := s.store.LastFlowDay(ctx, c.UserID, q, true)
	if err != nil {
		return finance.Internal("last flow day", err)
	}
	if in != nil {
		noteContribution(f, *in)
	}
	return nil
}

// budgetGoalFacts measures a budget_driven goal: each active budget link
// contributes what its item's category (and subcategories) spent per
// month, capped at the link's contribution amount; the current amount
// adds the contributions since the goal's creation month.
func (s *Service) budgetGoalFacts(ctx context.Context, c finance.Caller, gc goalContext, g Goal, w rateWindow, base finance.FlowQuery, f *GoalFacts) error {
	created := time.Date(g.CreatedAt.Year(), g.CreatedAt.Month(), 1, 0, 0, 0, 0, time.UTC)
	from := created
	if w.rateStart.Before(from) {
		from = w.rateStart
	}
	cn := newCounter(Budget{Currency: g.Currency}, gc.cats)
	var totals []finance.FlowTotal
	q := base
	q.Currency, q.CountedOnly, q.From, q.To = g.Currency, true, from, finance.EndOfTime
	if len(g.BudgetLinks) > 0 {
		q.ByMonth = true
		var err error
		if totals, err = s.store.SumFlows(ctx, c.UserID, q); err != nil {
			return finance.Internal("sum flows", err)
		}
	}
	for _, l := range g.BudgetLinks {
		it, ok := gc.items[l.BudgetItemID]
		if !l.IsActive || !ok {
			continue
		}
		q.ByMonth, q.CategoryIDs = false, itemCategories(cn, it.CategoryID)
		out, err := s.store.LastFlowDay(ctx, c.UserID, q, false)
		if err != nil {
			return finance.Internal("last flow day", err)
		}
		if out != nil {
			noteContribution(f, *out)
		}
		for m, v := range itemSpendByMonth(cn, totals, it.CategoryID) {
			contrib := decimal.Min(decimal.Max(v, decimal.Zero), l.ContributionAmount)
			if !m.Before(created) {
				f.Current = f.Current.Add(contrib)
			}
			if i := w.monthIndex(m); i >= 0 {
				f.MonthlyContributions[i] = f.MonthlyContributions[i].Add(contrib)
			}
		}
	}
	return nil
}

// itemSpendByMonth is the counted outflow per month of category cat and
// its subcategories.
func itemSpendByMonth(cn counter, totals []finance.FlowTotal, cat string) map[time.Time]decimal.Decimal {
	flow := map[time.Time]decimal.Decimal{}
	for _, t := range totals {
		if cn.countsTotal(t) && (t.CategoryID == cat || cn.parent[t.CategoryID] == cat) {
			flow[t.Month] = flow[t.Month].Sub(t.Net)
		}
	}
	return flow
}

// itemCategories is category cat and its subcategories.
func itemCategories(cn counter, cat string) []string {
	ids := []string{cat}
	for id, parent := range cn.parent {
		if parent == cat {
			ids = append(ids, id)
		}
	}
	return ids
}
