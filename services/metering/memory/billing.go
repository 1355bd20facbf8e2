package memory

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/ledgerlane/platform/pkg/memtable"
	"github.com/ledgerlane/platform/services/metering"
	"github.com/ledgerlane/platform/services/metering/billing"
)

// The Store's part behind billing.Store: plan changes, the limits history,
// credit, invoices and their collection, payment methods and payments.

// billingState is the memory Store's part behind billing.BillingStore;
// the Store's mutex guards it.
type billingState struct {
	planChanges  map[string][]billing.PlanChange // by account, canceled ones too
	limitChanges map[string][]billing.LimitChange
	invoices     map[string][]billing.Invoice // by account, oldest first
}

func newBillingState() billingState {
	return billingState{
		planChanges:  map[string][]billing.PlanChange{},
		limitChanges: map[string][]billing.LimitChange{},
		invoices:     map[string][]billing.Invoice{},
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
	return s.updateAccount(id, func(a *metering.Account) error {
		a.NextCloseAt = &at
		return nil
	})
}

// cancelScheduled cancels the account's pending downgrade rows at at.
func (s *Store) cancelScheduled(id string, at time.Time) {
	for i, c := range s.planChanges[id] {
		if c.Kind == billing.ChangeDowngrade && c.CanceledAt == nil && c.EffectiveAt.After(at) {
			s.planChanges[id][i].CanceledAt = &at
		}
	}
}

func (s *Store) Upgrade(_ context.Context, ch billing.PlanChange, anchor time.Time) error {
	return s.changePlan(ch, func(a *metering.Account) {
		a.PlanID, a.BillingAnchor, a.ScheduledPlanID, a.ScheduledAt = ch.ToPlan, anchor, "", nil
	})
}

func (s *Store) ScheduleDowngrade(_ context.Context, ch billing.PlanChange) error {
	return s.changePlan(ch, func(a *metering.Account) {
		at := ch.EffectiveAt
		a.ScheduledPlanID, a.ScheduledAt = ch.ToPlan, &at
	})
}

// changePlan records plan change ch, applying apply to its account, if the
// account is still on ch.FromPlan (else metering.ErrConflict); the change
// cancels any pending downgrade.
func (s *Store) changePlan(ch billing.PlanChange, apply func(*metering.Account)) error {
	return s.updateAccount(ch.AccountID, func(a *metering.Account) error {
		if a.PlanID != ch.FromPlan {
			return metering.ErrConflict
		}
		apply(a)
		s.cancelScheduled(a.ID, ch.RequestedAt)
		s.planChanges[a.ID] = append(s.planChanges[a.ID], ch)
		return nil
	})
}

func (s *Store) CancelDowngrade(_ context.Context, id string, at time.Time) (billing.PlanChange, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.accounts[id]
	if !ok || a.ScheduledAt == nil || !a.ScheduledAt.After(at) {
		return billing.PlanChange{}, metering.ErrNotFound
	}
	var out billing.PlanChange
	for i, c := range s.planChanges[id] {
		if c.Kind == billing.ChangeDowngrade && c.CanceledAt == nil && c.EffectiveAt.After(at) {
			s.planChanges[id][i].CanceledAt = &at
			out = s.planChanges[id][i]
			out.CanceledAt = copyPtr(out.CanceledAt)
		}
	}
	a.ScheduledPlanID, a.ScheduledAt = "", nil
	s.accounts[id] = a
	return out, nil
}

func (s *Store) PlanChanges(_ context.Context, id string) ([]billing.PlanChange, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := []billing.PlanChange{}
	for _, c := range s.planChanges[id] {
		if c.CanceledAt == nil {
			out = append(out, c)
		}
	}
	slices.SortStableFunc(out, func(a, b billing.PlanChange) int {
		return cmp.Or(a.EffectiveAt.Compare(b.EffectiveAt), a.RequestedAt.Compare(b.RequestedAt))
	})
	return out, nil
}

func (s *Store) LimitChanges(_ context.Context, id string) ([]billing.LimitChange, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := []billing.LimitChange{}
	for _, l := range s.limitChanges[id] {
		l.OverageCapCents = copyPtr(l.OverageCapCents)
		out = append(out, l)
	}
	return out, nil
}

func (s *Store) GrantCredit(_ context.Context, id string, cents int64) error {
	return s.updateAccount(id, func(a *metering.Account) error {
		a.CreditCents += cents
		return nil
	})
}

func cloneInvoice(inv billing.Invoice) billing.Invoice {
	inv.Lines = slices.Clone(inv.Lines)
	inv.OverageCapCents = copyPtr(inv.OverageCapCents)
	inv.Collection.NextAttemptAt = copyPtr(inv.Collection.NextAttemptAt)
	return inv
}

func (s *Store) CreateInvoice(_ context.Context, inv billing.Invoice) (billing.Invoice, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.accounts[inv.AccountID]
	if !ok {
		return billing.Invoice{}, false, metering.ErrNotFound
	}
	for _, e := range s.invoices[a.ID] {
		if e.PeriodStart.Equal(inv.PeriodStart) {
			return cloneInvoice(e), false, nil
		}
	}
	inv = cloneInvoice(inv)
	if inv.Collection.State == "" {
		inv.Collection.State = billing.CollectionOpen
	}
	inv.CreditCents = min(a.CreditCents, max(0, inv.SubtotalCents))
	inv.TotalCents = inv.SubtotalCents - inv.CreditCents
	a.CreditCents -= inv.CreditCents
	s.accounts[a.ID] = a
	s.invoices[a.ID] = append(s.invoices[a.ID], inv)
	slices.SortFunc(s.invoices[a.ID], func(x, y billing.Invoice) int { return x.PeriodStart.Compare(y.PeriodStart) })
	return cloneInvoice(inv), true, nil
}

func (s *Store) Invoices(_ context.Context, id string) ([]billing.Invoice, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := []billing.Invoice{}
	for _, inv := range s.invoices[id] {
		out = append(out, cloneInvoice(inv))
	}
	return out, nil
}

// invoice returns a pointer to the stored invoice id, or nil; the caller
// holds the mutex.
func (s *Store) invoice(id string) *billing.Invoice {
	for _, invs := range s.invoices {
		for i := range invs {
			if invs[i].ID == id {
				return &invs[i]
			}
		}
	}
	return nil
}

func (s *Store) ClaimCollection(_ context.Context, invoiceID string, attempt int, now, leaseUntil time.Time) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	inv := s.invoice(invoiceID)
	if inv == nil {
		return false, metering.ErrNotFound
	}
	c := &inv.Collection
	if c.State != billing.CollectionCollecting || c.Attempts != attempt-1 || c.NextAttemptAt == nil || c.NextAttemptAt.After(now) {
		return false, nil
	}
	c.Attempts, c.NextAttemptAt = attempt, &leaseUntil
	return true, nil
}

