package billing

import (
	"context"
	"errors"
	"fmt"
	"github.com/ledgerlane/platform/services/metering"
	"slices"
	"strconv"
	"time"

	"github.com/google/uuid"
)

// Collecting an invoice (docs/billing.md, "Collecting an invoice"):
//
//   - An invoice is created collecting, due at once, and its closer makes
//     the first attempt; the billing tick of every replica makes the
//     attempts that are due (CollectDue).
//   - An attempt is claimed first, by a conditional update of the store
//     (attempt n only from n-1, only when due): one replica makes it. The
//     processor call carries the idempotency key "invoice:<id>:<n>", and the
//     payment's id derives from it.
//   - A transient processor error (unreachable, timed out) schedules the next
//     attempt with backoff; a refusal (ErrPaymentRefused), a declined card
//     or the last attempt failing records a failed payment, which puts the
//     account on Free limits and mails its people once.
//   - Without a default payment method (or processor) the invoice is open;
//     adding or choosing a default method collects it.

// Invoice collection states.
const (
	// CollectionOpen: nothing collected; waiting for a default payment method.
	CollectionOpen = "open"
	// CollectionCollecting: an attempt is due (NextAttemptAt), or the payment
	// started and is pending (PaymentID).
	CollectionCollecting = "collecting"
	// CollectionPaid: the payment settled, or nothing was owed.
	CollectionPaid = "paid"
	// CollectionFailed: the payment failed; a retry that settles pays it.
	CollectionFailed = "failed"
)

// InvoiceCollection is how collecting an invoice stands.
type InvoiceCollection struct {
	State string
	// Attempts is the number of processor calls claimed so far.
	Attempts int
	// NextAttemptAt: when the next attempt is due (collecting, not started);
	// while an attempt runs, the end of its lease.
	NextAttemptAt *time.Time
	// PaymentID is the payment the collection started (or the failed one
	// recorded); empty before.
	PaymentID string
	// LastError is the last transient processor error, for operators.
	LastError string
}

// ErrPaymentRefused, wrapped by a processor's Collect error, says that the
// processor will not collect the payment: no retry can succeed.
var ErrPaymentRefused = errors.New("the payment processor refused the payment")

// Retries of a transient processor error: the second attempt 5 minutes
// after the first, doubling up to 6 hours, and the 8th attempt is the last
// (about 10 hours in all), so an outage of the processor for part of a day
// does not fail every invoice closed during it.
const (
	CollectionBackoff     = 5 * time.Minute
	CollectionBackoffMax  = 6 * time.Hour
	MaxCollectionAttempts = 8
	// collectionLease holds a claimed attempt against other replicas while
	// the processor call runs; a replica that dies mid-call leaves the next
	// attempt due when it ends.
	collectionLease = 2 * time.Minute
)

// CollectionDelay is the wait after failed attempt n (1-based) before the
// next one.
func CollectionDelay(n int) time.Duration {
	d := CollectionBackoff
	for i := 1; i < n && d < CollectionBackoffMax; i++ {
		d *= 2
	}
	return min(d, CollectionBackoffMax)
}

// collectionNamespace derives payment ids from idempotency keys, so the
// same attempt can never be stored as two payments.
var collectionNamespace = uuid.MustParse("6f1c2a4e-3b7d-4c8e-9a51-0d2e7f4b8c39")

// CollectionKey is the idempotency key of attempt n of an invoice's
// collection.
func CollectionKey(invoiceID string, n int) string {
	return "invoice:" + invoiceID + ":" + strconv.Itoa(n)
}

// CollectDue makes every due attempt of invoice collections and answers how
// many it made. Any number of replicas may run it at once: each attempt is
// claimed by one.
func (s *Service) CollectDue(ctx context.Context) (int, error) {
	if s.processor == nil {
		return 0, nil
	}
	due, err := s.store.DueCollections(ctx, s.timestamp(), 200)
	if err != nil {
		return 0, fmt.Errorf("collect due: %w", err)
	}
	n := 0
	var errs []error
	for _, inv := range due {
		made, err := s.attemptCollection(ctx, inv)
		if err != nil {
			errs = append(errs, fmt.Errorf("invoice %s: %w", inv.ID, err))
		}
		if made {
			n++
		}
	}
	return n, errors.Join(errs...)
}

// collectOpenInvoices makes the account's open invoices due and collects
// them now (a default method was just added or chosen). Failures are
// logged: the billing tick retries what is due.
func (s *Service) collectOpenInvoices(ctx context.Context, accountID string) {
	if s.processor == nil {
		return
	}
	now := s.timestamp()
	n, err := s.store.ReopenCollections(ctx, accountID, now)
	if err != nil {
		s.log.WarnContext(ctx, "open invoices not collected", "account_id", accountID, "err", err)
		return
	}
	if n == 0 {
		return
	}
	invs, err := s.store.Invoices(ctx, accountID)
	if err != nil {
		s.log.WarnContext(ctx, "open invoices not collected", "account_id", accountID, "err", err)
		return
	}
	for _, inv := range invs {
		c := inv.Collection
		if c.State != CollectionCollecting || c.NextAttemptAt == nil || c.NextAttemptAt.After(now) {
			continue
		}
		if _, err := s.attemptCollection(ctx, inv); err != nil {
			s.log.WarnContext(ctx, "invoice not collected", "account_id", accountID, "invoice_id", inv.ID, "err", err)
		}
	}
}

