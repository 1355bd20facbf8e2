package recurring

import (
	"context"
	"time"

	"github.com/ledgerlane/platform/services/finance"
)

// Store is what recurring keeps and reads: the rules and the detection's
// due marks it owns, and the kernel's rows and accounts detection and the
// forecast read (implemented by the finance memory and postgres stores,
// memory/recurring.go and postgres/recurring.go; conformance/recurring.go
// checks it).
//
// A due mark says "this user's rows changed since the last detection";
// marks are durable and shared by replicas. Bank sync's ApplySync marks
// too, in its own atomic step, when banksync.Write.RecurringDueAt is set:
// banksync needs no import of this package.
type Store interface {
	CreateRecurringRule(ctx context.Context, r Rule) error
	// ListRecurringRules returns the user's rules by next expected date then id.
	ListRecurringRules(ctx context.Context, userID string) ([]Rule, error)
	// SaveRecurringStreams stores one user's detection in one atomic step:
	// every rule in rules is written whole (inserted, or replacing the
	// user's rule with its id); the rows listed in members (rule id →
	// transaction ids) point at their rule, and every other row of the
	// user that points at a rule no longer does. Row versions do not
	// change: recurring_rule_id is derived, never edited. The notes (the
	// announcement of new streams) are stored in the outbox in the same
	// step, so streams and their event commit together.
	SaveRecurringStreams(ctx context.Context, userID string, rules []Rule, members map[string][]string, notes ...finance.Note) error

	// The detection job's marks.
	// MarkRecurringDue marks the user as due for detection at at. Marks
	// coalesce into one per user: a user already due keeps the earlier due
	// time, and every mark bumps the mark's Generation, so a detection that
	// started before it does not clear it (ClearRecurringDue). A claim in
	// force stays in force. ApplySync marks too, in its own atomic step,
	// when banksync.Write.RecurringDueAt is set.
	MarkRecurringDue(ctx context.Context, userID string, at time.Time) error
	// RecurringDue returns the user's mark; false when the user is not due.
	RecurringDue(ctx context.Context, userID string) (Mark, bool, error)
	// ClaimRecurringDue claims up to limit due users, earliest due first:
	// those due at or before now whose previous claim (if any) ended by now.
	// Each claim lasts until leaseUntil. Concurrent callers (replicas) never
	// get the same user while a claim lasts.
	ClaimRecurringDue(ctx context.Context, now, leaseUntil time.Time, limit int) ([]Mark, error)
	// ClearRecurringDue ends a detection of m, which finished at now: it
	// records now as the user's last run (RecurringLastRun; never moved
	// back) in the same atomic step. When the user was not marked
	// again since m was read (same Generation), the mark is removed and it
	// reports true. Otherwise the mark stays, due at now and unclaimed, so
	// the next run detects the rows the newer sync wrote.
	ClearRecurringDue(ctx context.Context, m Mark, now time.Time) (bool, error)
	// RecurringLastRun is when the user's last detection finished
	// (ClearRecurringDue); nil before the first.
	RecurringLastRun(ctx context.Context, userID string) (*time.Time, error)
	// ReleaseRecurringDue ends a failed detection of the user: the mark
	// stays and may be claimed again from retryAt.
	ReleaseRecurringDue(ctx context.Context, userID string, retryAt time.Time) error

	// Kernel reads: the rows detection groups (narrow), the accounts it
	// and the forecast look at.
	ListBudgetRows(ctx context.Context, userID string, f finance.TransactionFilter) ([]finance.BudgetRow, error)
	ListAccounts(ctx context.Context, userID string) ([]finance.Account, error)
	GetAccount(ctx context.Context, userID, id string) (finance.Account, error)
}
