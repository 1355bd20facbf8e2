package budgets

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/shopspring/decimal"

	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/services/finance"
)

// Limits of goal writes (ours; the spec shows no goal write). README.md
// "Goal writes" lists them.
const (
	MaxGoalNameLength        = 200
	MaxGoalDescriptionLength = 1000
	MaxPlanLineNameLength    = 100
	MaxGoalLinks             = 20 // per list: account links, budget links, plan lines
	MaxGoalSortOrder         = 1_000_000
	MaxGoalYearsAhead        = 100
)

// GoalInput is the body of POST /v1/goals and PATCH /v1/goals/{id}. Nil
// fields were not sent; a nil list leaves the stored list, an empty one
// clears it.
type GoalInput struct {
	Name          *string
	Description   *string // "" clears
	GoalType      *string
	Status        *string // PATCH only: active or paused
	TargetAmount  *string
	CurrentAmount *string
	Currency      *string // POST only
	TargetDate    *string // "" clears (PATCH)
	TrackingMode  *string
	SortOrder     *int32
	ShowInDigest  *bool
	AccountLinks  *[]GoalAccountLinkInput
	BudgetLinks   *[]GoalBudgetLinkInput
	SpendingPlan  *[]GoalPlanLineInput
}

// GoalAccountLinkInput is one account link as a client sends it.
type GoalAccountLinkInput struct {
	AccountID string
	LinkRole  string // funding (default) or payoff
}

// GoalBudgetLinkInput is one budget link as a client sends it.
type GoalBudgetLinkInput struct {
	BudgetItemID       string
	ContributionAmount string
	IsActive           *bool // default true
}

// GoalPlanLineInput is one spending-plan line as a client sends it.
type GoalPlanLineInput struct {
	Name          string
	CategoryID    string
	PlannedAmount string
}

// GoalDeleteResult answers DELETE /v1/goals/{id}.
type GoalDeleteResult struct{ Deleted bool }

// CreateGoal answers POST /v1/goals.
func (s *Service) CreateGoal(ctx context.Context, c finance.Caller, in GoalInput) (finance.Result[GoalView], error) {
	var res finance.Result[GoalView]
	sc, err := s.k.WriteScope(ctx, c)
	if err != nil {
		return res, err
	}
	if in.Status != nil {
		return res, finance.Invalid("status", "a new goal is active; status can change later")
	}
	now := s.k.Now()
	g := Goal{ID: c.DerivedID("goal"), UserID: c.UserID, GoalType: GoalSavings, Status: GoalActive,
		TrackingMode: TrackManual, Version: 1, CreatedAt: now, UpdatedAt: now}
	if in.Name == nil {
		return res, finance.Invalid("name", "name is required")
	}
	if in.TargetAmount == nil {
		return res, finance.Invalid("target_amount", "target_amount is required")
	}
	if in.Currency != nil {
		if !finance.ValidCurrency(*in.Currency) {
			return res, finance.Invalid("currency", "currency must be an upper-case ISO 4217 code such as USD")
		}
		g.Currency = *in.Currency
	} else if g.Currency, err = s.k.MainCurrency(ctx, c, sc); err != nil {
		return res, err
	}
	gc, err := s.goalContext(ctx, c, sc)
	if err != nil {
		return res, err
	}
	if in.SortOrder == nil {
		all, err := s.store.ListGoals(ctx, c.UserID, nil, 0)
		if err != nil {
			return res, finance.Internal("list goals", err)
		}
		if n := len(all); n > 0 {
			g.SortOrder = min(all[n-1].SortOrder+1, MaxGoalSortOrder)
		}
	}
	if err := s.applyGoalInput(sc, gc, &g, in, now, true); err != nil {
		return res, err
	}
	if err := s.store.CreateGoal(ctx, g); errors.Is(err, finance.ErrAlreadyExists) && c.IdempotencyKey != "" {
		// The same key created it: its first answer was lost after the
		// commit (the edge keeps answers only of requests it saw answered).
		return s.GetGoal(ctx, c, g.ID)
	} else if err != nil {
		return res, finance.Internal("create goal", err)
	}
	return s.GetGoal(ctx, c, g.ID)
}

