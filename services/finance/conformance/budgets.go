package conformance

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/ledgerlane/platform/services/finance"
	"github.com/ledgerlane/platform/services/finance/budgets"
)

func budget(userID string, active bool, created time.Time) budgets.Budget {
	income := decimal.RequireFromString("5200.50")
	return budgets.Budget{ID: newID(), UserID: userID, Name: "Plan", MethodType: budgets.MethodEnvelope,
		PeriodType: budgets.PeriodMonthly, IsActive: active, IncomeType: budgets.IncomeSalary,
		ExpectedMonthlyIncome: &income, Currency: "USD", EnabledFeatures: []string{budgets.FeatureRollover},
		Groups: []budgets.TargetGroup{{ID: newID(), Name: "Food", SortOrder: 1, AllocationType: budgets.AllocAmount,
			AllocationValue: decimal.RequireFromString("400.10"), Role: budgets.RoleSpending,
			Items: []budgets.BudgetItem{{ID: newID(), CategoryID: newID(), AllocatedAmount: decimal.RequireFromString("400.10")}}}},
		AlertThresholds: []int32{50, 80, 100}, Version: 1, CreatedAt: created, UpdatedAt: created}
}

// sameBudget compares budgets, decimals by value.
func sameBudget(t *testing.T, want, got budgets.Budget) {
	t.Helper()
	if want.ID != got.ID || want.IsActive != got.IsActive || want.MethodType != got.MethodType ||
		want.PeriodType != got.PeriodType || want.PeriodAnchorDay != got.PeriodAnchorDay ||
		!want.PeriodAnchorDate.Equal(got.PeriodAnchorDate) || !want.CreatedAt.Equal(got.CreatedAt) ||
		!slices.Equal(want.EnabledFeatures, got.EnabledFeatures) || len(want.Groups) != len(got.Groups) ||
		!slices.Equal(want.AlertThresholds, got.AlertThresholds) ||
		(want.ExpectedMonthlyIncome == nil) != (got.ExpectedMonthlyIncome == nil) ||
		(want.ExpectedMonthlyIncome != nil && want.ExpectedMonthlyIncome.String() != got.ExpectedMonthlyIncome.String()) {
		t.Fatalf("budget mismatch:\nwant %+v\n got %+v", want, got)
	}
	for i, g := range want.Groups {
		h := got.Groups[i]
		if g.ID != h.ID || g.Name != h.Name || g.Role != h.Role || g.AllocationValue.String() != h.AllocationValue.String() ||
			len(g.Items) != len(h.Items) {
			t.Fatalf("group mismatch: %+v vs %+v", g, h)
		}
		for j, it := range g.Items {
			if it.ID != h.Items[j].ID || it.CategoryID != h.Items[j].CategoryID ||
				it.AllocatedAmount.String() != h.Items[j].AllocatedAmount.String() {
				t.Fatalf("item mismatch: %+v vs %+v", it, h.Items[j])
			}
		}
	}
}

