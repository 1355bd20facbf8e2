package memory

import (
	"context"
	"time"

	"github.com/ledgerlane/platform/services/metering"
	"github.com/ledgerlane/platform/services/metering/identity"
	"github.com/ledgerlane/platform/services/metering/notify"
)

var _ identity.PortalTokenStore = (*Store)(nil)

func (s *Store) CreatePortalToken(_ context.Context, tk identity.PortalToken, m notify.OutboxMail) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	found := false
	for _, us := range s.users {
		for _, u := range us {
			found = found || u.ID == tk.UserID
		}
	}
	if !found {
		return metering.ErrNotFound
	}
	if s.tokens == nil {
		s.tokens = map[string]identity.PortalToken{}
	}
	if _, ok := s.tokens[tk.TokenHash]; ok {
		return metering.ErrConflict
	}
	tk.UsedAt = copyPtr(tk.UsedAt)
	s.tokens[tk.TokenHash] = tk
	m.SentAt = copyPtr(m.SentAt)
	s.outbox = append(s.outbox, m)
	return nil
}

func (s *Store) PortalTokenByHash(_ context.Context, hash string) (identity.PortalToken, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	tk, ok := s.tokens[hash]
	if !ok {
		return identity.PortalToken{}, metering.ErrNotFound
	}
	tk.UsedAt = copyPtr(tk.UsedAt)
	return tk, nil
}

func (s *Store) ResetPassword(_ context.Context, hash, passwordHash string, at time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	tk, ok := s.tokens[hash]
	if !ok || tk.Purpose != identity.TokenPasswordReset || tk.UsedAt != nil {
		return metering.ErrNotFound
	}
	for acct, us := range s.users {
		for i, u := range us {
			if u.ID == tk.UserID {
				u.PasswordHash, u.EmailVerified = passwordHash, true
				s.users[acct][i] = u
			}
		}
	}
	tk.UsedAt = &at
	s.tokens[hash] = tk
	// Every other link of the user dies with this reset.
	for h, other := range s.tokens {
		if other.UserID == tk.UserID && other.Purpose == identity.TokenPasswordReset && other.UsedAt == nil {
			other.UsedAt = &at
			s.tokens[h] = other
		}
	}
	for h, ps := range s.sessions {
		if ps.UserID == tk.UserID {
			delete(s.sessions, h)
		}
	}
	return nil
}

func (s *Store) VerifyEmail(_ context.Context, hash string, at time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	tk, ok := s.tokens[hash]
	if !ok || tk.Purpose != identity.TokenVerifyEmail || tk.UsedAt != nil {
		return metering.ErrNotFound
	}
	tk.UsedAt = &at
	s.tokens[hash] = tk
	s.markVerified(tk.UserID)
	return nil
}

func (s *Store) MarkEmailVerified(_ context.Context, userID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.markVerified(userID) {
		return metering.ErrNotFound
	}
	return nil
}

// markVerified needs s.mu held.
func (s *Store) markVerified(userID string) bool {
	for acct, us := range s.users {
		for i, u := range us {
			if u.ID == userID {
				u.EmailVerified = true
				s.users[acct][i] = u
				return true
			}
		}
	}
	return false
}
