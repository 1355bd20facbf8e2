package memory

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/ledgerlane/platform/pkg/memtable"
	"github.com/ledgerlane/platform/services/finance"
	"github.com/ledgerlane/platform/services/finance/budgets"
)

// budgetState holds budgets, snapshots and goals; its maps are made on
// first write, under the store's lock.
type budgetState struct {
	budgets   map[string]budgets.Budget
	snapshots map[string]budgets.ProgressSnapshot
	goals     map[string]budgets.Goal
	// alerts are the sent budget.threshold_reached, by alertKey.
	alerts map[string]budgets.ThresholdAlert
}

// alertKey is the sent-table's unique key.
func alertKey(a budgets.ThresholdAlert) string {
	return fmt.Sprintf("%s|%s|%s|%s|%d", a.GrantID, a.BudgetID, a.GroupID, finance.Day(a.PeriodStart).Format(finance.DateLayout), a.Threshold)
}

func snapKey(budgetID, grantID string, start time.Time) string {
	return budgetID + "|" + grantID + "|" + finance.Day(start).Format(finance.DateLayout)
}

// cloneBudget deep-copies b through JSON for its groups, as PostgreSQL
// keeps them (a jsonb column).
func cloneBudget(b budgets.Budget) budgets.Budget {
	groups, _ := json.Marshal(b.Groups)
	b.Groups = nil
	_ = json.Unmarshal(groups, &b.Groups)
	b.EnabledFeatures = cloneStrings(b.EnabledFeatures)
	b.AlertThresholds = slices.Clone(b.AlertThresholds)
	if len(b.AlertThresholds) == 0 {
		b.AlertThresholds = nil
	}
	b.ExpectedMonthlyIncome = copyPtr(b.ExpectedMonthlyIncome)
	b.ArchivedAt = tsPtr(b.ArchivedAt)
	b.LastWrite = copyPtr(b.LastWrite)
	b.CreatedAt, b.UpdatedAt = ts(b.CreatedAt), ts(b.UpdatedAt)
	if b.PeriodType == budgets.PeriodBiweekly {
		b.PeriodAnchorDate = finance.Day(b.PeriodAnchorDate)
	} else {
		b.PeriodAnchorDate = time.Time{}
	}
	return b
}

func cloneGoal(g budgets.Goal) budgets.Goal {
	var c budgets.Goal = g
	c.AccountLinks = slices.Clone(g.AccountLinks)
	c.BudgetLinks = slices.Clone(g.BudgetLinks)
	c.SpendingPlan = slices.Clone(g.SpendingPlan)
	c.NilEmptyLinks()
	if g.TargetDate != nil {
		d := finance.Day(*g.TargetDate)
		c.TargetDate = &d
	}
	c.CompletedAt = tsPtr(g.CompletedAt)
	c.LastWrite = copyPtr(g.LastWrite)
	c.CreatedAt, c.UpdatedAt = ts(g.CreatedAt), ts(g.UpdatedAt)
	return c
}

// CreateBudget implements budgets.Store.
func (s *Store) CreateBudget(_ context.Context, b budgets.Budget) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.createBudget(b)
}

func (s *Store) createBudget(b budgets.Budget) error {
	if _, ok := s.budgets[b.ID]; ok {
		return fmt.Errorf("budget %s: %w", b.ID, finance.ErrAlreadyExists)
	}
	if _, ok := s.users[b.UserID]; !ok {
		return fmt.Errorf("budget %s: no user %s", b.ID, b.UserID)
	}
	if b.IsActive {
		for _, o := range s.budgets {
			if o.UserID == b.UserID && o.IsActive {
				return fmt.Errorf("budget %s: user has an active budget: %w", b.ID, finance.ErrAlreadyExists)
			}
		}
	}
	s.budgets[b.ID] = cloneBudget(b)
	return nil
}

// GetBudget implements budgets.Store.
func (s *Store) GetBudget(_ context.Context, userID, id string) (budgets.Budget, error) {
	return find(s, &s.budgets, "budget", id, func(b budgets.Budget) bool { return b.UserID == userID }, cloneBudget)
}

// ListBudgets implements budgets.Store.
func (s *Store) ListBudgets(_ context.Context, userID string) ([]budgets.Budget, error) {
	return memtable.Collect(&s.mu, &s.budgets, func(b budgets.Budget) bool { return b.UserID == userID }, cloneBudget,
		budgets.CompareBudgets), nil
}

// SwitchBudget implements budgets.Store.
func (s *Store) SwitchBudget(_ context.Context, next budgets.Budget) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	archived := ""
	for id, b := range s.budgets {
		if b.UserID == next.UserID && b.IsActive {
			at := ts(next.CreatedAt)
			b.IsActive, b.ArchivedAt, b.UpdatedAt = false, &at, at
			b.Version++
			s.budgets[id] = b
			archived = id
		}
	}
	next.IsActive = true
	if err := s.createBudget(next); err != nil {
		if archived != "" { // undo: all or nothing
			b := s.budgets[archived]
			b.IsActive, b.ArchivedAt = true, nil
			b.Version--
			s.budgets[archived] = b
		}
		return "", err
	}
	return archived, nil
}

// SaveProgressSnapshot implements budgets.Store.
func (s *Store) SaveProgressSnapshot(_ context.Context, snap budgets.ProgressSnapshot) (budgets.ProgressSnapshot, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := snapKey(snap.BudgetID, snap.GrantID, snap.PeriodStart)
	if old, ok := s.snapshots[k]; ok {
		return old, nil
	}
	snap.PeriodStart = finance.Day(snap.PeriodStart)
	snap.CreatedAt = ts(snap.CreatedAt)
	snap.Data = slices.Clone(snap.Data)
	s.snapshots[k] = snap
	return snap, nil
}

