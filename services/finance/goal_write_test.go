package finance_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/services/finance"
	"github.com/ledgerlane/platform/services/finance/budgets"
)

func bp(b bool) *bool                                                         { return &b }
func i32(n int32) *int32                                                      { return &n }
func i64p(n int64) *int64                                                     { return &n }
func links(l ...budgets.GoalAccountLinkInput) *[]budgets.GoalAccountLinkInput { return &l }

func TestCreateGoalValidation(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	base := func() budgets.GoalInput {
		return budgets.GoalInput{Name: sp("Boat"), TargetAmount: sp("5000.00")}
	}
	savings, card := e.demo.AccountIDs.Savings, e.demo.AccountIDs.CreditCard
	item := firstItem(t, e)
	tests := []struct {
		name  string
		edit  func(*budgets.GoalInput)
		typ   problem.Type
		field string
	}{
		{"no name", func(in *budgets.GoalInput) { in.Name = nil }, problem.InvalidInput, "name"},
		{"blank name", func(in *budgets.GoalInput) { in.Name = sp("   ") }, problem.InvalidInput, "name"},
		{"control character", func(in *budgets.GoalInput) { in.Name = sp("a\x00b") }, problem.InvalidInput, "name"},
		{"no target", func(in *budgets.GoalInput) { in.TargetAmount = nil }, problem.InvalidInput, "target_amount"},
		{"zero target", func(in *budgets.GoalInput) { in.TargetAmount = sp("0") }, problem.InvalidInput, "target_amount"},
		{"negative target", func(in *budgets.GoalInput) { in.TargetAmount = sp("-5") }, problem.InvalidInput, "target_amount"},
		{"exponent", func(in *budgets.GoalInput) { in.TargetAmount = sp("5e3") }, problem.InvalidInput, "target_amount"},
		{"three places", func(in *budgets.GoalInput) { in.TargetAmount = sp("5.001") }, problem.InvalidInput, "target_amount"},
		{"JPY places", func(in *budgets.GoalInput) { in.Currency = sp("JPY"); in.TargetAmount = sp("5.5") }, problem.InvalidInput, "target_amount"},
		{"huge", func(in *budgets.GoalInput) { in.TargetAmount = sp("1000000000000") }, problem.InvalidInput, "target_amount"},
		{"bad currency", func(in *budgets.GoalInput) { in.Currency = sp("usd") }, problem.InvalidInput, "currency"},
		{"bad type", func(in *budgets.GoalInput) { in.GoalType = sp("yacht") }, problem.InvalidInput, "goal_type"},
		{"status on create", func(in *budgets.GoalInput) { in.Status = sp("paused") }, problem.InvalidInput, "status"},
		{"bad mode", func(in *budgets.GoalInput) { in.TrackingMode = sp("auto") }, problem.InvalidInput, "tracking_mode"},
		{"past date", func(in *budgets.GoalInput) { in.TargetDate = sp("2026-05-19") }, problem.InvalidInput, "target_date"},
		{"bad date", func(in *budgets.GoalInput) { in.TargetDate = sp("2026-13-01") }, problem.InvalidInput, "target_date"},
		{"far date", func(in *budgets.GoalInput) { in.TargetDate = sp("2127-01-01") }, problem.InvalidInput, "target_date"},
		{"empty date", func(in *budgets.GoalInput) { in.TargetDate = sp("") }, problem.InvalidInput, "target_date"},
		{"negative sort", func(in *budgets.GoalInput) { in.SortOrder = i32(-1) }, problem.InvalidInput, "sort_order"},
		{"account-driven without links", func(in *budgets.GoalInput) { in.TrackingMode = sp(budgets.TrackAccountDriven) }, problem.InvalidInput, "account_links"},
		{"account-driven with current", func(in *budgets.GoalInput) {
			in.TrackingMode, in.CurrentAmount = sp(budgets.TrackAccountDriven), sp("10")
			in.AccountLinks = links(budgets.GoalAccountLinkInput{AccountID: savings})
		}, problem.InvalidInput, "current_amount"},
		{"budget-driven without links", func(in *budgets.GoalInput) { in.TrackingMode = sp(budgets.TrackBudgetDriven) }, problem.InvalidInput, "budget_links"},
		{"link not a uuid", func(in *budgets.GoalInput) {
			in.AccountLinks = links(budgets.GoalAccountLinkInput{AccountID: "x"})
		}, problem.InvalidInput, "account_links[0].account_id"},
		{"unknown account", func(in *budgets.GoalInput) {
			in.AccountLinks = links(budgets.GoalAccountLinkInput{AccountID: "00000000-0000-4000-8000-000000000000"})
		}, problem.NotFound, "account_links[0].account_id"},
		{"duplicate account", func(in *budgets.GoalInput) {
			in.AccountLinks = links(budgets.GoalAccountLinkInput{AccountID: savings}, budgets.GoalAccountLinkInput{AccountID: savings})
		}, problem.InvalidInput, "account_links[1].account_id"},
		{"bad role", func(in *budgets.GoalInput) {
			in.AccountLinks = links(budgets.GoalAccountLinkInput{AccountID: savings, LinkRole: "owner"})
		}, problem.InvalidInput, "account_links[0].link_role"},
		{"payoff on savings", func(in *budgets.GoalInput) {
			in.AccountLinks = links(budgets.GoalAccountLinkInput{AccountID: savings, LinkRole: budgets.LinkRolePayoff})
		}, problem.InvalidInput, "account_links[0].link_role"},
		{"funding on a card", func(in *budgets.GoalInput) {
			in.AccountLinks = links(budgets.GoalAccountLinkInput{AccountID: card})
		}, problem.InvalidInput, "account_links[0].link_role"},
		{"other currency", func(in *budgets.GoalInput) {
			in.AccountLinks = links(budgets.GoalAccountLinkInput{AccountID: e.demo.AccountIDs.EuroChecking})
		}, problem.InvalidInput, "account_links[0].account_id"},
		{"unknown item", func(in *budgets.GoalInput) {
			in.BudgetLinks = &[]budgets.GoalBudgetLinkInput{{BudgetItemID: "00000000-0000-4000-8000-000000000000", ContributionAmount: "10"}}
		}, problem.InvalidInput, "budget_links[0].budget_item_id"},
		{"zero contribution", func(in *budgets.GoalInput) {
			in.BudgetLinks = &[]budgets.GoalBudgetLinkInput{{BudgetItemID: item, ContributionAmount: "0"}}
		}, problem.InvalidInput, "budget_links[0].contribution_amount"},
		{"plan line without name", func(in *budgets.GoalInput) {
			in.SpendingPlan = &[]budgets.GoalPlanLineInput{{CategoryID: e.demo.CategoryIDs["Shopping"], PlannedAmount: "5"}}
		}, problem.InvalidInput, "spending_plan[0].name"},
		{"plan line unknown category", func(in *budgets.GoalInput) {
			in.SpendingPlan = &[]budgets.GoalPlanLineInput{{Name: "x", CategoryID: "00000000-0000-4000-8000-000000000000", PlannedAmount: "5"}}
		}, problem.InvalidInput, "spending_plan[0].category_id"},
		{"plan line amount", func(in *budgets.GoalInput) {
			in.SpendingPlan = &[]budgets.GoalPlanLineInput{{Name: "x", CategoryID: e.demo.CategoryIDs["Shopping"], PlannedAmount: "five"}}
		}, problem.InvalidInput, "spending_plan[0].planned_amount"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := base()
			tc.edit(&in)
			_, err := e.budgets.CreateGoal(ctx, e.write, in)
			wantProblem(t, err, tc.typ, tc.field)
		})
	}
	t.Run("writes disabled", func(t *testing.T) {
		_, err := e.budgets.CreateGoal(ctx, e.read, base())
		wantProblem(t, err, problem.WritesDisabled, "")
	})
	t.Run("excluded account is not found", func(t *testing.T) {
		in := base()
		in.TrackingMode = sp(budgets.TrackAccountDriven)
		in.AccountLinks = links(budgets.GoalAccountLinkInput{AccountID: e.demo.ExcludedAccountID})
		_, err := e.budgets.CreateGoal(ctx, e.redacted, in)
		wantProblem(t, err, problem.NotFound, "account_links[0].account_id")
	})
	t.Run("excluded category", func(t *testing.T) {
		in := base()
		in.SpendingPlan = &[]budgets.GoalPlanLineInput{{Name: "x", CategoryID: e.demo.ExcludedCategoryID, PlannedAmount: "5"}}
		_, err := e.budgets.CreateGoal(ctx, e.redacted, in)
		wantProblem(t, err, problem.InvalidInput, "spending_plan[0].category_id")
	})
}