// UpdateGoal answers PATCH /v1/goals/{id}: a compare-and-swap on the
// goal's version. A PATCH that changes nothing keeps the version.
func (s *Service) UpdateGoal(ctx context.Context, c finance.Caller, id string, expectedVersion int64, in GoalInput) (finance.Result[GoalView], error) {
	var res finance.Result[GoalView]
	sc, err := s.k.WriteScope(ctx, c)
	if err != nil {
		return res, err
	}
	if id, err = finance.RequiredUUID(id, "id"); err != nil {
		return res, err
	}
	if expectedVersion <= 0 {
		return res, finance.Invalid("expected_version", "expected_version is required: send the version you read")
	}
	if in.Currency != nil {
		return res, problem.New(problem.FieldImmutable, "a goal keeps its currency").WithField("currency")
	}
	pw, err := finance.NewPendingWrite(c, "goal", struct {
		ID string
		In GoalInput
	}{id, in})
	if err != nil {
		return res, finance.Internal("fingerprint goal update", err)
	}
	old, gc, err := s.writableGoal(ctx, c, sc, id)
	if err != nil {
		return res, err
	}
	if old.Version != expectedVersion {
		if pw.Replays(old.LastWrite, old.Version, expectedVersion) {
			// The retry of the write that made this version, whose
			// answer was lost: answer it again.
			res, err := s.GetGoal(ctx, c, id)
			res.Replayed = err == nil
			return res, err
		}
		return res, goalVersionConflict(old.Version)
	}
	g := old
	g.AccountLinks, g.BudgetLinks, g.SpendingPlan = slices.Clone(old.AccountLinks), slices.Clone(old.BudgetLinks), slices.Clone(old.SpendingPlan)
	now := s.k.Now()
	if err := s.applyGoalInput(sc, gc, &g, in, now, false); err != nil {
		return res, err
	}
	if sameGoal(g, old) {
		return s.GetGoal(ctx, c, id)
	}
	g.Version, g.UpdatedAt = old.Version+1, now
	g.LastWrite = pw.Mark(g.Version)
	if err := goalWriteError("update goal", s.store.UpdateGoal(ctx, g, old.Version)); err != nil {
		return res, err
	}
	return s.GetGoal(ctx, c, id)
}

// DeleteGoal answers DELETE /v1/goals/{id}; expectedVersion, when sent,
// must be the current version.
func (s *Service) DeleteGoal(ctx context.Context, c finance.Caller, id string, expectedVersion *int64) (finance.Result[GoalDeleteResult], error) {
	var res finance.Result[GoalDeleteResult]
	sc, err := s.k.WriteScope(ctx, c)
	if err != nil {
		return res, err
	}
	if id, err = finance.RequiredUUID(id, "id"); err != nil {
		return res, err
	}
	if expectedVersion != nil && *expectedVersion <= 0 {
		return res, finance.Invalid("expected_version", "expected_version must be a version you read (1 or more)")
	}
	old, _, err := s.writableGoal(ctx, c, sc, id)
	if err != nil {
		return res, err
	}
	want := old.Version
	if expectedVersion != nil {
		if *expectedVersion != old.Version {
			return res, goalVersionConflict(old.Version)
		}
		want = *expectedVersion
	}
	if err := goalWriteError("delete goal", s.store.DeleteGoal(ctx, c.UserID, id, want)); err != nil {
		return res, err
	}
	res.Data = GoalDeleteResult{Deleted: true}
	res.Filtered = sc.Grant().Filtered()
	return res, nil
}

// writableGoal reads a goal for a write, as stored, with the goal context
// the write checks its input against. A write needs the goal's accounts in
// view: a goal the grant hides, or one linked to any account the grant
// excludes, is not found (the credential cannot tell it from an unknown
// one). Budget links and plan lines in excluded categories are kept as they
// are by a write (applyGoalInput).
func (s *Service) writableGoal(ctx context.Context, c finance.Caller, sc finance.Scope, id string) (Goal, goalContext, error) {
	g, _, gc, err := s.readGoal(ctx, c, sc, id)
	if err != nil {
		return g, gc, err
	}
	for _, l := range g.AccountLinks {
		if sc.HidesAccount(l.AccountID) {
			return g, gc, problem.New(problem.NotFound, "goal not found")
		}
	}
	return g, gc, nil
}

// goalWriteError answers a store's refusal of a goal write (op names it):
// a version conflict, a goal gone meanwhile, or an internal error.
func goalWriteError(op string, err error) error {
	switch {
	case errors.Is(err, finance.ErrVersionConflict):
		return goalVersionConflict(0)
	case errors.Is(err, finance.ErrNotFound):
		return problem.New(problem.NotFound, "goal not found")
	case err != nil:
		return finance.Internal(op, err)
	}
	return nil
}