func testBudgets(t *testing.T, s Store) {
	ctx := context.Background()
	f := setup(t, s)
	old := budget(f.user, false, base.Add(-time.Hour))
	at := base.Add(-30 * time.Minute)
	old.ArchivedAt = &at
	old.PeriodType, old.PeriodAnchorDay = budgets.PeriodMonthlyAnchored, 25
	active := budget(f.user, true, base)
	active.PeriodType, active.PeriodAnchorDate = budgets.PeriodBiweekly, day(-3)
	active.ExpectedMonthlyIncome = nil
	old.AlertThresholds = nil // no alerts: stored and read back as none
	must(t, s.CreateBudget(ctx, old))
	must(t, s.CreateBudget(ctx, active))
	must(t, s.CreateBudget(ctx, budget(f.other, true, base)))

	t.Run("round trip", func(t *testing.T) {
		for _, b := range []budgets.Budget{old, active} {
			got, err := s.GetBudget(ctx, f.user, b.ID)
			must(t, err)
			sameBudget(t, b, got)
		}
		got, _ := s.GetBudget(ctx, f.user, old.ID)
		if got.ArchivedAt == nil || !got.ArchivedAt.Equal(at) {
			t.Errorf("archived_at %v", got.ArchivedAt)
		}
	})
	t.Run("not found", func(t *testing.T) {
		for _, id := range []string{newID(), "not-a-uuid"} {
			if _, err := s.GetBudget(ctx, f.user, id); !errors.Is(err, finance.ErrNotFound) {
				t.Errorf("%s: %v", id, err)
			}
		}
		if _, err := s.GetBudget(ctx, f.other, active.ID); !errors.Is(err, finance.ErrNotFound) {
			t.Errorf("another user's budget: %v", err)
		}
	})
	t.Run("one active per user", func(t *testing.T) {
		if err := s.CreateBudget(ctx, budget(f.user, true, base)); !errors.Is(err, finance.ErrAlreadyExists) {
			t.Errorf("second active budget: %v", err)
		}
		if err := s.CreateBudget(ctx, active); !errors.Is(err, finance.ErrAlreadyExists) {
			t.Errorf("same id: %v", err)
		}
	})
	t.Run("list: active first, then newest", func(t *testing.T) {
		newer := budget(f.user, false, base.Add(time.Hour))
		must(t, s.CreateBudget(ctx, newer))
		list, err := s.ListBudgets(ctx, f.user)
		must(t, err)
		var ids []string
		for _, b := range list {
			ids = append(ids, b.ID)
		}
		diff(t, "order", []string{active.ID, newer.ID, old.ID}, ids)
	})
	t.Run("switch archives the active one", func(t *testing.T) {
		next := budget(f.user, true, base.Add(2*time.Hour))
		archived, err := s.SwitchBudget(ctx, next)
		must(t, err)
		if archived != active.ID {
			t.Fatalf("archived %q, want %s", archived, active.ID)
		}
		prev, err := s.GetBudget(ctx, f.user, active.ID)
		must(t, err)
		if prev.IsActive || prev.ArchivedAt == nil || !prev.ArchivedAt.Equal(next.CreatedAt) || prev.Version != 2 {
			t.Errorf("previous: %+v", prev)
		}
		// A failing switch (the id exists: a retried switch, whose id is
		// derived from its Idempotency-Key) is ErrAlreadyExists and changes
		// nothing.
		if _, err := s.SwitchBudget(ctx, next); !errors.Is(err, finance.ErrAlreadyExists) {
			t.Fatalf("switch with an existing id: want ErrAlreadyExists, got %v", err)
		}
		cur, err := s.GetBudget(ctx, f.user, next.ID)
		must(t, err)
		if !cur.IsActive {
			t.Error("failed switch archived the active budget")
		}
		// A user without budgets: nothing to archive.
		archived, err = s.SwitchBudget(ctx, budget(newUser(t, s), true, base))
		must(t, err)
		if archived != "" {
			t.Errorf("archived %q", archived)
		}
	})
	t.Run("concurrent switches leave one active", func(t *testing.T) {
		var wg sync.WaitGroup
		for i := 0; i < 6; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				_, err := s.SwitchBudget(ctx, budget(f.user, true, base.Add(time.Duration(3+i)*time.Hour)))
				must(t, err)
			}(i)
		}
		wg.Wait()
		list, err := s.ListBudgets(ctx, f.user)
		must(t, err)
		n := 0
		for _, b := range list {
			if b.IsActive {
				n++
			}
		}
		if n != 1 || !list[0].IsActive {
			t.Errorf("%d active budgets", n)
		}
	})
}

func newUser(t *testing.T, s Store) string {
	id := newID()
	must(t, s.CreateUser(context.Background(), finance.User{ID: id, CreatedAt: base}))
	return id
}

