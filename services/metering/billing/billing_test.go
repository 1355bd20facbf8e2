package billing_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/pkg/redisconn"
	"github.com/ledgerlane/platform/pkg/rpc"
	"github.com/ledgerlane/platform/services/metering"
	"github.com/ledgerlane/platform/services/metering/admission"
	"github.com/ledgerlane/platform/services/metering/billing"
	"github.com/ledgerlane/platform/services/metering/identity"
	"github.com/ledgerlane/platform/services/metering/memory"
	"github.com/ledgerlane/platform/services/metering/notify"
	"github.com/ledgerlane/platform/services/metering/sandboxpay"
)

// movedClock is a clock a test moves.
type movedClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *movedClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *movedClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// billingEnv is a Service on a memory store and embedded Redis counters,
// driven by a moved clock, with the admission controller the gateway runs.
type billingEnv struct {
	t     *testing.T
	clock *movedClock
	store *memory.Store
	svc   *services
	nt    *notify.Service   // the alerts and outbox on store
	ids   *identity.Service // the people on store
	ctl   *admission.Controller
}

// march14 is a billing anchor: periods run from the 14th to the 14th.
var march14 = time.Date(2026, 3, 14, 9, 30, 0, 0, time.UTC)

func newBillingEnv(t *testing.T) *billingEnv {
	t.Helper()
	e, err := redisconn.StartEmbedded()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	rc, err := redisconn.Connect(t.Context(), e.URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rc.Close() })
	env := &billingEnv{t: t, clock: &movedClock{t: march14}, store: memory.New()}
	env.ctl = admission.New(rc, env.clock.Now)
	env.ctl.VoidAfter = 0
	env.nt = env.notify(notify.Config{})
	env.svc = env.service(env.store, nil)
	env.ids = identity.NewService(identity.Config{Store: env.store, Accounts: env.svc, Clock: env.clock.Now})
	return env
}

// notify is a notify.Service on the env's store, counters and clock, with
// the rest of cfg.
func (e *billingEnv) notify(cfg notify.Config) *notify.Service {
	cfg.Store, cfg.Changes, cfg.Clock = e.store, e.ctl, e.clock.Now
	return notify.NewService(cfg)
}

// services are one replica's root and billing Services, wired as
// server.New wires them.
type services struct {
	*metering.Service
	*billingService
}

// billingService is billing.Service, named apart so services can embed it
// beside metering.Service.
type billingService = billing.Service

// service is another replica on store and the same counters, with payment
// processor p (nil: none).
func (e *billingEnv) service(store *memory.Store, p billing.PaymentProcessor) *services {
	svc := metering.NewService(metering.Config{Store: store, Counters: e.ctl, Payments: billing.NewStanding(store),
		Watcher: e.nt, Clock: e.clock.Now})
	bill := billing.NewService(billing.Config{Store: store, Accounts: svc, Counters: e.ctl, PaymentProcessor: p,
		CloseGrace: -1, Notices: e.nt, Clock: e.clock.Now})
	return &services{Service: svc, billingService: bill}
}

func (e *billingEnv) account(plan string) metering.Account {
	e.t.Helper()
	a, err := e.svc.CreateAccount(e.t.Context(), "Acme Ltd", plan, metering.USD)
	if err != nil {
		e.t.Fatal(err)
	}
	return a
}

// use sends one live metered request of n units through admission, as the
// gateway does, and returns its outcome.
func (e *billingEnv) use(id string, n int64) admission.Outcome {
	e.t.Helper()
	l, err := e.svc.Limits(e.t.Context(), id)
	if err != nil {
		e.t.Fatal(err)
	}
	d, err := e.ctl.Admit(e.t.Context(), admission.Request{AccountID: id, Metered: true, Limits: l, Units: n})
	if err != nil {
		e.t.Fatal(err)
	}
	return d.Outcome
}

func (e *billingEnv) usage(id string) metering.UsageSummary {
	e.t.Helper()
	u, err := e.svc.Usage(e.t.Context(), id)
	if err != nil {
		e.t.Fatal(err)
	}
	return u
}

