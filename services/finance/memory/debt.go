package memory

import (
	"context"
	"fmt"
	"strings"

	"github.com/ledgerlane/platform/pkg/memtable"
	"github.com/ledgerlane/platform/services/finance"
	"github.com/ledgerlane/platform/services/finance/debt"
)

// PutLiability implements finance.Store.
func (s *Store) PutLiability(_ context.Context, l debt.Liability) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.accounts[l.AccountID]
	if !ok || a.UserID != l.UserID {
		return fmt.Errorf("liability %q: %w", l.AccountID, finance.ErrNotFound)
	}
	if old, ok := s.liabilities[l.AccountID]; ok {
		l.CreatedAt = old.CreatedAt
	}
	s.liabilities[l.AccountID] = cloneLiability(l)
	return nil
}

// ListLiabilities implements finance.Store.
func (s *Store) ListLiabilities(_ context.Context, userID string) ([]debt.Liability, error) {
	return memtable.Collect(&s.mu, &s.liabilities, func(l debt.Liability) bool { return l.UserID == userID }, cloneLiability,
		func(a, b debt.Liability) int { return strings.Compare(a.AccountID, b.AccountID) }), nil
}

func cloneLiability(l debt.Liability) debt.Liability {
	l.APR, l.PromoAPR = copyPtr(l.APR), copyPtr(l.PromoAPR)
	if l.PromoEndsOn != nil {
		d := finance.Day(*l.PromoEndsOn)
		l.PromoEndsOn = &d
	}
	l.CreatedAt, l.UpdatedAt = ts(l.CreatedAt), ts(l.UpdatedAt)
	return l
}