// firstItem is an item of the demo's active budget in a category every
// demo grant shows.
func firstItem(t *testing.T, e env) string {
	t.Helper()
	b, err := e.budgets.GetBudget(context.Background(), e.redacted, e.demo.Budgets.Active)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range b.Data.Groups {
		for _, it := range g.Items {
			return it.ID
		}
	}
	t.Fatal("no item")
	return ""
}

func TestGoalLifecycle(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	created, err := e.budgets.CreateGoal(ctx, e.write, budgets.GoalInput{Name: sp("  Boat  "), TargetAmount: sp("5000"),
		CurrentAmount: sp("1250.50"), TargetDate: sp("2027-05-20"), Description: sp("a small one")})
	if err != nil {
		t.Fatal(err)
	}
	g := created.Data
	if g.Name != "Boat" || g.Status != budgets.GoalActive || g.TrackingMode != budgets.TrackManual ||
		g.FundingSourceType != budgets.FundingManual || g.Currency != "USD" || g.Version != 1 || g.GoalType != budgets.GoalSavings {
		t.Fatalf("created: %+v", g.Goal)
	}
	// After the demo's five goals.
	if g.SortOrder <= 5 {
		t.Errorf("sort order %d", g.SortOrder)
	}
	if p := g.Progress; !p.CurrentAmount.Equal(dec("1250.50")) || !p.RemainingAmount.Equal(dec("3749.50")) ||
		!p.MonthlyContributionNeeded.Equal(dec("312.46")) || *p.DaysRemaining != 365 {
		t.Errorf("progress: %+v", p)
	}
	got, err := e.budgets.GetGoal(ctx, e.read, g.ID)
	if err != nil || got.Data.Name != "Boat" {
		t.Fatalf("read back: %v", err)
	}

	// PATCH: the progress follows.
	upd, err := e.budgets.UpdateGoal(ctx, e.write, g.ID, 1, budgets.GoalInput{CurrentAmount: sp("4000"), TargetDate: sp(""),
		Status: sp(budgets.GoalPaused)})
	if err != nil {
		t.Fatal(err)
	}
	if u := upd.Data; u.Version != 2 || u.Status != budgets.GoalPaused || u.TargetDate != nil ||
		!u.Progress.RemainingAmount.Equal(dec("1000")) || u.Progress.MonthlyContributionNeeded != nil {
		t.Errorf("patched: %+v %+v", u.Goal, u.Progress)
	}
	// The same values again: no new version.
	same, err := e.budgets.UpdateGoal(ctx, e.write, g.ID, 2, budgets.GoalInput{CurrentAmount: sp("4000.00"), TargetAmount: sp("5000.00")})
	if err != nil || same.Data.Version != 2 {
		t.Fatalf("no-op patch: version %d %v", same.Data.Version, err)
	}
	_, err = e.budgets.UpdateGoal(ctx, e.write, g.ID, 1, budgets.GoalInput{Name: sp("Yacht")})
	wantProblem(t, err, problem.VersionConflict, "expected_version")
	_, err = e.budgets.UpdateGoal(ctx, e.write, g.ID, 0, budgets.GoalInput{Name: sp("Yacht")})
	wantProblem(t, err, problem.InvalidInput, "expected_version")
	_, err = e.budgets.UpdateGoal(ctx, e.write, g.ID, 2, budgets.GoalInput{Currency: sp("EUR")})
	wantProblem(t, err, problem.FieldImmutable, "currency")
	_, err = e.budgets.UpdateGoal(ctx, e.write, g.ID, 2, budgets.GoalInput{Status: sp(budgets.GoalCompleted)})
	wantProblem(t, err, problem.InvalidInput, "status")
	_, err = e.budgets.UpdateGoal(ctx, e.read, g.ID, 2, budgets.GoalInput{Name: sp("Yacht")})
	wantProblem(t, err, problem.WritesDisabled, "")

	// Switch to account-driven: the current amount is the savings balance.
	acct, err := e.svc.GetAccountBalances(ctx, e.read, e.demo.AccountIDs.Savings)
	if err != nil {
		t.Fatal(err)
	}
	ad, err := e.budgets.UpdateGoal(ctx, e.write, g.ID, 2, budgets.GoalInput{TrackingMode: sp(budgets.TrackAccountDriven),
		AccountLinks: links(budgets.GoalAccountLinkInput{AccountID: e.demo.AccountIDs.Savings}), Status: sp(budgets.GoalActive),
		TargetAmount: sp("99999999")})
	if err != nil {
		t.Fatal(err)
	}
	if !ad.Data.Progress.CurrentAmount.Equal(acct.Data.Balance.Amount) || ad.Data.FundingSourceType != budgets.FundingAccount ||
		ad.Data.AccountLinks[0].LinkRole != budgets.LinkRoleFunding || ad.Data.AccountLinks[0].AccountType != finance.AccountDepository {
		t.Errorf("account-driven: %+v", ad.Data.Goal)
	}
	// Clearing the links of an account-driven goal is refused.
	_, err = e.budgets.UpdateGoal(ctx, e.write, g.ID, 3, budgets.GoalInput{AccountLinks: links()})
	wantProblem(t, err, problem.InvalidInput, "account_links")

	// Delete: a wrong version is a conflict; then gone.
	_, err = e.budgets.DeleteGoal(ctx, e.write, g.ID, i64p(2))
	wantProblem(t, err, problem.VersionConflict, "expected_version")
	del, err := e.budgets.DeleteGoal(ctx, e.write, g.ID, i64p(3))
	if err != nil || !del.Data.Deleted {
		t.Fatalf("delete: %+v %v", del, err)
	}
	_, err = e.budgets.GetGoal(ctx, e.read, g.ID)
	wantProblem(t, err, problem.NotFound, "")
	_, err = e.budgets.DeleteGoal(ctx, e.write, g.ID, nil)
	wantProblem(t, err, problem.NotFound, "")
}