// invoices runs the closing job as the billing tick does (only the
// accounts whose NextCloseAt has come), so every invoice test also checks
// that the plan changes it makes never leave an ended period unseen.
func (e *billingEnv) invoices(id string) []billing.Invoice {
	e.t.Helper()
	if _, err := e.svc.CloseDue(e.t.Context()); err != nil {
		e.t.Fatal(err)
	}
	invs, err := e.svc.Invoices(e.t.Context(), id)
	if err != nil {
		e.t.Fatal(err)
	}
	return invs
}

func lineAmounts(inv billing.Invoice) map[string]int64 {
	out := map[string]int64{}
	for _, l := range inv.Lines {
		out[l.Kind] += l.AmountCents
	}
	return out
}

func day(m time.Month, d int) time.Time { return time.Date(2026, m, d, 12, 0, 0, 0, time.UTC) }

func TestUpgradeMidPeriod(t *testing.T) {
	tests := []struct {
		name     string
		from, to string
		before   int64 // usage before the upgrade, in one request
		after    int64 // usage after it
		// wanted after the upgrade
		wantCharge   int64
		wantStart    time.Time
		wantRemain   int64
		wantLines    map[string]int64 // on the period's invoice
		wantSubtotal int64
	}{
		{
			name: "starter to growth: overage forgiven, usage carries", from: metering.PlanStarter, to: metering.PlanGrowth,
			before: 30_000, after: 10_000, wantCharge: 149_00 - 29_00, wantStart: time.Date(2026, 3, 14, 0, 0, 0, 0, time.UTC),
			wantRemain: 250_000 - 30_000, wantLines: map[string]int64{"flat": 29_00, "upgrade": 120_00}, wantSubtotal: 149_00,
		},
		{
			name: "starter to growth past the new volume: overage after the upgrade at the new rate", from: metering.PlanStarter, to: metering.PlanGrowth,
			before: 260_000, after: 10_000, wantCharge: 120_00, wantStart: time.Date(2026, 3, 14, 0, 0, 0, 0, time.UTC),
			wantRemain: 0, wantLines: map[string]int64{"flat": 29_00, "upgrade": 120_00, "overage": 8_00}, wantSubtotal: 157_00,
		},
		{
			name: "free to starter: the period stays the calendar month", from: metering.PlanFree, to: metering.PlanStarter,
			before: 1_000, after: 25_000, wantCharge: 29_00, wantStart: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC),
			wantRemain: 24_000, wantLines: map[string]int64{"upgrade": 29_00, "overage": 1_50}, wantSubtotal: 30_50,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newBillingEnv(t)
			a := e.account(tc.from)
			e.clock.Set(day(3, 20))
			if got := e.use(a.ID, tc.before); got != admission.Admitted {
				t.Fatalf("usage before: outcome %v", got)
			}
			before := e.usage(a.ID)
			ch, err := e.svc.ChangePlan(t.Context(), a.ID, tc.to)
			if err != nil {
				t.Fatal(err)
			}
			if ch.Kind != billing.ChangeUpgrade || ch.ChargeCents != tc.wantCharge || !ch.EffectiveAt.Equal(day(3, 20)) {
				t.Fatalf("change = %+v", ch)
			}
			u := e.usage(a.ID)
			if u.Plan != tc.to || u.Used != tc.before || u.Remaining != tc.wantRemain || !u.PeriodStart.Equal(tc.wantStart) {
				t.Fatalf("usage after upgrade: %+v", u)
			}
			if !u.PeriodEnd.Equal(before.PeriodEnd) && tc.from != metering.PlanFree {
				t.Fatalf("billing date moved: %v, was %v", u.PeriodEnd, before.PeriodEnd)
			}
			if got := e.use(a.ID, tc.after); got != admission.Admitted {
				t.Fatalf("usage after: outcome %v", got)
			}
			// Nothing is invoiced before the period ends.
			if invs := e.invoices(a.ID); len(invs) != 0 {
				t.Fatalf("invoiced early: %+v", invs)
			}
			e.clock.Set(u.PeriodEnd.Add(time.Minute))
			invs := e.invoices(a.ID)
			if len(invs) != 1 {
				t.Fatalf("%d invoices, want 1", len(invs))
			}
			inv := invs[0]
			if got := lineAmounts(inv); !equalMaps(got, tc.wantLines) || inv.SubtotalCents != tc.wantSubtotal || inv.PlanID != tc.to {
				t.Fatalf("invoice lines %v subtotal %d plan %s, want %v and %d", got, inv.SubtotalCents, inv.PlanID, tc.wantLines, tc.wantSubtotal)
			}
		})
	}
}

