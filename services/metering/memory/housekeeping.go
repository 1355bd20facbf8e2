package memory

import (
	"context"
	"slices"
	"time"

	"github.com/ledgerlane/platform/services/metering"
)

var _ metering.HousekeepingStore = (*Store)(nil)

// expiredKeys returns up to limit keys of m whose expiry is at or before
// before, the oldest expiry first (as the SQL store deletes them).
func expiredKeys[V any](m map[string]V, expiry func(V) *time.Time, before time.Time, limit int) []string {
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
	keys := make([]string, 0, min(limit, len(due)))
	for _, e := range due[:min(limit, len(due))] {
		keys = append(keys, e.key)
	}
	return keys
}

func (s *Store) DeleteExpiredSessions(_ context.Context, before time.Time, limit int) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	keys := expiredKeys(s.sessions, func(ps metering.PortalSession) *time.Time { return &ps.ExpiresAt }, before, limit)
	for _, k := range keys {
		delete(s.sessions, k)
	}
	return len(keys), nil
}

func (s *Store) DeleteExpiredPortalTokens(_ context.Context, before time.Time, limit int) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	keys := expiredKeys(s.tokens, func(tk metering.PortalToken) *time.Time { return &tk.ExpiresAt }, before, limit)
	for _, k := range keys {
		delete(s.tokens, k)
	}
	return len(keys), nil
}

func (s *Store) DeleteExpiredAccessTokens(_ context.Context, before time.Time, limit int) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	keys := expiredKeys(s.credentials, func(c metering.Credential) *time.Time {
		if c.OAuthClientID == "" {
			return nil // API keys do not expire
		}
		return c.ExpiresAt
	}, before, limit)
	for _, k := range keys {
		delete(s.byHash, s.credentials[k].SecretHash)
		delete(s.credentials, k)
	}
	return len(keys), nil
}
