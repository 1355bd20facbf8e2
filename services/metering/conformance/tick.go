package conformance

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/ledgerlane/platform/pkg/redisconn"
	"github.com/ledgerlane/platform/services/metering"
	"github.com/ledgerlane/platform/services/metering/admission"
	"github.com/ledgerlane/platform/services/metering/billing"
	"github.com/ledgerlane/platform/services/metering/identity"
	"github.com/ledgerlane/platform/services/metering/notify"
)

// touchingStore records the accounts whose rows a Service reads or writes
// through the account-scoped methods the billing tick uses.
type touchingStore struct {
	Store
	mu      sync.Mutex
	touched map[string]int
}

func (s *touchingStore) touch(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.touched[id]++
}

func (s *touchingStore) take() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.touched
	s.touched = map[string]int{}
	return t
}

func (s *touchingStore) GetAccount(ctx context.Context, id string) (metering.Account, error) {
	s.touch(id)
	return s.Store.GetAccount(ctx, id)
}

func (s *touchingStore) PlanChanges(ctx context.Context, id string) ([]billing.PlanChange, error) {
	s.touch(id)
	return s.Store.PlanChanges(ctx, id)
}

func (s *touchingStore) LimitChanges(ctx context.Context, id string) ([]billing.LimitChange, error) {
	s.touch(id)
	return s.Store.LimitChanges(ctx, id)
}

func (s *touchingStore) Invoices(ctx context.Context, id string) ([]billing.Invoice, error) {
	s.touch(id)
	return s.Store.Invoices(ctx, id)
}

func (s *touchingStore) CreateInvoice(ctx context.Context, inv billing.Invoice) (billing.Invoice, bool, error) {
	s.touch(inv.AccountID)
	return s.Store.CreateInvoice(ctx, inv)
}

func (s *touchingStore) SetNextClose(ctx context.Context, id string, at time.Time) error {
	s.touch(id)
	return s.Store.SetNextClose(ctx, id, at)
}

func (s *touchingStore) PortalUsers(ctx context.Context, id string) ([]identity.PortalUser, error) {
	s.touch(id)
	return s.Store.PortalUsers(ctx, id)
}

func (s *touchingStore) Recipients(ctx context.Context, id string) ([]notify.Recipient, error) {
	s.touch(id)
	return s.Store.Recipients(ctx, id)
}

func (s *touchingStore) EnqueueAlert(ctx context.Context, a notify.Alert, mails []notify.OutboxMail) (bool, error) {
	s.touch(a.AccountID)
	return s.Store.EnqueueAlert(ctx, a, mails)
}

func (s *touchingStore) Payments(ctx context.Context, id string) ([]billing.Payment, error) {
	s.touch(id)
	return s.Store.Payments(ctx, id)
}

func (s *touchingStore) PaymentMethods(ctx context.Context, id string) ([]billing.PaymentMethod, error) {
	s.touch(id)
	return s.Store.PaymentMethods(ctx, id)
}

// nopMailer takes every mail.
type nopMailer struct{}

func (nopMailer) Send(context.Context, notify.Mail) error { return nil }

// testTickTouchesOnlyDue: with 1,000 accounts, of which 3 have a period to
// close and 3 others used something, one billing tick (every step of
// server.BillingTick) touches exactly those 6 accounts, and the next tick,
// with nothing new, touches none; a limits change on an idle account makes
// the tick after it look at that one account only.
func testTickTouchesOnlyDue(t *testing.T, newStore func(t *testing.T) Store) {
	ctx := t.Context()
	store := &touchingStore{Store: newStore(t), touched: map[string]int{}}
	var mu sync.Mutex
	now := time.Date(2026, 1, 5, 10, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	ctl := admission.New(redisconn.ForTest(t), clock)
	ctl.VoidAfter = 0
	ctl.ChangedKey = "ll:{test}:changed:" + uuid.NewString() // a shared Redis holds other tests' marks
	t.Cleanup(func() { _ = ctl.DropChanged(context.Background()) })
	nt := notify.NewService(notify.Config{Store: store, Changes: ctl, Clock: clock})
	svc, bill := newServices(store, ctl, &countingProcessor{}, nt, clock)

	newAccounts := func(n int) []string {
		ids := make([]string, n)
		for i := range ids {
			a, err := svc.CreateAccount(ctx, fmt.Sprint("account ", i), metering.PlanStarter, metering.USD)
			if err != nil {
				t.Fatal(err)
			}
			ids[i] = a.ID
		}
		return ids
	}
	due := newAccounts(3) // their first period ends on 5 February
	mu.Lock()
	now = time.Date(2026, 2, 20, 10, 0, 0, 0, time.UTC)
	mu.Unlock()
	idle := newAccounts(997)
	active := idle[:3]
	people := identity.NewService(identity.Config{Store: store, Accounts: svc, Clock: clock})
	if _, err := people.AddPortalUser(ctx, active[0], "ann@example.com", "Ann"); err != nil {
		t.Fatal(err)
	}
	for i, id := range active {
		l, err := svc.Limits(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		units := []int64{19_000, 10, 1}[i] // the first passes 75 % of Starter's 25,000
		if d, err := ctl.Admit(ctx, admission.Request{AccountID: id, Metered: true, Limits: l, Units: units}); err != nil || d.Outcome != admission.Admitted {
			t.Fatalf("admit: %+v, %v", d, err)
		}
	}
	tick := func() (invoices, alerts int) {
		t.Helper()
		invoices, err := bill.CloseDue(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := bill.CollectDue(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := bill.SettleDue(ctx); err != nil {
			t.Fatal(err)
		}
		if alerts, err = nt.ScanAlerts(ctx, svc); err != nil {
			t.Fatal(err)
		}
		if _, err := nt.DeliverMail(ctx, nopMailer{}); err != nil {
			t.Fatal(err)
		}
		return invoices, alerts
	}
	touchedIDs := func() []string { return slices.Sorted(maps.Keys(store.take())) }

	store.take()
	invoices, alerts := tick()
	want := slices.Sorted(slices.Values(append(slices.Clone(due), active...)))
	if got := touchedIDs(); !slices.Equal(got, want) {
		t.Fatalf("first tick touched %d accounts %v, want the %d due or active %v", len(got), got, len(want), want)
	}
	if invoices != 3 || alerts != 1 {
		t.Fatalf("first tick: %d invoices and %d alerts, want 3 and 1", invoices, alerts)
	}
	for _, id := range due {
		if invs, _ := store.Invoices(ctx, id); len(invs) != 1 {
			t.Fatalf("account %s: %d invoices, want 1", id, len(invs))
		}
	}
	store.take()

	if invoices, alerts := tick(); invoices != 0 || alerts != 0 {
		t.Fatalf("idle tick: %d invoices and %d alerts", invoices, alerts)
	}
	if got := touchedIDs(); len(got) != 0 {
		t.Fatalf("idle tick touched %d accounts: %v", len(got), got)
	}

	// A lowered limit is a change too: the tick looks at that account only.
	if _, err := svc.SetBillingLimits(ctx, idle[500], metering.BillingChange{HardStop: ptr(true)}); err != nil {
		t.Fatal(err)
	}
	store.take()
	tick()
	if got := touchedIDs(); !slices.Equal(got, []string{idle[500]}) {
		t.Fatalf("tick after a limits change touched %v, want only %s", got, idle[500])
	}
}
