package finance_test

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/services/finance"
	"github.com/ledgerlane/platform/services/finance/budgets"
)

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

// reconcile recomputes every figure of a progress answer from what
// GET /v1/transactions and GET /v1/categories show the same caller, by the
// rules of services/finance/README.md, and fails on any difference.
func reconcile(t *testing.T, e env, c finance.Caller, b budgets.Budget, p budgets.BudgetProgress) {
	t.Helper()
	ctx := context.Background()
	cats, err := e.svc.ListCategories(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	parent, tag := map[string]string{}, map[string]string{}
	for _, cat := range cats.Data {
		parent[cat.ID], tag[cat.ID] = cat.ParentID, cat.TypeTag
	}
	itemOf := map[string]string{}
	for _, g := range b.Groups {
		for _, it := range g.Items {
			itemOf[it.CategoryID] = it.ID
		}
	}
	rows := all(t, e, c, finance.TransactionQuery{StartDate: p.PeriodStart.Format(finance.DateLayout),
		EndDate: p.PeriodEnd.AddDate(0, 0, -1).Format(finance.DateLayout)})
	covered := map[string]bool{}
	var anomalyTotal decimal.Decimal
	for _, a := range p.Anomalies {
		anomalyTotal = anomalyTotal.Add(a.Amount)
		if a.Status == budgets.AnomalyCovered {
			covered[a.TransactionID] = true
		}
	}
	if !anomalyTotal.Equal(p.AnomalyTotal) {
		t.Errorf("%s anomaly_total %s, anomalies sum to %s", p.PeriodLabel, p.AnomalyTotal, anomalyTotal)
	}
	spent := map[string]decimal.Decimal{}
	var income decimal.Decimal
	for _, r := range rows {
		if r.Amount.Currency != b.Currency || r.CategoryID == "" || (r.TransferPairID != "" && r.Amount.Amount.IsPositive()) {
			continue
		}
		if tag[r.CategoryID] == finance.CategoryIncome || tag[parent[r.CategoryID]] == finance.CategoryIncome {
			income = income.Add(r.Amount.Amount)
			continue
		}
		item, ok := itemOf[r.CategoryID]
		if !ok {
			item, ok = itemOf[parent[r.CategoryID]]
		}
		if !ok || covered[r.ID] {
			continue
		}
		spent[item] = spent[item].Sub(r.Amount.Amount)
	}
	if !income.Equal(p.TotalIncome) {
		t.Errorf("%s total_income %s, transactions give %s", p.PeriodLabel, p.TotalIncome, income)
	}
	var total, remaining decimal.Decimal
	for _, g := range p.Groups {
		var gs decimal.Decimal
		for _, it := range g.Items {
			if !it.Spent.Equal(spent[it.ItemID]) {
				t.Errorf("%s item %s spent %s, transactions give %s", p.PeriodLabel, it.ItemID, it.Spent, spent[it.ItemID])
			}
			gs = gs.Add(it.Spent)
		}
		if !gs.Equal(g.Spent) {
			t.Errorf("%s group %s spent %s, items sum to %s", p.PeriodLabel, g.GroupName, g.Spent, gs)
		}
		if want := g.Allocated.Add(g.RolloverAmount).Sub(g.Spent); !want.Equal(g.Remaining) {
			t.Errorf("%s group %s remaining %s, want %s", p.PeriodLabel, g.GroupName, g.Remaining, want)
		}
		if g.Allocated.IsPositive() && !g.SpentPercentage.Equal(g.Spent.Mul(decimal.NewFromInt(100)).Div(g.Allocated)) {
			t.Errorf("%s group %s spent_percentage %s", p.PeriodLabel, g.GroupName, g.SpentPercentage)
		}
		total, remaining = total.Add(g.Spent), remaining.Add(g.Remaining)
	}
	if !total.Equal(p.TotalSpent) {
		t.Errorf("%s total_spent %s, groups sum to %s", p.PeriodLabel, p.TotalSpent, total)
	}
	if b.HasFeature(budgets.FeatureAssignAll) {
		remaining = p.ExpectedIncome.Sub(p.TotalAllocated)
	}
	if !remaining.Equal(p.Remaining) {
		t.Errorf("%s remaining %s, want %s", p.PeriodLabel, p.Remaining, remaining)
	}
}

func TestProgressReconcilesWithTransactions(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	ids := append([]string{e.demo.Budgets.Active}, e.demo.Budgets.Archived...)
	for _, c := range []finance.Caller{e.read, e.redacted} {
		for _, id := range ids {
			b, err := e.budgets.GetBudget(ctx, c, id)
			if err != nil {
				t.Fatal(err)
			}
			for _, month := range []string{"", "2026-04", "2026-01", "2025-11", "2025-06"} {
				res, err := e.budgets.GetBudgetProgress(ctx, c, id, month)
				if err != nil {
					t.Fatal(err)
				}
				if res.Filtered != (c == e.redacted) {
					t.Errorf("filtered %v under grant %s", res.Filtered, c.GrantID)
				}
				reconcile(t, e, c, b.Data.Budget, res.Data)
			}
		}
	}
}

func TestProgressOfEachMethodReconciles(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	confirm := true
	for _, m := range budgets.Methods {
		sw, err := e.budgets.SwitchBudgetMethod(ctx, e.write, m, &confirm, nil)
		if err != nil {
			t.Fatal(m, err)
		}
		b, err := e.budgets.GetBudget(ctx, e.write, sw.Data.NewBudgetID)
		if err != nil {
			t.Fatal(err)
		}
		if b.Data.MethodType != m || !b.Data.IsActive || b.Data.MethodMeta().DisplayName == "" {
			t.Fatalf("%s: %+v", m, b.Data.Budget)
		}
		for _, month := range []string{"", "2026-03"} {
			res, err := e.budgets.GetBudgetProgress(ctx, e.write, sw.Data.NewBudgetID, month)
			if err != nil {
				t.Fatal(err)
			}
			reconcile(t, e, e.write, b.Data.Budget, res.Data)
		}
	}
}

func TestDemoProgress(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	res, err := e.budgets.GetBudgetProgress(ctx, e.read, e.demo.Budgets.Active, "")
	if err != nil {
		t.Fatal(err)
	}
	p := res.Data
	if !p.IsCurrentPeriod || p.PeriodLabel != "May 2026" || p.PeriodStart != date("2026-05-01") || p.PeriodEnd != date("2026-06-01") {
		t.Fatalf("period: %+v", p)
	}
	status := map[string]budgets.BudgetAnomaly{}
	for _, a := range p.Anomalies {
		status[a.TransactionID] = a
	}
	apple, costco := status[e.demo.Budgets.Anomalies["apple"]], status[e.demo.Budgets.Anomalies["costco"]]
	if apple.Status != budgets.AnomalyCovered || apple.CoveredByGoal != e.demo.Budgets.Goals["laptop"] ||
		apple.CoveredByPlanLine != "MacBook Pro" || !apple.Amount.Equal(dec("1899")) {
		t.Errorf("apple anomaly: %+v", apple)
	}
	if costco.Status != budgets.AnomalyFlagged || costco.CoveredByGoal != "" {
		t.Errorf("costco anomaly: %+v", costco)
	}
	var rollover bool
	for _, g := range p.Groups {
		rollover = rollover || !g.RolloverAmount.IsZero()
	}
	if !rollover {
		t.Error("envelope budget carried nothing over")
	}
	// The previous period's remaining is this period's rollover.
	prev, err := e.budgets.GetBudgetProgress(ctx, e.read, e.demo.Budgets.Active, "2026-04")
	if err != nil {
		t.Fatal(err)
	}
	for i, g := range p.Groups {
		if !g.RolloverAmount.Equal(prev.Data.Groups[i].Remaining) {
			t.Errorf("%s rollover %s, April remaining %s", g.GroupName, g.RolloverAmount, prev.Data.Groups[i].Remaining)
		}
	}
	if prev.Data.IsCurrentPeriod {
		t.Error("April is not the current period")
	}
}

func TestPastPeriodsAreFrozen(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	before, err := e.budgets.GetBudgetProgress(ctx, e.write, e.demo.Budgets.Active, "2026-04")
	if err != nil {
		t.Fatal(err)
	}
	current, err := e.budgets.GetBudgetProgress(ctx, e.write, e.demo.Budgets.Active, "")
	if err != nil {
		t.Fatal(err)
	}
	// Move a grocery spend of April and one of May.
	groceries := e.demo.CategoryIDs["Groceries"]
	for _, month := range []string{"2026-04", "2026-05"} {
		rows := all(t, e, e.write, finance.TransactionQuery{CategoryID: groceries, StartDate: month + "-01", EndDate: month + "-15"})
		r := rows[0]
		amount := r.Amount.Amount.Sub(dec("100")).String()
		if _, err := e.svc.UpdateTransaction(ctx, e.write, finance.TransactionUpdate{ID: r.ID,
			ExpectedVersion: r.Version, Amount: &amount}); err != nil {
			t.Fatal(err)
		}
	}
	after, err := e.budgets.GetBudgetProgress(ctx, e.write, e.demo.Budgets.Active, "2026-04")
	if err != nil {
		t.Fatal(err)
	}
	if !after.Data.TotalSpent.Equal(before.Data.TotalSpent) {
		t.Errorf("frozen April moved: %s → %s", before.Data.TotalSpent, after.Data.TotalSpent)
	}
	moved, err := e.budgets.GetBudgetProgress(ctx, e.write, e.demo.Budgets.Active, "")
	if err != nil {
		t.Fatal(err)
	}
	if !moved.Data.TotalSpent.Equal(current.Data.TotalSpent.Add(dec("100"))) {
		t.Errorf("current period: %s → %s, want +100", current.Data.TotalSpent, moved.Data.TotalSpent)
	}
}

func TestBudgetInputErrors(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	yes, no := true, false
	cases := []struct {
		name  string
		call  func() error
		typ   problem.Type
		field string
	}{
		{"bad id", func() error { _, err := e.budgets.GetBudget(ctx, e.read, "nope"); return err }, problem.InvalidInput, "id"},
		{"unknown id", func() error { _, err := e.budgets.GetBudget(ctx, e.read, uuid.NewString()); return err }, problem.NotFound, ""},
		{"month shape", func() error {
			_, err := e.budgets.GetBudgetProgress(ctx, e.read, e.demo.Budgets.Active, "2026-5")
			return err
		}, problem.InvalidInput, "month"},
		{"month 13", func() error {
			_, err := e.budgets.GetBudgetProgress(ctx, e.read, e.demo.Budgets.Active, "2026-13")
			return err
		}, problem.InvalidInput, "month"},
		{"month far ahead", func() error {
			_, err := e.budgets.GetBudgetProgress(ctx, e.read, e.demo.Budgets.Active, "2027-06")
			return err
		}, problem.InvalidInput, "month"},
		{"switch without method", func() error { _, err := e.budgets.SwitchBudgetMethod(ctx, e.write, "", &yes, nil); return err }, problem.InvalidInput, "method"},
		{"switch unknown method", func() error { _, err := e.budgets.SwitchBudgetMethod(ctx, e.write, "yolo", &yes, nil); return err }, problem.InvalidInput, "method"},
		{"switch confirm false", func() error {
			_, err := e.budgets.SwitchBudgetMethod(ctx, e.write, budgets.MethodKakeibo, &no, nil)
			return err
		}, problem.InvalidInput, "confirm"},
		{"switch confirm absent", func() error {
			_, err := e.budgets.SwitchBudgetMethod(ctx, e.write, budgets.MethodKakeibo, nil, nil)
			return err
		}, problem.InvalidInput, "confirm"},
		{"switch read-only grant", func() error {
			_, err := e.budgets.SwitchBudgetMethod(ctx, e.read, budgets.MethodKakeibo, &yes, nil)
			return err
		}, problem.WritesDisabled, ""},
		{"goal bad id", func() error { _, err := e.budgets.GetGoal(ctx, e.read, "x"); return err }, problem.InvalidInput, "id"},
		{"goal unknown", func() error { _, err := e.budgets.GetGoal(ctx, e.read, uuid.NewString()); return err }, problem.NotFound, ""},
		{"goals page_size", func() error {
			_, err := e.budgets.ListGoals(ctx, e.read, finance.PageQuery{PageSize: size(0)})
			return err
		}, problem.InvalidInput, "page_size"},
		{"goals cursor", func() error { _, err := e.budgets.ListGoals(ctx, e.read, finance.PageQuery{Cursor: "abc"}); return err }, problem.InvalidInput, "cursor"},
		{"budgets cursor", func() error {
			_, err := e.budgets.ListBudgets(ctx, e.read, finance.PageQuery{Cursor: "abc"})
			return err
		}, problem.InvalidInput, "cursor"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { wantProblem(t, tc.call(), tc.typ, tc.field) })
	}
}

func TestSwitchBudgetMethod(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	yes := true
	first, err := e.budgets.SwitchBudgetMethod(ctx, e.write, budgets.MethodZeroBased, &yes, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !first.Data.PreviousBudgetArchived {
		t.Fatal("the demo's active budget was not archived")
	}
	old, err := e.budgets.GetBudget(ctx, e.read, e.demo.Budgets.Active)
	if err != nil || old.Data.IsActive || old.Data.ArchivedAt == nil {
		t.Fatalf("previous budget: %+v %v", old.Data.Budget, err)
	}
	second, err := e.budgets.SwitchBudgetMethod(ctx, e.write, budgets.MethodFiftyThirtyTwenty, &yes, nil)
	if err != nil {
		t.Fatal(err)
	}
	made, err := e.budgets.GetBudget(ctx, e.read, first.Data.NewBudgetID)
	if err != nil || made.Data.IsActive {
		t.Fatalf("the first switch's budget should be archived: %+v %v", made.Data.Budget, err)
	}
	list, err := e.budgets.ListBudgets(ctx, e.read, finance.PageQuery{})
	if err != nil {
		t.Fatal(err)
	}
	var active []string
	for _, b := range list.Data {
		if b.IsActive {
			active = append(active, b.ID)
		}
	}
	if len(active) != 1 || list.Data[0].ID != second.Data.NewBudgetID {
		t.Fatalf("active budgets %v, first listed %s", active, list.Data[0].ID)
	}
	// 50/30/20 is a rule set: three percent groups of income.
	b := list.Data[0]
	if len(b.Groups) != 3 || b.Groups[0].AllocationType != budgets.AllocPercent || !b.Groups[0].AllocationValue.Equal(dec("50")) ||
		!budgets.MetaFor(b.MethodType).HasFixedGroups {
		t.Fatalf("50/30/20 groups: %+v", b.Groups)
	}
	// Pages: one budget at a time, active first.
	var seen []string
	q := finance.PageQuery{PageSize: size(1)}
	for {
		page, err := e.budgets.ListBudgets(ctx, e.read, q)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range page.Data {
			seen = append(seen, b.ID)
		}
		if !page.HasMore {
			break
		}
		q.Cursor = page.NextCursor
	}
	if len(seen) != 5 || seen[0] != second.Data.NewBudgetID {
		t.Fatalf("paged budgets: %v", seen)
	}
}

func TestBudgetPrivacy(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	health := e.demo.CategoryIDs["Health"]
	b, err := e.budgets.GetBudget(ctx, e.redacted, e.demo.Budgets.Active)
	if err != nil {
		t.Fatal(err)
	}
	if !b.Filtered {
		t.Error("not filtered")
	}
	for _, g := range b.Data.Groups {
		for _, it := range g.Items {
			if it.CategoryID == health {
				t.Error("an excluded category's item is shown")
			}
		}
	}
	if _, err := e.budgets.GetGoal(ctx, e.redacted, e.demo.Budgets.Goals["retirement"]); err == nil {
		t.Error("a goal linked only to an excluded account is shown")
	} else {
		wantProblem(t, err, problem.NotFound, "")
	}
	goals, err := e.budgets.ListGoals(ctx, e.redacted, finance.PageQuery{})
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range goals.Data {
		if g.ID == e.demo.Budgets.Goals["retirement"] {
			t.Error("listed a hidden goal")
		}
	}
	if len(goals.Data) != 4 || !goals.Filtered {
		t.Errorf("redacted goals: %d filtered %v", len(goals.Data), goals.Filtered)
	}
}

func TestGoals(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	var ids []string
	q := finance.PageQuery{PageSize: size(2)}
	for {
		page, err := e.budgets.ListGoals(ctx, e.read, q)
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range page.Data {
			ids = append(ids, g.ID)
		}
		if !page.HasMore {
			break
		}
		q.Cursor = page.NextCursor
	}
	g := e.demo.Budgets.Goals
	if !slices.Equal(ids, []string{g["emergency"], g["laptop"], g["mortgage"], g["retirement"], g["japan"]}) {
		t.Fatalf("goal order: %v", ids)
	}
	laptop, err := e.budgets.GetGoal(ctx, e.read, g["laptop"])
	if err != nil {
		t.Fatal(err)
	}
	// Budget-driven: 600 saved before, then 150 a month for the six months
	// since creation (the savings transfers are far above 150).
	if p := laptop.Data.Progress; !p.CurrentAmount.Equal(dec("1500")) || !p.RemainingAmount.Equal(dec("900")) ||
		!p.MonthlyContributionNeeded.Equal(dec("300")) || !p.MonthlyShortfall.Equal(dec("150")) ||
		p.ProjectedCompletionDate == nil || *p.ProjectedCompletionDate != date("2026-11-20") {
		t.Errorf("laptop progress: %+v", p)
	}
	emergency, err := e.budgets.GetGoal(ctx, e.read, g["emergency"])
	if err != nil {
		t.Fatal(err)
	}
	acct, err := e.svc.GetAccountBalances(ctx, e.read, e.demo.AccountIDs.Savings)
	if err != nil {
		t.Fatal(err)
	}
	if !emergency.Data.Progress.CurrentAmount.Equal(acct.Data.Balance.Amount) || emergency.Data.AccountLinks[0].AccountType != finance.AccountDepository {
		t.Errorf("account-driven current %s, balance %s", emergency.Data.Progress.CurrentAmount, acct.Data.Balance.Amount)
	}
	japan, err := e.budgets.GetGoal(ctx, e.read, g["japan"])
	if err != nil || japan.Data.Status != budgets.GoalCompleted || japan.Data.CompletedAt == nil {
		t.Fatalf("japan: %+v %v", japan.Data.Goal, err)
	}
}

func TestGoalCompletesWhenReached(t *testing.T) {
	clock := now
	e := newEnv(t, func() time.Time { return clock })
	ctx := context.Background()
	id := uuid.NewString()
	if err := e.store.CreateGoal(ctx, budgets.Goal{ID: id, UserID: e.demo.UserID, Name: "Cushion", GoalType: budgets.GoalSavings,
		Status: budgets.GoalActive, TargetAmount: dec("1000"), Currency: "USD", TrackingMode: budgets.TrackAccountDriven,
		AccountLinks: []budgets.GoalAccountLink{{AccountID: e.demo.AccountIDs.Savings, LinkRole: budgets.LinkRoleFunding}},
		Version:      1, CreatedAt: now, UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
	// Under a filtered grant nothing is recorded.
	if res, err := e.budgets.GetGoal(ctx, e.redacted, id); err != nil || res.Data.CompletedAt != nil {
		t.Fatalf("filtered view: %+v %v", res.Data.Goal, err)
	}
	res, err := e.budgets.GetGoal(ctx, e.read, id)
	if err != nil || res.Data.Status != budgets.GoalCompleted || res.Data.CompletedAt == nil {
		t.Fatalf("reached goal: %+v %v", res.Data.Goal, err)
	}
	clock = now.Add(time.Hour)
	again, err := e.budgets.GetGoal(ctx, e.read, id)
	if err != nil || !again.Data.CompletedAt.Equal(*res.Data.CompletedAt) {
		t.Fatalf("completed_at moved: %v → %v", res.Data.CompletedAt, again.Data.CompletedAt)
	}
}

func TestPeriods(t *testing.T) {
	monthly := budgets.Budget{PeriodType: budgets.PeriodMonthly}
	payday := budgets.Budget{PeriodType: budgets.PeriodMonthlyAnchored, PeriodAnchorDay: 25}
	biweekly := budgets.Budget{PeriodType: budgets.PeriodBiweekly, PeriodAnchorDate: date("2026-01-05")}
	cases := []struct {
		name              string
		b                 budgets.Budget
		day               string
		start, end, label string
	}{
		{"calendar", monthly, "2026-05-20", "2026-05-01", "2026-06-01", "May 2026"},
		{"calendar first day", monthly, "2026-05-01", "2026-05-01", "2026-06-01", "May 2026"},
		{"calendar december", monthly, "2025-12-31", "2025-12-01", "2026-01-01", "December 2025"},
		{"payday before the 25th", payday, "2026-05-20", "2026-04-25", "2026-05-25", "Apr 25 – May 24, 2026"},
		{"payday on the 25th", payday, "2026-05-25", "2026-05-25", "2026-06-25", "May 25 – Jun 24, 2026"},
		{"payday across years", payday, "2026-01-03", "2025-12-25", "2026-01-25", "Dec 25, 2025 – Jan 24, 2026"},
		{"biweekly anchor", biweekly, "2026-01-05", "2026-01-05", "2026-01-19", "Jan 5 – Jan 18, 2026"},
		{"biweekly later", biweekly, "2026-05-20", "2026-05-11", "2026-05-25", "May 11 – May 24, 2026"},
		{"biweekly before anchor", biweekly, "2026-01-04", "2025-12-22", "2026-01-05", "Dec 22, 2025 – Jan 4, 2026"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.b.PeriodContaining(date(tc.day))
			if p.Start != date(tc.start) || p.End != date(tc.end) || p.Label != tc.label {
				t.Errorf("got %s – %s %q", p.Start.Format(finance.DateLayout), p.End.Format(finance.DateLayout), p.Label)
			}
			if !p.Contains(date(tc.day)) || p.Contains(p.End) || !p.Contains(p.Start) {
				t.Error("Contains disagrees with [start, end)")
			}
			if prev := tc.b.Previous(p); prev.End != p.Start {
				t.Errorf("previous period ends %s", prev.End)
			}
		})
	}
	starting := []struct {
		b     budgets.Budget
		month time.Month
		start string
	}{
		{monthly, time.March, "2026-03-01"},
		{payday, time.March, "2026-03-25"},
		{biweekly, time.March, "2026-03-02"},
		{biweekly, time.February, "2026-02-02"},
	}
	for _, tc := range starting {
		if p := tc.b.PeriodStartingIn(2026, tc.month); p.Start != date(tc.start) {
			t.Errorf("%s in %s starts %s, want %s", tc.b.PeriodType, tc.month, p.Start.Format(finance.DateLayout), tc.start)
		}
	}
}

func TestAnomalyThreshold(t *testing.T) {
	cases := []struct {
		history []string
		want    string
	}{
		// median 10, MAD 0 floored at 1: 10 + 5.
		{[]string{"10", "10", "10", "10", "10", "10", "10", "10"}, "15"},
		// median 30, MAD 10: 30 + 50.
		{[]string{"10", "20", "20", "30", "30", "40", "40", "50"}, "80"},
	}
	for _, tc := range cases {
		var h []decimal.Decimal
		for _, s := range tc.history {
			h = append(h, dec(s))
		}
		if got := budgets.AnomalyThreshold(h); !got.Equal(dec(tc.want)) {
			t.Errorf("threshold of %v = %s, want %s", tc.history, got, tc.want)
		}
	}
}

func TestComputeGoalProgress(t *testing.T) {
	today := date("2026-05-20")
	target := date("2026-11-20")
	past := date("2026-01-01")
	months := func(s ...string) []decimal.Decimal {
		var out []decimal.Decimal
		for _, v := range s {
			out = append(out, dec(v))
		}
		return out
	}
	cases := []struct {
		name                   string
		goal                   budgets.Goal
		facts                  budgets.GoalFacts
		remaining, pct         string
		need, short, projected string // "" = absent
		days                   int
	}{
		{"on track", budgets.Goal{TargetAmount: dec("1200"), Currency: "USD", TargetDate: &target},
			budgets.GoalFacts{Current: dec("600"), MonthlyContributions: months("100", "100", "100")},
			"600", "50", "100", "0", "2026-11-20", 184},
		{"behind", budgets.Goal{TargetAmount: dec("1000"), Currency: "USD", TargetDate: &target},
			budgets.GoalFacts{Current: dec("0"), MonthlyContributions: months("50", "0", "40")},
			"1000", "0", "166.67", "136.67", "2029-03-20", 184},
		{"no rate: no projection", budgets.Goal{TargetAmount: dec("1000"), Currency: "USD", TargetDate: &target},
			budgets.GoalFacts{Current: dec("100"), MonthlyContributions: months("-20", "10", "0")},
			"900", "10", "150", "153.33", "", 184}, // money leaving adds to the shortfall
		{"target date passed", budgets.Goal{TargetAmount: dec("1000"), Currency: "USD", TargetDate: &past},
			budgets.GoalFacts{Current: dec("250")}, "750", "25", "750", "750", "", 0},
		{"reached", budgets.Goal{TargetAmount: dec("500"), Currency: "USD"},
			budgets.GoalFacts{Current: dec("650"), MonthlyContributions: months("100", "100", "100")}, "0", "130", "", "", "", -1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := budgets.ComputeGoalProgress(tc.goal, tc.facts, today)
			if !p.RemainingAmount.Equal(dec(tc.remaining)) || !p.ProgressPct.Equal(dec(tc.pct)) {
				t.Errorf("remaining %s pct %s", p.RemainingAmount, p.ProgressPct)
			}
			check := func(name string, got *decimal.Decimal, want string) {
				if (got == nil) != (want == "") || (got != nil && !got.Equal(dec(want))) {
					t.Errorf("%s = %v, want %q", name, got, want)
				}
			}
			check("monthly_contribution_needed", p.MonthlyContributionNeeded, tc.need)
			check("monthly_shortfall", p.MonthlyShortfall, tc.short)
			if (p.ProjectedCompletionDate == nil) != (tc.projected == "") ||
				(p.ProjectedCompletionDate != nil && *p.ProjectedCompletionDate != date(tc.projected)) {
				t.Errorf("projected %v, want %q", p.ProjectedCompletionDate, tc.projected)
			}
			if (p.DaysRemaining == nil) != (tc.days < 0) || (p.DaysRemaining != nil && *p.DaysRemaining != tc.days) {
				t.Errorf("days remaining %v, want %d", p.DaysRemaining, tc.days)
			}
		})
	}
}

// TestProgressInvariants checks ComputeProgress on random budgets and rows:
// the items' spent equals the counted rows' outflows less covered
// anomalies, groups and totals add up, and remaining is allocated plus
// rollover minus spent.
func TestProgressInvariants(t *testing.T) {
	cats := []finance.Category{
		{ID: "inc", Name: "Income", TypeTag: finance.CategoryIncome},
		{ID: "pay", ParentID: "inc", Name: "Paycheck", TypeTag: finance.CategoryIncome},
		{ID: "food", Name: "Food", TypeTag: finance.CategoryExpense},
		{ID: "cafe", ParentID: "food", Name: "Cafe", TypeTag: finance.CategoryExpense},
		{ID: "fun", Name: "Fun", TypeTag: finance.CategoryExpense},
		{ID: "xfer", Name: "Transfers", TypeTag: finance.CategoryTransfer},
		{ID: "save", ParentID: "xfer", Name: "Savings & Investments", TypeTag: finance.CategoryTransfer},
		{ID: "other", Name: "Other", TypeTag: finance.CategoryExpense},
	}
	catIDs := []string{"pay", "food", "cafe", "fun", "save", "other", ""}
	period := budgets.Budget{PeriodType: budgets.PeriodMonthly}.PeriodContaining(date("2026-05-10"))
	for seed := uint64(0); seed < 300; seed++ {
		r := rand.New(rand.NewPCG(seed, 99))
		method := budgets.Methods[r.IntN(len(budgets.Methods))]
		n := 0
		b := budgets.NewBudget(budgets.BudgetTemplate{Method: method, UserID: "u", Currency: "USD", Categories: cats,
			MonthlySpend: map[string]decimal.Decimal{"food": decimal.New(r.Int64N(100000), -2), "fun": decimal.New(r.Int64N(50000), -2)},
			NewID:        func() string { n++; return string(rune('a'+n%26)) + uuid.NewString() }, Now: date("2026-01-01")})
		if r.IntN(2) == 0 {
			income := decimal.New(r.Int64N(1000000), -2)
			b.ExpectedMonthlyIncome = &income
		}
		var rows, history []finance.BudgetRow
		mk := func(d time.Time) finance.BudgetRow {
			row := finance.BudgetRow{ID: uuid.NewString(), CategoryID: catIDs[r.IntN(len(catIDs))], Merchant: "m",
				Amount: finance.Money{Amount: decimal.New(r.Int64N(40000)-30000, -2), Currency: "USD"}, Date: d}
			if r.IntN(10) == 0 {
				row.Amount.Currency = "EUR"
			}
			if r.IntN(8) == 0 {
				row.TransferPairID = uuid.NewString()
			}
			return row
		}
		for i := 0; i < r.IntN(80); i++ {
			rows = append(rows, mk(period.Start.AddDate(0, 0, r.IntN(31))))
		}
		for i := 0; i < r.IntN(200); i++ {
			history = append(history, mk(period.Start.AddDate(0, 0, -1-r.IntN(180))))
		}
		goals := []budgets.Goal{{ID: "g", Status: budgets.GoalActive, SpendingPlan: []budgets.GoalPlanLine{
			{Name: "line", CategoryID: "food", PlannedAmount: decimal.New(r.Int64N(50000), -2)}}}}
		rollover := map[string]decimal.Decimal{}
		for _, g := range b.Groups {
			rollover[g.ID] = decimal.New(r.Int64N(20000)-10000, -2)
		}
		p := budgets.ComputeProgress(budgets.ProgressInput{Budget: b, Period: period, Today: date("2026-05-10"),
			Categories: cats, Rows: rows, History: history, Goals: goals, Rollover: rollover})

		covered := map[string]decimal.Decimal{}
		var anomalies decimal.Decimal
		for _, a := range p.Anomalies {
			anomalies = anomalies.Add(a.Amount)
			if a.Status == budgets.AnomalyCovered {
				covered[a.TransactionID] = a.Amount
			}
		}
		// Every counted outflow of a budgeted category, recomputed.
		inBudget := map[string]bool{}
		for _, g := range b.Groups {
			for _, it := range g.Items {
				inBudget[it.CategoryID] = true
			}
		}
		parent := map[string]string{}
		for _, c := range cats {
			parent[c.ID] = c.ParentID
		}
		var want, income decimal.Decimal
		for _, row := range rows {
			if row.Amount.Currency != "USD" || row.CategoryID == "" || (row.TransferPairID != "" && row.Amount.Amount.IsPositive()) {
				continue
			}
			if row.CategoryID == "pay" {
				income = income.Add(row.Amount.Amount)
				continue
			}
			if !inBudget[row.CategoryID] && !inBudget[parent[row.CategoryID]] {
				continue
			}
			want = want.Sub(row.Amount.Amount)
			if c, ok := covered[row.ID]; ok {
				want = want.Sub(c)
			}
		}
		var spent, remaining, allocated decimal.Decimal
		for _, g := range p.Groups {
			var items decimal.Decimal
			for _, it := range g.Items {
				items = items.Add(it.Spent)
			}
			if !items.Equal(g.Spent) {
				t.Fatalf("seed %d %s: group %s spent %s, items %s", seed, method, g.GroupName, g.Spent, items)
			}
			if !g.Remaining.Equal(g.Allocated.Add(g.RolloverAmount).Sub(g.Spent)) {
				t.Fatalf("seed %d %s: group %s remaining", seed, method, g.GroupName)
			}
			if g.Allocated.IsNegative() {
				t.Fatalf("seed %d %s: negative allocation", seed, method)
			}
			spent, remaining, allocated = spent.Add(g.Spent), remaining.Add(g.Remaining), allocated.Add(g.Allocated)
		}
		if !spent.Equal(want) || !p.TotalSpent.Equal(spent) {
			t.Fatalf("seed %d %s: total_spent %s, groups %s, rows %s", seed, method, p.TotalSpent, spent, want)
		}
		if !p.TotalIncome.Equal(income) || !p.AnomalyTotal.Equal(anomalies) || !p.TotalAllocated.Equal(allocated) {
			t.Fatalf("seed %d %s: income %s/%s anomalies %s/%s", seed, method, p.TotalIncome, income, p.AnomalyTotal, anomalies)
		}
		if !b.HasFeature(budgets.FeatureAssignAll) && !p.Remaining.Equal(remaining) {
			t.Fatalf("seed %d %s: remaining %s, groups %s", seed, method, p.Remaining, remaining)
		}
	}
}
