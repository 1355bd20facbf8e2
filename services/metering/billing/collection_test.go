package billing_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/quick"
	"time"

	"github.com/ledgerlane/platform/services/metering"
	"github.com/ledgerlane/platform/services/metering/billing"
	"github.com/ledgerlane/platform/services/metering/notify"
	"github.com/ledgerlane/platform/services/metering/sandboxpay"
)

var errUnreachable = errors.New("dial tcp 203.0.113.1:443: connection refused")

// flakyProcessor is the sandbox, except that its Collect answers the errors
// in fail first; it records every idempotency key it is given.
type flakyProcessor struct {
	*sandboxpay.Processor
	mu   sync.Mutex
	fail []error
	keys []string
}

func (f *flakyProcessor) Collect(ctx context.Context, m billing.PaymentMethod, p billing.Payment) (billing.Collection, error) {
	f.mu.Lock()
	f.keys = append(f.keys, p.IdempotencyKey)
	if len(f.fail) > 0 {
		err := f.fail[0]
		f.fail = f.fail[1:]
		f.mu.Unlock()
		return billing.Collection{}, err
	}
	f.mu.Unlock()
	return f.Processor.Collect(ctx, m, p)
}

func (e *billingEnv) collection(id string) (billing.Invoice, []billing.Payment) {
	e.t.Helper()
	invs, err := e.svc.Invoices(e.t.Context(), id)
	if err != nil || len(invs) != 1 {
		e.t.Fatalf("invoices %+v %v", invs, err)
	}
	return invs[0], e.payments(id)
}

func (e *billingEnv) failureMails(id string) int {
	e.t.Helper()
	mails, err := e.nt.Outbox(e.t.Context(), id)
	if err != nil {
		e.t.Fatal(err)
	}
	n := 0
	for _, m := range mails {
		if strings.HasPrefix(m.Milestone, notify.MilestonePaymentFailed) {
			n++
		}
	}
	return n
}

// TestInvoiceCollection: the first attempt at the close, then the billing
// tick's retries on a moved clock, for each way the processor answers.
func TestInvoiceCollection(t *testing.T) {
	refused := fmt.Errorf("mandate cancelled: %w", billing.ErrPaymentRefused)
	many := func(n int) []error {
		out := make([]error, n)
		for i := range out {
			out[i] = errUnreachable
		}
		return out
	}
	tests := []struct {
		name      string
		fail      []error
		last4     string
		attempts  int    // processor calls in all
		state     string // the invoice's collection at the end
		payment   string // the one payment's state ("" none)
		standing  string
		mailsSent int
	}{
		// The account's first direct debit: introductory limits while it settles.
		{"accepted at once", nil, "6789", 1, billing.CollectionCollecting, billing.PaymentPending, metering.PaymentSettling, 0},
		{"unreachable, then accepted", many(2), "6789", 3, billing.CollectionCollecting, billing.PaymentPending, metering.PaymentSettling, 0},
		{"refused", []error{refused}, "6789", 1, billing.CollectionFailed, metering.PaymentFailed, metering.PaymentFailed, 1},
		{"unreachable, then refused", []error{errUnreachable, refused}, "6789", 2, billing.CollectionFailed, metering.PaymentFailed, metering.PaymentFailed, 1},
		{"unreachable every time", many(billing.MaxCollectionAttempts + 2), "6789", billing.MaxCollectionAttempts, billing.CollectionFailed, metering.PaymentFailed, metering.PaymentFailed, 1},
		{"declined by the bank on its date", nil, sandboxpay.FailSuffix, 1, billing.CollectionCollecting, billing.PaymentPending, metering.PaymentSettling, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			e := newBillingEnv(t)
			proc := &flakyProcessor{Processor: sandboxpay.New(), fail: tc.fail}
			e.svc = e.service(e.store, proc)
			e.clock.Set(thursday)
			a := e.account(metering.PlanStarter)
			if _, err := e.ids.AddPortalUser(ctx, a.ID, "ann@example.com", "Ann"); err != nil {
				t.Fatal(err)
			}
			e.addMethod(a.ID, ach(tc.last4))
			closed := thursday.AddDate(0, 1, 1)
			e.clock.Set(closed)
			invs, err := e.svc.ClosePeriods(ctx, a.ID)
			if err != nil || len(invs) != 1 {
				t.Fatalf("close: %+v %v", invs, err)
			}
			// A second replica's tick, at the same moment, makes no attempt.
			other := e.service(e.store, proc)
			if n, err := other.CollectDue(ctx); n != 0 || err != nil {
				t.Fatalf("second replica made %d attempts (%v)", n, err)
			}
			// The retries: each due at its backoff, none before.
			now := closed
			for attempt := 1; ; attempt++ {
				inv, _ := e.collection(a.ID)
				if inv.Collection.NextAttemptAt == nil {
					break
				}
				next := now.Add(billing.CollectionDelay(attempt))
				if !inv.Collection.NextAttemptAt.Equal(next) || inv.Collection.Attempts != attempt || inv.Collection.LastError == "" {
					t.Fatalf("after attempt %d: %+v, want next at %s", attempt, inv.Collection, next)
				}
				e.clock.Set(next.Add(-time.Second))
				if n, _ := e.svc.CollectDue(ctx); n != 0 {
					t.Fatalf("attempt %d made before its time", attempt+1)
				}
				now = next
				e.clock.Set(now)
				if n, _ := other.CollectDue(ctx); n != 1 {
					t.Fatalf("attempt %d not made when due", attempt+1)
				}
			}
			inv, ps := e.collection(a.ID)
			if len(proc.keys) != tc.attempts {
				t.Fatalf("%d processor calls, want %d: %v", len(proc.keys), tc.attempts, proc.keys)
			}
			for i, k := range proc.keys {
				if want := billing.CollectionKey(inv.ID, i+1); k != want {
					t.Fatalf("call %d key %q, want %q", i+1, k, want)
				}
			}
			if inv.Collection.State != tc.state || inv.Collection.Attempts != tc.attempts {
				t.Fatalf("collection %+v, want %s after %d attempts", inv.Collection, tc.state, tc.attempts)
			}
			if len(ps) != 1 || ps[0].State != tc.payment || ps[0].InvoiceID != inv.ID || ps[0].AmountCents != inv.TotalCents ||
				inv.Collection.PaymentID != ps[0].ID {
				t.Fatalf("payments %+v, collection %+v", ps, inv.Collection)
			}
			if u := e.usage(a.ID); u.PaymentState != tc.standing {
				t.Fatalf("payment_state %s, want %s", u.PaymentState, tc.standing)
			}
			if n := e.failureMails(a.ID); n != tc.mailsSent {
				t.Fatalf("%d failure mails, want %d", n, tc.mailsSent)
			}
			// The payment's outcome on its date moves the invoice.
			if tc.payment == billing.PaymentPending {
				e.clock.Set(now.AddDate(0, 0, 10))
				e.settle(e.svc)
				inv, ps = e.collection(a.ID)
				want := billing.CollectionPaid
				if tc.last4 == sandboxpay.FailSuffix {
					want = billing.CollectionFailed
				}
				if inv.Collection.State != want {
					t.Fatalf("after settlement %+v (payment %+v), want %s", inv.Collection, ps[0], want)
				}
				if want == billing.CollectionFailed && e.failureMails(a.ID) != 1 {
					t.Fatalf("%d failure mails after the debit failed, want 1", e.failureMails(a.ID))
				}
			}
		})
	}
}