func testProgressSnapshots(t *testing.T, s Store) {
	ctx := context.Background()
	f := setup(t, s)
	b := budget(f.user, true, base)
	must(t, s.CreateBudget(ctx, b))
	grant := newID()
	if _, err := s.GetProgressSnapshot(ctx, b.ID, grant, day(0)); !errors.Is(err, finance.ErrNotFound) {
		t.Fatalf("missing snapshot: %v", err)
	}
	first, err := s.SaveProgressSnapshot(ctx, budgets.ProgressSnapshot{BudgetID: b.ID, UserID: f.user, GrantID: grant,
		PeriodStart: day(0), Data: []byte(`{"TotalSpent":"12.50"}`), CreatedAt: base})
	must(t, err)
	second, err := s.SaveProgressSnapshot(ctx, budgets.ProgressSnapshot{BudgetID: b.ID, UserID: f.user, GrantID: grant,
		PeriodStart: day(0), Data: []byte(`{"TotalSpent":"99.00"}`), CreatedAt: base.Add(time.Hour)})
	must(t, err)
	got, err := s.GetProgressSnapshot(ctx, b.ID, grant, day(0))
	must(t, err)
	for _, snap := range []budgets.ProgressSnapshot{first, second, got} {
		if string(snap.Data) != `{"TotalSpent": "12.50"}` && string(snap.Data) != `{"TotalSpent":"12.50"}` {
			t.Errorf("first writer must win: %s", snap.Data)
		}
	}
	if _, err := s.GetProgressSnapshot(ctx, b.ID, newID(), day(0)); !errors.Is(err, finance.ErrNotFound) {
		t.Errorf("another grant's snapshot: %v", err)
	}
}

func goal(userID string, order int32) budgets.Goal {
	target := day(200)
	return budgets.Goal{ID: newID(), UserID: userID, Name: "Trip", Description: "Lisbon", GoalType: budgets.GoalSavings,
		Status: budgets.GoalActive, TargetAmount: decimal.RequireFromString("3000.00"),
		CurrentAmount: decimal.RequireFromString("250.10"), Currency: "USD", TargetDate: &target,
		FundingSourceType: budgets.FundingBudget, TrackingMode: budgets.TrackBudgetDriven, SortOrder: order,
		ShowInDigest: true,
		AccountLinks: []budgets.GoalAccountLink{{AccountID: newID(), LinkRole: budgets.LinkRoleFunding}},
		BudgetLinks:  []budgets.GoalBudgetLink{{BudgetItemID: newID(), ContributionAmount: decimal.RequireFromString("150.00"), IsActive: true}},
		SpendingPlan: []budgets.GoalPlanLine{{Name: "Flights", CategoryID: newID(), PlannedAmount: decimal.RequireFromString("800")}},
		Version:      1, CreatedAt: base, UpdatedAt: base}
}

