package conformance

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/ledgerlane/platform/services/metering"
	"github.com/ledgerlane/platform/services/metering/billing"
	"github.com/ledgerlane/platform/services/metering/identity"
)

func runBilling(t *testing.T, newStore func(t *testing.T) Store) {
	t.Run("PlanChanges", func(t *testing.T) { testPlanChanges(t, newStore) })
	t.Run("LimitChanges", func(t *testing.T) { testLimitChanges(t, newStore) })
	t.Run("Invoices", func(t *testing.T) { testInvoices(t, newStore) })
	t.Run("InvoiceOncePerPeriodUnderConcurrency", func(t *testing.T) { testInvoiceConcurrency(t, newStore) })
	t.Run("PortalUsers", func(t *testing.T) { testPortalUsers(t, newStore) })
	t.Run("AccountsDueForClose", func(t *testing.T) { testAccountsDueForClose(t, newStore) })
	t.Run("BillingTickTouchesOnlyDueAccounts", func(t *testing.T) { testTickTouchesOnlyDue(t, newStore) })
}

const unknownID = "00000000-0000-0000-0000-000000000000"

func change(a metering.Account, kind, from, to string, req, eff time.Time) billing.PlanChange {
	return billing.PlanChange{ID: uuid.NewString(), AccountID: a.ID, Kind: kind, FromPlan: from, ToPlan: to,
		RequestedAt: req, EffectiveAt: eff, ChargeCents: 12000, UsedAtChange: 30_000}
}

func testPlanChanges(t *testing.T, newStore func(t *testing.T) Store) {
	ctx := t.Context()
	s := newStore(t)
	a := newAccount("acme") // starter
	mustCreateAccount(t, s, a)
	end := t0.Add(30 * 24 * time.Hour)

	// A downgrade from a plan the account is not on conflicts.
	wantErr(t, s.ScheduleDowngrade(ctx, change(a, billing.ChangeDowngrade, metering.PlanGrowth, metering.PlanFree, t0, end)), metering.ErrConflict)
	wantErr(t, s.ScheduleDowngrade(ctx, change(metering.Account{ID: unknownID}, billing.ChangeDowngrade, "starter", "free", t0, end)), metering.ErrNotFound)

	down := change(a, billing.ChangeDowngrade, metering.PlanStarter, metering.PlanFree, t0, end)
	down.ChargeCents, down.UsedAtChange = 0, 0
	if err := s.ScheduleDowngrade(ctx, down); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetAccount(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.PlanID != metering.PlanStarter || got.ScheduledPlanID != metering.PlanFree || got.ScheduledAt == nil || !got.ScheduledAt.Equal(end) {
		t.Fatalf("after scheduling: plan %q scheduled %q at %v", got.PlanID, got.ScheduledPlanID, got.ScheduledAt)
	}
	// Cancel it, then schedule again: only the second counts.
	c, err := s.CancelDowngrade(ctx, a.ID, t0.Add(time.Hour))
	if err != nil || c.ID != down.ID || c.CanceledAt == nil {
		t.Fatalf("CancelDowngrade = %+v, %v", c, err)
	}
	_, err = s.CancelDowngrade(ctx, a.ID, t0.Add(time.Hour))
	wantErr(t, err, metering.ErrNotFound)
	down2 := change(a, billing.ChangeDowngrade, metering.PlanStarter, metering.PlanFree, t0.Add(2*time.Hour), end)
	down2.ChargeCents, down2.UsedAtChange = 0, 0
	if err := s.ScheduleDowngrade(ctx, down2); err != nil {
		t.Fatal(err)
	}
	// Nothing is due before the end; at the end the downgrade applies.
	if err := s.ApplyDowngrade(ctx, a.ID, end.Add(-time.Microsecond)); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.GetAccount(ctx, a.ID); got.PlanID != metering.PlanStarter {
		t.Fatalf("applied early: %q", got.PlanID)
	}
	// An upgrade instead cancels the scheduled downgrade.
	up := change(a, billing.ChangeUpgrade, metering.PlanStarter, metering.PlanGrowth, t0.Add(3*time.Hour), t0.Add(3*time.Hour))
	anchor := t0.Add(-48 * time.Hour)
	if err := s.Upgrade(ctx, up, anchor); err != nil {
		t.Fatal(err)
	}
	wantErr(t, s.Upgrade(ctx, up, anchor), metering.ErrConflict) // no longer on starter
	got, _ = s.GetAccount(ctx, a.ID)
	if got.PlanID != metering.PlanGrowth || got.ScheduledAt != nil || got.ScheduledPlanID != "" || !got.BillingAnchor.Equal(anchor) {
		t.Fatalf("after upgrade: %+v", got)
	}
	changes, err := s.PlanChanges(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]billing.PlanChange{up}, changes); diff != "" {
		t.Fatalf("PlanChanges (-want +got):\n%s", diff)
	}
	// A downgrade then applies when due.
	down3 := change(got, billing.ChangeDowngrade, metering.PlanGrowth, metering.PlanStarter, t0.Add(4*time.Hour), end)
	down3.ChargeCents, down3.UsedAtChange = 0, 0
	if err := s.ScheduleDowngrade(ctx, down3); err != nil {
		t.Fatal(err)
	}
	if err := s.ApplyDowngrade(ctx, a.ID, end); err != nil {
		t.Fatal(err)
	}
	got, _ = s.GetAccount(ctx, a.ID)
	if got.PlanID != metering.PlanStarter || got.ScheduledAt != nil {
		t.Fatalf("after the downgrade applied: %+v", got)
	}
	changes, _ = s.PlanChanges(ctx, a.ID)
	if diff := cmp.Diff([]billing.PlanChange{up, down3}, changes); diff != "" {
		t.Fatalf("PlanChanges (-want +got):\n%s", diff)
	}
	if cs, err := s.PlanChanges(ctx, "not-a-uuid"); err != nil || len(cs) != 0 {
		t.Fatalf("PlanChanges(malformed) = %v, %v", cs, err)
	}
}

