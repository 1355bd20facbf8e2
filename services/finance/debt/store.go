package debt

import (
	"context"

	"github.com/ledgerlane/platform/services/finance"
)

// Store is what debt reads and keeps: the liability terms it owns, and the
// kernel's accounts, categories and rows it reads (implemented by the
// finance memory and postgres stores; conformance/debt.go checks the
// liability part). A liability belongs to one of the user's debt accounts
// and shares its id.
type Store interface {
	// PutLiability creates or replaces the terms of account l.AccountID
	// (an account of l.UserID; finance.ErrNotFound otherwise).
	PutLiability(ctx context.Context, l Liability) error
	// ListLiabilities returns the user's liabilities by account id.
	ListLiabilities(ctx context.Context, userID string) ([]Liability, error)

	ListAccounts(ctx context.Context, userID string) ([]finance.Account, error)
	ListCategories(ctx context.Context, userID string) ([]finance.Category, error)
	ListBudgetRows(ctx context.Context, userID string, f finance.TransactionFilter) ([]finance.BudgetRow, error)
}