func equalMaps(a, b map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestUpgradeLiftsCapAndHardStop(t *testing.T) {
	tests := []struct {
		name  string
		limit metering.BillingChange
	}{
		{name: "cap reached", limit: metering.BillingChange{OverageCapCents: ptr[int64](3)}},
		{name: "hard stop", limit: metering.BillingChange{HardStop: ptr(true)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newBillingEnv(t)
			a := e.account(metering.PlanStarter)
			if _, err := e.svc.SetBillingLimits(t.Context(), a.ID, tc.limit); err != nil {
				t.Fatal(err)
			}
			e.use(a.ID, 25_000)
			for range 30 {
				e.use(a.ID, 1)
			}
			if u := e.usage(a.ID); !u.OverageBlocked {
				t.Fatalf("not blocked before the upgrade: %+v", u)
			}
			if _, err := e.svc.ChangePlan(t.Context(), a.ID, metering.PlanGrowth); err != nil {
				t.Fatal(err)
			}
			if u := e.usage(a.ID); u.OverageBlocked {
				t.Fatalf("still blocked after the upgrade: %+v", u)
			}
			if got := e.use(a.ID, 1); got != admission.Admitted {
				t.Fatalf("request after the upgrade: %v", got)
			}
		})
	}
}

func TestCapReachedThenRaised(t *testing.T) {
	e := newBillingEnv(t)
	a := e.account(metering.PlanStarter) // $1.50 per 1,000: 0.15 cents a conversion
	if _, err := e.svc.SetBillingLimits(t.Context(), a.ID, metering.BillingChange{OverageCapCents: ptr[int64](150)}); err != nil {
		t.Fatal(err)
	}
	e.use(a.ID, 25_000)
	if got := e.use(a.ID, 999); got != admission.Admitted { // 149.85 cents
		t.Fatalf("under the cap: %v", got)
	}
	if got := e.use(a.ID, 1); got != admission.CapReached { // would reach 150
		t.Fatalf("reaching the cap: %v", got)
	}
	if u := e.usage(a.ID); !u.OverageBlocked {
		t.Fatalf("usage not blocked: %+v", u)
	}
	// Raised: overage flows again, up to the new cap.
	if _, err := e.svc.SetBillingLimits(t.Context(), a.ID, metering.BillingChange{OverageCapCents: ptr[int64](300)}); err != nil {
		t.Fatal(err)
	}
	if got := e.use(a.ID, 1000); got != admission.Admitted {
		t.Fatalf("after raising: %v", got)
	}
	e.clock.Set(time.Date(2026, 4, 14, 0, 0, 0, 0, time.UTC))
	invs := e.invoices(a.ID)
	if len(invs) != 1 {
		t.Fatalf("%d invoices", len(invs))
	}
	// 1,999 conversions at 0.15 cents = 299.85 cents, rounded down.
	if got := lineAmounts(invs[0])["overage"]; got != 299 {
		t.Fatalf("overage %d cents, want 299", got)
	}
}

func TestDowngradeAtBoundary(t *testing.T) {
	e := newBillingEnv(t)
	a := e.account(metering.PlanGrowth)
	end := time.Date(2026, 4, 14, 0, 0, 0, 0, time.UTC)
	e.clock.Set(day(3, 20))
	ch, err := e.svc.ChangePlan(t.Context(), a.ID, metering.PlanStarter)
	if err != nil {
		t.Fatal(err)
	}
	if ch.Kind != billing.ChangeDowngrade || !ch.EffectiveAt.Equal(end) || ch.ChargeCents != 0 {
		t.Fatalf("change = %+v", ch)
	}
	steps := []struct {
		at            time.Time
		wantPlan      string
		wantScheduled string
	}{
		{at: day(3, 20), wantPlan: metering.PlanGrowth, wantScheduled: metering.PlanStarter},
		{at: end.Add(-time.Microsecond), wantPlan: metering.PlanGrowth, wantScheduled: metering.PlanStarter},
		{at: end, wantPlan: metering.PlanStarter},
		{at: end.Add(24 * time.Hour), wantPlan: metering.PlanStarter},
	}
	for _, st := range steps {
		e.clock.Set(st.at)
		u := e.usage(a.ID)
		if u.Plan != st.wantPlan || u.ScheduledPlan != st.wantScheduled {
			t.Fatalf("at %v: plan %q scheduled %q, want %q and %q", st.at, u.Plan, u.ScheduledPlan, st.wantPlan, st.wantScheduled)
		}
		if st.wantScheduled != "" && (u.ScheduledAt == nil || !u.ScheduledAt.Equal(end)) {
			t.Fatalf("at %v: scheduled at %v, want %v", st.at, u.ScheduledAt, end)
		}
	}
	// The ended period is invoiced on growth; the next runs on starter.
	e.clock.Set(end.AddDate(0, 1, 0))
	invs := e.invoices(a.ID)
	if len(invs) != 2 || invs[0].PlanID != metering.PlanGrowth || lineAmounts(invs[0])["flat"] != 149_00 ||
		invs[1].PlanID != metering.PlanStarter || lineAmounts(invs[1])["flat"] != 29_00 {
		t.Fatalf("invoices %+v", invs)
	}
}

func TestDowngradeCancelAndReplace(t *testing.T) {
	e := newBillingEnv(t)
	a := e.account(metering.PlanScale)
	ctx := t.Context()
	if _, err := e.svc.CancelDowngrade(ctx, a.ID); rpc.Problem(err).Type != problem.Conflict {
		t.Fatalf("cancel with none scheduled: %v", err)
	}
	if _, err := e.svc.ChangePlan(ctx, a.ID, metering.PlanStarter); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.ChangePlan(ctx, a.ID, metering.PlanGrowth); err != nil { // replaces it
		t.Fatal(err)
	}
	if u := e.usage(a.ID); u.ScheduledPlan != metering.PlanGrowth {
		t.Fatalf("scheduled %q, want growth", u.ScheduledPlan)
	}
	// Asking for the current plan cancels the downgrade.
	if _, err := e.svc.ChangePlan(ctx, a.ID, metering.PlanScale); err != nil {
		t.Fatal(err)
	}
	if u := e.usage(a.ID); u.ScheduledPlan != "" || u.ScheduledAt != nil {
		t.Fatalf("still scheduled: %+v", u)
	}
	if _, err := e.svc.ChangePlan(ctx, a.ID, metering.PlanScale); rpc.Problem(err).Type != problem.Conflict || rpc.Problem(err).Field != "plan" {
		t.Fatalf("same plan again: %v", err)
	}
	if _, err := e.svc.ChangePlan(ctx, a.ID, "enterprise"); rpc.Problem(err).Type != problem.InvalidInput || rpc.Problem(err).Field != "plan" {
		t.Fatalf("unknown plan: %v", err)
	}
	changes, _ := e.svc.PlanChanges(ctx, a.ID)
	if len(changes) != 0 {
		t.Fatalf("changes left: %+v", changes)
	}
}

func TestUpgradeCancelsScheduledDowngrade(t *testing.T) {
	e := newBillingEnv(t)
	a := e.account(metering.PlanGrowth)
	e.svc = e.service(e.store, sandboxpay.New())
	e.addMethod(a.ID, ach("6789")) // Scale is billed only by direct debit
	if _, err := e.svc.ChangePlan(t.Context(), a.ID, metering.PlanStarter); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.ChangePlan(t.Context(), a.ID, metering.PlanScale); err != nil {
		t.Fatal(err)
	}
	if u := e.usage(a.ID); u.Plan != metering.PlanScale || u.ScheduledPlan != "" {
		t.Fatalf("usage %+v", u)
	}
}

// TestInvoicedOverageNeverPassesTheCap drives random usage, cap changes,
// hard stops and upgrades through the admission script over many periods
// and checks every invoice: its overage never exceeds the cap in force at
// the period's end, and never exceeds what the plan's rate makes of the
// usage past the included volume.
func TestInvoicedOverageNeverPassesTheCap(t *testing.T) {
	seeds := 40
	if testing.Short() {
		seeds = 10
	}
	for seed := range seeds {
		rng := rand.New(rand.NewPCG(uint64(seed), 7))
		e := newBillingEnv(t)
		a := e.account(metering.PlanStarter)
		ctx := t.Context()
		now := march14
		var capInForce *int64
		for range 60 {
			now = now.Add(time.Duration(rng.IntN(36)) * time.Hour)
			e.clock.Set(now)
			switch r := rng.IntN(10); {
			case r < 6:
				e.use(a.ID, int64(1+rng.IntN(8000)))
			case r < 8:
				c := int64(1 + rng.IntN(2000))
				if _, err := e.svc.SetBillingLimits(ctx, a.ID, metering.BillingChange{OverageCapCents: &c}); err != nil {
					t.Fatal(err)
				}
				capInForce = &c
			case r < 9:
				if _, err := e.svc.SetBillingLimits(ctx, a.ID, metering.BillingChange{ClearCap: true}); err != nil {
					t.Fatal(err)
				}
				capInForce = nil
			default:
				hs := rng.IntN(2) == 0
				if _, err := e.svc.SetBillingLimits(ctx, a.ID, metering.BillingChange{HardStop: &hs}); err != nil {
					t.Fatal(err)
				}
			}
			_ = capInForce
		}
		e.clock.Set(now.AddDate(0, 1, 0))
		if _, err := e.svc.ClosePeriods(ctx, a.ID); err != nil {
			t.Fatal(err)
		}
		invs, _ := e.svc.Invoices(ctx, a.ID)
		limits, _ := e.store.LimitChanges(ctx, a.ID)
		for _, inv := range invs {
			var capAtEnd *int64
			for _, l := range limits {
				if l.At.Before(inv.PeriodEnd) {
					capAtEnd = l.OverageCapCents
				}
			}
			over := lineAmounts(inv)["overage"]
			if capAtEnd != nil && over > *capAtEnd {
				t.Fatalf("seed %d: invoice %v..%v overage %d > cap %d", seed, inv.PeriodStart, inv.PeriodEnd, over, *capAtEnd)
			}
			if (capAtEnd == nil) != (inv.OverageCapCents == nil) || (capAtEnd != nil && *capAtEnd != *inv.OverageCapCents) {
				t.Fatalf("seed %d: invoice cap %v, want %v", seed, inv.OverageCapCents, capAtEnd)
			}
			used, _, _ := e.ctl.Counter(ctx, a.ID, inv.PeriodStart)
			if max := max(0, used-25_000) * 150 / 1000; over > max {
				t.Fatalf("seed %d: overage %d past the usage's worth %d", seed, over, max)
			}
			if inv.TotalCents > inv.SubtotalCents || inv.TotalCents < 0 {
				t.Fatalf("seed %d: total %d subtotal %d", seed, inv.TotalCents, inv.SubtotalCents)
			}
		}
	}
}

// TestTwoClosersOneInvoice runs two replicas' closing jobs at once, many
// times over: each account and period gets exactly one invoice.
func TestTwoClosersOneInvoice(t *testing.T) {
	e := newBillingEnv(t)
	ctx := t.Context()
	var ids []string
	for range 5 {
		a := e.account(metering.PlanStarter)
		ids = append(ids, a.ID)
		e.use(a.ID, 26_000)
		if err := e.svc.GrantCredit(ctx, a.ID, 1000); err != nil {
			t.Fatal(err)
		}
	}
	replicas := []*services{e.service(e.store, nil), e.service(e.store, nil)}
	e.clock.Set(time.Date(2026, 7, 20, 0, 0, 0, 0, time.UTC)) // four periods have ended
	var wg sync.WaitGroup
	created := make([]int, len(replicas))
	for i, r := range replicas {
		wg.Go(func() {
			n, err := r.CloseDue(ctx)
			if err != nil {
				t.Error(err)
			}
			created[i] = n
		})
	}
	wg.Wait()
	if created[0]+created[1] != 4*len(ids) {
		t.Fatalf("closers created %v invoices, want %d in all", created, 4*len(ids))
	}
	for _, id := range ids {
		invs, _ := e.svc.Invoices(ctx, id)
		if len(invs) != 4 {
			t.Fatalf("account %s: %d invoices, want 4", id, len(invs))
		}
		credit := int64(0)
		for i, inv := range invs {
			credit += inv.CreditCents
			if i > 0 && !inv.PeriodStart.Equal(invs[i-1].PeriodEnd) {
				t.Fatalf("periods not contiguous: %+v", invs)
			}
		}
		if credit != 1000 {
			t.Fatalf("credit applied %d, want 1000", credit)
		}
		// The first period: flat $29 plus 1,000 overage at $1.50.
		if invs[0].SubtotalCents != 29_00+1_50 || invs[0].TotalCents != 30_50-10_00 {
			t.Fatalf("first invoice %+v", invs[0])
		}
	}
}

// fakeMailer records mails and fails while down.
type fakeMailer struct {
	mu   sync.Mutex
	down bool
	got  []notify.Mail
}

func (f *fakeMailer) Send(_ context.Context, m notify.Mail) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.down {
		return errors.New("connection refused")
	}
	f.got = append(f.got, m)
	return nil
}

