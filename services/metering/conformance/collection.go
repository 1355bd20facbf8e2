package conformance

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/ledgerlane/platform/services/metering"
	"github.com/ledgerlane/platform/services/metering/billing"
)

// dueInvoice is an invoice of a whose collection is due at at.
func dueInvoice(a metering.Account, start, at time.Time) billing.Invoice {
	inv := newInvoice(a, start, 2900)
	inv.Collection = billing.InvoiceCollection{State: billing.CollectionCollecting, NextAttemptAt: &at}
	return inv
}

func mustCreateInvoice(t *testing.T, s Store, inv billing.Invoice) billing.Invoice {
	t.Helper()
	got, created, err := s.CreateInvoice(t.Context(), inv)
	if err != nil || !created {
		t.Fatalf("CreateInvoice = %v, %v", created, err)
	}
	return got
}

func collectionOf(t *testing.T, s Store, accountID, invoiceID string) billing.InvoiceCollection {
	t.Helper()
	invs, err := s.Invoices(t.Context(), accountID)
	if err != nil {
		t.Fatal(err)
	}
	for _, inv := range invs {
		if inv.ID == invoiceID {
			return inv.Collection
		}
	}
	t.Fatalf("no invoice %s", invoiceID)
	return billing.InvoiceCollection{}
}

func dueIDs(t *testing.T, s Store, now time.Time) []string {
	t.Helper()
	invs, err := s.DueCollections(t.Context(), now, 10)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, inv := range invs {
		ids = append(ids, inv.ID)
	}
	return ids
}

// testInvoiceCollection: an attempt is claimed only when due and from the
// attempt before it, recorded only by its claimer; a payment's outcome
// moves the invoice; open invoices reopen once.
func testInvoiceCollection(t *testing.T, newStore func(t *testing.T) Store) {
	ctx := t.Context()
	s := newStore(t)
	a := newAccount("a")
	mustCreateAccount(t, s, a)
	m := method(a, billing.MethodDirectDebit, billing.SchemeACH, "6789", t0, true)
	if err := s.AddPaymentMethod(ctx, m); err != nil {
		t.Fatal(err)
	}
	inv := mustCreateInvoice(t, s, dueInvoice(a, t0, t0))
	lease := t0.Add(2 * time.Minute)

	if ids := dueIDs(t, s, t0.Add(-time.Second)); len(ids) != 0 {
		t.Fatalf("due before its time: %v", ids)
	}
	if ids := dueIDs(t, s, t0); len(ids) != 1 || ids[0] != inv.ID {
		t.Fatalf("due at its time: %v", ids)
	}
	claim := func(attempt int, now time.Time, want bool) {
		t.Helper()
		ok, err := s.ClaimCollection(ctx, inv.ID, attempt, now, now.Add(2*time.Minute))
		if err != nil || ok != want {
			t.Fatalf("ClaimCollection(attempt %d at %s) = %v, %v; want %v", attempt, now, ok, err, want)
		}
	}
	record := func(attempt int, c billing.InvoiceCollection, want bool) {
		t.Helper()
		ok, err := s.RecordCollection(ctx, inv.ID, attempt, c)
		if err != nil || ok != want {
			t.Fatalf("RecordCollection(attempt %d) = %v, %v; want %v", attempt, ok, err, want)
		}
	}
	claim(2, t0, false) // not the attempt after the last
	claim(1, t0, true)
	claim(1, t0, false) // claimed
	if ids := dueIDs(t, s, t0.Add(time.Minute)); len(ids) != 0 {
		t.Fatalf("due while leased: %v", ids)
	}
	if c := collectionOf(t, s, a.ID, inv.ID); c.Attempts != 1 || c.NextAttemptAt == nil || !c.NextAttemptAt.Equal(lease) {
		t.Fatalf("claimed: %+v", c)
	}
	next := t0.Add(5 * time.Minute)
	record(2, billing.InvoiceCollection{State: billing.CollectionPaid}, false) // not the claimer's attempt
	record(1, billing.InvoiceCollection{State: billing.CollectionCollecting, Attempts: 1, NextAttemptAt: &next, LastError: "unreachable"}, true)
	if c := collectionOf(t, s, a.ID, inv.ID); c.State != billing.CollectionCollecting || c.LastError != "unreachable" || !c.NextAttemptAt.Equal(next) {
		t.Fatalf("recorded retry: %+v", c)
	}
	claim(2, next.Add(-time.Microsecond), false) // not due yet
	claim(2, next, true)
	p := payment(a, m, next, next.Add(48*time.Hour))
	p.Purpose, p.InvoiceID = billing.PurposeInvoice, inv.ID
	if err := s.CreatePayment(ctx, p); err != nil {
		t.Fatal(err)
	}
	record(2, billing.InvoiceCollection{State: billing.CollectionCollecting, Attempts: 2, PaymentID: p.ID}, true)
	if ids := dueIDs(t, s, next.Add(time.Hour)); len(ids) != 0 {
		t.Fatalf("due while its payment is pending: %v", ids)
	}
	claim(3, next.Add(time.Hour), false)

	resolve := func(paymentID, state string, want bool) {
		t.Helper()
		ok, err := s.ResolveCollection(ctx, inv.ID, paymentID, state)
		if err != nil || ok != want {
			t.Fatalf("ResolveCollection(%s) = %v, %v; want %v", state, ok, err, want)
		}
	}
	other := payment(a, m, next, next)
	resolve(other.ID, billing.CollectionFailed, false) // not its payment
	resolve(p.ID, billing.CollectionFailed, true)
	resolve(p.ID, billing.CollectionFailed, false)
	resolve(other.ID, billing.CollectionPaid, true) // a retry settled
	if c := collectionOf(t, s, a.ID, inv.ID); c.State != billing.CollectionPaid || c.PaymentID != other.ID || c.NextAttemptAt != nil {
		t.Fatalf("paid: %+v", c)
	}
	resolve(p.ID, billing.CollectionFailed, false)

	// Open invoices (no default method at their close) become due once.
	open := mustCreateInvoice(t, s, newInvoice(a, t0.AddDate(0, 1, 0), 2900))
	t1 := t0.Add(time.Hour)
	for _, want := range []int{1, 0} {
		n, err := s.ReopenCollections(ctx, a.ID, t1)
		if err != nil || n != want {
			t.Fatalf("ReopenCollections = %d, %v; want %d", n, err, want)
		}
	}
	if c := collectionOf(t, s, a.ID, open.ID); c.State != billing.CollectionCollecting || !c.NextAttemptAt.Equal(t1) || c.Attempts != 0 {
		t.Fatalf("reopened: %+v", c)
	}

	_, err := s.ClaimCollection(ctx, unknownID, 1, t0, t0)
	wantErr(t, err, metering.ErrNotFound)
	_, err = s.RecordCollection(ctx, unknownID, 1, billing.InvoiceCollection{State: billing.CollectionPaid})
	wantErr(t, err, metering.ErrNotFound)
	_, err = s.ResolveCollection(ctx, unknownID, p.ID, billing.CollectionPaid)
	wantErr(t, err, metering.ErrNotFound)
}