// attemptCollection claims the invoice's next attempt and makes it. It
// answers false when another replica claimed it first (or it was not due).
func (s *Service) attemptCollection(ctx context.Context, inv Invoice) (bool, error) {
	now := s.timestamp()
	attempt := inv.Collection.Attempts + 1
	ok, err := s.store.ClaimCollection(ctx, inv.ID, attempt, now, now.Add(collectionLease))
	if err != nil || !ok {
		return false, err
	}
	record := func(c InvoiceCollection) error {
		if _, err := s.store.RecordCollection(ctx, inv.ID, attempt, c); err != nil {
			return fmt.Errorf("record collection: %w", err)
		}
		return nil
	}
	a, err := s.accounts.CurrentAccount(ctx, inv.AccountID)
	if err != nil {
		return true, err
	}
	owed, err := s.owed(ctx, inv)
	if err != nil {
		// The lease ends and the attempt after this one is due then.
		return true, err
	}
	if owed <= 0 {
		return true, record(InvoiceCollection{State: CollectionPaid, Attempts: attempt})
	}
	key := CollectionKey(inv.ID, attempt)
	p, err := s.collect(ctx, a, Payment{ID: uuid.NewSHA1(collectionNamespace, []byte(key)).String(), IdempotencyKey: key,
		Purpose: PurposeInvoice, InvoiceID: inv.ID, PeriodStart: inv.PeriodStart, AmountCents: owed})
	switch {
	case err == nil && p.ID == "":
		// No default method: the attempt does not count.
		s.log.InfoContext(ctx, "invoice open: no default payment method", "account_id", a.ID, "invoice_id", inv.ID)
		return true, record(InvoiceCollection{State: CollectionOpen, Attempts: attempt - 1})
	case err == nil:
		state := map[string]string{PaymentSettled: CollectionPaid, PaymentFailed: CollectionFailed}[p.State]
		if state == "" {
			state = CollectionCollecting
		}
		return true, record(InvoiceCollection{State: state, Attempts: attempt, PaymentID: p.ID})
	case p.MethodID == "":
		// Not a processor answer (the store failed before the call).
		return true, err
	case errors.Is(err, ErrPaymentRefused) || attempt >= MaxCollectionAttempts:
		reason := "the payment processor refused the payment"
		if !errors.Is(err, ErrPaymentRefused) {
			reason = fmt.Sprintf("the payment processor could not be reached in %d attempts", attempt)
		}
		s.log.WarnContext(ctx, "invoice collection failed", "account_id", a.ID, "invoice_id", inv.ID, "attempt", attempt, "err", err)
		p.State, p.FailureReason, p.ResolvedAt, p.SettleBy, p.CreatedAt = PaymentFailed, reason, &now, now, now
		if err := s.store.CreatePayment(ctx, p); err != nil && !errors.Is(err, metering.ErrConflict) {
			return true, fmt.Errorf("create payment: %w", err)
		}
		s.paymentRecorded(ctx, p)
		return true, record(InvoiceCollection{State: CollectionFailed, Attempts: attempt, PaymentID: p.ID, LastError: err.Error()})
	default:
		next := now.Add(CollectionDelay(attempt))
		s.log.WarnContext(ctx, "invoice collection will be retried", "account_id", a.ID, "invoice_id", inv.ID,
			"attempt", attempt, "next_attempt_at", next, "err", err)
		return true, record(InvoiceCollection{State: CollectionCollecting, Attempts: attempt, NextAttemptAt: &next, LastError: err.Error()})
	}
}

// owed is what an invoice still owes: its total less what the period's
// upgrades collected or are collecting, directly or by a retry of a failed
// upgrade payment (else the invoice and the retry would both collect the
// upgrade's charge).
func (s *Service) owed(ctx context.Context, inv Invoice) (int64, error) {
	prior, err := s.store.Payments(ctx, inv.AccountID)
	if err != nil {
		return 0, fmt.Errorf("payments: %w", err)
	}
	owed := inv.TotalCents
	for _, p := range prior {
		if root := retryRoot(prior, p); p.State != PaymentFailed && root.Purpose == PurposeUpgrade && root.PeriodStart.Equal(inv.PeriodStart) {
			owed -= p.AmountCents
		}
	}
	return owed, nil
}

// retryRoot is the payment p's chain of retries started from: p itself
// unless it is a retry.
func retryRoot(ps []Payment, p Payment) Payment {
	for range len(ps) { // a chain is never longer than the payments
		if p.RetryOf == "" {
			return p
		}
		i := slices.IndexFunc(ps, func(q Payment) bool { return q.ID == p.RetryOf })
		if i < 0 {
			return p
		}
		p = ps[i]
	}
	return p
}

// invoicePaymentResolved moves the invoice of a payment that settled or
// failed to paid or failed. A failure to record it is logged: the payment
// itself, which the standing follows, is recorded.
func (s *Service) invoicePaymentResolved(ctx context.Context, p Payment) {
	if p.InvoiceID == "" || !slices.Contains([]string{PurposeInvoice, PurposeRetry}, p.Purpose) {
		return
	}
	state := CollectionPaid
	if p.State == PaymentFailed {
		state = CollectionFailed
	}
	if _, err := s.store.ResolveCollection(ctx, p.InvoiceID, p.ID, state); err != nil {
		s.log.WarnContext(ctx, "invoice collection state not recorded", "invoice_id", p.InvoiceID, "payment_id", p.ID, "err", err)
	}
}