func (s *Store) RecordCollection(_ context.Context, invoiceID string, attempt int, c billing.InvoiceCollection) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	inv := s.invoice(invoiceID)
	if inv == nil {
		return false, metering.ErrNotFound
	}
	if inv.Collection.State != billing.CollectionCollecting || inv.Collection.Attempts != attempt {
		return false, nil
	}
	c.NextAttemptAt = copyPtr(c.NextAttemptAt)
	inv.Collection = c
	return true, nil
}

func (s *Store) DueCollections(_ context.Context, now time.Time, limit int) ([]billing.Invoice, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := []billing.Invoice{}
	for _, invs := range s.invoices {
		for _, inv := range invs {
			c := inv.Collection
			if c.State == billing.CollectionCollecting && c.NextAttemptAt != nil && !c.NextAttemptAt.After(now) {
				out = append(out, cloneInvoice(inv))
			}
		}
	}
	slices.SortFunc(out, func(a, b billing.Invoice) int {
		return cmp.Or(a.Collection.NextAttemptAt.Compare(*b.Collection.NextAttemptAt), cmp.Compare(a.ID, b.ID))
	})
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

func (s *Store) ReopenCollections(_ context.Context, accountID string, now time.Time) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for i := range s.invoices[accountID] {
		c := &s.invoices[accountID][i].Collection
		if c.State == billing.CollectionOpen {
			at := now
			c.State, c.NextAttemptAt = billing.CollectionCollecting, &at
			n++
		}
	}
	return n, nil
}

func (s *Store) ResolveCollection(_ context.Context, invoiceID, paymentID, state string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	inv := s.invoice(invoiceID)
	if inv == nil {
		return false, metering.ErrNotFound
	}
	c := &inv.Collection
	switch {
	case state == billing.CollectionPaid && (c.State == billing.CollectionCollecting || c.State == billing.CollectionFailed):
	case state == billing.CollectionFailed && c.State == billing.CollectionCollecting && c.PaymentID == paymentID:
	default:
		return false, nil
	}
	c.State, c.PaymentID, c.NextAttemptAt = state, paymentID, nil
	return true, nil
}