func TestGoalWritesPrivacy(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	retirement := e.demo.Budgets.Goals["retirement"] // linked only to the excluded brokerage
	_, err := e.budgets.UpdateGoal(ctx, e.redacted, retirement, 1, budgets.GoalInput{Name: sp("x")})
	wantProblem(t, err, problem.NotFound, "")
	_, err = e.budgets.DeleteGoal(ctx, e.redacted, retirement, nil)
	wantProblem(t, err, problem.NotFound, "")

	// A goal linked to a shown and an excluded account: readable without
	// the hidden link, but not writable by that grant.
	mixed, err := e.budgets.CreateGoal(ctx, e.write, budgets.GoalInput{Name: sp("Both"), TargetAmount: sp("100"),
		TrackingMode: sp(budgets.TrackAccountDriven), AccountLinks: links(
			budgets.GoalAccountLinkInput{AccountID: e.demo.AccountIDs.Savings},
			budgets.GoalAccountLinkInput{AccountID: e.demo.ExcludedAccountID})})
	if err != nil {
		t.Fatal(err)
	}
	if r, err := e.budgets.GetGoal(ctx, e.redacted, mixed.Data.ID); err != nil || len(r.Data.AccountLinks) != 1 {
		t.Fatalf("redacted read: %+v %v", r.Data.AccountLinks, err)
	}
	_, err = e.budgets.UpdateGoal(ctx, e.redacted, mixed.Data.ID, mixed.Data.Version, budgets.GoalInput{Name: sp("x")})
	wantProblem(t, err, problem.NotFound, "")

	// Plan lines in an excluded category survive a redacted grant's
	// replacement of the plan.
	laptop := e.demo.Budgets.Goals["laptop"]
	health := e.demo.ExcludedCategoryID
	before, err := e.budgets.GetGoal(ctx, e.write, laptop)
	if err != nil {
		t.Fatal(err)
	}
	plan := []budgets.GoalPlanLineInput{{Name: "Shopping", CategoryID: e.demo.CategoryIDs["Shopping"], PlannedAmount: "1"}}
	for _, l := range before.Data.SpendingPlan {
		plan = append(plan, budgets.GoalPlanLineInput{Name: l.Name, CategoryID: l.CategoryID, PlannedAmount: l.PlannedAmount.String()})
	}
	plan = append(plan, budgets.GoalPlanLineInput{Name: "Dentist", CategoryID: health, PlannedAmount: "300"})
	v, err := e.budgets.UpdateGoal(ctx, e.write, laptop, before.Data.Version, budgets.GoalInput{SpendingPlan: &plan})
	if err != nil {
		t.Fatal(err)
	}
	r, err := e.budgets.UpdateGoal(ctx, e.redacted, laptop, v.Data.Version, budgets.GoalInput{SpendingPlan: &[]budgets.GoalPlanLineInput{}})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Data.SpendingPlan) != 0 {
		t.Errorf("redacted view shows %+v", r.Data.SpendingPlan)
	}
	after, err := e.budgets.GetGoal(ctx, e.write, laptop)
	if err != nil || len(after.Data.SpendingPlan) != 1 || after.Data.SpendingPlan[0].CategoryID != health {
		t.Fatalf("hidden line: %+v %v", after.Data.SpendingPlan, err)
	}
}

