package memory

import (
	"context"
	"time"

	"github.com/ledgerlane/platform/services/metering"
	"github.com/ledgerlane/platform/services/metering/notify"
)

// notices is the memory Store's part behind notify.Store; the Store's
// mutex guards it.
type notices struct {
	alerts map[string][]notify.Alert
	outbox []notify.OutboxMail
}

var _ notify.Store = (*Store)(nil)

// Recipients are the account's portal users.
func (s *Store) Recipients(_ context.Context, id string) ([]notify.Recipient, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := []notify.Recipient{}
	for _, u := range s.users[id] {
		out = append(out, notify.Recipient{Email: u.Email, Name: u.Name})
	}
	return out, nil
}

func (s *Store) EnqueueAlert(_ context.Context, al notify.Alert, mails []notify.OutboxMail) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.accounts[al.AccountID]; !ok {
		return false, metering.ErrNotFound
	}
	for _, e := range s.alerts[al.AccountID] {
		if e.PeriodStart.Equal(al.PeriodStart) && e.Milestone == al.Milestone {
			return false, nil
		}
	}
	s.alerts[al.AccountID] = append(s.alerts[al.AccountID], al)
	for _, m := range mails {
		m.SentAt = copyPtr(m.SentAt)
		s.outbox = append(s.outbox, m)
	}
	return true, nil
}

func (s *Store) Alerts(_ context.Context, id string) ([]notify.Alert, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return append([]notify.Alert{}, s.alerts[id]...), nil
}

func (s *Store) ClaimMail(_ context.Context, now time.Time, lease time.Duration, limit int) ([]notify.OutboxMail, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []notify.OutboxMail{}
	for i := range s.outbox {
		m := &s.outbox[i]
		if len(out) == limit {
			break
		}
		if m.SentAt != nil || m.NextAttemptAt.After(now) {
			continue
		}
		m.NextAttemptAt = now.Add(lease)
		m.Attempts++
		out = append(out, *m)
	}
	return out, nil
}

func (s *Store) mail(id string) *notify.OutboxMail {
	for i := range s.outbox {
		if s.outbox[i].ID == id {
			return &s.outbox[i]
		}
	}
	return nil
}

func (s *Store) MarkMailSent(_ context.Context, id string, at time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.mail(id)
	if m == nil {
		return metering.ErrNotFound
	}
	if m.SentAt == nil {
		m.SentAt = &at
	}
	return nil
}

func (s *Store) RetryMail(_ context.Context, id string, next time.Time, lastErr string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.mail(id)
	if m == nil {
		return metering.ErrNotFound
	}
	m.NextAttemptAt, m.LastError = next, lastErr
	return nil
}

func (s *Store) Outbox(_ context.Context, id string) ([]notify.OutboxMail, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := []notify.OutboxMail{}
	for _, m := range s.outbox {
		if m.AccountID == id {
			m.SentAt = copyPtr(m.SentAt)
			out = append(out, m)
		}
	}
	return out, nil
}
