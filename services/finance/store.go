package finance

import "context"

// Store keeps the finance data. Callers assign ids (UUID strings, lower case)
// and timestamps; a Store keeps what it is given. Creating an id that exists
// returns ErrAlreadyExists; reading a missing row, or an id that is not a
// UUID, returns ErrNotFound. Implementations are safe for concurrent use, and
// the conformance package checks that they behave alike. A list limit of
// zero or less means no limit.
type Store interface {
	CreateUser(ctx context.Context, u User) error
	CreateGrant(ctx context.Context, g Grant) error
	GetGrant(ctx context.Context, id string) (Grant, error)

	CreateConnection(ctx context.Context, c Connection) error
	// ListConnections returns up to limit of the user's connections after the
	// position (nil: from the start), by creation time then id.
	ListConnections(ctx context.Context, userID string, after *ConnectionPosition, limit int) ([]Connection, error)

	CreateAccount(ctx context.Context, a Account) error
	GetAccount(ctx context.Context, userID, id string) (Account, error)
	// ListAccounts returns all of the user's accounts by creation time then id.
	ListAccounts(ctx context.Context, userID string) ([]Account, error)

	CreateCategory(ctx context.Context, c Category) error
	// ListCategories returns the system categories and the user's own, by
	// sort order, then name, then id.
	ListCategories(ctx context.Context, userID string) ([]Category, error)

	CreateRecurringRule(ctx context.Context, r RecurringRule) error
	// ListRecurringRules returns the user's rules by next expected date then id.
	ListRecurringRules(ctx context.Context, userID string) ([]RecurringRule, error)

	// InsertTransactions inserts all rows or none.
	InsertTransactions(ctx context.Context, txs []Transaction) error
	GetTransaction(ctx context.Context, userID, id string) (Transaction, error)
	// ListTransactions returns up to limit of the user's transactions matching
	// f, strictly after the position (nil: from the start), ordered by date
	// descending, then id descending.
	ListTransactions(ctx context.Context, userID string, f TransactionFilter, after *TxPosition, limit int) ([]Transaction, error)
}
