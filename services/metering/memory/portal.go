package memory

import (
	"context"
	"strings"

	"github.com/ledgerlane/platform/services/metering"
	"github.com/ledgerlane/platform/services/metering/identity"
	"github.com/ledgerlane/platform/services/metering/notify"
)

// people is the memory Store's part behind identity's portal users and
// sessions; the Store's mutex guards it.
type people struct {
	users    map[string][]identity.PortalUser
	sessions map[string]identity.PortalSession // by token hash
}

var _ identity.Store = (*Store)(nil)

func (s *Store) PortalLogins(_ context.Context, email string) ([]identity.PortalUser, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []identity.PortalUser
	for _, us := range s.users {
		for _, u := range us {
			if u.Email == email && u.PasswordHash != "" {
				u.InviteExpiresAt = copyPtr(u.InviteExpiresAt)
				out = append(out, u)
			}
		}
	}
	sortUsers(out)
	return out, nil
}

func sortUsers(us []identity.PortalUser) {
	for i := 1; i < len(us); i++ {
		for j := i; j > 0 && (us[j].CreatedAt.Before(us[j-1].CreatedAt) ||
			us[j].CreatedAt.Equal(us[j-1].CreatedAt) && us[j].ID < us[j-1].ID); j-- {
			us[j], us[j-1] = us[j-1], us[j]
		}
	}
}

func (s *Store) GetPortalUser(_ context.Context, id string) (identity.PortalUser, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, us := range s.users {
		for _, u := range us {
			if u.ID == id {
				u.InviteExpiresAt = copyPtr(u.InviteExpiresAt)
				return u, nil
			}
		}
	}
	return identity.PortalUser{}, metering.ErrNotFound
}

func (s *Store) CreateSession(_ context.Context, ps identity.PortalSession) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	found := false
	for _, u := range s.users[ps.AccountID] {
		found = found || u.ID == ps.UserID
	}
	if !found {
		return metering.ErrNotFound
	}
	if s.sessions == nil {
		s.sessions = map[string]identity.PortalSession{}
	}
	if _, ok := s.sessions[ps.TokenHash]; ok {
		return metering.ErrConflict
	}
	s.sessions[ps.TokenHash] = ps
	return nil
}

func (s *Store) SessionByHash(_ context.Context, hash string) (identity.PortalSession, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	ps, ok := s.sessions[hash]
	if !ok {
		return identity.PortalSession{}, metering.ErrNotFound
	}
	return ps, nil
}

func (s *Store) DeleteSession(_ context.Context, hash string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.sessions, hash)
	return nil
}

func (s *Store) DeleteUserSessions(_ context.Context, userID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for h, ps := range s.sessions {
		if ps.UserID == userID {
			delete(s.sessions, h)
		}
	}
	return nil
}

func (s *Store) InviteUser(_ context.Context, u identity.PortalUser, m notify.OutboxMail) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.accounts[u.AccountID]; !ok {
		return metering.ErrNotFound
	}
	for _, e := range s.users[u.AccountID] {
		if e.ID == u.ID || e.Email == u.Email {
			return metering.ErrConflict
		}
	}
	u.InviteExpiresAt = copyPtr(u.InviteExpiresAt)
	s.users[u.AccountID] = append(s.users[u.AccountID], u)
	m.SentAt = copyPtr(m.SentAt)
	s.outbox = append(s.outbox, m)
	return nil
}

func (s *Store) PortalUserByInvite(_ context.Context, hash string) (identity.PortalUser, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, us := range s.users {
		for _, u := range us {
			if hash != "" && u.InviteHash == hash {
				u.InviteExpiresAt = copyPtr(u.InviteExpiresAt)
				return u, nil
			}
		}
	}
	return identity.PortalUser{}, metering.ErrNotFound
}

func (s *Store) AcceptInvite(_ context.Context, userID, passwordHash, name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for acct, us := range s.users {
		for i, u := range us {
			if u.ID == userID && u.InviteHash != "" {
				u.PasswordHash, u.Name, u.InviteHash, u.InviteExpiresAt = passwordHash, name, "", nil
				s.users[acct][i] = u
				return nil
			}
		}
	}
	return metering.ErrNotFound
}

func (s *Store) AddPortalUser(_ context.Context, u identity.PortalUser) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.accounts[u.AccountID]; !ok {
		return metering.ErrNotFound
	}
	for _, e := range s.users[u.AccountID] {
		if e.ID == u.ID || strings.EqualFold(e.Email, u.Email) {
			return metering.ErrConflict
		}
	}
	u.InviteExpiresAt = copyPtr(u.InviteExpiresAt)
	s.users[u.AccountID] = append(s.users[u.AccountID], u)
	return nil
}

func (s *Store) PortalUsers(_ context.Context, id string) ([]identity.PortalUser, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := append([]identity.PortalUser{}, s.users[id]...)
	for i := range out {
		out[i].InviteExpiresAt = copyPtr(out[i].InviteExpiresAt)
	}
	return out, nil
}