// GetProgressSnapshot implements budgets.Store.
func (s *Store) GetProgressSnapshot(_ context.Context, budgetID, grantID string, start time.Time) (budgets.ProgressSnapshot, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	snap, ok := s.snapshots[snapKey(budgetID, grantID, start)]
	if !ok {
		return snap, fmt.Errorf("snapshot: %w", finance.ErrNotFound)
	}
	return snap, nil
}

// CreateGoal implements budgets.Store.
func (s *Store) CreateGoal(_ context.Context, g budgets.Goal) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.goals[g.ID]; ok {
		return fmt.Errorf("goal %s: %w", g.ID, finance.ErrAlreadyExists)
	}
	if _, ok := s.users[g.UserID]; !ok {
		return fmt.Errorf("goal %s: no user %s", g.ID, g.UserID)
	}
	s.goals[g.ID] = cloneGoal(g)
	return nil
}

// GetGoal implements budgets.Store.
func (s *Store) GetGoal(_ context.Context, userID, id string) (budgets.Goal, error) {
	return find(s, &s.goals, "goal", id, func(g budgets.Goal) bool { return g.UserID == userID }, cloneGoal)
}

// ListGoals implements budgets.Store.
func (s *Store) ListGoals(_ context.Context, userID string, after *budgets.GoalPosition, limit int) ([]budgets.Goal, error) {
	keep := func(g budgets.Goal) bool {
		return g.UserID == userID &&
			(after == nil || cmp.Or(cmp.Compare(g.SortOrder, after.SortOrder), cmp.Compare(g.ID, after.ID)) > 0)
	}
	return truncate(memtable.Collect(&s.mu, &s.goals, keep, cloneGoal, func(a, b budgets.Goal) int {
		return cmp.Or(cmp.Compare(a.SortOrder, b.SortOrder), cmp.Compare(a.ID, b.ID))
	}), limit), nil
}

// MarkGoalCompleted implements budgets.Store.
func (s *Store) MarkGoalCompleted(_ context.Context, userID, id string, at time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, ok := s.goals[id]
	if !ok || g.UserID != userID {
		return fmt.Errorf("goal %s: %w", id, finance.ErrNotFound)
	}
	if g.Status != budgets.GoalActive || g.CompletedAt != nil {
		return nil
	}
	at = ts(at)
	g.Status, g.CompletedAt, g.UpdatedAt = budgets.GoalCompleted, &at, at
	g.Version++
	s.goals[id] = g
	return nil
}

// UpdateBudgetGroups implements budgets.Store.
func (s *Store) UpdateBudgetGroups(_ context.Context, b budgets.Budget, expectedVersion int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	old, ok := s.budgets[b.ID]
	if !ok || old.UserID != b.UserID {
		return fmt.Errorf("budget %s: %w", b.ID, finance.ErrNotFound)
	}
	if old.Version != expectedVersion {
		return fmt.Errorf("budget %s: %w", b.ID, finance.ErrVersionConflict)
	}
	old.Groups, old.AlertThresholds, old.Version, old.UpdatedAt, old.LastWrite = b.Groups, b.AlertThresholds, b.Version, b.UpdatedAt, b.LastWrite
	s.budgets[b.ID] = cloneBudget(old)
	return nil
}

// UpdateGoal implements budgets.Store.
func (s *Store) UpdateGoal(_ context.Context, g budgets.Goal, expectedVersion int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	old, ok := s.goals[g.ID]
	if !ok || old.UserID != g.UserID {
		return fmt.Errorf("goal %s: %w", g.ID, finance.ErrNotFound)
	}
	if old.Version != expectedVersion {
		return fmt.Errorf("goal %s: %w", g.ID, finance.ErrVersionConflict)
	}
	g.CreatedAt = old.CreatedAt
	s.goals[g.ID] = cloneGoal(g)
	return nil
}

// DeleteGoal implements budgets.Store.
func (s *Store) DeleteGoal(_ context.Context, userID, id string, expectedVersion int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	old, ok := s.goals[id]
	if !ok || old.UserID != userID {
		return fmt.Errorf("goal %s: %w", id, finance.ErrNotFound)
	}
	if old.Version != expectedVersion {
		return fmt.Errorf("goal %s: %w", id, finance.ErrVersionConflict)
	}
	delete(s.goals, id)
	return nil
}

// budgetRow is the part of t that budgets, goals and detection read.
func budgetRow(t finance.Transaction) finance.BudgetRow {
	row := finance.BudgetRow{ID: t.ID, AccountID: t.AccountID, CategoryID: t.CategoryID,
		Merchant: t.Merchant, Amount: t.Amount, Date: t.Date, IsPending: t.IsPending,
		TransferPairID: t.TransferPairID, SplitParentID: t.SplitParentID}
	if t.ProviderMerchantName != nil {
		row.BankMerchant = *t.ProviderMerchantName
	}
	return row
}

// ClaimThresholdAlert implements budgets.Store.
func (s *Store) ClaimThresholdAlert(_ context.Context, a budgets.ThresholdAlert) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.budgets[a.BudgetID]
	if !ok || b.UserID != a.UserID {
		return false, fmt.Errorf("budget %s: %w", a.BudgetID, finance.ErrNotFound)
	}
	k := alertKey(a)
	if _, ok := s.alerts[k]; ok {
		return false, nil
	}
	a.PeriodStart, a.PeriodEnd, a.CreatedAt = finance.Day(a.PeriodStart), finance.Day(a.PeriodEnd), ts(a.CreatedAt)
	s.alerts[k] = a
	return true, nil
}

// ReleaseThresholdAlert implements budgets.Store.
func (s *Store) ReleaseThresholdAlert(_ context.Context, a budgets.ThresholdAlert) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.alerts, alertKey(a))
	return nil
}