// payments is the memory Store's part behind billing.PaymentStore, guarded
// by the Store's mutex; its maps are made on first write.
type payments struct {
	methods  map[string]billing.PaymentMethod // by id
	payments map[string]billing.Payment       // by id
}

func (s *Store) AddPaymentMethod(_ context.Context, m billing.PaymentMethod) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.accounts[m.AccountID]; !ok {
		return metering.ErrNotFound
	}
	if s.pay.methods == nil {
		s.pay.methods = map[string]billing.PaymentMethod{}
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

func (s *Store) PaymentMethods(_ context.Context, accountID string) ([]billing.PaymentMethod, error) {
	return memtable.Collect(&s.mu, &s.pay.methods, func(m billing.PaymentMethod) bool {
		return m.AccountID == accountID && m.RemovedAt == nil
	}, memtable.Same, func(a, b billing.PaymentMethod) int { return createdOrder(a.CreatedAt, a.ID, b.CreatedAt, b.ID) }), nil
}

func (s *Store) GetPaymentMethod(_ context.Context, id string) (billing.PaymentMethod, error) {
	m, ok := memtable.Find(&s.mu, &s.pay.methods, id, memtable.AnyOwner[billing.PaymentMethod])
	if !ok {
		return billing.PaymentMethod{}, metering.ErrNotFound
	}
	m.RemovedAt = copyPtr(m.RemovedAt)
	return m, nil
}

// liveMethod is the account's method id unless removed; the caller holds
// the mutex.
func (s *Store) liveMethod(accountID, methodID string) (billing.PaymentMethod, error) {
	m, ok := s.pay.methods[methodID]
	if !ok || m.AccountID != accountID || m.RemovedAt != nil {
		return billing.PaymentMethod{}, metering.ErrNotFound
	}
	return m, nil
}

func (s *Store) SetDefaultPaymentMethod(_ context.Context, accountID, methodID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, err := s.liveMethod(accountID, methodID)
	if err != nil {
		return err
	}
	s.clearDefault(accountID)
	m.IsDefault = true
	s.pay.methods[methodID] = m
	return nil
}

func (s *Store) RemovePaymentMethod(_ context.Context, accountID, methodID string, at time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, err := s.liveMethod(accountID, methodID)
	if err != nil {
		return err
	}
	m.IsDefault, m.RemovedAt = false, &at
	s.pay.methods[methodID] = m
	return nil
}

func (s *Store) CreatePayment(_ context.Context, p billing.Payment) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.accounts[p.AccountID]; !ok {
		return metering.ErrNotFound
	}
	if m, ok := s.pay.methods[p.MethodID]; !ok || m.AccountID != p.AccountID {
		return metering.ErrNotFound
	}
	if s.pay.payments == nil {
		s.pay.payments = map[string]billing.Payment{}
	}
	if _, ok := s.pay.payments[p.ID]; ok {
		return metering.ErrConflict
	}
	s.pay.payments[p.ID] = clonePayment(p)
	return nil
}

func (s *Store) GetPayment(_ context.Context, id string) (billing.Payment, error) {
	p, ok := memtable.Find(&s.mu, &s.pay.payments, id, memtable.AnyOwner[billing.Payment])
	if !ok {
		return billing.Payment{}, metering.ErrNotFound
	}
	return clonePayment(p), nil
}

func (s *Store) Payments(_ context.Context, accountID string) ([]billing.Payment, error) {
	return memtable.Collect(&s.mu, &s.pay.payments, func(p billing.Payment) bool { return p.AccountID == accountID },
		clonePayment, func(a, b billing.Payment) int { return createdOrder(a.CreatedAt, a.ID, b.CreatedAt, b.ID) }), nil
}

func (s *Store) DuePayments(_ context.Context, now time.Time, limit int) ([]billing.Payment, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := []billing.Payment{}
	for _, p := range s.pay.payments {
		if p.State == billing.PaymentPending && !p.SettleBy.After(now) {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b billing.Payment) int {
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
	if p.State != billing.PaymentPending {
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
	if p.State != billing.PaymentPending {
		return metering.ErrConflict
	}
	p.SettleBy = settleBy
	s.pay.payments[id] = p
	return nil
}
