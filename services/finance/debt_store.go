package finance

import "context"

// DebtStore is the part of Store that keeps liability terms (embedded in
// Store). A liability belongs to one of the user's debt accounts and shares
// its id.
type DebtStore interface {
	// PutLiability creates or replaces the terms of account l.AccountID
	// (an account of l.UserID; ErrNotFound otherwise).
	PutLiability(ctx context.Context, l Liability) error
	// ListLiabilities returns the user's liabilities by account id.
	ListLiabilities(ctx context.Context, userID string) ([]Liability, error)
}
