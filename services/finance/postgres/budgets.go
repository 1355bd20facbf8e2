package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/ledgerlane/platform/pkg/pg"
	"github.com/ledgerlane/platform/services/finance"
	"github.com/ledgerlane/platform/services/finance/budgets"
)

const budgetColumns = `id::text, user_id::text, name, method_type, period_type, COALESCE(period_anchor_day, 0),
	period_anchor_date, is_active, COALESCE(income_type, ''), expected_monthly_income::text, currency,
	enabled_features, groups, alert_thresholds, version, created_at, updated_at, archived_at, last_write`

func scanBudget(r pgx.Row) (budgets.Budget, error) {
	var (
		b      budgets.Budget
		anchor *time.Time
		income *string
		groups []byte
		mark   []byte
	)
	err := r.Scan(&b.ID, &b.UserID, &b.Name, &b.MethodType, &b.PeriodType, &b.PeriodAnchorDay, &anchor,
		&b.IsActive, &b.IncomeType, &income, &b.Currency, &b.EnabledFeatures, &groups, &b.AlertThresholds, &b.Version,
		&b.CreatedAt, &b.UpdatedAt, &b.ArchivedAt, &mark)
	if err != nil {
		return b, err
	}
	if b.LastWrite, err = scanMark(mark); err != nil {
		return b, err
	}
	if anchor != nil {
		b.PeriodAnchorDate = *anchor
	}
	if income != nil {
		d, err := decimal.NewFromString(*income)
		if err != nil {
			return b, err
		}
		b.ExpectedMonthlyIncome = &d
	}
	b.EnabledFeatures = nilIfEmpty(b.EnabledFeatures)
	if len(b.AlertThresholds) == 0 {
		b.AlertThresholds = nil
	}
	if err := json.Unmarshal(groups, &b.Groups); err != nil {
		return b, err
	}
	if len(b.Groups) == 0 {
		b.Groups = nil
	}
	return b, nil
}

func insertBudget(ctx context.Context, db execer, b budgets.Budget) error {
	groups, err := json.Marshal(b.Groups)
	if err != nil {
		return err
	}
	var income, anchorDay, anchorDate any
	if b.ExpectedMonthlyIncome != nil {
		income = numeric(*b.ExpectedMonthlyIncome)
	}
	if b.PeriodType == budgets.PeriodMonthlyAnchored {
		anchorDay = b.PeriodAnchorDay
	}
	if b.PeriodType == budgets.PeriodBiweekly {
		anchorDate = finance.Day(b.PeriodAnchorDate)
	}
	_, err = db.Exec(ctx, `
		INSERT INTO budgets (id, user_id, name, method_type, period_type, period_anchor_day, period_anchor_date,
			is_active, income_type, expected_monthly_income, currency, enabled_features, groups, version,
			created_at, updated_at, archived_at, last_write, alert_thresholds)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)`,
		b.ID, b.UserID, b.Name, b.MethodType, b.PeriodType, anchorDay, anchorDate, b.IsActive, nullStr(b.IncomeType),
		income, b.Currency, list(b.EnabledFeatures), groups, b.Version, b.CreatedAt, b.UpdatedAt, b.ArchivedAt,
		markArg(b.LastWrite), thresholdList(b.AlertThresholds))
	return err
}

// CreateBudget implements budgets.Store.
func (s *Store) CreateBudget(ctx context.Context, b budgets.Budget) error {
	return storeErr("create budget", insertBudget(ctx, s.pool, b))
}

// GetBudget implements budgets.Store.
func (s *Store) GetBudget(ctx context.Context, userID, id string) (budgets.Budget, error) {
	if !isUUID(id) || !isUUID(userID) {
		return budgets.Budget{}, fmt.Errorf("budget %q: %w", id, finance.ErrNotFound)
	}
	b, err := scanBudget(s.pool.QueryRow(ctx,
		`SELECT `+budgetColumns+` FROM budgets WHERE id = $1 AND user_id = $2`, id, userID))
	return b, storeErr("get budget", err)
}

// ListBudgets implements budgets.Store.
func (s *Store) ListBudgets(ctx context.Context, userID string) ([]budgets.Budget, error) {
	if !isUUID(userID) {
		return nil, nil
	}
	rows, err := s.pool.Query(ctx, `SELECT `+budgetColumns+` FROM budgets WHERE user_id = $1
		ORDER BY is_active DESC, created_at DESC, id DESC`, userID)
	if err != nil {
		return nil, storeErr("list budgets", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (budgets.Budget, error) { return scanBudget(r) })
	return out, storeErr("list budgets", err)
}

// SwitchBudget implements budgets.Store. The user's row is locked first, so
// concurrent switches of one user run one after the other.
func (s *Store) SwitchBudget(ctx context.Context, next budgets.Budget) (string, error) {
	archived := ""
	err := pg.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		archived = "" // InTx may run this again
		if _, err := tx.Exec(ctx, `SELECT 1 FROM users WHERE id = $1 FOR UPDATE`, next.UserID); err != nil {
			return err
		}
		err := tx.QueryRow(ctx, `
			UPDATE budgets SET is_active = false, archived_at = $2, updated_at = $2, version = version + 1
			WHERE user_id = $1 AND is_active RETURNING id::text`, next.UserID, next.CreatedAt).Scan(&archived)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		next.IsActive = true
		return insertBudget(ctx, tx, next)
	})
	if err != nil {
		return "", storeErr("switch budget", err)
	}
	return archived, nil
}

