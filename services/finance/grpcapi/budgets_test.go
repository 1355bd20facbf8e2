package grpcapi_test

import (
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/ledgerlane/platform/pkg/problem"
	financev1 "github.com/ledgerlane/platform/proto/finance/v1"
)

// TestBudgetsOnTheWire checks the translation: amounts keep the currency's
// two places, percentages are rounded once to two places, dates are
// YYYY-MM-DD, and errors name their field.
func TestBudgetsOnTheWire(t *testing.T) {
	c := start(t)
	ctx := as(c.read)
	list, err := c.budget.ListBudgets(ctx, &financev1.ListBudgetsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.GetData()) != 3 || list.GetData()[0].GetId() != c.demo.Budgets.Active || !list.GetData()[0].GetIsActive() {
		t.Fatalf("budgets: %v", list.GetData())
	}
	p, err := c.budget.GetBudgetProgress(ctx, &financev1.GetBudgetProgressRequest{Id: c.demo.Budgets.Active, Month: "2026-04"})
	if err != nil {
		t.Fatal(err)
	}
	d := p.GetData()
	if d.GetPeriodStart() != "2026-04-01" || d.GetPeriodEnd() != "2026-05-01" || d.GetPeriodLabel() != "April 2026" ||
		d.GetIsCurrentPeriod() || d.GetMethodMeta().GetDisplayName() != "Envelope" || d.GetCurrency() != "USD" {
		t.Fatalf("progress: %v", d)
	}
	for _, g := range d.GetGroups() {
		for _, s := range []string{g.GetAllocated(), g.GetSpent(), g.GetRemaining(), g.GetRolloverAmount()} {
			if i := len(s) - 3; i < 0 || s[i] != '.' {
				t.Errorf("amount %q has not two places", s)
			}
		}
		if pct := g.GetSpentPercentage(); pct*100 != float64(int64(pct*100)) {
			t.Errorf("spent_percentage %v is not rounded to two places", pct)
		}
	}
	goal, err := c.goal.GetGoal(ctx, &financev1.GetGoalRequest{Id: c.demo.Budgets.Goals["laptop"]})
	if err != nil {
		t.Fatal(err)
	}
	if g := goal.GetData(); g.GetProgress().GetProgressPct() != "62.50" || g.GetCurrentAmount() != "1500.00" ||
		len(g.GetSpendingPlan()) != 1 || g.GetProgress().GetProjectedCompletionDate() != "2026-11-20" {
		t.Fatalf("goal: %v", g)
	}
	_, err = c.budget.GetBudgetProgress(ctx, &financev1.GetBudgetProgressRequest{Id: c.demo.Budgets.Active, Month: "May"})
	wantProblem(t, err, problem.InvalidInput, "month")
	_, err = c.budget.SwitchBudgetMethod(as(c.read), &financev1.SwitchBudgetMethodRequest{Method: "envelope", Confirm: true})
	wantProblem(t, err, problem.WritesDisabled, "")
	_, err = c.goal.ListGoals(ctx, &financev1.ListGoalsRequest{PageSize: proto.Int32(201)})
	wantProblem(t, err, problem.InvalidInput, "page_size")
}
