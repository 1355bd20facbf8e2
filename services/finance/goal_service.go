package finance

import (
	"context"
	"errors"
	"time"

	"github.com/shopspring/decimal"

	"github.com/ledgerlane/platform/pkg/problem"
)

// GoalView is a goal as answered, with its computed progress.
type GoalView struct {
	Goal
	Progress GoalProgress
}

// goalContext is what computing goals needs once per request.
type goalContext struct {
	accounts map[string]Account
	items    map[string]BudgetItem // budget item id → item, over all budgets
	cats     []Category
}

func (s *Service) goalContext(ctx context.Context, c Caller, sc scope) (goalContext, error) {
	gc := goalContext{accounts: map[string]Account{}, items: map[string]BudgetItem{}}
	accounts, err := s.store.ListAccounts(ctx, c.UserID)
	if err != nil {
		return gc, s.internal(ctx, "list accounts", err)
	}
	for _, a := range accounts {
		gc.accounts[a.ID] = a
	}
	budgets, err := s.store.ListBudgets(ctx, c.UserID)
	if err != nil {
		return gc, s.internal(ctx, "list budgets", err)
	}
	for _, b := range budgets {
		for _, g := range b.Groups {
			for _, it := range g.Items {
				gc.items[it.ID] = it
			}
		}
	}
	gc.cats, err = s.visibleCategories(ctx, c, sc)
	return gc, err
}

// visibleGoal applies the grant to a goal: links to hidden accounts,
// budget links to items of hidden categories and plan lines in hidden
// categories are left out; a goal that was linked to accounts and has none
// left is hidden whole (ok false), exactly like one that does not exist.
func (sc scope) visibleGoal(g Goal, items map[string]BudgetItem) (Goal, bool) {
	var accounts []GoalAccountLink
	for _, l := range g.AccountLinks {
		if !sc.hidesAccount(l.AccountID) {
			accounts = append(accounts, l)
		}
	}
	if len(g.AccountLinks) > 0 && len(accounts) == 0 {
		return g, false
	}
	g.AccountLinks = accounts
	var links []GoalBudgetLink
	for _, l := range g.BudgetLinks {
		if it, ok := items[l.BudgetItemID]; !ok || !sc.hidesCategory(it.CategoryID) {
			links = append(links, l)
		}
	}
	g.BudgetLinks = links
	var plan []GoalPlanLine
	for _, l := range g.SpendingPlan {
		if !sc.hidesCategory(l.CategoryID) {
			plan = append(plan, l)
		}
	}
	g.SpendingPlan = plan
	if sc.grant.Redacts(FieldConnectionInstitution) {
		if namesAny(g.Name, sc.institutions) {
			g.Name = ""
		}
		if namesAny(g.Description, sc.institutions) {
			g.Description = ""
		}
		for i := range g.SpendingPlan {
			if namesAny(g.SpendingPlan[i].Name, sc.institutions) {
				g.SpendingPlan[i].Name = ""
			}
		}
	}
	return g, true
}

// visibleGoals is every goal the grant shows, for spending-plan coverage.
func (s *Service) visibleGoals(ctx context.Context, c Caller, sc scope) ([]Goal, error) {
	all, err := s.store.ListGoals(ctx, c.UserID, nil, 0)
	if err != nil {
		return nil, s.internal(ctx, "list goals", err)
	}
	var items map[string]BudgetItem
	if len(sc.excludedCategories) > 0 {
		if gc, err := s.goalContext(ctx, c, sc); err != nil {
			return nil, err
		} else {
			items = gc.items
		}
	}
	var out []Goal
	for _, g := range all {
		if v, ok := sc.visibleGoal(g, items); ok {
			out = append(out, v)
		}
	}
	return out, nil
}

