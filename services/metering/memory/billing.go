package memory

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/ledgerlane/platform/services/metering"
)

// billing is the memory Store's part behind metering.BillingStore; the
// Store's mutex guards it.
type billing struct {
	planChanges  map[string][]metering.PlanChange // by account, canceled ones too
	limitChanges map[string][]metering.LimitChange
	invoices     map[string][]metering.Invoice // by account, oldest first
}

func newBilling() billing {
	return billing{
		planChanges:  map[string][]metering.PlanChange{},
		limitChanges: map[string][]metering.LimitChange{},
		invoices:     map[string][]metering.Invoice{},
	}
}

func copyPtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

func (s *Store) AccountsDueForClose(_ context.Context, due time.Time, afterID string, limit int) ([]string, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []string
	for id, a := range s.accounts {
		if id > afterID && (a.NextCloseAt == nil || !a.NextCloseAt.After(due)) {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out[:min(len(out), limit)], nil
}

func (s *Store) SetNextClose(_ context.Context, id string, at time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.accounts[id]
	if !ok {
		return metering.ErrNotFound
	}
	a.NextCloseAt = &at
	s.accounts[id] = a
	return nil
}

// cancelScheduled cancels the account's pending downgrade rows at at.
func (s *Store) cancelScheduled(id string, at time.Time) {
	for i, c := range s.planChanges[id] {
		if c.Kind == metering.ChangeDowngrade && c.CanceledAt == nil && c.EffectiveAt.After(at) {
			s.planChanges[id][i].CanceledAt = &at
		}
	}
}

func (s *Store) Upgrade(_ context.Context, ch metering.PlanChange, anchor time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.accounts[ch.AccountID]
	switch {
	case !ok:
		return metering.ErrNotFound
	case a.PlanID != ch.FromPlan:
		return metering.ErrConflict
	}
	a.PlanID, a.BillingAnchor, a.ScheduledPlanID, a.ScheduledAt = ch.ToPlan, anchor, "", nil
	s.accounts[a.ID] = a
	s.cancelScheduled(a.ID, ch.RequestedAt)
	s.planChanges[a.ID] = append(s.planChanges[a.ID], ch)
	return nil
}

func (s *Store) ScheduleDowngrade(_ context.Context, ch metering.PlanChange) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.accounts[ch.AccountID]
	switch {
	case !ok:
		return metering.ErrNotFound
	case a.PlanID != ch.FromPlan:
		return metering.ErrConflict
	}
	at := ch.EffectiveAt
	a.ScheduledPlanID, a.ScheduledAt = ch.ToPlan, &at
	s.accounts[a.ID] = a
	s.cancelScheduled(a.ID, ch.RequestedAt)
	s.planChanges[a.ID] = append(s.planChanges[a.ID], ch)
	return nil
}

func (s *Store) CancelDowngrade(_ context.Context, id string, at time.Time) (metering.PlanChange, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.accounts[id]
	if !ok || a.ScheduledAt == nil || !a.ScheduledAt.After(at) {
		return metering.PlanChange{}, metering.ErrNotFound
	}
	var out metering.PlanChange
	for i, c := range s.planChanges[id] {
		if c.Kind == metering.ChangeDowngrade && c.CanceledAt == nil && c.EffectiveAt.After(at) {
			s.planChanges[id][i].CanceledAt = &at
			out = s.planChanges[id][i]
			out.CanceledAt = copyPtr(out.CanceledAt)
		}
	}
	a.ScheduledPlanID, a.ScheduledAt = "", nil
	s.accounts[id] = a
	return out, nil
}

func (s *Store) ApplyDowngrade(_ context.Context, id string, now time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.accounts[id]
	if !ok {
		return metering.ErrNotFound
	}
	if a.ScheduledAt != nil && !now.Before(*a.ScheduledAt) {
		a.PlanID, a.ScheduledPlanID, a.ScheduledAt = a.ScheduledPlanID, "", nil
		s.accounts[id] = a
	}
	return nil
}

func (s *Store) PlanChanges(_ context.Context, id string) ([]metering.PlanChange, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := []metering.PlanChange{}
	for _, c := range s.planChanges[id] {
		if c.CanceledAt == nil {
			out = append(out, c)
		}
	}
	slices.SortStableFunc(out, func(a, b metering.PlanChange) int {
		return cmp.Or(a.EffectiveAt.Compare(b.EffectiveAt), a.RequestedAt.Compare(b.RequestedAt))
	})
	return out, nil
}

func (s *Store) LimitChanges(_ context.Context, id string) ([]metering.LimitChange, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := []metering.LimitChange{}
	for _, l := range s.limitChanges[id] {
		l.OverageCapCents = copyPtr(l.OverageCapCents)
		out = append(out, l)
	}
	return out, nil
}

func (s *Store) GrantCredit(_ context.Context, id string, cents int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.accounts[id]
	if !ok {
		return metering.ErrNotFound
	}
	a.CreditCents += cents
	s.accounts[id] = a
	return nil
}

func cloneInvoice(inv metering.Invoice) metering.Invoice {
	inv.Lines = slices.Clone(inv.Lines)
	inv.OverageCapCents = copyPtr(inv.OverageCapCents)
	inv.Collection.NextAttemptAt = copyPtr(inv.Collection.NextAttemptAt)
	return inv
}

func (s *Store) CreateInvoice(_ context.Context, inv metering.Invoice) (metering.Invoice, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.accounts[inv.AccountID]
	if !ok {
		return metering.Invoice{}, false, metering.ErrNotFound
	}
	for _, e := range s.invoices[a.ID] {
		if e.PeriodStart.Equal(inv.PeriodStart) {
			return cloneInvoice(e), false, nil
		}
	}
	inv = cloneInvoice(inv)
	if inv.Collection.State == "" {
		inv.Collection.State = metering.CollectionOpen
	}
	inv.CreditCents = min(a.CreditCents, max(0, inv.SubtotalCents))
	inv.TotalCents = inv.SubtotalCents - inv.CreditCents
	a.CreditCents -= inv.CreditCents
	s.accounts[a.ID] = a
	s.invoices[a.ID] = append(s.invoices[a.ID], inv)
	slices.SortFunc(s.invoices[a.ID], func(x, y metering.Invoice) int { return x.PeriodStart.Compare(y.PeriodStart) })
	return cloneInvoice(inv), true, nil
}

func (s *Store) Invoices(_ context.Context, id string) ([]metering.Invoice, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := []metering.Invoice{}
	for _, inv := range s.invoices[id] {
		out = append(out, cloneInvoice(inv))
	}
	return out, nil
}