// TestFailedInvoicePaidByRetry: a retry of the failed invoice payment that
// settles pays the invoice and lifts the Free limits.
func TestFailedInvoicePaidByRetry(t *testing.T) {
	ctx := t.Context()
	e := newBillingEnv(t)
	e.svc = e.service(e.store, &flakyProcessor{Processor: sandboxpay.New(), fail: []error{billing.ErrPaymentRefused}})
	e.clock.Set(thursday)
	a := e.account(metering.PlanStarter)
	e.addMethod(a.ID, billing.MethodDetails{Type: "card", HolderName: "A", CardNumber: sandboxCard(t, "4242"), ExpMonth: 1, ExpYear: 2030})
	e.clock.Set(thursday.AddDate(0, 1, 1))
	if _, err := e.svc.ClosePeriods(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	inv, ps := e.collection(a.ID)
	if inv.Collection.State != billing.CollectionFailed || e.usage(a.ID).PaymentState != metering.PaymentFailed {
		t.Fatalf("collection %+v", inv.Collection)
	}
	e.clock.Set(thursday.AddDate(0, 1, 2))
	if _, err := e.svc.RetryPayment(ctx, a.ID, ps[0].ID); err != nil {
		t.Fatal(err)
	}
	inv, _ = e.collection(a.ID)
	if inv.Collection.State != billing.CollectionPaid || e.usage(a.ID).PaymentState != metering.PaymentOK {
		t.Fatalf("after the retry settled: %+v", inv.Collection)
	}
}

// TestOpenInvoiceCollectedWhenMethodAdded: an invoice that closes without a
// default payment method is open, the tick leaves it alone, and adding a
// method collects it at once.
func TestOpenInvoiceCollectedWhenMethodAdded(t *testing.T) {
	ctx := t.Context()
	e := newBillingEnv(t)
	proc := &flakyProcessor{Processor: sandboxpay.New()}
	e.svc = e.service(e.store, proc)
	e.clock.Set(thursday)
	a := e.account(metering.PlanStarter)
	e.clock.Set(thursday.AddDate(0, 1, 1))
	if _, err := e.svc.ClosePeriods(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	inv, ps := e.collection(a.ID)
	if inv.Collection.State != billing.CollectionOpen || inv.Collection.Attempts != 0 || inv.Collection.NextAttemptAt != nil || len(ps) != 0 {
		t.Fatalf("without a method: %+v, payments %+v", inv.Collection, ps)
	}
	e.clock.Set(thursday.AddDate(0, 2, 0))
	if n, err := e.svc.CollectDue(ctx); n != 0 || err != nil {
		t.Fatalf("tick collected an open invoice: %d %v", n, err)
	}
	e.addMethod(a.ID, ach("6789"))
	inv, ps = e.collection(a.ID)
	if inv.Collection.State != billing.CollectionCollecting || inv.Collection.Attempts != 1 || len(ps) != 1 ||
		ps[0].AmountCents != inv.TotalCents || !ps[0].FirstDebit || len(proc.keys) != 1 {
		t.Fatalf("after adding a method: %+v, payments %+v", inv.Collection, ps)
	}
}

// TestCollectionDelay: the backoff starts at CollectionBackoff, never
// shrinks from one attempt to the next and never exceeds the maximum.
func TestCollectionDelay(t *testing.T) {
	if d := billing.CollectionDelay(1); d != billing.CollectionBackoff {
		t.Fatalf("first delay %s", d)
	}
	prop := func(n uint8) bool {
		a, b := billing.CollectionDelay(int(n)+1), billing.CollectionDelay(int(n)+2)
		return a <= b && b <= billing.CollectionBackoffMax && a >= billing.CollectionBackoff
	}
	if err := quick.Check(prop, nil); err != nil {
		t.Fatal(err)
	}
}
