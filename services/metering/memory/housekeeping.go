package memory

import (
	"context"
	"slices"
	"time"

	"github.com/ledgerlane/platform/services/metering"
	"github.com/ledgerlane/platform/services/metering/identity"
)

var _ identity.HousekeepingStore = (*Store)(nil)

// deleteExpired deletes from m up to limit entries whose expiry is at or
// before before, the oldest expiry first (as the SQL store does), and
// returns them.
func deleteExpired[V any](m map[string]V, expiry func(V) *time.Time, before time.Time, limit int) []V {
	type entry struct {
		key string
		at  time.Time
	}
	var due []entry
	for k, v := range m {
		if at := expiry(v); at != nil && !at.After(before) {
			due = append(due, entry{k, *at})
		}
	}
	slices.SortFunc(due, func(a, b entry) int { return a.at.Compare(b.at) })
	gone := make([]V, 0, min(limit, len(due)))
	for _, e := range due[:min(limit, len(due))] {
		gone = append(gone, m[e.key])
		delete(m, e.key)
	}
	return gone
}

func (s *Store) DeleteExpiredSessions(_ context.Context, before time.Time, limit int) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(deleteExpired(s.sessions, func(ps identity.PortalSession) *time.Time { return &ps.ExpiresAt }, before, limit)), nil
}

func (s *Store) DeleteExpiredPortalTokens(_ context.Context, before time.Time, limit int) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(deleteExpired(s.tokens, func(tk identity.PortalToken) *time.Time { return &tk.ExpiresAt }, before, limit)), nil
}

func (s *Store) DeleteExpiredAccessTokens(_ context.Context, before time.Time, limit int) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	gone := deleteExpired(s.credentials, func(c metering.Credential) *time.Time {
		if c.OAuthClientID == "" {
			return nil // API keys do not expire
		}
		return c.ExpiresAt
	}, before, limit)
	for _, c := range gone {
		delete(s.byHash, c.SecretHash)
	}
	return len(gone), nil
}