func TestAlertsAcrossTwoPeriods(t *testing.T) {
	e := newBillingEnv(t)
	ctx := t.Context()
	a := e.account(metering.PlanStarter)
	for _, u := range []struct{ email, name string }{{"ann@example.com", "Ann"}, {"Bob@Example.com", "Bob"}} {
		if _, err := e.ids.AddPortalUser(ctx, a.ID, u.email, u.name); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.ids.AddPortalUser(ctx, a.ID, "bob@example.com", "Bob again"); rpc.Problem(err).Type != problem.Conflict {
		t.Fatalf("duplicate user: %v", err)
	}
	if _, err := e.ids.AddPortalUser(ctx, a.ID, "not an address", "X"); rpc.Problem(err).Field != "email" {
		t.Fatalf("bad address: %v", err)
	}
	steps := []struct {
		at    time.Time
		use   int64
		limit *metering.BillingChange
		want  []string // milestones new at this step
	}{
		{at: day(3, 15), use: 18_749},
		{at: day(3, 16), use: 1, want: []string{notify.MilestoneUsage75}},
		{at: day(3, 17), use: 1},
		{at: day(3, 18), use: 3_749, want: []string{notify.MilestoneUsage90}},
		{at: day(3, 19), use: 2_500, want: []string{notify.MilestoneUsage100Overage}},
		{at: day(3, 20), limit: &metering.BillingChange{OverageCapCents: ptr[int64](1)}, use: 6, want: []string{notify.MilestoneCapReached}},
		{at: day(3, 21), use: 1},
		// The next period: the milestones come again, once each.
		{at: day(4, 15), limit: &metering.BillingChange{HardStop: ptr(true), ClearCap: true}, use: 24_000,
			want: []string{notify.MilestoneUsage75, notify.MilestoneUsage90}},
		{at: day(4, 16), use: 1_000, want: []string{notify.MilestoneUsage100Stop}},
		{at: day(4, 17), use: 1},
	}
	mailer := &fakeMailer{}
	for i, st := range steps {
		e.clock.Set(st.at)
		if st.limit != nil {
			if _, err := e.svc.SetBillingLimits(ctx, a.ID, *st.limit); err != nil {
				t.Fatal(err)
			}
		}
		if st.use > 0 {
			e.use(a.ID, st.use)
		}
		before := len(mailer.got)
		// Two replicas scan: each milestone is still queued once.
		for range 2 {
			if _, err := e.nt.ScanAlerts(ctx, e.svc); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := e.nt.DeliverMail(ctx, mailer); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, m := range mailer.got[before:] {
			if m.To == "ann@example.com" {
				got = append(got, m.Subject)
			}
			if strings.Contains(strings.ToLower(m.Body), "http") || strings.Contains(m.Body, "ak_") || strings.Contains(m.Body, "token") {
				t.Fatalf("step %d: a link or token in the mail: %q", i, m.Body)
			}
		}
		if len(mailer.got)-before != 2*len(st.want) || len(got) != len(st.want) {
			t.Fatalf("step %d: mails %v, want one per user for %v", i, mailer.got[before:], st.want)
		}
	}
	alerts, _ := e.nt.Alerts(ctx, a.ID)
	if len(alerts) != 7 {
		t.Fatalf("%d alerts, want 7: %+v", len(alerts), alerts)
	}
	overage := mailer.got[4]
	if !strings.Contains(overage.Body, "$1.50 per 1,000") {
		t.Fatalf("overage mail names no rate: %q", overage.Body)
	}
}

// TestScanAlertsLeavesOtherDeploymentsMarks: a mark of an account this
// store does not have (another stack on the same Redis) is no error and is
// left for its owner; the scan goes on to the accounts it has.
func TestScanAlertsLeavesOtherDeploymentsMarks(t *testing.T) {
	e := newBillingEnv(t)
	ctx := t.Context()
	foreign := "5f0c1a52-7f3e-4f59-9d4a-2b8c6e1d0a77"
	if err := e.ctl.MarkChanged(ctx, foreign); err != nil {
		t.Fatal(err)
	}
	a := e.account(metering.PlanStarter)
	e.use(a.ID, 19_000)
	for range 2 {
		n, err := e.nt.ScanAlerts(ctx, e.svc)
		if err != nil {
			t.Fatal(err)
		}
		if alerts, _ := e.nt.Alerts(ctx, a.ID); len(alerts) != 1 {
			t.Fatalf("alerts %+v after %d new", alerts, n)
		}
	}
	page, _, err := e.ctl.Changed(ctx, 0, 100)
	if err != nil || len(page) != 1 || page[0].AccountID != foreign {
		t.Fatalf("marks left %+v, %v; want only the other deployment's", page, err)
	}
}

func TestMailRetriedWithBackoffUntilSent(t *testing.T) {
	e := newBillingEnv(t)
	ctx := t.Context()
	e.nt = e.notify(notify.Config{MailBackoff: 30 * time.Second, MailBackoffMax: 2 * time.Minute})
	a := e.account(metering.PlanStarter)
	if _, err := e.ids.AddPortalUser(ctx, a.ID, "ann@example.com", "Ann"); err != nil {
		t.Fatal(err)
	}
	e.use(a.ID, 19_000)
	if _, err := e.nt.CheckAlerts(ctx, e.svc, a.ID); err != nil {
		t.Fatal(err)
	}
	mailer := &fakeMailer{down: true}
	start := e.clock.Now()
	// Attempts at 0, 30 s, 90 s, 210 s, 330 s (the delay doubles up to 2 min).
	for _, st := range []struct {
		after time.Duration
		sent  int
	}{{0, 0}, {29 * time.Second, 0}, {30 * time.Second, 0}, {89 * time.Second, 0}, {90 * time.Second, 0}, {209 * time.Second, 0}} {
		e.clock.Set(start.Add(st.after))
		if n, _ := e.nt.DeliverMail(ctx, mailer); n != st.sent {
			t.Fatalf("at +%v: sent %d", st.after, n)
		}
	}
	box, _ := e.nt.Outbox(ctx, a.ID)
	if len(box) != 1 || box[0].Attempts != 3 || box[0].LastError != "connection refused" {
		t.Fatalf("outbox %+v", box)
	}
	mailer.down = false
	e.clock.Set(start.Add(210 * time.Second))
	if n, err := e.nt.DeliverMail(ctx, mailer); n != 1 || err != nil {
		t.Fatalf("after the server returned: sent %d, %v", n, err)
	}
	if n, _ := e.nt.DeliverMail(ctx, mailer); n != 0 {
		t.Fatal("sent twice")
	}
}

func ptr[T any](v T) *T { return &v }

// refusingMailer refuses every mail for good, as a server does an address
// it cannot take.
type refusingMailer struct{ calls int }

func (r *refusingMailer) Send(context.Context, notify.Mail) error {
	r.calls++
	return fmt.Errorf("smtp: to: %w: bad address", notify.ErrMailPermanent)
}

// TestMailRefusedForGoodIsParked (issue 27, 5): a permanent refusal is not
// retried forever: the mail is parked at once, never attempted again, with
// its reason kept; addresses SMTP cannot take are refused when stored.
func TestMailRefusedForGoodIsParked(t *testing.T) {
	e := newBillingEnv(t)
	ctx := t.Context()
	a := e.account(metering.PlanStarter)
	for _, bad := range []string{`"ann smith"@example.com`, "ann@localhost", "ännä@example.com", "ann@-example.com", "a..b@example.com"} {
		if _, err := e.ids.AddPortalUser(ctx, a.ID, bad, "Ann"); err == nil {
			t.Errorf("stored %q", bad)
		}
	}
	if _, err := e.ids.AddPortalUser(ctx, a.ID, "ann.o'neil+billing@mail.example.com", "Ann"); err != nil {
		t.Fatal(err)
	}
	e.use(a.ID, 19_000)
	if _, err := e.nt.CheckAlerts(ctx, e.svc, a.ID); err != nil {
		t.Fatal(err)
	}
	m := &refusingMailer{}
	start := e.clock.Now()
	for _, after := range []time.Duration{0, time.Hour, 24 * time.Hour, 30 * 24 * time.Hour} {
		e.clock.Set(start.Add(after))
		_, _ = e.nt.DeliverMail(ctx, m)
	}
	box, _ := e.nt.Outbox(ctx, a.ID)
	if m.calls != 1 || len(box) != 1 || box[0].SentAt != nil || !strings.HasPrefix(box[0].LastError, "given up: ") || !box[0].GivenUp() {
		t.Fatalf("%d attempts; outbox %+v", m.calls, box)
	}
}

// TestMailStillFailingAfterThreeDaysIsGivenUp (issue 27, 5): a mail that
// keeps failing for a passing reason is retried with a growing delay for
// MailGiveUpAfter, then given up with the count and the last reason, and
// never attempted again.
func TestMailStillFailingAfterThreeDaysIsGivenUp(t *testing.T) {
	e := newBillingEnv(t)
	ctx := t.Context()
	a := e.account(metering.PlanStarter)
	if _, err := e.ids.AddPortalUser(ctx, a.ID, "ann@example.com", "Ann"); err != nil {
		t.Fatal(err)
	}
	e.use(a.ID, 19_000)
	if _, err := e.nt.CheckAlerts(ctx, e.svc, a.ID); err != nil {
		t.Fatal(err)
	}
	mailer := &fakeMailer{down: true}
	start := e.clock.Now()
	// Every ten minutes for four days: each due attempt is made once.
	for at := time.Duration(0); at <= 96*time.Hour; at += 10 * time.Minute {
		e.clock.Set(start.Add(at))
		_, _ = e.nt.DeliverMail(ctx, mailer)
		box, _ := e.nt.Outbox(ctx, a.ID)
		if len(box) != 1 {
			t.Fatalf("outbox %+v", box)
		}
		if at < notify.MailGiveUpAfter-time.Hour && box[0].GivenUp() {
			t.Fatalf("given up at +%v: %+v", at, box[0])
		}
	}
	box, _ := e.nt.Outbox(ctx, a.ID)
	m := box[0]
	// 30 s, 1, 2, 4, 8, 16, 32 min, then hourly: about 77 attempts in 72 h.
	if !m.GivenUp() || m.SentAt != nil || !strings.HasPrefix(m.LastError, "given up after ") ||
		!strings.HasSuffix(m.LastError, ": connection refused") || m.Attempts < 70 || m.Attempts > 80 {
		t.Fatalf("after four days: %+v", m)
	}
	attempts := m.Attempts
	mailer.down = false
	e.clock.Set(start.Add(30 * 24 * time.Hour))
	if n, _ := e.nt.DeliverMail(ctx, mailer); n != 0 {
		t.Fatal("a given-up mail was sent")
	}
	if box, _ := e.nt.Outbox(ctx, a.ID); box[0].Attempts != attempts {
		t.Fatalf("attempted again: %+v", box[0])
	}
}
