package memory

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/ledgerlane/platform/services/metering"
)

// invoice returns a pointer to the stored invoice id, or nil; the caller
// holds the mutex.
func (s *Store) invoice(id string) *metering.Invoice {
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
	if c.State != metering.CollectionCollecting || c.Attempts != attempt-1 || c.NextAttemptAt == nil || c.NextAttemptAt.After(now) {
		return false, nil
	}
	c.Attempts, c.NextAttemptAt = attempt, &leaseUntil
	return true, nil
}

func (s *Store) RecordCollection(_ context.Context, invoiceID string, attempt int, c metering.InvoiceCollection) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	inv := s.invoice(invoiceID)
	if inv == nil {
		return false, metering.ErrNotFound
	}
	if inv.Collection.State != metering.CollectionCollecting || inv.Collection.Attempts != attempt {
		return false, nil
	}
	c.NextAttemptAt = copyPtr(c.NextAttemptAt)
	inv.Collection = c
	return true, nil
}

func (s *Store) DueCollections(_ context.Context, now time.Time, limit int) ([]metering.Invoice, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := []metering.Invoice{}
	for _, invs := range s.invoices {
		for _, inv := range invs {
			c := inv.Collection
			if c.State == metering.CollectionCollecting && c.NextAttemptAt != nil && !c.NextAttemptAt.After(now) {
				out = append(out, cloneInvoice(inv))
			}
		}
	}
	slices.SortFunc(out, func(a, b metering.Invoice) int {
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
		if c.State == metering.CollectionOpen {
			at := now
			c.State, c.NextAttemptAt = metering.CollectionCollecting, &at
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
	case state == metering.CollectionPaid && (c.State == metering.CollectionCollecting || c.State == metering.CollectionFailed):
	case state == metering.CollectionFailed && c.State == metering.CollectionCollecting && c.PaymentID == paymentID:
	default:
		return false, nil
	}
	c.State, c.PaymentID, c.NextAttemptAt = state, paymentID, nil
	return true, nil
}
