package memory

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/ledgerlane/platform/services/metering"
)

// payments is the memory Store's part behind metering.PaymentStore, guarded
// by the Store's mutex; its maps are made on first write.
type payments struct {
	methods  map[string]metering.PaymentMethod // by id
	payments map[string]metering.Payment       // by id
}

func (s *Store) AddPaymentMethod(_ context.Context, m metering.PaymentMethod) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.accounts[m.AccountID]; !ok {
		return metering.ErrNotFound
	}
	if s.pay.methods == nil {
		s.pay.methods = map[string]metering.PaymentMethod{}
	}
	if _, ok := s.pay.methods[m.ID]; ok {
		return metering.ErrConflict
	}
	if m.IsDefault {
		s.clearDefault(m.AccountID)
	}
	m.RemovedAt = copyPtr(m.RemovedAt)
	s.pay.methods[m.ID] = m
	return nil
}

func (s *Store) clearDefault(accountID string) {
	for id, o := range s.pay.methods {
		if o.AccountID == accountID && o.IsDefault {
			o.IsDefault = false
			s.pay.methods[id] = o
		}
	}
}

func (s *Store) PaymentMethods(_ context.Context, accountID string) ([]metering.PaymentMethod, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := []metering.PaymentMethod{}
	for _, m := range s.pay.methods {
		if m.AccountID == accountID && m.RemovedAt == nil {
			out = append(out, m)
		}
	}
	slices.SortFunc(out, func(a, b metering.PaymentMethod) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	return out, nil
}

func (s *Store) GetPaymentMethod(_ context.Context, id string) (metering.PaymentMethod, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	m, ok := s.pay.methods[id]
	if !ok {
		return metering.PaymentMethod{}, metering.ErrNotFound
	}
	m.RemovedAt = copyPtr(m.RemovedAt)
	return m, nil
}

func (s *Store) SetDefaultPaymentMethod(_ context.Context, accountID, methodID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.pay.methods[methodID]
	if !ok || m.AccountID != accountID || m.RemovedAt != nil {
		return metering.ErrNotFound
	}
	s.clearDefault(accountID)
	m.IsDefault = true
	s.pay.methods[methodID] = m
	return nil
}

func (s *Store) RemovePaymentMethod(_ context.Context, accountID, methodID string, at time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.pay.methods[methodID]
	if !ok || m.AccountID != accountID || m.RemovedAt != nil {
		return metering.ErrNotFound
	}
	m.IsDefault, m.RemovedAt = false, &at
	s.pay.methods[methodID] = m
	return nil
}

func (s *Store) CreatePayment(_ context.Context, p metering.Payment) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.accounts[p.AccountID]; !ok {
		return metering.ErrNotFound
	}
	if m, ok := s.pay.methods[p.MethodID]; !ok || m.AccountID != p.AccountID {
		return metering.ErrNotFound
	}
	if s.pay.payments == nil {
		s.pay.payments = map[string]metering.Payment{}
	}
	if _, ok := s.pay.payments[p.ID]; ok {
		return metering.ErrConflict
	}
	p.ResolvedAt = copyPtr(p.ResolvedAt)
	s.pay.payments[p.ID] = p
	return nil
}

func (s *Store) GetPayment(_ context.Context, id string) (metering.Payment, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	p, ok := s.pay.payments[id]
	if !ok {
		return metering.Payment{}, metering.ErrNotFound
	}
	p.ResolvedAt = copyPtr(p.ResolvedAt)
	return p, nil
}

func (s *Store) Payments(_ context.Context, accountID string) ([]metering.Payment, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := []metering.Payment{}
	for _, p := range s.pay.payments {
		if p.AccountID == accountID {
			p.ResolvedAt = copyPtr(p.ResolvedAt)
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b metering.Payment) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	return out, nil
}

func (s *Store) DuePayments(_ context.Context, now time.Time, limit int) ([]metering.Payment, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := []metering.Payment{}
	for _, p := range s.pay.payments {
		if p.State == metering.PaymentPending && !p.SettleBy.After(now) {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b metering.Payment) int {
		return cmp.Or(a.SettleBy.Compare(b.SettleBy), cmp.Compare(a.ID, b.ID))
	})
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

func (s *Store) ResolvePayment(_ context.Context, id, state, reason string, at time.Time) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.pay.payments[id]
	if !ok {
		return false, metering.ErrNotFound
	}
	if p.State != metering.PaymentPending {
		return false, nil
	}
	p.State, p.FailureReason, p.ResolvedAt = state, reason, &at
	s.pay.payments[id] = p
	return true, nil
}

func (s *Store) DelayPayment(_ context.Context, id string, settleBy time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.pay.payments[id]
	if !ok {
		return metering.ErrNotFound
	}
	if p.State != metering.PaymentPending {
		return metering.ErrConflict
	}
	p.SettleBy = settleBy
	s.pay.payments[id] = p
	return nil
}