func testLimitChanges(t *testing.T, newStore func(t *testing.T) Store) {
	ctx := t.Context()
	s := newStore(t)
	a := newAccount("acme")
	mustCreateAccount(t, s, a)
	want := []billing.LimitChange{
		{AccountID: a.ID, At: t0, HardStop: false, OverageCapCents: ptr[int64](500)},
		{AccountID: a.ID, At: t0.Add(time.Hour), HardStop: true, OverageCapCents: nil},
	}
	for _, l := range want {
		if err := s.SetBillingLimits(ctx, a.ID, l.HardStop, l.OverageCapCents, l.At); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.LimitChanges(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("LimitChanges (-want +got):\n%s", diff)
	}
}

func newInvoice(a metering.Account, start time.Time, subtotal int64) billing.Invoice {
	return billing.Invoice{
		ID: uuid.NewString(), AccountID: a.ID, PeriodStart: start, PeriodEnd: start.AddDate(0, 1, 0), PlanID: a.PlanID,
		Currency: a.BillingCurrency, SubtotalCents: subtotal, TotalCents: subtotal, OverageCapCents: ptr[int64](900),
		Lines: []billing.InvoiceLine{
			{Kind: billing.LineFlat, Description: "starter plan", Quantity: 1, AmountCents: subtotal - 150},
			{Kind: billing.LineOverage, Description: "1000 conversions", Quantity: 1000, AmountCents: 150},
		},
		CreatedAt:  t0,
		Collection: billing.InvoiceCollection{State: billing.CollectionOpen},
	}
}

func testInvoices(t *testing.T, newStore func(t *testing.T) Store) {
	ctx := t.Context()
	s := newStore(t)
	a := newAccount("acme")
	mustCreateAccount(t, s, a)
	if err := s.GrantCredit(ctx, a.ID, 3000); err != nil {
		t.Fatal(err)
	}
	wantErr(t, s.GrantCredit(ctx, unknownID, 1), metering.ErrNotFound)

	// The credit covers the first invoice whole and part of the second.
	first := newInvoice(a, t0, 2850)
	got, created, err := s.CreateInvoice(ctx, first)
	if err != nil || !created {
		t.Fatalf("CreateInvoice = %v, %v", created, err)
	}
	if got.CreditCents != 2850 || got.TotalCents != 0 {
		t.Fatalf("first invoice credit %d total %d, want 2850 and 0", got.CreditCents, got.TotalCents)
	}
	second := newInvoice(a, t0.AddDate(0, 1, 0), 2850)
	got2, _, err := s.CreateInvoice(ctx, second)
	if err != nil {
		t.Fatal(err)
	}
	if got2.CreditCents != 150 || got2.TotalCents != 2700 {
		t.Fatalf("second invoice credit %d total %d, want 150 and 2700", got2.CreditCents, got2.TotalCents)
	}
	if acct, _ := s.GetAccount(ctx, a.ID); acct.CreditCents != 0 {
		t.Fatalf("credit left %d, want 0", acct.CreditCents)
	}
	// The same period again returns the stored invoice and changes nothing.
	dup := newInvoice(a, t0, 99)
	again, created, err := s.CreateInvoice(ctx, dup)
	if err != nil || created || again.ID != first.ID {
		t.Fatalf("duplicate CreateInvoice = %v (id %s, want %s), %v", created, again.ID, first.ID, err)
	}
	invs, err := s.Invoices(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	first.CreditCents, first.TotalCents = 2850, 0
	second.CreditCents, second.TotalCents = 150, 2700
	if diff := cmp.Diff([]billing.Invoice{first, second}, invs); diff != "" {
		t.Fatalf("Invoices (-want +got):\n%s", diff)
	}
	_, _, err = s.CreateInvoice(ctx, newInvoice(metering.Account{ID: unknownID, PlanID: "starter", BillingCurrency: metering.EUR}, t0, 1))
	wantErr(t, err, metering.ErrNotFound)
}

// testInvoiceConcurrency: closers racing on one period make one invoice,
// and the credit is taken once.
func testInvoiceConcurrency(t *testing.T, newStore func(t *testing.T) Store) {
	ctx := t.Context()
	s := newStore(t)
	a := newAccount("acme")
	mustCreateAccount(t, s, a)
	if err := s.GrantCredit(ctx, a.ID, 1000); err != nil {
		t.Fatal(err)
	}
	const closers = 8
	var wg sync.WaitGroup
	results := make([]bool, closers)
	ids := make([]string, closers)
	for i := range closers {
		wg.Go(func() {
			inv, created, err := s.CreateInvoice(ctx, newInvoice(a, t0, 2850))
			if err != nil {
				t.Error(err)
				return
			}
			results[i], ids[i] = created, inv.ID
		})
	}
	wg.Wait()
	n := 0
	for i, c := range results {
		if c {
			n++
		}
		if ids[i] != ids[0] {
			t.Errorf("closer %d saw invoice %s, closer 0 saw %s", i, ids[i], ids[0])
		}
	}
	if n != 1 {
		t.Fatalf("%d closers created an invoice, want exactly 1", n)
	}
	invs, _ := s.Invoices(ctx, a.ID)
	if len(invs) != 1 || invs[0].CreditCents != 1000 {
		t.Fatalf("invoices %+v, want one with 1000 credit", invs)
	}
	if acct, _ := s.GetAccount(ctx, a.ID); acct.CreditCents != 0 {
		t.Fatalf("credit left %d, want 0", acct.CreditCents)
	}
}

func testPortalUsers(t *testing.T, newStore func(t *testing.T) Store) {
	ctx := t.Context()
	s := newStore(t)
	a := newAccount("acme")
	mustCreateAccount(t, s, a)
	u1 := identity.PortalUser{ID: uuid.NewString(), AccountID: a.ID, Email: "ann@example.com", Name: "Ann", CreatedAt: t0}
	u2 := identity.PortalUser{ID: uuid.NewString(), AccountID: a.ID, Email: "bob@example.com", Name: "Bob", CreatedAt: t0.Add(time.Second)}
	for _, u := range []identity.PortalUser{u1, u2} {
		if err := s.AddPortalUser(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	dup := u1
	dup.ID = uuid.NewString()
	wantErr(t, s.AddPortalUser(ctx, dup), metering.ErrConflict)
	other := u1
	other.ID, other.AccountID = uuid.NewString(), unknownID
	wantErr(t, s.AddPortalUser(ctx, other), metering.ErrNotFound)
	got, err := s.PortalUsers(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]identity.PortalUser{u1, u2}, got); diff != "" {
		t.Fatalf("PortalUsers (-want +got):\n%s", diff)
	}
}

// testAccountsDueForClose: an account is due when its NextCloseAt is unset
// or not after the time asked for, and pages come by id.
func testAccountsDueForClose(t *testing.T, newStore func(t *testing.T) Store) {
	ctx := t.Context()
	s := newStore(t)
	later := t0.Add(time.Hour)
	accounts := []struct {
		next *time.Time
		due  bool // at t0
	}{{next: nil, due: true}, {next: &t0, due: true}, {next: ptr(t0.Add(-time.Second)), due: true}, {next: &later, due: false}}
	var want []string
	for i, c := range accounts {
		a := newAccount(fmt.Sprint("a", i))
		a.NextCloseAt = c.next
		mustCreateAccount(t, s, a)
		if c.due {
			want = append(want, a.ID)
		}
	}
	slices.Sort(want)
	var got []string
	for after := ""; ; {
		page, err := s.AccountsDueForClose(ctx, t0, after, 2)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, page...)
		if len(page) < 2 {
			break
		}
		after = page[len(page)-1]
	}
	if !slices.Equal(got, want) {
		t.Fatalf("due at t0 = %v, want %v", got, want)
	}
	// Moved past the end: no longer due; the later account is due later.
	if err := s.SetNextClose(ctx, want[0], later); err != nil {
		t.Fatal(err)
	}
	if got, err := s.GetAccount(ctx, want[0]); err != nil || got.NextCloseAt == nil || !got.NextCloseAt.Equal(later) {
		t.Fatalf("GetAccount after SetNextClose = %+v, %v", got.NextCloseAt, err)
	}
	if page, _ := s.AccountsDueForClose(ctx, t0, "", 10); len(page) != len(want)-1 || slices.Contains(page, want[0]) {
		t.Fatalf("due after SetNextClose = %v", page)
	}
	if page, _ := s.AccountsDueForClose(ctx, later, "", 10); len(page) != len(accounts) {
		t.Fatalf("due at the later time = %v, want all %d", page, len(accounts))
	}
	wantErr(t, s.SetNextClose(ctx, unknownID, later), metering.ErrNotFound)
}
