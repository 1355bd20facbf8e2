package sandboxlink

import (
	"context"

	"github.com/ledgerlane/platform/services/finance"
)

// Store is what the sandbox reads and writes. Errors follow finance.Store:
// ErrNotFound for a missing row or a malformed id, ErrAlreadyExists,
// ErrLimitReached and ErrVersionConflict as each method says.
type Store interface {
	GetUser(ctx context.Context, id string) (finance.User, error)
	ListAccounts(ctx context.Context, userID string) ([]finance.Account, error)

	// CreateSandboxUser creates u (a test-mode user) unless its owner
	// account already has limit test-mode users (ErrLimitReached). The
	// count and the insert are one atomic step.
	CreateSandboxUser(ctx context.Context, u finance.User, limit int) error
	// ListSandboxUsers returns the owner account's test-mode users by
	// creation time, then id.
	ListSandboxUsers(ctx context.Context, ownerAccountID string) ([]finance.User, error)

	// CreateLink inserts l unless its user already has limit links of any
	// status (ErrLimitReached); with w, it also writes w (see Linked), all
	// in one atomic step.
	CreateLink(ctx context.Context, l Link, limit int, w *Linked) error
	// UpdateLink replaces the stored link l.ID with l (whose Version the
	// caller has moved on) only if the stored Version is expectedVersion
	// (ErrVersionConflict otherwise; ErrNotFound when there is none); with
	// w, it also writes w, in the same atomic step.
	UpdateLink(ctx context.Context, l Link, expectedVersion int64, w *Linked) error
	GetLink(ctx context.Context, id string) (Link, error)
	// ListLinks returns the owner account's links, only userID's when it
	// is not empty, by creation time, then id.
	ListLinks(ctx context.Context, ownerAccountID, userID string) ([]Link, error)
	// LinkedConnections returns every linked link's connection with its
	// accounts, across owners (the aggregator's work list), by connection
	// id; accounts by creation time, then id.
	LinkedConnections(ctx context.Context) ([]LinkedConnection, error)
}