func TestUpdateBudgetAllocations(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	id := e.demo.Budgets.Active
	b, err := e.budgets.GetBudget(ctx, e.write, id)
	if err != nil {
		t.Fatal(err)
	}
	g0 := b.Data.Groups[0]
	it := g0.Items[0]
	before, err := e.budgets.GetBudgetProgress(ctx, e.write, id, "")
	if err != nil {
		t.Fatal(err)
	}
	newAmount := it.AllocatedAmount.Add(dec("123.45"))
	res, err := e.budgets.UpdateBudgetAllocations(ctx, e.write, budgets.AllocationUpdate{BudgetID: id,
		ExpectedVersion: b.Data.Version, Items: []budgets.ItemAllocation{{ID: it.ID, AllocatedAmount: newAmount.StringFixed(2)}}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Data.Version != b.Data.Version+1 || !res.Data.Groups[0].Items[0].AllocatedAmount.Equal(newAmount) ||
		!res.Data.Groups[0].AllocationValue.Equal(g0.AllocationValue.Add(dec("123.45"))) {
		t.Errorf("patched: version %d group %+v", res.Data.Version, res.Data.Groups[0])
	}
	after, err := e.budgets.GetBudgetProgress(ctx, e.write, id, "")
	if err != nil {
		t.Fatal(err)
	}
	if d := after.Data.Groups[0].Allocated.Sub(before.Data.Groups[0].Allocated); !d.Equal(dec("123.45")) {
		t.Errorf("progress allocated moved by %s", d)
	}
	if d := after.Data.TotalAllocated.Sub(before.Data.TotalAllocated); !d.Equal(dec("123.45")) {
		t.Errorf("total allocated moved by %s", d)
	}
	reconcile(t, e, e.write, res.Data.Budget, after.Data)

	var hidden string
	full, err := e.store.GetBudget(ctx, e.demo.UserID, id)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range full.Groups {
		for _, x := range g.Items {
			if x.CategoryID == e.demo.ExcludedCategoryID {
				hidden = x.ID
			}
		}
	}
	v := res.Data.Version
	tests := []struct {
		name  string
		c     finance.Caller
		u     budgets.AllocationUpdate
		typ   problem.Type
		field string
	}{
		{"no version", e.write, budgets.AllocationUpdate{BudgetID: id, Items: []budgets.ItemAllocation{{ID: it.ID, AllocatedAmount: "1"}}}, problem.InvalidInput, "expected_version"},
		{"stale version", e.write, budgets.AllocationUpdate{BudgetID: id, ExpectedVersion: v - 1, Items: []budgets.ItemAllocation{{ID: it.ID, AllocatedAmount: "1"}}}, problem.VersionConflict, "expected_version"},
		{"nothing", e.write, budgets.AllocationUpdate{BudgetID: id, ExpectedVersion: v}, problem.InvalidInput, "items"},
		{"bad id", e.write, budgets.AllocationUpdate{BudgetID: "x", ExpectedVersion: v}, problem.InvalidInput, "id"},
		{"unknown budget", e.write, budgets.AllocationUpdate{BudgetID: "00000000-0000-4000-8000-000000000000", ExpectedVersion: v, Items: []budgets.ItemAllocation{{ID: it.ID, AllocatedAmount: "1"}}}, problem.NotFound, ""},
		{"unknown item", e.write, budgets.AllocationUpdate{BudgetID: id, ExpectedVersion: v, Items: []budgets.ItemAllocation{{ID: "00000000-0000-4000-8000-000000000000", AllocatedAmount: "1"}}}, problem.InvalidInput, "items[0].id"},
		{"hidden item", e.redacted, budgets.AllocationUpdate{BudgetID: id, ExpectedVersion: v, Items: []budgets.ItemAllocation{{ID: hidden, AllocatedAmount: "1"}}}, problem.InvalidInput, "items[0].id"},
		{"repeated item", e.write, budgets.AllocationUpdate{BudgetID: id, ExpectedVersion: v, Items: []budgets.ItemAllocation{{ID: it.ID, AllocatedAmount: "1"}, {ID: it.ID, AllocatedAmount: "2"}}}, problem.InvalidInput, "items[1].id"},
		{"negative", e.write, budgets.AllocationUpdate{BudgetID: id, ExpectedVersion: v, Items: []budgets.ItemAllocation{{ID: it.ID, AllocatedAmount: "-1"}}}, problem.InvalidInput, "items[0].allocated_amount"},
		{"three places", e.write, budgets.AllocationUpdate{BudgetID: id, ExpectedVersion: v, Items: []budgets.ItemAllocation{{ID: it.ID, AllocatedAmount: "1.005"}}}, problem.InvalidInput, "items[0].allocated_amount"},
		{"amount group value", e.write, budgets.AllocationUpdate{BudgetID: id, ExpectedVersion: v, Groups: []budgets.GroupAllocation{{ID: g0.ID, AllocationValue: "10"}}}, problem.InvalidInput, "groups[0].allocation_value"},
		{"unknown group", e.write, budgets.AllocationUpdate{BudgetID: id, ExpectedVersion: v, Groups: []budgets.GroupAllocation{{ID: "00000000-0000-4000-8000-000000000000", AllocationValue: "10"}}}, problem.InvalidInput, "groups[0].id"},
		{"writes disabled", e.read, budgets.AllocationUpdate{BudgetID: id, ExpectedVersion: v, Items: []budgets.ItemAllocation{{ID: it.ID, AllocatedAmount: "1"}}}, problem.WritesDisabled, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.budgets.UpdateBudgetAllocations(ctx, tc.c, tc.u)
			wantProblem(t, err, tc.typ, tc.field)
		})
	}

	// Percent groups: switch to pay-yourself-first and move its savings
	// share; the archived budget is read-only.
	sw, err := e.budgets.SwitchBudgetMethod(ctx, e.write, budgets.MethodPayYourselfFirst, bp(true), nil)
	if err != nil {
		t.Fatal(err)
	}
	nb, err := e.budgets.GetBudget(ctx, e.write, sw.Data.NewBudgetID)
	if err != nil {
		t.Fatal(err)
	}
	pct := nb.Data.Groups[0]
	if pct.AllocationType != budgets.AllocPercent {
		t.Fatalf("group 0 is %s", pct.AllocationType)
	}
	for _, tc := range []struct{ value, field string }{{"100.01", "groups[0].allocation_value"}, {"12.345", "groups[0].allocation_value"}, {"-1", "groups[0].allocation_value"}} {
		_, err := e.budgets.UpdateBudgetAllocations(ctx, e.write, budgets.AllocationUpdate{BudgetID: nb.Data.ID, ExpectedVersion: nb.Data.Version,
			Groups: []budgets.GroupAllocation{{ID: pct.ID, AllocationValue: tc.value}}})
		wantProblem(t, err, problem.InvalidInput, tc.field)
	}
	pb, err := e.budgets.GetBudgetProgress(ctx, e.write, nb.Data.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.budgets.UpdateBudgetAllocations(ctx, e.write, budgets.AllocationUpdate{BudgetID: nb.Data.ID, ExpectedVersion: nb.Data.Version,
		Groups: []budgets.GroupAllocation{{ID: pct.ID, AllocationValue: "30"}}}); err != nil {
		t.Fatal(err)
	}
	pa, err := e.budgets.GetBudgetProgress(ctx, e.write, nb.Data.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	basis := *pa.Data.ExpectedIncome
	want := basis.Mul(dec("0.30")).Round(2)
	if !pa.Data.Groups[0].Allocated.Equal(want) || pa.Data.Groups[0].Allocated.Equal(pb.Data.Groups[0].Allocated) {
		t.Errorf("savings allocated %s (before %s), want %s", pa.Data.Groups[0].Allocated, pb.Data.Groups[0].Allocated, want)
	}
	// The remainder group takes the rest.
	if rest := pa.Data.Groups[1].Allocated; !rest.Equal(decimal.Max(basis.Sub(want), decimal.Zero)) {
		t.Errorf("remainder %s", rest)
	}
	old, err := e.budgets.GetBudget(ctx, e.write, id)
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.budgets.UpdateBudgetAllocations(ctx, e.write, budgets.AllocationUpdate{BudgetID: id, ExpectedVersion: old.Data.Version,
		Items: []budgets.ItemAllocation{{ID: it.ID, AllocatedAmount: "1"}}})
	wantProblem(t, err, problem.Conflict, "")

	// 50/30/20 keeps its percentages.
	sw, err = e.budgets.SwitchBudgetMethod(ctx, e.write, budgets.MethodFiftyThirtyTwenty, bp(true), nil)
	if err != nil {
		t.Fatal(err)
	}
	ft, err := e.budgets.GetBudget(ctx, e.write, sw.Data.NewBudgetID)
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.budgets.UpdateBudgetAllocations(ctx, e.write, budgets.AllocationUpdate{BudgetID: ft.Data.ID, ExpectedVersion: ft.Data.Version,
		Groups: []budgets.GroupAllocation{{ID: ft.Data.Groups[0].ID, AllocationValue: "40"}}})
	wantProblem(t, err, problem.InvalidInput, "groups[0].allocation_value")
}

// TestAllocationProperties: over random allocation PATCHes of the demo's
// envelope budget, every amount group's stored allocation is the sum of
// its items, progress allocates exactly that, the
// version moves by one per changing write, and the current period's
// figures still reconcile with the transactions.
func TestAllocationProperties(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	id := e.demo.Budgets.Active
	r := rand.New(rand.NewPCG(13, 7))
	for step := range 60 {
		b, err := e.budgets.GetBudget(ctx, e.write, id)
		if err != nil {
			t.Fatal(err)
		}
		var items []budgets.ItemAllocation
		for _, g := range b.Data.Groups {
			for _, it := range g.Items {
				if r.IntN(3) == 0 {
					items = append(items, budgets.ItemAllocation{ID: it.ID,
						AllocatedAmount: decimal.New(r.Int64N(200000), -2).StringFixed(2)})
				}
			}
		}
		if len(items) == 0 {
			continue
		}
		res, err := e.budgets.UpdateBudgetAllocations(ctx, e.write, budgets.AllocationUpdate{BudgetID: id,
			ExpectedVersion: b.Data.Version, Items: items})
		if err != nil {
			t.Fatal(err)
		}
		if v := res.Data.Version; v != b.Data.Version && v != b.Data.Version+1 {
			t.Fatalf("step %d: version %d after %d", step, v, b.Data.Version)
		}
		stored, err := e.store.GetBudget(ctx, e.demo.UserID, id)
		if err != nil {
			t.Fatal(err)
		}
		p, err := e.budgets.GetBudgetProgress(ctx, e.write, id, "")
		if err != nil {
			t.Fatal(err)
		}
		for gi, g := range stored.Groups {
			var sum decimal.Decimal
			for _, it := range g.Items {
				sum = sum.Add(it.AllocatedAmount)
			}
			if g.AllocationType == budgets.AllocAmount && (!g.AllocationValue.Equal(sum) || !p.Data.Groups[gi].Allocated.Equal(sum)) {
				t.Fatalf("step %d group %s: value %s, progress %s, items %s", step, g.Name, g.AllocationValue, p.Data.Groups[gi].Allocated, sum)
			}
		}
		if step%20 == 0 {
			reconcile(t, e, e.write, res.Data.Budget, p.Data)
		}
	}
}

// TestCreatesAfterALostAnswer: a create retried with the same
// Idempotency-Key after its first answer was lost (the edge released the
// key on the 5xx, so the retry reaches the service) finds what the first
// made instead of making it twice; another key makes a new one.
func TestCreatesAfterALostAnswer(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	keyed := func(key string) finance.Caller {
		c := e.write
		c.CredentialID, c.IdempotencyKey = "cred-1", key
		return c
	}
	count := func() int {
		t.Helper()
		page, err := e.budgets.ListGoals(ctx, e.read, finance.PageQuery{})
		if err != nil {
			t.Fatal(err)
		}
		return len(page.Data)
	}
	before := count()
	in := budgets.GoalInput{Name: sp("Boat"), TargetAmount: sp("5000.00")}
	first, err := e.budgets.CreateGoal(ctx, keyed("k-1"), in)
	if err != nil {
		t.Fatal(err)
	}
	again, err := e.budgets.CreateGoal(ctx, keyed("k-1"), in)
	if err != nil {
		t.Fatal(err)
	}
	if again.Data.ID != first.Data.ID || count() != before+1 {
		t.Fatalf("retried create: goal %s after %s, %d goals (want %d)", again.Data.ID, first.Data.ID, count(), before+1)
	}
	other, err := e.budgets.CreateGoal(ctx, keyed("k-2"), in)
	if err != nil || other.Data.ID == first.Data.ID || count() != before+2 {
		t.Fatalf("another key: %v, %s, %d goals", err, other.Data.ID, count())
	}
	// The same key under another credential is another request.
	c := keyed("k-1")
	c.CredentialID = "cred-2"
	if g, err := e.budgets.CreateGoal(ctx, c, in); err != nil || g.Data.ID == first.Data.ID {
		t.Fatalf("another credential: %v, %s", err, g.Data.ID)
	}

	yes := true
	sw, err := e.budgets.SwitchBudgetMethod(ctx, keyed("s-1"), budgets.MethodZeroBased, &yes, nil)
	if err != nil {
		t.Fatal(err)
	}
	re, err := e.budgets.SwitchBudgetMethod(ctx, keyed("s-1"), budgets.MethodZeroBased, &yes, nil)
	if err != nil {
		t.Fatal(err)
	}
	if re.Data != sw.Data {
		t.Fatalf("retried switch answered %+v, the first %+v", re.Data, sw.Data)
	}
	cur, err := e.budgets.GetBudget(ctx, e.read, sw.Data.NewBudgetID)
	if err != nil || !cur.Data.IsActive {
		t.Fatalf("the first switch's budget is no longer active after the retry: %v", err)
	}
	next, err := e.budgets.SwitchBudgetMethod(ctx, keyed("s-2"), budgets.MethodEnvelope, &yes, nil)
	if err != nil || next.Data.NewBudgetID == sw.Data.NewBudgetID || !next.Data.PreviousBudgetArchived {
		t.Fatalf("a second switch: %+v %v", next.Data, err)
	}
}