// ListGoals answers GET /v1/goals, by sort order then id.
func (s *Service) ListGoals(ctx context.Context, c Caller, q PageQuery) (Page[GoalView], error) {
	var page Page[GoalView]
	sc, err := s.scope(ctx, c, true)
	if err != nil {
		return page, err
	}
	size, err := pageSize(q.PageSize)
	if err != nil {
		return page, err
	}
	cursorScope := scopeString(c, "/v1/goals")
	var after *GoalPosition
	if q.Cursor != "" {
		var pos goalCursor
		if err := s.cursors.Decode(q.Cursor, cursorScope, &pos); err != nil || !isUUID(pos.ID) {
			return page, badCursor()
		}
		after = &GoalPosition{SortOrder: pos.SortOrder, ID: pos.ID}
	}
	gc, err := s.goalContext(ctx, c, sc)
	if err != nil {
		return page, err
	}
	// Hidden goals are skipped, so a page reads on until it is full.
	for len(page.Data) <= size {
		goals, err := s.store.ListGoals(ctx, c.UserID, after, size+1)
		if err != nil {
			return page, s.internal(ctx, "list goals", err)
		}
		for _, g := range goals {
			after = &GoalPosition{SortOrder: g.SortOrder, ID: g.ID}
			v, ok := sc.visibleGoal(g, gc.items)
			if !ok {
				continue
			}
			view, err := s.goalView(ctx, c, sc, gc, v)
			if err != nil {
				return page, err
			}
			page.Data = append(page.Data, view)
			if len(page.Data) > size {
				break
			}
		}
		if len(goals) <= size {
			break
		}
	}
	if len(page.Data) > size {
		page.Data = page.Data[:size]
		last := page.Data[size-1]
		page.HasMore = true
		if page.NextCursor, err = s.cursors.Encode(cursorScope, goalCursor{SortOrder: last.SortOrder, ID: last.ID}); err != nil {
			return page, s.internal(ctx, "encode cursor", err)
		}
	}
	page.RedactedFields = sc.redacted(FieldConnectionInstitution)
	page.Filtered = sc.grant.Filtered()
	return page, nil
}

type goalCursor struct {
	SortOrder int32  `json:"s"`
	ID        string `json:"i"`
}

// GetGoal answers GET /v1/goals/{id}.
func (s *Service) GetGoal(ctx context.Context, c Caller, id string) (Result[GoalView], error) {
	var res Result[GoalView]
	sc, err := s.scope(ctx, c, true)
	if err != nil {
		return res, err
	}
	if id, err = requiredUUID(id, "id"); err != nil {
		return res, err
	}
	g, err := s.store.GetGoal(ctx, c.UserID, id)
	if errors.Is(err, ErrNotFound) {
		return res, problem.New(problem.NotFound, "goal not found")
	}
	if err != nil {
		return res, s.internal(ctx, "get goal", err)
	}
	gc, err := s.goalContext(ctx, c, sc)
	if err != nil {
		return res, err
	}
	v, ok := sc.visibleGoal(g, gc.items)
	if !ok {
		return res, problem.New(problem.NotFound, "goal not found")
	}
	if res.Data, err = s.goalView(ctx, c, sc, gc, v); err != nil {
		return res, err
	}
	res.RedactedFields = sc.redacted(FieldConnectionInstitution)
	res.Filtered = sc.grant.Filtered()
	return res, nil
}

// goalView measures a visible goal and computes its progress. A goal found
// reached (unfiltered view) is marked completed once, at that moment.
func (s *Service) goalView(ctx context.Context, c Caller, sc scope, gc goalContext, g Goal) (GoalView, error) {
	now := s.now()
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
		!facts.Current.LessThan(g.TargetAmount) && !sc.grant.Filtered() {
		if err := s.store.MarkGoalCompleted(ctx, c.UserID, g.ID, now); err != nil {
			return GoalView{}, s.internal(ctx, "mark goal completed", err)
		}
		at := now.UTC().Truncate(time.Microsecond)
		g.Status, g.CompletedAt = GoalCompleted, &at
	}
	return GoalView{Goal: g, Progress: ComputeGoalProgress(g, facts, now)}, nil
}

