package memory

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ledgerlane/platform/services/finance"
)

// The change feed's state (finance/sync.go). Every write of a row goes
// through putTx or deleteTx under s.mu, which stamps it with the next value
// of one counter; a read of the feed holds the same lock, so every value it
// sees belongs to a finished write and none can appear below it later.
type feedState struct {
	changeSeq  int64
	feed       map[string]feedRow // by transaction id
	tombstones map[string]tombstone
	// categoryLog holds, per transaction id, its recategorisations.
	categoryLog map[string][]categoryChange
	horizon     map[string]int64 // by user id
}

type feedRow struct{ seq, created int64 }

type tombstone struct {
	tx           finance.Transaction // id, user, account, category
	seq, created int64
	at           time.Time
}

type categoryChange struct {
	seq int64
	old string
	at  time.Time
}

// putTx writes the normalised row t and stamps it. The caller holds s.mu.
func (s *Store) putTx(t finance.Transaction) {
	s.changeSeq++
	old, existed := s.transactions[t.ID]
	r := s.feed[t.ID]
	r.seq = s.changeSeq
	switch {
	case !existed:
		r.created = s.changeSeq
		delete(s.tombstones, t.ID)
		delete(s.categoryLog, t.ID)
	case old.CategoryID != t.CategoryID:
		s.categoryLog[t.ID] = append(s.categoryLog[t.ID], categoryChange{seq: s.changeSeq, old: old.CategoryID, at: time.Now()})
	}
	s.feed[t.ID] = r
	s.transactions[t.ID] = t
}

// deleteTx deletes row id, leaving a tombstone. The caller holds s.mu.
func (s *Store) deleteTx(id string) {
	t, ok := s.transactions[id]
	if !ok {
		return
	}
	s.changeSeq++
	s.tombstones[id] = tombstone{
		tx:  finance.Transaction{ID: t.ID, UserID: t.UserID, AccountID: t.AccountID, CategoryID: t.CategoryID},
		seq: s.changeSeq, created: s.feed[id].created, at: time.Now(),
	}
	delete(s.feed, id)
	delete(s.transactions, id)
}

// TransactionChanges implements finance.ChangeStore.
func (s *Store) TransactionChanges(_ context.Context, userID string, after int64, limit int, retention time.Duration) (finance.ChangeBatch, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b finance.ChangeBatch
	s.prune(userID, time.Now().Add(-retention))
	b.Horizon = s.horizon[userID]
	for id, r := range s.feed {
		if t := s.transactions[id]; t.UserID == userID && r.seq > after {
			b.Changes = append(b.Changes, finance.TxChange{Seq: r.seq, CreatedSeq: r.created, Tx: cloneTx(t)})
		}
	}
	for _, ts := range s.tombstones {
		if ts.tx.UserID == userID && ts.seq > after {
			b.Changes = append(b.Changes, finance.TxChange{Seq: ts.seq, CreatedSeq: ts.created, Deleted: true, Tx: ts.tx})
		}
	}
	slices.SortFunc(b.Changes, func(x, y finance.TxChange) int { return cmp.Compare(x.Seq, y.Seq) })
	b.Changes = truncate(b.Changes, limit)
	for i := range b.Changes {
		b.Changes[i].CategoryLog = s.categoryChanges(b.Changes[i].Tx.ID)
	}
	return b, nil
}

// prune drops the user's tombstones and category log entries older than
// cutoff and raises the user's horizon over them. The caller holds s.mu.
func (s *Store) prune(userID string, cutoff time.Time) {
	for id, ts := range s.tombstones {
		if ts.tx.UserID == userID && ts.at.Before(cutoff) {
			s.horizon[userID] = max(s.horizon[userID], ts.seq)
			delete(s.tombstones, id)
		}
	}
	for id, log := range s.categoryLog {
		t, ok := s.transactions[id]
		if !ok || t.UserID != userID {
			continue
		}
		for len(log) > 0 && log[0].at.Before(cutoff) {
			s.horizon[userID] = max(s.horizon[userID], log[0].seq)
			log = log[1:]
		}
		s.categoryLog[id] = log
	}
}

// categoryChanges is the kept category log of row id.
func (s *Store) categoryChanges(id string) []finance.CategoryChange {
	var out []finance.CategoryChange
	for _, c := range s.categoryLog[id] {
		out = append(out, finance.CategoryChange{Seq: c.seq, Old: c.old})
	}
	return out
}

// TransactionsAt implements finance.ChangeStore.
func (s *Store) TransactionsAt(_ context.Context, userID string, at int64, accountIDs, categoryIDs []string, all bool, afterID string, limit int) ([]finance.TxChange, int64, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []finance.TxChange
	keep := func(ch finance.TxChange) {
		if ch.Tx.ID <= afterID {
			return
		}
		cat := ch.Tx.CategoryID
		if all || ch.Seq > at || slices.Contains(accountIDs, ch.Tx.AccountID) || (cat != "" && slices.Contains(categoryIDs, cat)) {
			ch.CategoryLog = s.categoryChanges(ch.Tx.ID)
			out = append(out, ch)
		}
	}
	for id, r := range s.feed {
		if t := s.transactions[id]; t.UserID == userID {
			keep(finance.TxChange{Seq: r.seq, CreatedSeq: r.created, Tx: cloneTx(t)})
		}
	}
	for _, ts := range s.tombstones {
		if ts.tx.UserID == userID && ts.seq > at {
			keep(finance.TxChange{Seq: ts.seq, CreatedSeq: ts.created, Deleted: true, Tx: ts.tx})
		}
	}
	slices.SortFunc(out, func(a, b finance.TxChange) int { return strings.Compare(a.Tx.ID, b.Tx.ID) })
	return truncate(out, limit), s.horizon[userID], nil
}

// UpdateGrant implements finance.ChangeStore.
func (s *Store) UpdateGrant(_ context.Context, g finance.Grant, expectedVersion int64, notes ...finance.Note) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	old, ok := s.grants[g.ID]
	switch {
	case !ok || old.UserID != g.UserID:
		return fmt.Errorf("grant %s: %w", g.ID, finance.ErrNotFound)
	case old.Version != expectedVersion:
		return fmt.Errorf("grant %s: %w", g.ID, finance.ErrVersionConflict)
	}
	g.CreatedAt = old.CreatedAt
	s.grants[g.ID] = cloneGrant(g)
	s.appendNotes(notes)
	return nil
}
