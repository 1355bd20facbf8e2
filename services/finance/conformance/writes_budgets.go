package conformance

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/ledgerlane/platform/services/finance"
	"github.com/ledgerlane/platform/services/finance/budgets"
	"github.com/ledgerlane/platform/services/finance/recurring"
)

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

// testBudgetGroupsCAS: UpdateBudgetGroups writes groups, version and
// updated_at and nothing else, only at the expected version.
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

// testSaveRecurringStreams: rules are inserted or replaced whole, rows are
// linked exactly as the members say (others unlinked, other users' rows
// untouched), and row versions do not move.
func testSaveRecurringStreams(t *testing.T, s Store) {
	ctx := context.Background()
	f := setup(t, s)
	var rows []finance.Transaction
	for i := range 4 {
		tx := finance.Transaction{ID: newID(), UserID: f.user, AccountID: f.account, Amount: money("-15.49", "USD"),
			Merchant: "Netflix", Date: day(-30 * i), Source: finance.SourceBankSync, Version: 1, CreatedAt: base, UpdatedAt: base}
		rows = append(rows, tx)
	}
	theirs := finance.Transaction{ID: newID(), UserID: f.other, AccountID: f.otherAccount, Amount: money("-1", "USD"),
		Merchant: "Netflix", Date: day(0), Source: finance.SourceManual, Version: 1, CreatedAt: base, UpdatedAt: base}
	must(t, s.InsertTransactions(ctx, append(rows, theirs)))
	old := recurring.Rule{ID: newID(), UserID: f.user, AccountID: f.account, Merchant: "Netflix",
		DisplayName: "Netflix", ExpectedAmount: money("-15.49", "USD"), Frequency: finance.FrequencyMonthly,
		StreamType: recurring.StreamOutflow, NextExpectedDate: day(5), IsActive: true, LogoURL: "https://logos.example/n.png",
		CreatedAt: base, UpdatedAt: base}
	theirRule := old
	theirRule.ID, theirRule.UserID, theirRule.AccountID = newID(), f.other, f.otherAccount
	must(t, s.CreateRecurringRule(ctx, old))
	must(t, s.CreateRecurringRule(ctx, theirRule))
	theirs.RecurringRuleID = theirRule.ID
	must(t, s.SaveRecurringStreams(ctx, f.other, []recurring.Rule{theirRule}, map[string][]string{theirRule.ID: {theirs.ID}}))

	updated := old
	updated.ExpectedAmount, updated.Status, updated.Occurrences = money("-17.99", "USD"), recurring.StreamMature, 3
	updated.LastSeenDate, updated.UpdatedAt = ptr(day(0)), base.Add(time.Hour)
	fresh := recurring.Rule{ID: newID(), UserID: f.user, AccountID: f.account, Merchant: "Spotify",
		ExpectedAmount: money("-11.99", "USD"), Frequency: finance.FrequencyAnnually, StreamType: recurring.StreamOutflow,
		NextExpectedDate: day(300), Status: recurring.StreamEarly, Occurrences: 1, IsActive: true, CreatedAt: base, UpdatedAt: base}
	must(t, s.SaveRecurringStreams(ctx, f.user, []recurring.Rule{updated, fresh},
		map[string][]string{updated.ID: {rows[0].ID, rows[1].ID, rows[2].ID}, fresh.ID: {rows[3].ID}}))
	got, err := s.ListRecurringRules(ctx, f.user)
	must(t, err)
	diff(t, "rules", []recurring.Rule{updated, fresh}, got)
	check := func(want map[string]string) {
		t.Helper()
		for id, rule := range want {
			tx, err := s.GetTransaction(ctx, f.user, id)
			must(t, err)
			if tx.RecurringRuleID != rule || tx.Version != 1 {
				t.Errorf("row %s: rule %q version %d, want %q version 1", id, tx.RecurringRuleID, tx.Version, rule)
			}
		}
	}
	check(map[string]string{rows[0].ID: updated.ID, rows[1].ID: updated.ID, rows[2].ID: updated.ID, rows[3].ID: fresh.ID})
	// A second detection moves one row and unlinks another.
	must(t, s.SaveRecurringStreams(ctx, f.user, []recurring.Rule{updated}, map[string][]string{updated.ID: {rows[0].ID, rows[3].ID}}))
	check(map[string]string{rows[0].ID: updated.ID, rows[1].ID: "", rows[2].ID: "", rows[3].ID: updated.ID})
	other, err := s.GetTransaction(ctx, f.other, theirs.ID)
	must(t, err)
	if other.RecurringRuleID != theirRule.ID {
		t.Errorf("another user's row was unlinked")
	}
}
