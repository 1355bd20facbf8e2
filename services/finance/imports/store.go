package imports

import (
	"context"
	"time"

	"github.com/ledgerlane/platform/services/finance"
)

// Store is what statement import reads and keeps: the import claims it
// owns, and the kernel's accounts and rows it reads (implemented by the
// finance memory and postgres stores; conformance/imports.go checks the
// claims). A claim's key is unique per account in the store itself, so two
// imports of one file racing each other cannot both add a row: the loser
// finds the key taken.
type Store interface {
	// ImportClaims returns the account's claims whose key is one of keys or
	// whose transaction is one of transactionIDs.
	ImportClaims(ctx context.Context, accountID string, keys, transactionIDs []string) ([]ImportClaim, error)
	// ApplyImport writes w in one atomic step, row by row: a row whose key
	// the account has already claimed writes nothing; otherwise the key is
	// claimed and Insert, if any, inserted. It reports, per row, whether
	// this call claimed it. A MatchID that no longer exists fails the whole
	// write with finance.ErrNotFound.
	ApplyImport(ctx context.Context, w ImportWrite) ([]bool, error)

	// MarkRecurringDue tells recurring detection the user's rows changed
	// (recurring.Store's mark; imports does not import recurring).
	MarkRecurringDue(ctx context.Context, userID string, at time.Time) error

	GetAccount(ctx context.Context, userID, id string) (finance.Account, error)
	ListTransactions(ctx context.Context, userID string, f finance.TransactionFilter, after *finance.TxPosition, limit int) ([]finance.Transaction, error)
}