// sameGoal compares goals as stored: decimals by value (5000 and 5000.00
// are one amount), which JSON gives.
func sameGoal(a, b Goal) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && string(ja) == string(jb)
}

func goalVersionConflict(current int64) error {
	detail := "the goal changed since you read it: read it again and retry"
	if current > 0 {
		detail = fmt.Sprintf("the goal is at version %d: read it again and retry", current)
	}
	return problem.New(problem.VersionConflict, detail).WithField("expected_version")
}

// text checks a free-text field: printable, at most max characters.
func text(s, field string, max int, required bool) (string, error) {
	s = strings.TrimSpace(s)
	if required && s == "" {
		return s, finance.Invalid(field, field+" must not be empty")
	}
	if !finance.Printable(s) || utf8.RuneCountInString(s) > max {
		return s, finance.Invalid(field, fmt.Sprintf("%s must be at most %d printable characters", field, max))
	}
	return s, nil
}

// applyGoalInput checks in and applies it to g. Every field is checked
// before anything else, in the order below; then the goal as a whole (its
// tracking mode needs its links, its links the goal's currency).
func (s *Service) applyGoalInput(sc finance.Scope, gc goalContext, g *Goal, in GoalInput, now time.Time, create bool) error {
	if err := applyGoalLabels(g, in); err != nil {
		return err
	}
	if err := applyGoalTarget(g, in, now, create); err != nil {
		return err
	}
	if err := applyGoalTracking(g, in); err != nil {
		return err
	}
	if err := applyGoalLinks(sc, gc, g, in); err != nil {
		return err
	}
	return settleGoalFunding(g)
}

// applyGoalLabels applies what names and classifies the goal: name,
// description, goal type and status.
func applyGoalLabels(g *Goal, in GoalInput) error {
	var err error
	if in.Name != nil {
		if g.Name, err = text(*in.Name, "name", MaxGoalNameLength, true); err != nil {
			return err
		}
	}
	if in.Description != nil {
		if g.Description, err = text(*in.Description, "description", MaxGoalDescriptionLength, false); err != nil {
			return err
		}
	}
	if in.GoalType != nil {
		switch *in.GoalType {
		case GoalSavings, GoalPurchase, GoalDebtPayoff:
			g.GoalType = *in.GoalType
		default:
			return finance.Invalid("goal_type", "goal_type must be savings, purchase or debt_payoff")
		}
	}
	if in.Status != nil {
		switch *in.Status {
		case GoalActive, GoalPaused:
			// Reopening (or pausing) a completed goal clears completed_at:
			// a reached active goal is marked completed again on its next
			// read.
			if g.Status != *in.Status {
				g.Status, g.CompletedAt = *in.Status, nil
			}
		default:
			return finance.Invalid("status", "status must be active or paused (completed is set when the goal is reached)")
		}
	}
	return nil
}

// applyGoalTarget applies the target: an amount above zero, and a date
// from today to MaxGoalYearsAhead ahead (a PATCH may clear it, a create
// may not send it empty).
func applyGoalTarget(g *Goal, in GoalInput, now time.Time, create bool) error {
	var err error
	if in.TargetAmount != nil {
		if g.TargetAmount, err = positiveAmount(*in.TargetAmount, "target_amount", g.Currency); err != nil {
			return err
		}
	}
	if in.TargetDate != nil {
		switch {
		case *in.TargetDate == "" && create:
			return finance.Invalid("target_date", "target_date must be a date (YYYY-MM-DD); leave it out for none")
		case *in.TargetDate == "":
			g.TargetDate = nil
		default:
			d, err := finance.ParseDate(*in.TargetDate)
			today := finance.Day(now)
			if err != nil || d.Before(today) || d.After(today.AddDate(MaxGoalYearsAhead, 0, 0)) {
				return finance.Invalid("target_date", fmt.Sprintf("target_date must be a date (YYYY-MM-DD) from today to %d years ahead", MaxGoalYearsAhead))
			}
			g.TargetDate = &d
		}
	}
	return nil
}

