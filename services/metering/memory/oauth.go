package memory

import (
	"context"
	"slices"
	"time"

	"github.com/ledgerlane/platform/pkg/memtable"
	"github.com/ledgerlane/platform/services/metering"
	"github.com/ledgerlane/platform/services/metering/identity"
)

var _ identity.OAuthStore = (*Store)(nil)

func cloneClient(c identity.OAuthClient) identity.OAuthClient {
	c.Scopes = slices.Clone(c.Scopes)
	c.RevokedAt = copyPtr(c.RevokedAt)
	return c
}

func (s *Store) CreateOAuthClient(_ context.Context, c identity.OAuthClient) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.accounts[c.AccountID]; !ok {
		return metering.ErrNotFound
	}
	if s.oauth == nil {
		s.oauth = map[string]identity.OAuthClient{}
	}
	for _, o := range s.oauth {
		if o.ID == c.ID || o.ClientID == c.ClientID || o.SecretHash == c.SecretHash {
			return metering.ErrConflict
		}
	}
	s.oauth[c.ID] = cloneClient(c)
	return nil
}

func (s *Store) OAuthClientByClientID(_ context.Context, clientID string) (identity.OAuthClient, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, o := range s.oauth {
		if o.ClientID == clientID {
			return cloneClient(o), nil
		}
	}
	return identity.OAuthClient{}, metering.ErrNotFound
}

func (s *Store) ListOAuthClients(_ context.Context, accountID string) ([]identity.OAuthClient, error) {
	return memtable.Collect(&s.mu, &s.oauth, func(o identity.OAuthClient) bool { return o.AccountID == accountID },
		cloneClient, func(a, b identity.OAuthClient) int { return createdOrder(a.CreatedAt, a.ID, b.CreatedAt, b.ID) }), nil
}

func (s *Store) RevokeOAuthClient(_ context.Context, accountID, id string, at time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.oauth[id]
	if !ok || o.AccountID != accountID {
		return metering.ErrNotFound
	}
	if o.RevokedAt == nil {
		o.RevokedAt = &at
		s.oauth[id] = o
	}
	for cid, c := range s.credentials {
		if c.OAuthClientID == id && c.RevokedAt == nil {
			t := at
			c.RevokedAt = &t
			s.credentials[cid] = c
		}
	}
	return nil
}

func (s *Store) DeleteExpiredTokens(_ context.Context, id string, before time.Time) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for cid, c := range s.credentials {
		if c.OAuthClientID == id && c.ExpiresAt != nil && !c.ExpiresAt.After(before) {
			delete(s.credentials, cid)
			delete(s.byHash, c.SecretHash)
			n++
		}
	}
	return n, nil
}