// SaveProgressSnapshot implements budgets.Store.
func (s *Store) SaveProgressSnapshot(ctx context.Context, snap budgets.ProgressSnapshot) (budgets.ProgressSnapshot, error) {
	_, err := s.pool.Exec(ctx, `
		INSERT INTO budget_progress_snapshots (budget_id, grant_id, period_start, user_id, data, created_at)
		VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING`,
		snap.BudgetID, snap.GrantID, finance.Day(snap.PeriodStart), snap.UserID, snap.Data, snap.CreatedAt)
	if err != nil {
		return snap, storeErr("save progress snapshot", err)
	}
	return s.GetProgressSnapshot(ctx, snap.BudgetID, snap.GrantID, snap.PeriodStart)
}

// GetProgressSnapshot implements budgets.Store.
func (s *Store) GetProgressSnapshot(ctx context.Context, budgetID, grantID string, start time.Time) (budgets.ProgressSnapshot, error) {
	snap := budgets.ProgressSnapshot{}
	if !isUUID(budgetID) || !isUUID(grantID) {
		return snap, fmt.Errorf("snapshot: %w", finance.ErrNotFound)
	}
	err := s.pool.QueryRow(ctx, `
		SELECT budget_id::text, grant_id::text, period_start, user_id::text, data, created_at
		FROM budget_progress_snapshots WHERE budget_id = $1 AND grant_id = $2 AND period_start = $3`,
		budgetID, grantID, finance.Day(start)).
		Scan(&snap.BudgetID, &snap.GrantID, &snap.PeriodStart, &snap.UserID, &snap.Data, &snap.CreatedAt)
	return snap, storeErr("get progress snapshot", err)
}

const goalColumns = `id::text, user_id::text, name, COALESCE(description, ''), goal_type, status, target_amount::text,
	current_amount::text, currency, target_date, COALESCE(funding_source_type, ''), tracking_mode, sort_order,
	show_in_digest, account_links, budget_links, spending_plan, version, created_at, updated_at, completed_at,
	last_write`

func scanGoal(r pgx.Row) (budgets.Goal, error) {
	var (
		g                        budgets.Goal
		target, current          string
		accounts, budgets, plans []byte
		mark                     []byte
	)
	err := r.Scan(&g.ID, &g.UserID, &g.Name, &g.Description, &g.GoalType, &g.Status, &target, &current,
		&g.Currency, &g.TargetDate, &g.FundingSourceType, &g.TrackingMode, &g.SortOrder, &g.ShowInDigest,
		&accounts, &budgets, &plans, &g.Version, &g.CreatedAt, &g.UpdatedAt, &g.CompletedAt, &mark)
	if err != nil {
		return g, err
	}
	if g.LastWrite, err = scanMark(mark); err != nil {
		return g, err
	}
	if g.TargetAmount, err = decimal.NewFromString(target); err != nil {
		return g, err
	}
	if g.CurrentAmount, err = decimal.NewFromString(current); err != nil {
		return g, err
	}
	for _, p := range []struct {
		raw []byte
		v   any
	}{{accounts, &g.AccountLinks}, {budgets, &g.BudgetLinks}, {plans, &g.SpendingPlan}} {
		if err := json.Unmarshal(p.raw, p.v); err != nil {
			return g, err
		}
	}
	g.NilEmptyLinks()
	return g, nil
}

func jsonList[T any](v []T) ([]byte, error) {
	if v == nil {
		v = []T{}
	}
	return json.Marshal(v)
}

