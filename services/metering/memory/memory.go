// Package memory is an in-process metering.Store for tests and local runs.
package memory

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"time"

	"github.com/ledgerlane/platform/pkg/memtable"
	"github.com/ledgerlane/platform/services/metering"
	"github.com/ledgerlane/platform/services/metering/billing"
	"github.com/ledgerlane/platform/services/metering/identity"
	"github.com/ledgerlane/platform/services/metering/notify"
)

// Store keeps everything in maps behind one mutex.
type Store struct {
	mu           sync.RWMutex
	accounts     map[string]metering.Account
	credentials  map[string]metering.Credential
	byHash       map[string]string               // secret hash -> credential ID
	billingState                                 // billing.go
	notices                                      // notify.go
	pay          payments                        // billing.go
	oauth        map[string]identity.OAuthClient // by ID; oauth.go
	tokens       map[string]identity.PortalToken // by hash; tokens.go
	people                                       // portal.go
}

var (
	_ metering.Store = (*Store)(nil)
	_ billing.Store  = (*Store)(nil)
)

// New returns an empty Store.
func New() *Store {
	return &Store{
		accounts:     map[string]metering.Account{},
		credentials:  map[string]metering.Credential{},
		byHash:       map[string]string{},
		billingState: newBillingState(),
		notices:      notices{alerts: map[string][]notify.Alert{}},
		people:       people{users: map[string][]identity.PortalUser{}},
	}
}

func (s *Store) CreateAccount(_ context.Context, a metering.Account) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.accounts[a.ID]; ok {
		return metering.ErrConflict
	}
	s.accounts[a.ID] = cloneAccount(a)
	return nil
}

func (s *Store) GetAccount(_ context.Context, id string) (metering.Account, error) {
	a, ok := memtable.Find(&s.mu, &s.accounts, id, memtable.AnyOwner[metering.Account])
	if !ok {
		return metering.Account{}, metering.ErrNotFound
	}
	return cloneAccount(a), nil
}

func (s *Store) SetBillingLimits(_ context.Context, id string, hardStop bool, capCents *int64, at time.Time) error {
	return s.updateAccount(id, func(a *metering.Account) error {
		a.HardStop = hardStop
		a.OverageCapCents = copyPtr(capCents)
		s.limitChanges[id] = append(s.limitChanges[id], billing.LimitChange{AccountID: id, At: at, HardStop: hardStop, OverageCapCents: copyPtr(capCents)})
		return nil
	})
}

// update applies change to row id of m under the write lock and stores
// the result; a missing row is metering.ErrNotFound, and an error from
// change stores nothing. The map is passed by its address, as to memtable.
func update[T any](s *Store, m *map[string]T, id string, change func(*T) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := (*m)[id]
	if !ok {
		return metering.ErrNotFound
	}
	if err := change(&v); err != nil {
		return err
	}
	(*m)[id] = v
	return nil
}

// updateAccount is update of an account.
func (s *Store) updateAccount(id string, change func(*metering.Account) error) error {
	return update(s, &s.accounts, id, change)
}

func (s *Store) CreateCredential(_ context.Context, c metering.Credential) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.accounts[c.AccountID]; !ok {
		return metering.ErrNotFound
	}
	if _, ok := s.credentials[c.ID]; ok {
		return metering.ErrConflict
	}
	if _, ok := s.byHash[c.SecretHash]; ok {
		return metering.ErrConflict
	}
	s.credentials[c.ID] = clone(c)
	s.byHash[c.SecretHash] = c.ID
	return nil
}

func (s *Store) CredentialByHash(_ context.Context, hash string) (metering.Credential, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	id, ok := s.byHash[hash]
	if !ok {
		return metering.Credential{}, metering.ErrNotFound
	}
	return clone(s.credentials[id]), nil
}

func (s *Store) ListCredentials(_ context.Context, accountID string) ([]metering.Credential, error) {
	return memtable.Collect(&s.mu, &s.credentials, func(c metering.Credential) bool { return c.AccountID == accountID },
		clone, func(a, b metering.Credential) int { return createdOrder(a.CreatedAt, a.ID, b.CreatedAt, b.ID) }), nil
}

func (s *Store) TouchCredential(_ context.Context, id string, at time.Time) error {
	return update(s, &s.credentials, id, func(c *metering.Credential) error {
		if c.LastUsedAt == nil || c.LastUsedAt.Before(at) {
			c.LastUsedAt = copyPtr(&at)
		}
		return nil
	})
}

func (s *Store) RevokeCredential(_ context.Context, id string, at time.Time) error {
	return update(s, &s.credentials, id, func(c *metering.Credential) error {
		if c.RevokedAt == nil {
			c.RevokedAt = &at
		}
		return nil
	})
}

// clone copies the parts of c that share memory, so callers can never change
// stored state through a value they passed in or got back.
func clone(c metering.Credential) metering.Credential {
	c.Scopes = slices.Clone(c.Scopes)
	if c.RevokedAt != nil {
		t := *c.RevokedAt
		c.RevokedAt = &t
	}
	c.ExpiresAt = copyPtr(c.ExpiresAt)
	c.LastUsedAt = copyPtr(c.LastUsedAt)
	return c
}

func (s *Store) ApplyDowngrade(_ context.Context, id string, now time.Time) error {
	return s.updateAccount(id, func(a *metering.Account) error {
		if a.ScheduledAt != nil && !now.Before(*a.ScheduledAt) {
			a.PlanID, a.ScheduledPlanID, a.ScheduledAt = a.ScheduledPlanID, "", nil
		}
		return nil
	})
}

func cloneAccount(a metering.Account) metering.Account {
	a.OverageCapCents, a.ScheduledAt, a.NextCloseAt = copyPtr(a.OverageCapCents), copyPtr(a.ScheduledAt), copyPtr(a.NextCloseAt)
	return a
}

func clonePayment(p billing.Payment) billing.Payment {
	p.ResolvedAt = copyPtr(p.ResolvedAt)
	return p
}

// createdOrder is the order of every account-scoped list: oldest first, ids
// breaking ties, as the PostgreSQL adapter sorts.
func createdOrder(aAt time.Time, aID string, bAt time.Time, bID string) int {
	return cmp.Or(aAt.Compare(bAt), cmp.Compare(aID, bID))
}