func testGoals(t *testing.T, s Store) {
	ctx := context.Background()
	f := setup(t, s)
	var goals []budgets.Goal
	for _, order := range []int32{3, 1, 2, 2, 5} {
		g := goal(f.user, order)
		goals = append(goals, g)
		must(t, s.CreateGoal(ctx, g))
	}
	plain := goal(f.user, 9)
	plain.TargetDate, plain.AccountLinks, plain.BudgetLinks, plain.SpendingPlan, plain.Description = nil, nil, nil, nil, ""
	goals = append(goals, plain)
	must(t, s.CreateGoal(ctx, plain))
	must(t, s.CreateGoal(ctx, goal(f.other, 1)))
	if err := s.CreateGoal(ctx, plain); !errors.Is(err, finance.ErrAlreadyExists) {
		t.Errorf("same id: %v", err)
	}

	t.Run("round trip", func(t *testing.T) {
		for _, g := range []budgets.Goal{goals[0], plain} {
			got, err := s.GetGoal(ctx, f.user, g.ID)
			must(t, err)
			if got.TargetAmount.String() != g.TargetAmount.String() || got.CurrentAmount.String() != g.CurrentAmount.String() {
				t.Errorf("amounts %s %s", got.TargetAmount, got.CurrentAmount)
			}
			got.TargetAmount, got.CurrentAmount = g.TargetAmount, g.CurrentAmount
			for i := range got.BudgetLinks {
				if got.BudgetLinks[i].ContributionAmount.String() != g.BudgetLinks[i].ContributionAmount.String() {
					t.Errorf("contribution %s", got.BudgetLinks[i].ContributionAmount)
				}
				got.BudgetLinks[i].ContributionAmount = g.BudgetLinks[i].ContributionAmount
			}
			for i := range got.SpendingPlan {
				if !got.SpendingPlan[i].PlannedAmount.Equal(g.SpendingPlan[i].PlannedAmount) {
					t.Errorf("planned %s", got.SpendingPlan[i].PlannedAmount)
				}
				got.SpendingPlan[i].PlannedAmount = g.SpendingPlan[i].PlannedAmount
			}
			diff(t, "goal", g, got)
		}
		if _, err := s.GetGoal(ctx, f.other, goals[0].ID); !errors.Is(err, finance.ErrNotFound) {
			t.Errorf("another user's goal: %v", err)
		}
		if _, err := s.GetGoal(ctx, f.user, "x"); !errors.Is(err, finance.ErrNotFound) {
			t.Errorf("bad id: %v", err)
		}
	})
	t.Run("keyset pages by sort order then id", func(t *testing.T) {
		want := slices.Clone(goals)
		slices.SortFunc(want, func(a, b budgets.Goal) int {
			if a.SortOrder != b.SortOrder {
				return int(a.SortOrder - b.SortOrder)
			}
			if a.ID < b.ID {
				return -1
			}
			return 1
		})
		for _, limit := range []int{1, 2, 4, 0} {
			var got []string
			var after *budgets.GoalPosition
			for {
				page, err := s.ListGoals(ctx, f.user, after, limit)
				must(t, err)
				for _, g := range page {
					got = append(got, g.ID)
				}
				if limit == 0 || len(page) < limit {
					break
				}
				last := page[len(page)-1]
				after = &budgets.GoalPosition{SortOrder: last.SortOrder, ID: last.ID}
			}
			var ids []string
			for _, g := range want {
				ids = append(ids, g.ID)
			}
			diff(t, "order", ids, got)
		}
	})
	t.Run("mark completed once", func(t *testing.T) {
		must(t, s.MarkGoalCompleted(ctx, f.user, goals[0].ID, base.Add(time.Hour)))
		must(t, s.MarkGoalCompleted(ctx, f.user, goals[0].ID, base.Add(2*time.Hour)))
		got, err := s.GetGoal(ctx, f.user, goals[0].ID)
		must(t, err)
		if got.Status != budgets.GoalCompleted || got.CompletedAt == nil || !got.CompletedAt.Equal(base.Add(time.Hour)) || got.Version != 2 {
			t.Errorf("completed: %s %v v%d", got.Status, got.CompletedAt, got.Version)
		}
		if err := s.MarkGoalCompleted(ctx, f.other, goals[1].ID, base); !errors.Is(err, finance.ErrNotFound) {
			t.Errorf("another user's goal: %v", err)
		}
	})
}

