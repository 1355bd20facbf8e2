package conformance

import (
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/ledgerlane/platform/services/metering"
	"github.com/ledgerlane/platform/services/metering/billing"
)

func runPayments(t *testing.T, newStore func(t *testing.T) Store) {
	t.Run("PaymentMethods", func(t *testing.T) { testPaymentMethods(t, newStore) })
	t.Run("Payments", func(t *testing.T) { testPayments(t, newStore) })
	t.Run("ResolveOnceUnderConcurrency", func(t *testing.T) { testResolveConcurrency(t, newStore) })
	t.Run("InvoiceCollection", func(t *testing.T) { testInvoiceCollection(t, newStore) })
	t.Run("ClaimOnceUnderConcurrency", func(t *testing.T) { testClaimConcurrency(t, newStore) })
	t.Run("TwoTickersCollectOnce", func(t *testing.T) { testTickersCollectOnce(t, newStore) })
}

func method(a metering.Account, typ, scheme, last4 string, at time.Time, def bool) billing.PaymentMethod {
	return billing.PaymentMethod{ID: uuid.NewString(), AccountID: a.ID, Type: typ, Scheme: scheme, Brand: "visa", Last4: last4,
		HolderName: "Acme Ltd", ProcessorRef: "ref_" + last4, IsDefault: def, CreatedAt: at}
}

func defaults(t *testing.T, s Store, a metering.Account) []string {
	t.Helper()
	ms, err := s.PaymentMethods(t.Context(), a.ID)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range ms {
		if m.IsDefault {
			out = append(out, m.Last4)
		}
	}
	return out
}