// CreateGoal implements budgets.Store.
func (s *Store) CreateGoal(ctx context.Context, g budgets.Goal) error {
	accounts, err := jsonList(g.AccountLinks)
	if err != nil {
		return storeErr("create goal", err)
	}
	budgets, err := jsonList(g.BudgetLinks)
	if err != nil {
		return storeErr("create goal", err)
	}
	plans, err := jsonList(g.SpendingPlan)
	if err != nil {
		return storeErr("create goal", err)
	}
	_, err = s.pool.Exec(ctx, `
		INSERT INTO goals (id, user_id, name, description, goal_type, status, target_amount, current_amount,
			currency, target_date, funding_source_type, tracking_mode, sort_order, show_in_digest,
			account_links, budget_links, spending_plan, version, created_at, updated_at, completed_at, last_write)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22)`,
		g.ID, g.UserID, g.Name, nullStr(g.Description), g.GoalType, g.Status, numeric(g.TargetAmount),
		numeric(g.CurrentAmount), g.Currency, dayPtr(g.TargetDate), nullStr(g.FundingSourceType), g.TrackingMode,
		g.SortOrder, g.ShowInDigest, accounts, budgets, plans, g.Version, g.CreatedAt, g.UpdatedAt, g.CompletedAt,
		markArg(g.LastWrite))
	return storeErr("create goal", err)
}

// GetGoal implements budgets.Store.
func (s *Store) GetGoal(ctx context.Context, userID, id string) (budgets.Goal, error) {
	if !isUUID(id) || !isUUID(userID) {
		return budgets.Goal{}, fmt.Errorf("goal %q: %w", id, finance.ErrNotFound)
	}
	g, err := scanGoal(s.pool.QueryRow(ctx, `SELECT `+goalColumns+` FROM goals WHERE id = $1 AND user_id = $2`, id, userID))
	return g, storeErr("get goal", err)
}

// ListGoals implements budgets.Store.
func (s *Store) ListGoals(ctx context.Context, userID string, after *budgets.GoalPosition, limit int) ([]budgets.Goal, error) {
	if !isUUID(userID) {
		return nil, nil
	}
	q := &query{args: []any{userID}}
	q.sql.WriteString(`SELECT ` + goalColumns + ` FROM goals WHERE user_id = $1`)
	if after != nil {
		q.where("(sort_order, id) > (%s, %s)", after.SortOrder, uuidOrZero(after.ID))
	}
	q.sql.WriteString(" ORDER BY sort_order, id")
	q.limit(limit)
	rows, err := s.pool.Query(ctx, q.sql.String(), q.args...)
	if err != nil {
		return nil, storeErr("list goals", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (budgets.Goal, error) { return scanGoal(r) })
	return out, storeErr("list goals", err)
}

// MarkGoalCompleted implements budgets.Store.
func (s *Store) MarkGoalCompleted(ctx context.Context, userID, id string, at time.Time) error {
	if !isUUID(id) || !isUUID(userID) {
		return fmt.Errorf("goal %q: %w", id, finance.ErrNotFound)
	}
	var found bool
	err := s.pool.QueryRow(ctx, `SELECT true FROM goals WHERE id = $1 AND user_id = $2`, id, userID).Scan(&found)
	if err != nil {
		return storeErr("mark goal completed", err)
	}
	_, err = s.pool.Exec(ctx, `
		UPDATE goals SET status = 'completed', completed_at = $3, updated_at = $3, version = version + 1
		WHERE id = $1 AND user_id = $2 AND status = 'active' AND completed_at IS NULL`, id, userID, at)
	return storeErr("mark goal completed", err)
}

// UpdateBudgetGroups implements budgets.Store.
func (s *Store) UpdateBudgetGroups(ctx context.Context, b budgets.Budget, expectedVersion int64) error {
	if !isUUID(b.ID) || !isUUID(b.UserID) {
		return fmt.Errorf("budget %q: %w", b.ID, finance.ErrNotFound)
	}
	groups, err := json.Marshal(b.Groups)
	if err != nil {
		return storeErr("update budget groups", err)
	}
	tag, err := s.pool.Exec(ctx, `UPDATE budgets SET groups = $4, version = $5, updated_at = $6, last_write = $7,
		alert_thresholds = $8
		WHERE id = $1 AND user_id = $2 AND version = $3`,
		b.ID, b.UserID, expectedVersion, groups, b.Version, b.UpdatedAt, markArg(b.LastWrite), thresholdList(b.AlertThresholds))
	if err != nil {
		return storeErr("update budget groups", err)
	}
	if tag.RowsAffected() == 0 {
		return s.casMiss(ctx, "budgets", b.UserID, b.ID)
	}
	return nil
}

// casMiss tells why a compare-and-swap on table changed no row: the row is
// missing (ErrNotFound) or at another version (ErrVersionConflict).
func (s *Store) casMiss(ctx context.Context, table, userID, id string) error {
	var found bool
	err := s.pool.QueryRow(ctx, `SELECT true FROM `+table+` WHERE id = $1 AND user_id = $2`, id, userID).Scan(&found)
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("%s %s: %w", table, id, finance.ErrNotFound)
	}
	if err != nil {
		return storeErr("compare-and-swap", err)
	}
	return fmt.Errorf("%s %s: %w", table, id, finance.ErrVersionConflict)
}