// testGoalWrites: UpdateGoal and DeleteGoal are compare-and-swaps scoped
// to the user; an update rewrites every mutable field.
func testGoalWrites(t *testing.T, s Store) {
	ctx := context.Background()
	f := setup(t, s)
	g := goal(f.user, 1)
	must(t, s.CreateGoal(ctx, g))

	next := g
	next.Name, next.Description, next.Status = "Renamed", "", budgets.GoalPaused
	next.TargetAmount, next.CurrentAmount = decimal.RequireFromString("1234.56"), decimal.RequireFromString("0.01")
	next.TargetDate, next.AccountLinks, next.SpendingPlan = nil, nil, nil
	next.TrackingMode, next.FundingSourceType = budgets.TrackManual, budgets.FundingManual
	next.SortOrder, next.ShowInDigest = 42, !g.ShowInDigest
	next.Version, next.UpdatedAt = g.Version+1, base.Add(time.Hour)
	must(t, s.UpdateGoal(ctx, next, g.Version))
	got, err := s.GetGoal(ctx, f.user, g.ID)
	must(t, err)
	if got.TargetAmount.String() != "1234.56" || got.CurrentAmount.String() != "0.01" {
		t.Errorf("amounts %s %s", got.TargetAmount, got.CurrentAmount)
	}
	got.TargetAmount, got.CurrentAmount = next.TargetAmount, next.CurrentAmount
	for i := range got.BudgetLinks {
		got.BudgetLinks[i].ContributionAmount = next.BudgetLinks[i].ContributionAmount
	}
	diff(t, "updated goal", next, got)

	if err := s.UpdateGoal(ctx, next, g.Version); !errors.Is(err, finance.ErrVersionConflict) {
		t.Errorf("stale version: %v", err)
	}
	other := next
	other.UserID = f.other
	if err := s.UpdateGoal(ctx, other, next.Version); !errors.Is(err, finance.ErrNotFound) {
		t.Errorf("another user's goal: %v", err)
	}
	missing := next
	missing.ID = newID()
	if err := s.UpdateGoal(ctx, missing, 1); !errors.Is(err, finance.ErrNotFound) {
		t.Errorf("missing goal: %v", err)
	}

	// Racing writers on one version: exactly one wins.
	var wg sync.WaitGroup
	wins := make(chan bool, 8)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := next
			w.SortOrder, w.Version = int32(100+i), next.Version+1
			err := s.UpdateGoal(ctx, w, next.Version)
			if err != nil && !errors.Is(err, finance.ErrVersionConflict) {
				t.Error(err)
			}
			wins <- err == nil
		}()
	}
	wg.Wait()
	close(wins)
	n := 0
	for w := range wins {
		if w {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d racing updates won", n)
	}

	if err := s.DeleteGoal(ctx, f.user, g.ID, next.Version); !errors.Is(err, finance.ErrVersionConflict) {
		t.Errorf("delete at a stale version: %v", err)
	}
	if err := s.DeleteGoal(ctx, f.other, g.ID, next.Version+1); !errors.Is(err, finance.ErrNotFound) {
		t.Errorf("delete another user's goal: %v", err)
	}
	must(t, s.DeleteGoal(ctx, f.user, g.ID, next.Version+1))
	if _, err := s.GetGoal(ctx, f.user, g.ID); !errors.Is(err, finance.ErrNotFound) {
		t.Errorf("deleted goal: %v", err)
	}
	if err := s.DeleteGoal(ctx, f.user, g.ID, 1); !errors.Is(err, finance.ErrNotFound) {
		t.Errorf("delete twice: %v", err)
	}
	if err := s.DeleteGoal(ctx, f.user, "x", 1); !errors.Is(err, finance.ErrNotFound) {
		t.Errorf("bad id: %v", err)
	}
}

// testBudgetGroupsCAS: UpdateBudgetGroups writes groups, alert thresholds,
// version and updated_at and nothing else, only at the expected version.
func testBudgetGroupsCAS(t *testing.T, s Store) {
	ctx := context.Background()
	f := setup(t, s)
	b := budget(f.user, true, base)
	must(t, s.CreateBudget(ctx, b))
	next := b
	next.Groups = []budgets.TargetGroup{b.Groups[0]}
	next.Groups[0].Items = []budgets.BudgetItem{b.Groups[0].Items[0]}
	next.Groups[0].Items[0].AllocatedAmount = decimal.RequireFromString("512.25")
	next.Groups[0].AllocationValue = decimal.RequireFromString("512.25")
	next.Name = "ignored"
	next.AlertThresholds = []int32{75, 1000}
	next.Version, next.UpdatedAt = 2, base.Add(time.Hour)
	must(t, s.UpdateBudgetGroups(ctx, next, 1))
	got, err := s.GetBudget(ctx, f.user, b.ID)
	must(t, err)
	want := next
	want.Name = b.Name
	sameBudget(t, want, got)
	if got.Version != 2 || !got.UpdatedAt.Equal(next.UpdatedAt) || got.Name != b.Name {
		t.Errorf("version %d updated_at %v name %q", got.Version, got.UpdatedAt, got.Name)
	}
	if err := s.UpdateBudgetGroups(ctx, next, 1); !errors.Is(err, finance.ErrVersionConflict) {
		t.Errorf("stale version: %v", err)
	}
	other := next
	other.UserID = f.other
	if err := s.UpdateBudgetGroups(ctx, other, 2); !errors.Is(err, finance.ErrNotFound) {
		t.Errorf("another user's budget: %v", err)
	}
	other = next
	other.ID = newID()
	if err := s.UpdateBudgetGroups(ctx, other, 2); !errors.Is(err, finance.ErrNotFound) {
		t.Errorf("missing budget: %v", err)
	}
}

