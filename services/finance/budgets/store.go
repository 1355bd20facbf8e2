package budgets

import (
	"context"
	"time"

	"github.com/ledgerlane/platform/services/finance"
)

// Store is what budgets and goals keep and read: the budgets, their frozen
// progress snapshots and the goals they own, and the kernel's flow totals,
// accounts and categories they count (implemented by the finance memory
// and postgres stores; conformance/budgets.go checks it). Ids and
// timestamps come from the caller.
type Store interface {
	// CreateBudget stores b with its groups and items. An active budget
	// when the user already has one is ErrAlreadyExists.
	CreateBudget(ctx context.Context, b Budget) error
	// GetBudget reads one of the user's budgets.
	GetBudget(ctx context.Context, userID, id string) (Budget, error)
	// ListBudgets returns all of the user's budgets: the active one first,
	// then by creation time descending, then id descending.
	ListBudgets(ctx context.Context, userID string) ([]Budget, error)
	// SwitchBudget archives the user's active budget (if any) at next's
	// creation time and stores next as the active one, in one atomic step;
	// it returns the archived budget's id ("" when there was none).
	// Concurrent switches serialize: each archives the one before it.
	SwitchBudget(ctx context.Context, next Budget) (archivedID string, err error)

	// UpdateBudgetGroups is a compare-and-swap: it writes b's groups (with
	// their items), alert thresholds, version, updated_at and LastWrite
	// only if the stored
	// budget's version is expectedVersion. ErrNotFound if the user has no
	// such budget, ErrVersionConflict if the version differs.
	UpdateBudgetGroups(ctx context.Context, b Budget, expectedVersion int64) error

	// SaveProgressSnapshot stores a closed period's progress unless one is
	// stored for the same budget, grant and period start, and returns the
	// stored one (the first writer wins, so a period freezes once).
	SaveProgressSnapshot(ctx context.Context, s ProgressSnapshot) (ProgressSnapshot, error)
	// GetProgressSnapshot reads a stored snapshot (ErrNotFound if none).
	GetProgressSnapshot(ctx context.Context, budgetID, grantID string, periodStart time.Time) (ProgressSnapshot, error)

	// ClaimThresholdAlert records that a's alert is sent, unless one with
	// its key (grant, budget, group, period start, threshold) is recorded
	// already; claimed reports whether this call recorded it. Racing
	// claims of one key: exactly one is claimed.
	ClaimThresholdAlert(ctx context.Context, a ThresholdAlert) (claimed bool, err error)
	// ReleaseThresholdAlert deletes a's record (its publish failed), so a
	// later claim of the key succeeds; a missing record is no error.
	ReleaseThresholdAlert(ctx context.Context, a ThresholdAlert) error

	CreateGoal(ctx context.Context, g Goal) error
	GetGoal(ctx context.Context, userID, id string) (Goal, error)
	// ListGoals returns up to limit of the user's goals after the position
	// (nil: from the start), by sort order then id.
	ListGoals(ctx context.Context, userID string, after *GoalPosition, limit int) ([]Goal, error)
	// UpdateGoal is a compare-and-swap: it writes every mutable field of g
	// (all but id, user and created_at) only if the stored goal's version is
	// expectedVersion. ErrNotFound if the user has no such goal,
	// ErrVersionConflict if the version differs.
	UpdateGoal(ctx context.Context, g Goal, expectedVersion int64) error
	// DeleteGoal deletes the user's goal if its version is expectedVersion
	// (ErrNotFound, ErrVersionConflict as for UpdateGoal).
	DeleteGoal(ctx context.Context, userID, id string, expectedVersion int64) error
	// MarkGoalCompleted sets status completed and completed_at = at on an
	// active goal that has no completed_at yet; otherwise it changes
	// nothing and returns nil.
	MarkGoalCompleted(ctx context.Context, userID, id string, at time.Time) error

	// Kernel reads: the flow totals and rows progress and goals count, the
	// accounts goals track and the categories methods classify.
	finance.FlowStore
	ListAccounts(ctx context.Context, userID string) ([]finance.Account, error)
	ListCategories(ctx context.Context, userID string) ([]finance.Category, error)
	// GetUser and ListGrants: whom an alert goes to, and the grants
	// whose views the thresholds are checked in.
	GetUser(ctx context.Context, id string) (finance.User, error)
	ListGrants(ctx context.Context, userID string) ([]finance.Grant, error)
}