func testPaymentMethods(t *testing.T, newStore func(t *testing.T) Store) {
	ctx := t.Context()
	s := newStore(t)
	a, b := newAccount("a"), newAccount("b")
	mustCreateAccount(t, s, a)
	mustCreateAccount(t, s, b)
	card := method(a, billing.MethodCard, billing.SchemeCard, "4242", t0, true)
	debit := method(a, billing.MethodDirectDebit, billing.SchemeACH, "6789", t0.Add(time.Second), false)
	for _, m := range []billing.PaymentMethod{card, debit} {
		if err := s.AddPaymentMethod(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	wantErr(t, s.AddPaymentMethod(ctx, card), metering.ErrConflict)
	wantErr(t, s.AddPaymentMethod(ctx, method(metering.Account{ID: unknownID}, "card", "card", "1", t0, false)), metering.ErrNotFound)
	ms, err := s.PaymentMethods(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]billing.PaymentMethod{card, debit}, ms); diff != "" {
		t.Fatalf("PaymentMethods (-want +got):\n%s", diff)
	}
	got, err := s.GetPaymentMethod(ctx, debit.ID)
	if err != nil || got != debit {
		t.Fatalf("GetPaymentMethod = %+v, %v", got, err)
	}
	_, err = s.GetPaymentMethod(ctx, "not-a-uuid")
	wantErr(t, err, metering.ErrNotFound)

	// One default at a time: setting one, or adding one as default, clears
	// the other.
	if err := s.SetDefaultPaymentMethod(ctx, a.ID, debit.ID); err != nil {
		t.Fatal(err)
	}
	if d := defaults(t, s, a); !cmp.Equal(d, []string{"6789"}) {
		t.Fatalf("defaults %v", d)
	}
	third := method(a, billing.MethodDirectDebit, billing.SchemeACH, "1111", t0.Add(2*time.Second), true)
	if err := s.AddPaymentMethod(ctx, third); err != nil {
		t.Fatal(err)
	}
	if d := defaults(t, s, a); !cmp.Equal(d, []string{"1111"}) {
		t.Fatalf("defaults %v", d)
	}
	// Another account's method is not found; so is a removed one.
	wantErr(t, s.SetDefaultPaymentMethod(ctx, b.ID, debit.ID), metering.ErrNotFound)
	wantErr(t, s.RemovePaymentMethod(ctx, b.ID, debit.ID, t0), metering.ErrNotFound)
	if err := s.RemovePaymentMethod(ctx, a.ID, third.ID, t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	wantErr(t, s.RemovePaymentMethod(ctx, a.ID, third.ID, t0.Add(time.Hour)), metering.ErrNotFound)
	wantErr(t, s.SetDefaultPaymentMethod(ctx, a.ID, third.ID), metering.ErrNotFound)
	if d := defaults(t, s, a); len(d) != 0 {
		t.Fatalf("removing the default leaves none: %v", d)
	}
	removed, err := s.GetPaymentMethod(ctx, third.ID)
	if err != nil || removed.RemovedAt == nil || !removed.RemovedAt.Equal(t0.Add(time.Hour)) || removed.IsDefault {
		t.Fatalf("removed method %+v, %v", removed, err)
	}
	if ms, _ := s.PaymentMethods(ctx, a.ID); len(ms) != 2 {
		t.Fatalf("listing after removal: %+v", ms)
	}
	if ms, _ := s.PaymentMethods(ctx, unknownID); len(ms) != 0 {
		t.Fatalf("unknown account: %+v", ms)
	}
}

func payment(a metering.Account, m billing.PaymentMethod, at, settleBy time.Time) billing.Payment {
	return billing.Payment{ID: uuid.NewString(), AccountID: a.ID, MethodID: m.ID, MethodType: m.Type, Scheme: m.Scheme,
		Purpose: billing.PurposeUpgrade, PeriodStart: t0, AmountCents: 120_00, Currency: metering.USD, FirstDebit: true,
		State: billing.PaymentPending, ProcessorRef: "pay_1", CreatedAt: at, SettleBy: settleBy}
}

func testPayments(t *testing.T, newStore func(t *testing.T) Store) {
	ctx := t.Context()
	s := newStore(t)
	a, b := newAccount("a"), newAccount("b")
	mustCreateAccount(t, s, a)
	mustCreateAccount(t, s, b)
	m := method(a, billing.MethodDirectDebit, billing.SchemeACH, "6789", t0, true)
	if err := s.AddPaymentMethod(ctx, m); err != nil {
		t.Fatal(err)
	}
	day := 24 * time.Hour
	p1 := payment(a, m, t0, t0.Add(4*day))
	p2 := payment(a, m, t0.Add(time.Minute), t0.Add(2*day))
	p2.FirstDebit, p2.Purpose, p2.RetryOf = false, billing.PurposeRetry, p1.ID
	for _, p := range []billing.Payment{p1, p2} {
		if err := s.CreatePayment(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	wantErr(t, s.CreatePayment(ctx, p1), metering.ErrConflict)
	wantErr(t, s.CreatePayment(ctx, payment(b, m, t0, t0)), metering.ErrNotFound) // another account's method
	ps, err := s.Payments(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]billing.Payment{p1, p2}, ps); diff != "" {
		t.Fatalf("Payments (-want +got):\n%s", diff)
	}
	if ps, _ := s.Payments(ctx, b.ID); len(ps) != 0 {
		t.Fatalf("b's payments %+v", ps)
	}

	due := func(at time.Time) []string {
		t.Helper()
		ps, err := s.DuePayments(ctx, at, 10)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, p := range ps {
			ids = append(ids, p.ID)
		}
		return ids
	}
	if d := due(t0.Add(day)); len(d) != 0 {
		t.Fatalf("due after a day: %v", d)
	}
	if d := due(t0.Add(4 * day)); !cmp.Equal(d, []string{p2.ID, p1.ID}) {
		t.Fatalf("due: %v, want earliest settlement first", d)
	}
	if err := s.DelayPayment(ctx, p1.ID, t0.Add(6*day)); err != nil {
		t.Fatal(err)
	}
	if d := due(t0.Add(4 * day)); !cmp.Equal(d, []string{p2.ID}) {
		t.Fatalf("due after the delay: %v", d)
	}
	ok, err := s.ResolvePayment(ctx, p2.ID, metering.PaymentFailed, "refused", t0.Add(2*day))
	if err != nil || !ok {
		t.Fatalf("ResolvePayment = %v, %v", ok, err)
	}
	ok, err = s.ResolvePayment(ctx, p2.ID, billing.PaymentSettled, "", t0.Add(3*day))
	if err != nil || ok {
		t.Fatalf("resolving twice = %v, %v", ok, err)
	}
	got, err := s.GetPayment(ctx, p2.ID)
	if err != nil || got.State != metering.PaymentFailed || got.FailureReason != "refused" || got.ResolvedAt == nil || !got.ResolvedAt.Equal(t0.Add(2*day)) {
		t.Fatalf("resolved payment %+v, %v", got, err)
	}
	wantErr(t, s.DelayPayment(ctx, p2.ID, t0), metering.ErrConflict)
	wantErr(t, s.DelayPayment(ctx, unknownID, t0), metering.ErrNotFound)
	_, err = s.ResolvePayment(ctx, unknownID, billing.PaymentSettled, "", t0)
	wantErr(t, err, metering.ErrNotFound)
	_, err = s.GetPayment(ctx, "x")
	wantErr(t, err, metering.ErrNotFound)
	if d := due(t0.Add(10 * day)); !cmp.Equal(d, []string{p1.ID}) {
		t.Fatalf("due at the end: %v", d)
	}
}

// testResolveConcurrency: eight replicas settle one payment; one wins.
func testResolveConcurrency(t *testing.T, newStore func(t *testing.T) Store) {
	ctx := t.Context()
	s := newStore(t)
	a := newAccount("a")
	mustCreateAccount(t, s, a)
	m := method(a, billing.MethodDirectDebit, billing.SchemeACH, "6789", t0, true)
	if err := s.AddPaymentMethod(ctx, m); err != nil {
		t.Fatal(err)
	}
	p := payment(a, m, t0, t0)
	if err := s.CreatePayment(ctx, p); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	wins := 0
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			ok, err := s.ResolvePayment(ctx, p.ID, billing.PaymentSettled, "", t0)
			if err != nil {
				t.Error(err)
			}
			if ok {
				mu.Lock()
				wins++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if wins != 1 {
		t.Fatalf("%d resolutions won, want 1", wins)
	}
}
