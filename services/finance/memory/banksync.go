package memory

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/ledgerlane/platform/pkg/memtable"
	"github.com/ledgerlane/platform/services/finance"
	"github.com/ledgerlane/platform/services/finance/banksync"
)

// GetConnection implements banksync.Store.
func (s *Store) GetConnection(_ context.Context, id string) (finance.Connection, error) {
	return find(s, &s.connections, "connection", id, memtable.AnyOwner[finance.Connection], cloneConnection)
}

// RecordConnectionSync implements banksync.Store.
func (s *Store) RecordConnectionSync(_ context.Context, st banksync.ConnectionState) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.recordSync(st)
}

// TransactionsByExternalRef implements banksync.Store.
func (s *Store) TransactionsByExternalRef(_ context.Context, userID string, accountIDs, refs []string) ([]finance.Transaction, error) {
	keep := func(t finance.Transaction) bool {
		return t.UserID == userID && t.ExternalRef != "" && slices.Contains(accountIDs, t.AccountID) &&
			slices.Contains(refs, t.ExternalRef)
	}
	return memtable.Collect(&s.mu, &s.transactions, keep, cloneTx,
		func(a, b finance.Transaction) int { return strings.Compare(a.ID, b.ID) }), nil
}

// ApplySync implements banksync.Store. Everything is checked before anything
// is written, so a failure leaves the store as it was.
func (s *Store) ApplySync(_ context.Context, w banksync.Write) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.connections[w.Connection.ID]; !ok {
		return fmt.Errorf("connection %s: %w", w.Connection.ID, finance.ErrNotFound)
	}
	if err := s.checkInserts(w.Inserts); err != nil {
		return err
	}
	for _, t := range w.Updates {
		old, ok := s.transactions[t.ID]
		if !ok || old.UserID != w.UserID {
			return fmt.Errorf("transaction %s: %w", t.ID, finance.ErrNotFound)
		}
		if old.Version != t.Version-1 {
			return fmt.Errorf("transaction %s: %w", t.ID, finance.ErrVersionConflict)
		}
	}
	for _, t := range w.Inserts {
		s.putTx(normalizeTx(t))
	}
	for _, t := range w.Updates {
		if err := s.update(t, t.Version-1); err != nil {
			return err // cannot happen: checked above
		}
	}
	for _, id := range w.Deletes {
		if t, ok := s.transactions[id]; ok && t.UserID == w.UserID {
			s.deleteTx(id)
			// Slices go with their parent, as ON DELETE CASCADE does.
			for sid, slice := range s.transactions {
				if slice.SplitParentID == id {
					s.deleteTx(sid)
				}
			}
		}
	}
	if !w.RecurringDueAt.IsZero() {
		s.markRecurringDue(w.UserID, w.RecurringDueAt)
	}
	return s.recordSync(w.Connection)
}