// testThresholdAlerts: the sent-table of budget.threshold_reached. A key
// (grant, budget, group, period start, threshold) is claimed once, also by
// racing claimers; every other part of the key makes another alert; a
// released claim can be claimed again; another user's budget is not found.
func testThresholdAlerts(t *testing.T, s Store) {
	ctx := context.Background()
	f := setup(t, s)
	b := budget(f.user, true, base)
	must(t, s.CreateBudget(ctx, b))
	a := budgets.ThresholdAlert{UserID: f.user, GrantID: newID(), BudgetID: b.ID, GroupID: b.Groups[0].ID,
		PeriodStart: day(0), PeriodEnd: day(0).AddDate(0, 1, 0), Threshold: 80, CreatedAt: base}
	claim := func(a budgets.ThresholdAlert) bool {
		t.Helper()
		ok, err := s.ClaimThresholdAlert(ctx, a)
		must(t, err)
		return ok
	}
	if !claim(a) {
		t.Fatal("first claim refused")
	}
	if claim(a) {
		t.Fatal("second claim of the same key accepted")
	}
	later := a
	later.CreatedAt, later.PeriodEnd = base.Add(time.Hour), day(0).AddDate(0, 2, 0)
	if claim(later) {
		t.Fatal("the same key at another time accepted: created_at and period_end are not in the key")
	}
	for name, change := range map[string]func(*budgets.ThresholdAlert){
		"grant":     func(x *budgets.ThresholdAlert) { x.GrantID = newID() },
		"group":     func(x *budgets.ThresholdAlert) { x.GroupID = newID() },
		"period":    func(x *budgets.ThresholdAlert) { x.PeriodStart = day(31) },
		"threshold": func(x *budgets.ThresholdAlert) { x.Threshold = 100 },
	} {
		x := a
		change(&x)
		if !claim(x) {
			t.Errorf("another %s: refused", name)
		}
	}
	must(t, s.ReleaseThresholdAlert(ctx, a))
	if !claim(a) {
		t.Fatal("a released key is refused")
	}
	must(t, s.ReleaseThresholdAlert(ctx, budgets.ThresholdAlert{UserID: f.user, GrantID: newID(), BudgetID: b.ID,
		GroupID: "g", PeriodStart: day(0), Threshold: 1})) // nothing to release: no error

	foreign := a
	foreign.UserID, foreign.Threshold = f.other, 90
	if _, err := s.ClaimThresholdAlert(ctx, foreign); !errors.Is(err, finance.ErrNotFound) {
		t.Errorf("another user's budget: %v", err)
	}
	missing := a
	missing.BudgetID = newID()
	if _, err := s.ClaimThresholdAlert(ctx, missing); !errors.Is(err, finance.ErrNotFound) {
		t.Errorf("missing budget: %v", err)
	}

	// Racing claimers (replicas checking after the same write): one wins.
	race := a
	race.Threshold = 300
	var wg sync.WaitGroup
	var mu sync.Mutex
	won := 0
	for range 8 {
		wg.Go(func() {
			ok, err := s.ClaimThresholdAlert(ctx, race)
			if err != nil {
				t.Error(err)
				return
			}
			if ok {
				mu.Lock()
				won++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if won != 1 {
		t.Fatalf("%d racing claims won, want 1", won)
	}
}