// applyGoalTracking applies how progress is tracked and shown: the
// tracking mode, the current amount (which an account_driven goal takes
// from its accounts, never from the client), sort order and digest.
func applyGoalTracking(g *Goal, in GoalInput) error {
	var err error
	if in.TrackingMode != nil {
		switch *in.TrackingMode {
		case TrackManual, TrackAccountDriven, TrackBudgetDriven:
			if *in.TrackingMode != g.TrackingMode && *in.TrackingMode == TrackAccountDriven {
				g.CurrentAmount = decimal.Zero // the accounts say it now
			}
			g.TrackingMode = *in.TrackingMode
		default:
			return finance.Invalid("tracking_mode", "tracking_mode must be manual, account_driven or budget_driven")
		}
	}
	if in.CurrentAmount != nil {
		if g.TrackingMode == TrackAccountDriven {
			return finance.Invalid("current_amount", "an account_driven goal's current_amount comes from its accounts")
		}
		if g.CurrentAmount, err = finance.ParseAmount(*in.CurrentAmount, "current_amount", g.Currency); err != nil {
			return err
		}
	}
	if in.SortOrder != nil {
		if *in.SortOrder < 0 || *in.SortOrder > MaxGoalSortOrder {
			return finance.Invalid("sort_order", fmt.Sprintf("sort_order must be from 0 to %d", MaxGoalSortOrder))
		}
		g.SortOrder = *in.SortOrder
	}
	if in.ShowInDigest != nil {
		g.ShowInDigest = *in.ShowInDigest
	}
	return nil
}

// applyGoalLinks applies account links, budget links and the spending
// plan. Budget links and plan lines the grant cannot see stay: this
// credential cannot remove what it is not shown.
func applyGoalLinks(sc finance.Scope, gc goalContext, g *Goal, in GoalInput) error {
	var err error
	if in.AccountLinks != nil {
		if g.AccountLinks, err = accountLinks(sc, gc, *in.AccountLinks, g.Currency); err != nil {
			return err
		}
	}
	if in.BudgetLinks != nil {
		links, err := budgetLinks(sc, gc, *in.BudgetLinks, g.Currency)
		if err != nil {
			return err
		}
		for _, l := range g.BudgetLinks {
			if it, ok := gc.items[l.BudgetItemID]; ok && sc.HidesCategory(it.CategoryID) {
				links = append(links, l)
			}
		}
		g.BudgetLinks = links
	}
	if in.SpendingPlan != nil {
		plan, err := planLines(sc, gc, *in.SpendingPlan, g.Currency)
		if err != nil {
			return err
		}
		for _, l := range g.SpendingPlan {
			if sc.HidesCategory(l.CategoryID) {
				plan = append(plan, l)
			}
		}
		g.SpendingPlan = plan
	}
	return nil
}

// settleGoalFunding checks the goal as a whole: an account_driven goal
// needs an account link and a budget_driven one a budget link, and the
// tracking mode sets the funding source. Empty link lists are stored as
// none.
func settleGoalFunding(g *Goal) error {
	switch g.TrackingMode {
	case TrackAccountDriven:
		if len(g.AccountLinks) == 0 {
			return finance.Invalid("account_links", "an account_driven goal needs at least one account link")
		}
		g.FundingSourceType = FundingAccount
	case TrackBudgetDriven:
		if len(g.BudgetLinks) == 0 {
			return finance.Invalid("budget_links", "a budget_driven goal needs at least one budget link")
		}
		g.FundingSourceType = FundingBudget
	default:
		g.FundingSourceType = FundingManual
	}
	g.NilEmptyLinks()
	return nil
}

// accountLinks checks account links. An account the grant hides is not
// found, exactly like an unknown one (404 naming the link), so a
// credential learns nothing about excluded accounts.
func accountLinks(sc finance.Scope, gc goalContext, in []GoalAccountLinkInput, currency string) ([]GoalAccountLink, error) {
	return eachLine(in, "account_links", "account links", func(i int, l GoalAccountLinkInput, out []GoalAccountLink) (GoalAccountLink, error) {
		field := fmt.Sprintf("account_links[%d].account_id", i)
		id, err := finance.RequiredUUID(l.AccountID, field)
		if err != nil {
			return GoalAccountLink{}, err
		}
		a, ok := gc.accounts[id]
		if !ok || sc.HidesAccount(id) {
			return GoalAccountLink{}, problem.New(problem.NotFound, "account not found").WithField(field)
		}
		if slices.ContainsFunc(out, func(o GoalAccountLink) bool { return o.AccountID == id }) {
			return GoalAccountLink{}, finance.Invalid(field, "an account is linked once")
		}
		role := l.LinkRole
		if role == "" {
			role = LinkRoleFunding
		}
		debt := a.Type == finance.AccountCredit || a.Type == finance.AccountLoan
		roleField := fmt.Sprintf("account_links[%d].link_role", i)
		switch {
		case role != LinkRoleFunding && role != LinkRolePayoff:
			return GoalAccountLink{}, finance.Invalid(roleField, "link_role must be funding or payoff")
		case role == LinkRolePayoff && !debt:
			return GoalAccountLink{}, finance.Invalid(roleField, "a payoff link names a credit or loan account")
		case role == LinkRoleFunding && debt:
			return GoalAccountLink{}, finance.Invalid(roleField, "a credit or loan account can only be a payoff link")
		case a.Currency != currency:
			return GoalAccountLink{}, finance.Invalid(field, fmt.Sprintf("the account is in %s, the goal in %s", a.Currency, currency))
		}
		return GoalAccountLink{AccountID: id, LinkRole: role}, nil
	})
}

