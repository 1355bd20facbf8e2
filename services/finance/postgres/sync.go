package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/ledgerlane/platform/services/finance"
)

// TransactionChanges implements finance.ChangeStore.
func (s *Store) TransactionChanges(ctx context.Context, userID, grantID string, after int64, limit int, retention time.Duration) (finance.ChangeBatch, error) {
	return finance.ChangeBatch{}, errors.New("todo")
}

// TransactionsAt implements finance.ChangeStore.
func (s *Store) TransactionsAt(ctx context.Context, userID string, at int64, accountIDs, categoryIDs []string, all bool, afterID string, limit int) ([]finance.TxChange, int64, error) {
	return nil, 0, errors.New("todo")
}

// UpdateGrant implements finance.ChangeStore.
func (s *Store) UpdateGrant(ctx context.Context, g finance.Grant) error {
	return errors.New("todo")
}