// testClaimConcurrency: of eight replicas claiming the same attempt, one
// gets it.
func testClaimConcurrency(t *testing.T, newStore func(t *testing.T) Store) {
	s := newStore(t)
	a := newAccount("a")
	mustCreateAccount(t, s, a)
	inv := mustCreateInvoice(t, s, dueInvoice(a, t0, t0))
	var wg sync.WaitGroup
	var mu sync.Mutex
	won := 0
	for range 8 {
		wg.Go(func() {
			ok, err := s.ClaimCollection(t.Context(), inv.ID, 1, t0, t0.Add(time.Minute))
			if err != nil {
				t.Error(err)
			}
			if ok {
				mu.Lock()
				won++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if won != 1 {
		t.Fatalf("%d claims won, want 1", won)
	}
}

// countingProcessor records each Collect's idempotency key and answers the
// errors in fail first.
type countingProcessor struct {
	mu   sync.Mutex
	keys []string
	fail []error
}

func (p *countingProcessor) SetUp(context.Context, string, billing.MethodDetails) (string, error) {
	return "ref", nil
}

func (p *countingProcessor) Collect(_ context.Context, _ billing.PaymentMethod, pay billing.Payment) (billing.Collection, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.keys = append(p.keys, pay.IdempotencyKey)
	if len(p.fail) > 0 {
		err := p.fail[0]
		p.fail = p.fail[1:]
		return billing.Collection{}, err
	}
	return billing.Collection{Ref: "pay", State: billing.PaymentPending, BusinessDays: 2}, nil
}

func (p *countingProcessor) Outcome(context.Context, billing.PaymentMethod, billing.Payment) (string, string, error) {
	return billing.PaymentSettled, "", nil
}

// testTickersCollectOnce: two replicas' billing ticks, run together at each
// moment, call the processor once per attempt: the first answers an error,
// the retry after the backoff starts the one payment.
func testTickersCollectOnce(t *testing.T, newStore func(t *testing.T) Store) {
	ctx := t.Context()
	s := newStore(t)
	a := newAccount("a")
	mustCreateAccount(t, s, a)
	if err := s.AddPaymentMethod(ctx, method(a, billing.MethodDirectDebit, billing.SchemeACH, "6789", t0, true)); err != nil {
		t.Fatal(err)
	}
	inv := mustCreateInvoice(t, s, dueInvoice(a, t0, t0))
	proc := &countingProcessor{fail: []error{errors.New("dial tcp: connection refused")}}
	var mu sync.Mutex
	now := t0
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	tickers := make([]*billing.Service, 2)
	for i := range tickers {
		_, tickers[i] = newServices(s, nil, proc, nil, clock)
	}
	tick := func(at time.Time) {
		mu.Lock()
		now = at
		mu.Unlock()
		var wg sync.WaitGroup
		for _, svc := range tickers {
			wg.Go(func() {
				if _, err := svc.CollectDue(ctx); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
	}
	tick(t0)
	tick(t0.Add(time.Minute)) // not due yet
	retry := t0.Add(billing.CollectionDelay(1))
	tick(retry)
	tick(retry.Add(time.Minute))
	want := []string{billing.CollectionKey(inv.ID, 1), billing.CollectionKey(inv.ID, 2)}
	if len(proc.keys) != 2 || proc.keys[0] != want[0] || proc.keys[1] != want[1] {
		t.Fatalf("processor calls %v, want %v", proc.keys, want)
	}
	ps, err := s.Payments(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	c := collectionOf(t, s, a.ID, inv.ID)
	if len(ps) != 1 || ps[0].InvoiceID != inv.ID || c.State != billing.CollectionCollecting || c.PaymentID != ps[0].ID || c.Attempts != 2 {
		t.Fatalf("payments %+v, collection %+v", ps, c)
	}
}
