package banksync

import (
	"context"
	"time"

	"github.com/ledgerlane/platform/services/finance"
)

// Store is what bank sync reads and writes: the connection it syncs and its
// accounts, the rows it merges with, and the one atomic write of a sync
// (implemented by the finance memory and postgres stores, writes.go of
// each; conformance/banksync.go checks it, and concurrent.go its races
// with user edits).
type Store interface {
	// GetConnection reads a connection by id alone: bank sync is internal and
	// knows connections, not users.
	GetConnection(ctx context.Context, id string) (finance.Connection, error)
	ListAccounts(ctx context.Context, userID string) ([]finance.Account, error)
	// TransactionsByExternalRef returns the user's rows on the given
	// accounts whose external_ref is one of refs.
	TransactionsByExternalRef(ctx context.Context, userID string, accountIDs, refs []string) ([]finance.Transaction, error)
	// ApplySync applies w atomically: all of it or none of it.
	ApplySync(ctx context.Context, w Write) error
	// RecordConnectionSync writes a connection's sync status and error.
	RecordConnectionSync(ctx context.Context, st ConnectionState) error
}

// Write is everything one provider sync changes, applied by the store
// in one database transaction so a failed sync leaves nothing half-written.
type Write struct {
	Inserts []finance.Transaction
	// Updates are compare-and-swap writes: each row's Version is the new
	// version, and the store writes it only if the stored version is
	// Version-1. A mismatch fails the whole write with finance.ErrVersionConflict.
	Updates []finance.Transaction
	// Deletes are ids of the user's rows the provider withdrew.
	Deletes    []string
	UserID     string
	Connection ConnectionState
	// RecurringDueAt, when set, marks the user due for recurring detection
	// at that time (recurring.Store's MarkRecurringDue) in the same atomic
	// step, so a committed sync is never left undetected.
	RecurringDueAt time.Time
}

// ConnectionState is the sync outcome recorded on a connection.
type ConnectionState struct {
	ID           string
	Status       string
	LastSyncedAt *time.Time // nil leaves the stored value
	ErrorCode    string
	ErrorMessage string
	UpdatedAt    time.Time
	// Notes announce the outcome (and, in a Write, the rows' change) to
	// the finance events; they are stored in the same transaction (the
	// outbox), so a committed sync is never left unannounced.
	Notes []finance.Note
}