// UpdateGoal implements budgets.Store.
func (s *Store) UpdateGoal(ctx context.Context, g budgets.Goal, expectedVersion int64) error {
	if !isUUID(g.ID) || !isUUID(g.UserID) {
		return fmt.Errorf("goal %q: %w", g.ID, finance.ErrNotFound)
	}
	accounts, err := jsonList(g.AccountLinks)
	if err != nil {
		return storeErr("update goal", err)
	}
	budgets, err := jsonList(g.BudgetLinks)
	if err != nil {
		return storeErr("update goal", err)
	}
	plans, err := jsonList(g.SpendingPlan)
	if err != nil {
		return storeErr("update goal", err)
	}
	tag, err := s.pool.Exec(ctx, `
		UPDATE goals SET name = $4, description = $5, goal_type = $6, status = $7, target_amount = $8,
			current_amount = $9, currency = $10, target_date = $11, funding_source_type = $12, tracking_mode = $13,
			sort_order = $14, show_in_digest = $15, account_links = $16, budget_links = $17, spending_plan = $18,
			version = $19, updated_at = $20, completed_at = $21, last_write = $22
		WHERE id = $1 AND user_id = $2 AND version = $3`,
		g.ID, g.UserID, expectedVersion, g.Name, nullStr(g.Description), g.GoalType, g.Status, numeric(g.TargetAmount),
		numeric(g.CurrentAmount), g.Currency, dayPtr(g.TargetDate), nullStr(g.FundingSourceType), g.TrackingMode,
		g.SortOrder, g.ShowInDigest, accounts, budgets, plans, g.Version, g.UpdatedAt, g.CompletedAt, markArg(g.LastWrite))
	if err != nil {
		return storeErr("update goal", err)
	}
	if tag.RowsAffected() == 0 {
		return s.casMiss(ctx, "goals", g.UserID, g.ID)
	}
	return nil
}

// DeleteGoal implements budgets.Store.
func (s *Store) DeleteGoal(ctx context.Context, userID, id string, expectedVersion int64) error {
	if !isUUID(id) || !isUUID(userID) {
		return fmt.Errorf("goal %q: %w", id, finance.ErrNotFound)
	}
	tag, err := s.pool.Exec(ctx, `DELETE FROM goals WHERE id = $1 AND user_id = $2 AND version = $3`,
		id, userID, expectedVersion)
	if err != nil {
		return storeErr("delete goal", err)
	}
	if tag.RowsAffected() == 0 {
		return s.casMiss(ctx, "goals", userID, id)
	}
	return nil
}

// thresholdList is a budget's thresholds as the column keeps them (never
// NULL: '{}' is no alerts).
func thresholdList(t []int32) []int32 {
	if t == nil {
		return []int32{}
	}
	return t
}

// ClaimThresholdAlert implements budgets.Store: the primary key decides
// between racing claims.
func (s *Store) ClaimThresholdAlert(ctx context.Context, a budgets.ThresholdAlert) (bool, error) {
	if !isUUID(a.BudgetID) || !isUUID(a.UserID) || !isUUID(a.GrantID) {
		return false, fmt.Errorf("budget %q: %w", a.BudgetID, finance.ErrNotFound)
	}
	tag, err := s.pool.Exec(ctx, `
		INSERT INTO budget_threshold_alerts (grant_id, budget_id, group_id, period_start, threshold, user_id,
			period_end, created_at)
		SELECT $1, id, $3, $4, $5, user_id, $6, $7 FROM budgets WHERE id = $2 AND user_id = $8
		ON CONFLICT DO NOTHING`,
		a.GrantID, a.BudgetID, a.GroupID, finance.Day(a.PeriodStart), a.Threshold, finance.Day(a.PeriodEnd), a.CreatedAt, a.UserID)
	if err != nil {
		return false, storeErr("claim threshold alert", err)
	}
	if tag.RowsAffected() == 1 {
		return true, nil
	}
	var found bool
	err = s.pool.QueryRow(ctx, `SELECT true FROM budgets WHERE id = $1 AND user_id = $2`, a.BudgetID, a.UserID).Scan(&found)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, fmt.Errorf("budget %s: %w", a.BudgetID, finance.ErrNotFound)
	}
	return false, storeErr("claim threshold alert", err)
}

// ReleaseThresholdAlert implements budgets.Store.
func (s *Store) ReleaseThresholdAlert(ctx context.Context, a budgets.ThresholdAlert) error {
	if !isUUID(a.BudgetID) || !isUUID(a.GrantID) {
		return nil
	}
	_, err := s.pool.Exec(ctx, `DELETE FROM budget_threshold_alerts
		WHERE grant_id = $1 AND budget_id = $2 AND group_id = $3 AND period_start = $4 AND threshold = $5`,
		a.GrantID, a.BudgetID, a.GroupID, finance.Day(a.PeriodStart), a.Threshold)
	return storeErr("release threshold alert", err)
}
