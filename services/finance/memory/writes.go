package memory

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ledgerlane/platform/pkg/memtable"
	"github.com/ledgerlane/platform/services/finance"
	"github.com/ledgerlane/platform/services/finance/banksync"
)

func (s *Store) recordSync(st banksync.ConnectionState) error {
	c, ok := s.connections[st.ID]
	if !ok {
		return fmt.Errorf("connection %s: %w", st.ID, finance.ErrNotFound)
	}
	c.Status, c.ErrorCode, c.ErrorMessage, c.UpdatedAt = st.Status, st.ErrorCode, st.ErrorMessage, ts(st.UpdatedAt)
	if st.LastSyncedAt != nil {
		c.LastSyncedAt = tsPtr(st.LastSyncedAt)
	}
	s.connections[st.ID] = c
	s.appendNotes(st.Notes)
	return nil
}

// CreateCustomCategory implements finance.Store.
func (s *Store) CreateCustomCategory(_ context.Context, c finance.Category, limit int) error {
	c.CreatedAt, c.UpdatedAt = ts(c.CreatedAt), ts(c.UpdatedAt)
	// One lock over count and insert: concurrent creates cannot overshoot.
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := belowLimit(s.categories, limit, "categories of "+c.UserID, func(other finance.Category) bool {
		return other.UserID == c.UserID
	}); err != nil {
		return err
	}
	if _, ok := s.categories[c.ID]; ok {
		return fmt.Errorf("%s: %w", c.ID, finance.ErrAlreadyExists)
	}
	s.categories[c.ID] = c
	return nil
}

// GetCategory implements finance.Store.
func (s *Store) GetCategory(_ context.Context, userID, id string) (finance.Category, error) {
	return find(s, &s.categories, "category", id, func(c finance.Category) bool { return c.UserID == "" || c.UserID == userID }, memtable.Same)
}

// UpdateCategory implements finance.Store.
func (s *Store) UpdateCategory(_ context.Context, c finance.Category) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	old, ok := s.categories[c.ID]
	if !ok || old.UserID == "" || old.UserID != c.UserID {
		return fmt.Errorf("category %s: %w", c.ID, finance.ErrNotFound)
	}
	old.ParentID, old.Name, old.Icon, old.Color, old.SortOrder = c.ParentID, c.Name, c.Icon, c.Color, c.SortOrder
	old.UpdatedAt = ts(c.UpdatedAt)
	s.categories[c.ID] = old
	return nil
}

// DeleteCategory implements finance.Store.
func (s *Store) DeleteCategory(_ context.Context, userID, id, mergeInto string, at time.Time, notes ...finance.Note) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.categories[id]
	if !ok || c.UserID == "" || c.UserID != userID {
		return nil, fmt.Errorf("category %s: %w", id, finance.ErrNotFound)
	}
	for _, other := range s.categories {
		if other.ParentID == id {
			return nil, fmt.Errorf("category %s: %w", id, finance.ErrHasChildren)
		}
	}
	if mergeInto != "" {
		if t, ok := s.categories[mergeInto]; !ok || (t.UserID != "" && t.UserID != userID) {
			return nil, fmt.Errorf("category %s: %w", mergeInto, finance.ErrNotFound)
		}
	}
	var moved []string
	for _, t := range s.transactions {
		if t.CategoryID != id {
			continue
		}
		t.CategoryID = mergeInto
		t.Version++
		t.UpdatedAt = ts(at)
		s.putTx(t)
		moved = append(moved, t.AccountID)
	}
	for rid, r := range s.rules {
		if r.CategoryID == id {
			r.CategoryID = mergeInto
			s.rules[rid] = r
		}
	}
	delete(s.categories, id)
	if len(moved) > 0 {
		s.appendNotes(finance.WithAccounts(notes, moved))
	}
	return moved, nil
}

// UpdateTransaction implements finance.Store.
func (s *Store) UpdateTransaction(_ context.Context, t finance.Transaction, expectedVersion int64, notes ...finance.Note) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.update(t, expectedVersion); err != nil {
		return err
	}
	s.appendNotes(notes)
	return nil
}

func (s *Store) update(t finance.Transaction, expectedVersion int64) error {
	old, ok := s.transactions[t.ID]
	if !ok || old.UserID != t.UserID {
		return fmt.Errorf("transaction %s: %w", t.ID, finance.ErrNotFound)
	}
	if old.Version != expectedVersion {
		return fmt.Errorf("transaction %s: %w", t.ID, finance.ErrVersionConflict)
	}
	// The immutable columns keep their stored values, as in PostgreSQL.
	t.AccountID, t.Source, t.ExternalRef, t.SplitParentID, t.CreatedAt =
		old.AccountID, old.Source, old.ExternalRef, old.SplitParentID, old.CreatedAt
	t.TransferPairID, t.RecurringRuleID = old.TransferPairID, old.RecurringRuleID
	s.putTx(normalizeTx(t))
	return nil
}

// IsSplitParent implements finance.Store.
func (s *Store) IsSplitParent(_ context.Context, userID, id string) (bool, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, t := range s.transactions {
		if t.UserID == userID && t.SplitParentID == id {
			return true, nil
		}
	}
	return false, nil
}

// SearchTransactions implements finance.Store with the semantics of the
// PostgreSQL query: every term is a prefix of some token of the row.
func (s *Store) SearchTransactions(ctx context.Context, userID string, terms []string, f finance.TransactionFilter, after *finance.TxPosition, limit int) ([]finance.Transaction, error) {
	if len(terms) == 0 {
		return nil, nil
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.page(userID, f, after, limit, func(t finance.Transaction) bool { return matchesTerms(t, terms) }), nil
}

func matchesTerms(t finance.Transaction, terms []string) bool {
	tokens := finance.SearchTokens(t.Merchant + " " + t.DisplayName + " " + t.Description + " " + t.Memo)
	for _, term := range terms {
		if !slices.ContainsFunc(tokens, func(tok string) bool { return strings.HasPrefix(tok, term) }) {
			return false
		}
	}
	return true
}
