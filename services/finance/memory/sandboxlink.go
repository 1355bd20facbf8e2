package memory

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/google/uuid"

	"github.com/ledgerlane/platform/pkg/memtable"
	"github.com/ledgerlane/platform/services/finance"
	"github.com/ledgerlane/platform/services/finance/sandboxlink"
)

var _ sandboxlink.Store = (*Store)(nil)

// linkState holds the finance sandbox's links (sandboxlink.Store), by id.
type linkState struct {
	links map[string]sandboxlink.Link
}

// CreateSandboxUser implements sandboxlink.Store.
func (s *Store) CreateSandboxUser(_ context.Context, u finance.User, limit int) error {
	if _, err := uuid.Parse(u.ID); err != nil {
		return fmt.Errorf("memory: id %q is not a uuid", u.ID)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := belowLimit(s.users, limit, "sandbox users of "+u.OwnerAccountID, func(have finance.User) bool {
		return have.OwnerAccountID == u.OwnerAccountID && have.Mode == "test"
	}); err != nil {
		return err
	}
	if _, ok := s.users[u.ID]; ok {
		return fmt.Errorf("user %s: %w", u.ID, finance.ErrAlreadyExists)
	}
	u.CreatedAt, u.Mode = ts(u.CreatedAt), finance.ModeOf(u.Mode)
	s.users[u.ID] = u
	return nil
}

// ListSandboxUsers implements sandboxlink.Store.
func (s *Store) ListSandboxUsers(_ context.Context, ownerAccountID string) ([]finance.User, error) {
	return memtable.Collect(&s.mu, &s.users, func(u finance.User) bool { return u.OwnerAccountID == ownerAccountID && u.Mode == "test" },
		memtable.Same, func(a, b finance.User) int { return compareCreated(a.CreatedAt, a.ID, b.CreatedAt, b.ID) }), nil
}

func normalizeLink(l sandboxlink.Link) sandboxlink.Link {
	l.CreatedAt, l.UpdatedAt, l.ExpiresAt = ts(l.CreatedAt), ts(l.UpdatedAt), ts(l.ExpiresAt)
	return l
}

// CreateLink implements sandboxlink.Store. Everything is checked before
// anything is written, so a refusal leaves the store as it was.
func (s *Store) CreateLink(_ context.Context, l sandboxlink.Link, limit int, w *sandboxlink.Linked) error {
	if _, err := uuid.Parse(l.ID); err != nil {
		return fmt.Errorf("memory: id %q is not a uuid", l.ID)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.users[l.UserID]; !ok {
		return fmt.Errorf("memory: link %s: user %s does not exist", l.ID, l.UserID)
	}
	if _, ok := s.links[l.ID]; ok {
		return fmt.Errorf("link %s: %w", l.ID, finance.ErrAlreadyExists)
	}
	if err := belowLimit(s.links, limit, "links of "+l.UserID, func(have sandboxlink.Link) bool {
		return have.UserID == l.UserID
	}); err != nil {
		return err
	}
	if err := s.checkLinked(w); err != nil {
		return err
	}
	s.links[l.ID] = normalizeLink(l)
	s.writeLinked(w)
	return nil
}

// UpdateLink implements sandboxlink.Store.
func (s *Store) UpdateLink(_ context.Context, l sandboxlink.Link, expectedVersion int64, w *sandboxlink.Linked) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	old, ok := s.links[l.ID]
	if !ok {
		return fmt.Errorf("link %s: %w", l.ID, finance.ErrNotFound)
	}
	if old.Version != expectedVersion {
		return fmt.Errorf("link %s: %w", l.ID, finance.ErrVersionConflict)
	}
	if err := s.checkLinked(w); err != nil {
		return err
	}
	s.links[l.ID] = normalizeLink(l)
	s.writeLinked(w)
	return nil
}

// checkLinked refuses a write whose ids are taken, as PostgreSQL's keys do;
// the caller holds s.mu.
func (s *Store) checkLinked(w *sandboxlink.Linked) error {
	if w == nil {
		return nil
	}
	if _, ok := s.connections[w.Connection.ID]; ok {
		return fmt.Errorf("connection %s: %w", w.Connection.ID, finance.ErrAlreadyExists)
	}
	if _, ok := s.grants[w.Grant.ID]; ok {
		return fmt.Errorf("grant %s: %w", w.Grant.ID, finance.ErrAlreadyExists)
	}
	for _, a := range w.History.Accounts {
		if _, ok := s.accounts[a.ID]; ok {
			return fmt.Errorf("account %s: %w", a.ID, finance.ErrAlreadyExists)
		}
	}
	return s.checkInserts(w.History.Transactions)
}

// writeLinked writes what checkLinked passed; the caller holds s.mu.
func (s *Store) writeLinked(w *sandboxlink.Linked) {
	if w == nil {
		return
	}
	c := w.Connection
	c.LastSyncedAt = tsPtr(c.LastSyncedAt)
	c.CreatedAt, c.UpdatedAt = ts(c.CreatedAt), ts(c.UpdatedAt)
	s.connections[c.ID] = c
	g := w.Grant
	g.CreatedAt = ts(g.CreatedAt)
	g.Version = max(g.Version, 1) // as CreateGrant
	s.grants[g.ID] = cloneGrant(g)
	for _, a := range w.History.Accounts {
		a.BalanceAsOf = tsPtr(a.BalanceAsOf)
		a.CreatedAt, a.UpdatedAt = ts(a.CreatedAt), ts(a.UpdatedAt)
		s.accounts[a.ID] = cloneAccount(a)
	}
	for _, c := range w.History.Categories {
		if _, ok := s.categories[c.ID]; !ok { // shared system categories: written once
			c.CreatedAt, c.UpdatedAt = ts(c.CreatedAt), ts(c.UpdatedAt)
			s.categories[c.ID] = c
		}
	}
	for _, t := range w.History.Transactions {
		s.putTx(normalizeTx(t))
	}
	if !w.RecurringDueAt.IsZero() && len(w.History.Transactions) > 0 {
		s.markRecurringDue(c.UserID, w.RecurringDueAt)
	}
}

// GetLink implements sandboxlink.Store.
func (s *Store) GetLink(_ context.Context, id string) (sandboxlink.Link, error) {
	return find(s, &s.links, "link", id, memtable.AnyOwner[sandboxlink.Link], memtable.Same)
}

// ListLinks implements sandboxlink.Store.
func (s *Store) ListLinks(_ context.Context, ownerAccountID, userID string) ([]sandboxlink.Link, error) {
	keep := func(l sandboxlink.Link) bool {
		return l.OwnerAccountID == ownerAccountID && (userID == "" || l.UserID == userID)
	}
	return memtable.Collect(&s.mu, &s.links, keep, memtable.Same,
		func(a, b sandboxlink.Link) int { return compareCreated(a.CreatedAt, a.ID, b.CreatedAt, b.ID) }), nil
}

// LinkedConnections implements sandboxlink.Store.
func (s *Store) LinkedConnections(_ context.Context) ([]sandboxlink.LinkedConnection, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []sandboxlink.LinkedConnection
	for _, l := range s.links {
		if l.Status != sandboxlink.StatusLinked {
			continue
		}
		var as []finance.Account
		for _, a := range s.accounts {
			if a.ConnectionID == l.ConnectionID {
				as = append(as, a)
			}
		}
		slices.SortFunc(as, func(a, b finance.Account) int { return compareCreated(a.CreatedAt, a.ID, b.CreatedAt, b.ID) })
		lc := sandboxlink.LinkedConnection{ConnectionID: l.ConnectionID}
		for _, a := range as {
			lc.Accounts = append(lc.Accounts, sandboxlink.LinkedAccount{ID: a.ID, Type: a.Type, Subtype: a.Subtype, Currency: a.Currency})
		}
		if len(lc.Accounts) > 0 { // as the PostgreSQL join
			out = append(out, lc)
		}
	}
	slices.SortFunc(out, func(a, b sandboxlink.LinkedConnection) int { return cmp.Compare(a.ConnectionID, b.ConnectionID) })
	return out, nil
}
