package memory

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/ledgerlane/platform/services/finance"
	"github.com/ledgerlane/platform/services/finance/imports"
)

// importState holds the import claims by account|key; its map is made on
// first write, under the store's lock.
type importState struct {
	importClaims map[string]imports.ImportClaim
}

// liveClaim reports the claim of key on account, unless its transaction is
// gone (PostgreSQL's ON DELETE CASCADE drops such a claim).
func (s *Store) liveClaim(accountID, key string) (imports.ImportClaim, bool) {
	cl, ok := s.importClaims[accountID+"|"+key]
	if !ok {
		return cl, false
	}
	if _, exists := s.transactions[cl.TransactionID]; !exists {
		return cl, false
	}
	return cl, true
}

// ImportClaims implements imports.Store.
func (s *Store) ImportClaims(_ context.Context, accountID string, keys, transactionIDs []string) ([]imports.ImportClaim, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	want := make(map[string]bool, len(keys)+len(transactionIDs))
	for _, k := range keys {
		want["k|"+k] = true
	}
	for _, id := range transactionIDs {
		want["t|"+id] = true
	}
	var out []imports.ImportClaim
	for _, cl := range s.importClaims {
		if cl.AccountID != accountID {
			continue
		}
		if _, live := s.liveClaim(cl.AccountID, cl.Key); !live {
			continue
		}
		if want["k|"+cl.Key] || want["t|"+cl.TransactionID] {
			out = append(out, cl)
		}
	}
	slices.SortFunc(out, func(a, b imports.ImportClaim) int { return strings.Compare(a.Key, b.Key) })
	return out, nil
}

// ApplyImport implements imports.Store: all rows under one lock, checked
// before anything is written, so a failure leaves nothing behind.
func (s *Store) ApplyImport(_ context.Context, w imports.ImportWrite) ([]bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.accounts[w.AccountID]
	if !ok || a.UserID != w.UserID {
		return nil, fmt.Errorf("account %s: %w", w.AccountID, finance.ErrNotFound)
	}
	claimed := make([]bool, len(w.Rows))
	var inserts []finance.Transaction
	seen := map[string]bool{}
	for i, r := range w.Rows {
		if _, live := s.liveClaim(w.AccountID, r.Key); live || seen[r.Key] {
			continue
		}
		seen[r.Key] = true
		claimed[i] = true
		switch {
		case r.Insert != nil:
			if r.Insert.AccountID != w.AccountID || r.Insert.UserID != w.UserID {
				return nil, fmt.Errorf("memory: import row %d is for another account", i)
			}
			inserts = append(inserts, *r.Insert)
		default:
			t, ok := s.transactions[r.MatchID]
			if !ok || t.AccountID != w.AccountID {
				return nil, fmt.Errorf("matched transaction %s: %w", r.MatchID, finance.ErrNotFound)
			}
		}
	}
	if err := s.checkInserts(inserts); err != nil {
		return nil, err
	}
	for i, r := range w.Rows {
		if !claimed[i] {
			continue
		}
		id := r.MatchID
		if r.Insert != nil {
			id = r.Insert.ID
			s.putTx(normalizeTx(*r.Insert))
		}
		s.importClaims[w.AccountID+"|"+r.Key] = imports.ImportClaim{AccountID: w.AccountID, Key: r.Key, TransactionID: id}
	}
	s.appendNotes(w.Notes)
	return claimed, nil
}