// eachLine checks the lines of a list field (at most MaxGoalLinks, named
// what in the refusal) one by one; check sees the lines accepted so far,
// to refuse repeats. The first refusal wins.
func eachLine[I, O any](in []I, field, what string, check func(i int, line I, out []O) (O, error)) ([]O, error) {
	if len(in) > MaxGoalLinks {
		return nil, finance.Invalid(field, fmt.Sprintf("at most %d %s", MaxGoalLinks, what))
	}
	out := make([]O, 0, len(in))
	for i, l := range in {
		o, err := check(i, l, out)
		if err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, nil
}

// positiveAmount parses s (field) as an amount in currency above zero.
func positiveAmount(s, field, currency string) (decimal.Decimal, error) {
	amount, err := finance.ParseAmount(s, field, currency)
	if err == nil && !amount.IsPositive() {
		err = finance.Invalid(field, field+" must be above zero")
	}
	return amount, err
}

// budgetLinks checks budget links: each names an item of one of the
// user's budgets in a category the grant shows (400 otherwise, as a
// transaction's category_id).
func budgetLinks(sc finance.Scope, gc goalContext, in []GoalBudgetLinkInput, currency string) ([]GoalBudgetLink, error) {
	return eachLine(in, "budget_links", "budget links", func(i int, l GoalBudgetLinkInput, out []GoalBudgetLink) (GoalBudgetLink, error) {
		field := fmt.Sprintf("budget_links[%d].budget_item_id", i)
		id, err := finance.RequiredUUID(l.BudgetItemID, field)
		if err != nil {
			return GoalBudgetLink{}, err
		}
		if it, ok := gc.items[id]; !ok || sc.HidesCategory(it.CategoryID) {
			return GoalBudgetLink{}, finance.Invalid(field, field+" names no budget item")
		}
		if slices.ContainsFunc(out, func(o GoalBudgetLink) bool { return o.BudgetItemID == id }) {
			return GoalBudgetLink{}, finance.Invalid(field, "a budget item is linked once")
		}
		amount, err := positiveAmount(l.ContributionAmount, fmt.Sprintf("budget_links[%d].contribution_amount", i), currency)
		active := l.IsActive == nil || *l.IsActive
		return GoalBudgetLink{BudgetItemID: id, ContributionAmount: amount, IsActive: active}, err
	})
}

// planLines checks spending-plan lines: a name, a category the grant
// shows, an amount above zero.
func planLines(sc finance.Scope, gc goalContext, in []GoalPlanLineInput, currency string) ([]GoalPlanLine, error) {
	return eachLine(in, "spending_plan", "spending-plan lines", func(i int, l GoalPlanLineInput, _ []GoalPlanLine) (GoalPlanLine, error) {
		name, err := text(l.Name, fmt.Sprintf("spending_plan[%d].name", i), MaxPlanLineNameLength, true)
		if err != nil {
			return GoalPlanLine{}, err
		}
		field := fmt.Sprintf("spending_plan[%d].category_id", i)
		id, err := finance.RequiredUUID(l.CategoryID, field)
		if err != nil {
			return GoalPlanLine{}, err
		}
		if !slices.ContainsFunc(gc.cats, func(c finance.Category) bool { return c.ID == id }) || sc.HidesCategory(id) {
			return GoalPlanLine{}, finance.Invalid(field, field+" names no category")
		}
		amount, err := positiveAmount(l.PlannedAmount, fmt.Sprintf("spending_plan[%d].planned_amount", i), currency)
		return GoalPlanLine{Name: name, CategoryID: id, PlannedAmount: amount}, err
	})
}