// goalFacts measures a goal by its tracking mode (goal.go).
func (s *Service) goalFacts(ctx context.Context, c Caller, sc scope, gc goalContext, g Goal, now time.Time) (GoalFacts, error) {
	f := GoalFacts{Current: g.CurrentAmount}
	thisMonth := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
	rateStart := thisMonth.AddDate(0, -3, 0)
	monthIndex := func(d time.Time) int { // 0..2 for the three full months, -1 otherwise
		if d.Before(rateStart) || !d.Before(thisMonth) {
			return -1
		}
		return (d.Year()-rateStart.Year())*12 + int(d.Month()) - int(rateStart.Month())
	}
	months := make([]decimal.Decimal, 3)
	f.MonthlyContributions = months
	base := TransactionFilter{ExcludeAccountIDs: sc.excludedAccounts, ExcludeCategoryIDs: sc.excludedCategories}
	last := func(d time.Time) {
		if f.LastContributionAt == nil || d.After(*f.LastContributionAt) {
			f.LastContributionAt = &d
		}
	}
	switch g.TrackingMode {
	case TrackAccountDriven:
		f.Current = decimal.Zero
		var owed decimal.Decimal
		payoff := false
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
			fl := base
			fl.AccountID, fl.StartDate = a.ID, thisMonth.AddDate(-1, 0, 0)
			// Monthly sums from the store: a year of an account's rows at
			// scale is tens of thousands.
			flows, err := s.store.MonthlyFlows(ctx, c.UserID, fl)
			if err != nil {
				return f, s.internal(ctx, "monthly flows", err)
			}
			for _, m := range flows {
				if m.Currency != g.Currency {
					continue
				}
				if i := monthIndex(m.Month); i >= 0 {
					months[i] = months[i].Add(m.Net)
				}
				if m.LastInflow != nil {
					last(*m.LastInflow)
				}
			}
		}
		if payoff {
			f.Current = f.Current.Add(decimal.Max(g.TargetAmount.Sub(owed), decimal.Zero))
		}
	case TrackBudgetDriven:
		created := time.Date(g.CreatedAt.Year(), g.CreatedAt.Month(), 1, 0, 0, 0, 0, time.UTC)
		from := created
		if rateStart.Before(from) {
			from = rateStart
		}
		cn := newCounter(Budget{Currency: g.Currency}, gc.cats, nil)
		var rows []BudgetRow
		if len(g.BudgetLinks) > 0 {
			fl := base
			fl.StartDate = from
			var err error
			if rows, err = s.store.ListBudgetRows(ctx, c.UserID, fl); err != nil {
				return f, s.internal(ctx, "list budget rows", err)
			}
		}
		for _, l := range g.BudgetLinks {
			it, ok := gc.items[l.BudgetItemID]
			if !l.IsActive || !ok {
				continue
			}
			flow := map[time.Time]decimal.Decimal{}
			for _, r := range rows {
				if !cn.counts(r) || (r.CategoryID != it.CategoryID && cn.parent[r.CategoryID] != it.CategoryID) {
					continue
				}
				m := time.Date(r.Date.Year(), r.Date.Month(), 1, 0, 0, 0, 0, time.UTC)
				flow[m] = flow[m].Sub(r.Amount.Amount)
				if r.Amount.Amount.IsNegative() {
					last(r.Date)
				}
			}
			for m, v := range flow {
				contrib := decimal.Min(decimal.Max(v, decimal.Zero), l.ContributionAmount)
				if !m.Before(created) {
					f.Current = f.Current.Add(contrib)
				}
				if i := monthIndex(m); i >= 0 {
					months[i] = months[i].Add(contrib)
				}
			}
		}
	default: // manual: no measured contributions
		f.MonthlyContributions = nil
	}
	return f, nil
}
