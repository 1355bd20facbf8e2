package billing_test

import (
	"errors"
	"fmt"
	"math/big"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/services/metering"
	"github.com/ledgerlane/platform/services/metering/admission"
	"github.com/ledgerlane/platform/services/metering/billing"
	"github.com/ledgerlane/platform/services/metering/notify"
	"github.com/ledgerlane/platform/services/metering/sandboxpay"
)

// thursday is a Thursday morning: four business days later is the next
// Wednesday, across a weekend.
var thursday = time.Date(2026, 3, 19, 10, 0, 0, 0, time.UTC)

// sandboxCard is a Luhn-valid Visa number ending in last4.
func sandboxCard(t *testing.T, last4 string) string {
	t.Helper()
	for d := range 10 {
		n := fmt.Sprintf("4000%d0000000%s", d, last4)
		if _, _, err := billing.ParseCardNumber(n); err == nil {
			return n
		}
	}
	t.Fatalf("no card number ends in %s", last4)
	return ""
}

// sandboxIBAN is a valid German IBAN ending in last4.
func sandboxIBAN(last4 string) string {
	bban := "37040044053201" + last4
	n, _ := new(big.Int).SetString(bban+"131400", 10) // D=13, E=14, check 00
	check := 98 - new(big.Int).Mod(n, big.NewInt(97)).Int64()
	return fmt.Sprintf("DE%02d%s", check, bban)
}

func ach(last4 string) billing.MethodDetails {
	return billing.MethodDetails{Type: billing.MethodDirectDebit, Scheme: billing.SchemeACH, HolderName: "Acme Ltd",
		RoutingNumber: "021000021", AccountNumber: "12345678" + last4, MakeDefault: true}
}

func (e *billingEnv) payEnv() {
	e.svc = e.service(e.store, sandboxpay.New())
	e.clock.Set(thursday)
}

func (e *billingEnv) addMethod(id string, d billing.MethodDetails) billing.PaymentMethod {
	e.t.Helper()
	m, err := e.svc.AddPaymentMethod(e.t.Context(), id, d)
	if err != nil {
		e.t.Fatal(err)
	}
	return m
}

func (e *billingEnv) payments(id string) []billing.Payment {
	e.t.Helper()
	ps, err := e.svc.Payments(e.t.Context(), id)
	if err != nil {
		e.t.Fatal(err)
	}
	return ps
}

func (e *billingEnv) settle(svc *services) int {
	e.t.Helper()
	n, err := svc.SettleDue(e.t.Context())
	if err != nil {
		e.t.Fatal(err)
	}
	return n
}

func wantPayProblem(t *testing.T, err error, typ problem.Type, field string) {
	t.Helper()
	var p *problem.Problem
	if !errors.As(err, &p) || p.Type != typ || p.Field != field {
		t.Fatalf("want %s naming %q, got %v (%+v)", typ, field, err, p)
	}
}

func TestCalendarAddBusinessDays(t *testing.T) {
	fri := time.Date(2026, 3, 20, 15, 4, 0, 0, time.UTC)
	holiday := billing.Calendar{Holiday: func(d time.Time) bool { return d.Equal(time.Date(2026, 3, 23, 0, 0, 0, 0, time.UTC)) }}
	tests := []struct {
		name string
		cal  billing.Calendar
		from time.Time
		n    int
		want time.Time
	}{
		{"zero", billing.Calendar{}, fri, 0, fri},
		{"friday plus one is monday", billing.Calendar{}, fri, 1, fri.AddDate(0, 0, 3)},
		{"friday plus three is wednesday", billing.Calendar{}, fri, 3, fri.AddDate(0, 0, 5)},
		{"thursday plus four is wednesday", billing.Calendar{}, thursday, 4, thursday.AddDate(0, 0, 6)},
		{"saturday plus one is monday", billing.Calendar{}, fri.AddDate(0, 0, 1), 1, fri.AddDate(0, 0, 3)},
		{"thursday plus six spans two weekends", billing.Calendar{}, thursday, 6, thursday.AddDate(0, 0, 8)},
		{"a holiday monday is skipped", holiday, fri, 1, fri.AddDate(0, 0, 4)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.cal.AddBusinessDays(tc.from, tc.n); !got.Equal(tc.want) {
				t.Fatalf("got %s (%s), want %s", got, got.Weekday(), tc.want)
			}
		})
	}
}

// TestCalendarProperty: n business days later is a business day, exactly n
// business days lie in between, and never more than n+2*(n/5+1) days pass.
func TestCalendarProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	var cal billing.Calendar
	for range 2000 {
		from := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(r.Int64N(int64(3 * 365 * 24 * time.Hour))))
		n := 1 + r.IntN(30)
		got := cal.AddBusinessDays(from, n)
		if !cal.BusinessDay(got) {
			t.Fatalf("%s + %d = %s, a %s", from, n, got, got.Weekday())
		}
		count := 0
		for d := from.AddDate(0, 0, 1); !d.After(got); d = d.AddDate(0, 0, 1) {
			if cal.BusinessDay(d) {
				count++
			}
		}
		days := int(got.Sub(from) / (24 * time.Hour))
		if count != n || days < n || days > n+2*(n/5+1) {
			t.Fatalf("%s + %d = %s: %d business days, %d days", from, n, got, count, days)
		}
	}
}

func TestPaymentMethodDetails(t *testing.T) {
	tests := []struct {
		name     string
		currency metering.Currency
		d        billing.MethodDetails
		field    string // "" when accepted
		last4    string
	}{
		{"ACH in USD", metering.USD, ach("6789"), "", "6789"},
		{"SEPA in EUR", metering.EUR, billing.MethodDetails{Type: "direct_debit", Scheme: "sepa", HolderName: "A", IBAN: "de89 3704 0044 0532 0130 00"}, "", "3000"},
		{"Bacs in GBP", metering.GBP, billing.MethodDetails{Type: "direct_debit", Scheme: "bacs", HolderName: "A", SortCode: "12-34-56", AccountNumber: "12345678"}, "", "5678"},
		{"card in any currency", metering.GBP, billing.MethodDetails{Type: "card", HolderName: "A", CardNumber: "4242 4242 4242 4242", ExpMonth: 12, ExpYear: 2030}, "", "4242"},
		{"SEPA in USD", metering.USD, billing.MethodDetails{Type: "direct_debit", Scheme: "sepa", HolderName: "A", IBAN: "DE89370400440532013000"}, "scheme", ""},
		{"ACH in GBP", metering.GBP, ach("6789"), "scheme", ""},
		{"Bacs in EUR", metering.EUR, billing.MethodDetails{Type: "direct_debit", Scheme: "bacs", HolderName: "A", SortCode: "123456", AccountNumber: "12345678"}, "scheme", ""},
		{"no scheme", metering.USD, billing.MethodDetails{Type: "direct_debit", HolderName: "A"}, "scheme", ""},
		{"unknown type", metering.USD, billing.MethodDetails{Type: "cheque", HolderName: "A"}, "type", ""},
		{"no holder", metering.USD, billing.MethodDetails{Type: "card", CardNumber: "4242424242424242", ExpMonth: 1, ExpYear: 2030}, "holder_name", ""},
		{"card check digit", metering.USD, billing.MethodDetails{Type: "card", HolderName: "A", CardNumber: "4242424242424241", ExpMonth: 1, ExpYear: 2030}, "card_number", ""},
		{"card expired", metering.USD, billing.MethodDetails{Type: "card", HolderName: "A", CardNumber: "4242424242424242", ExpMonth: 2, ExpYear: 2026}, "exp_year", ""},
		{"card month", metering.USD, billing.MethodDetails{Type: "card", HolderName: "A", CardNumber: "4242424242424242", ExpMonth: 13, ExpYear: 2030}, "exp_month", ""},
		{"card with an IBAN", metering.EUR, billing.MethodDetails{Type: "card", HolderName: "A", CardNumber: "4242424242424242", ExpMonth: 1, ExpYear: 2030, IBAN: "x"}, "iban", ""},
		{"IBAN check digits", metering.EUR, billing.MethodDetails{Type: "direct_debit", Scheme: "sepa", HolderName: "A", IBAN: "DE88370400440532013000"}, "iban", ""},
		{"routing check digit", metering.USD, billing.MethodDetails{Type: "direct_debit", Scheme: "ach", HolderName: "A", RoutingNumber: "021000022", AccountNumber: "1234"}, "routing_number", ""},
		{"ACH account too short", metering.USD, billing.MethodDetails{Type: "direct_debit", Scheme: "ach", HolderName: "A", RoutingNumber: "021000021", AccountNumber: "123"}, "account_number", ""},
		{"sort code", metering.GBP, billing.MethodDetails{Type: "direct_debit", Scheme: "bacs", HolderName: "A", SortCode: "12-34-5", AccountNumber: "12345678"}, "sort_code", ""},
		{"ACH with a sort code", metering.USD, billing.MethodDetails{Type: "direct_debit", Scheme: "ach", HolderName: "A", RoutingNumber: "021000021", AccountNumber: "1234", SortCode: "123456"}, "sort_code", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newBillingEnv(t)
			e.payEnv()
			a, err := e.svc.CreateAccount(t.Context(), "Acme", metering.PlanStarter, tc.currency)
			if err != nil {
				t.Fatal(err)
			}
			m, err := e.svc.AddPaymentMethod(t.Context(), a.ID, tc.d)
			if tc.field != "" {
				wantPayProblem(t, err, problem.InvalidInput, tc.field)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if m.Last4 != tc.last4 || !m.IsDefault || m.ProcessorRef == "" {
				t.Fatalf("method %+v", m)
			}
		})
	}
}

// TestScaleIsBilledOnlyByDirectDebit: a card can never be the default on
// Scale, and no upgrade reaches Scale without a direct-debit default.
func TestScaleIsBilledOnlyByDirectDebit(t *testing.T) {
	e := newBillingEnv(t)
	e.payEnv()
	ctx := t.Context()
	a := e.account(metering.PlanGrowth)
	card := e.addMethod(a.ID, billing.MethodDetails{Type: "card", HolderName: "A", CardNumber: sandboxCard(t, "4242"), ExpMonth: 1, ExpYear: 2030})
	if !card.IsDefault {
		t.Fatal("the first method (a card, on growth) is the default")
	}
	_, err := e.svc.ChangePlan(ctx, a.ID, metering.PlanScale)
	wantPayProblem(t, err, problem.DirectDebitRequired, "payment_method")
	if problem.DirectDebitRequired.Status() != 409 {
		t.Fatal("direct-debit-required must be a 409")
	}

	dd := ach("6789")
	dd.MakeDefault = false
	debit := e.addMethod(a.ID, dd)
	if debit.IsDefault {
		t.Fatal("a second method is not the default unless asked")
	}
	if _, err := e.svc.SetDefaultPaymentMethod(ctx, a.ID, debit.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.ChangePlan(ctx, a.ID, metering.PlanScale); err != nil {
		t.Fatal(err)
	}
	_, err = e.svc.SetDefaultPaymentMethod(ctx, a.ID, card.ID)
	wantPayProblem(t, err, problem.DirectDebitRequired, "payment_method")
	_, err = e.svc.AddPaymentMethod(ctx, a.ID, billing.MethodDetails{Type: "card", HolderName: "A", CardNumber: sandboxCard(t, "1111"),
		ExpMonth: 1, ExpYear: 2030, MakeDefault: true})
	wantPayProblem(t, err, problem.DirectDebitRequired, "payment_method")
	wantPayProblem(t, e.svc.RemovePaymentMethod(ctx, a.ID, debit.ID), problem.DirectDebitRequired, "payment_method")
	// A card that is not the default may be removed; another account's
	// method is not found.
	if err := e.svc.RemovePaymentMethod(ctx, a.ID, card.ID); err != nil {
		t.Fatal(err)
	}
	b := e.account(metering.PlanStarter)
	_, err = e.svc.SetDefaultPaymentMethod(ctx, b.ID, debit.ID)
	wantPayProblem(t, err, problem.NotFound, "payment_method")
	ms, _ := e.svc.PaymentMethods(ctx, a.ID)
	if len(ms) != 1 || ms[0].ID != debit.ID || !ms[0].IsDefault {
		t.Fatalf("methods %+v", ms)
	}
}

// TestFirstDirectDebitSettlesAfterBusinessDays: an upgrade's charge goes
// out as the first ACH debit on a Thursday; the account runs on
// introductory limits over the weekend and until the fourth business day,
// the next Wednesday, when two replicas settle it once.
func TestFirstDirectDebitSettlesAfterBusinessDays(t *testing.T) {
	e := newBillingEnv(t)
	e.payEnv()
	a := e.account(metering.PlanStarter)
	e.addMethod(a.ID, ach("6789"))
	if _, err := e.svc.ChangePlan(t.Context(), a.ID, metering.PlanGrowth); err != nil {
		t.Fatal(err)
	}
	ps := e.payments(a.ID)
	wednesday := thursday.AddDate(0, 0, 6)
	if len(ps) != 1 || ps[0].State != billing.PaymentPending || !ps[0].FirstDebit || ps[0].AmountCents != 120_00 ||
		ps[0].Purpose != billing.PurposeUpgrade || !ps[0].SettleBy.Equal(wednesday) {
		t.Fatalf("payments %+v", ps)
	}
	steps := []struct {
		at    time.Time
		state string
		quota int64
		hard  bool
	}{
		{thursday, metering.PaymentSettling, metering.IntroIncluded, true},
		{thursday.AddDate(0, 0, 2), metering.PaymentSettling, metering.IntroIncluded, true}, // Saturday
		{wednesday.Add(-time.Minute), metering.PaymentSettling, metering.IntroIncluded, true},
		{wednesday, metering.PaymentOK, 250_000, false},
	}
	other := e.service(e.store, sandboxpay.New())
	for _, st := range steps {
		e.clock.Set(st.at)
		var wg sync.WaitGroup
		var n [2]int
		for i, svc := range []*services{e.svc, other} {
			wg.Go(func() { n[i] = e.settle(svc) })
		}
		wg.Wait()
		if st.state == metering.PaymentOK && n[0]+n[1] != 1 {
			t.Fatalf("two replicas resolved %d payments, want 1", n[0]+n[1])
		}
		u := e.usage(a.ID)
		if u.PaymentState != st.state || u.MonthlyQuota != st.quota || u.OverageAllowed == st.hard {
			t.Fatalf("%s: usage %+v", st.at.Weekday(), u)
		}
	}
}

// TestIntroLimitsAreEnforced: while the first debit settles, admission
// refuses what passes the introductory volume and takes no overage.
func TestIntroLimitsAreEnforced(t *testing.T) {
	e := newBillingEnv(t)
	e.payEnv()
	a := e.account(metering.PlanGrowth)
	e.addMethod(a.ID, ach("6789"))
	if _, err := e.svc.ChangePlan(t.Context(), a.ID, metering.PlanScale); err != nil {
		t.Fatal(err)
	}
	l, err := e.svc.Limits(t.Context(), a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if l.Plan != metering.PlanScale || l.MonthlyQuota != metering.IntroIncluded || l.RatePerSecond != metering.IntroRatePerSecond || !l.HardStop {
		t.Fatalf("limits %+v", l)
	}
	if got := e.use(a.ID, metering.IntroIncluded); got != admission.Admitted {
		t.Fatalf("within the intro volume: %v", got)
	}
	if got := e.use(a.ID, 1); got != admission.QuotaExceeded {
		t.Fatalf("past the intro volume: %v", got)
	}
}

// TestFailedFirstDirectDebit: the first debit fails on its date; the
// account runs at Free limits until a payment settles (a retry from a new
// mandate), whatever its plan.
func TestFailedFirstDirectDebit(t *testing.T) {
	e := newBillingEnv(t)
	e.payEnv()
	ctx := t.Context()
	a := e.account(metering.PlanStarter)
	if _, err := e.ids.AddPortalUser(ctx, a.ID, "ann@example.com", "Ann"); err != nil {
		t.Fatal(err)
	}
	e.addMethod(a.ID, ach(sandboxpay.FailSuffix))
	if _, err := e.svc.ChangePlan(ctx, a.ID, metering.PlanGrowth); err != nil {
		t.Fatal(err)
	}
	e.clock.Set(thursday.AddDate(0, 0, 6))
	if n := e.settle(e.svc); n != 1 {
		t.Fatalf("settled %d", n)
	}
	e.settle(e.svc)
	failed := e.payments(a.ID)[0]
	if failed.State != metering.PaymentFailed || failed.FailureReason == "" {
		t.Fatalf("payment %+v", failed)
	}
	// The people of the account are told once, without a link.
	mails, err := e.nt.Outbox(ctx, a.ID)
	if err != nil || len(mails) != 1 || mails[0].To != "ann@example.com" || mails[0].Milestone != notify.MilestonePaymentFailed+failed.ID ||
		!strings.Contains(mails[0].Body, "$120.00") || !strings.Contains(mails[0].Body, "Free limits") || strings.Contains(mails[0].Body, "http") {
		t.Fatalf("failure mail %+v %v", mails, err)
	}
	free, _ := metering.PlanByID(metering.PlanFree)
	u := e.usage(a.ID)
	if u.PaymentState != metering.PaymentFailed || u.Plan != metering.PlanGrowth || u.MonthlyQuota != free.IncludedConversions || u.OverageAllowed {
		t.Fatalf("usage after the failure %+v", u)
	}
	if got := e.use(a.ID, free.IncludedConversions); got != admission.Admitted {
		t.Fatalf("within Free's volume: %v", got)
	}
	if got := e.use(a.ID, 1); got != admission.QuotaExceeded {
		t.Fatalf("past Free's volume: %v", got)
	}

	// A new mandate and a retry: still Free limits until it settles. It is
	// still a first debit (none settled), so 3 to 6 business days.
	good := e.addMethod(a.ID, ach("6789"))
	retry, err := e.svc.RetryPayment(ctx, a.ID, failed.ID)
	if err != nil {
		t.Fatal(err)
	}
	if retry.MethodID != good.ID || retry.RetryOf != failed.ID || !retry.FirstDebit || retry.AmountCents != failed.AmountCents {
		t.Fatalf("retry %+v", retry)
	}
	if u := e.usage(a.ID); u.PaymentState != metering.PaymentFailed {
		t.Fatalf("while the retry settles: %+v", u)
	}
	_, err = e.svc.RetryPayment(ctx, a.ID, failed.ID)
	wantPayProblem(t, err, problem.Conflict, "payment") // one retry at a time
	_, err = e.svc.RetryPayment(ctx, a.ID, retry.ID)
	wantPayProblem(t, err, problem.Conflict, "payment")
	// An upgrade an hour before the retry settles starts as a first debit
	// too (none has settled yet); once the retry settles the mandate is
	// proven and the pending upgrade no longer holds the account on
	// introductory limits.
	e.clock.Set(retry.SettleBy.Add(-time.Hour))
	if _, err := e.svc.ChangePlan(ctx, a.ID, metering.PlanScale); err != nil {
		t.Fatal(err)
	}
	upgrade := e.payments(a.ID)
	if p := upgrade[len(upgrade)-1]; p.Purpose != billing.PurposeUpgrade || !p.FirstDebit || p.State != billing.PaymentPending ||
		!p.SettleBy.After(retry.SettleBy) {
		t.Fatalf("the upgrade's payment %+v", p)
	}
	e.clock.Set(retry.SettleBy)
	if n := e.settle(e.svc); n != 1 {
		t.Fatalf("settled %d", n)
	}
	scale, _ := metering.PlanByID(metering.PlanScale)
	if u := e.usage(a.ID); u.PaymentState != metering.PaymentOK || u.MonthlyQuota != scale.IncludedConversions || !u.OverageAllowed {
		t.Fatalf("after the retry settled, the upgrade pending: %+v", u)
	}
}

// TestForcedSandboxOutcomes: a debit the sandbox delays stays pending past
// its date until the operator settles it; outcomes are forced once; a
// declined card fails at once.
func TestForcedSandboxOutcomes(t *testing.T) {
	e := newBillingEnv(t)
	e.payEnv()
	ctx := t.Context()
	a := e.account(metering.PlanStarter)
	e.addMethod(a.ID, ach(sandboxpay.DelaySuffix))
	if _, err := e.svc.ChangePlan(ctx, a.ID, metering.PlanGrowth); err != nil {
		t.Fatal(err)
	}
	p := e.payments(a.ID)[0]
	e.clock.Set(p.SettleBy.AddDate(0, 0, 10))
	if n := e.settle(e.svc); n != 0 {
		t.Fatalf("a delayed debit settled: %d", n)
	}
	delayed, err := e.svc.ForcePaymentOutcome(ctx, p.ID, billing.OutcomeDelay, 2)
	if err != nil {
		t.Fatal(err)
	}
	if want := (billing.Calendar{}).AddBusinessDays(p.SettleBy, 2); !delayed.SettleBy.Equal(want) {
		t.Fatalf("delayed to %s, want %s", delayed.SettleBy, want)
	}
	settled, err := e.svc.ForcePaymentOutcome(ctx, p.ID, billing.OutcomeSettle, 0)
	if err != nil || settled.State != billing.PaymentSettled {
		t.Fatalf("forced settle: %+v %v", settled, err)
	}
	_, err = e.svc.ForcePaymentOutcome(ctx, p.ID, billing.OutcomeFail, 0)
	wantPayProblem(t, err, problem.Conflict, "payment")
	_, err = e.svc.ForcePaymentOutcome(ctx, "nope", billing.OutcomeFail, 0)
	wantPayProblem(t, err, problem.NotFound, "payment")
	if u := e.usage(a.ID); u.PaymentState != metering.PaymentOK {
		t.Fatalf("usage %+v", u)
	}

	b := e.account(metering.PlanStarter)
	e.addMethod(b.ID, billing.MethodDetails{Type: "card", HolderName: "B", CardNumber: sandboxCard(t, sandboxpay.FailSuffix), ExpMonth: 1, ExpYear: 2030})
	if _, err := e.svc.ChangePlan(ctx, b.ID, metering.PlanGrowth); err != nil {
		t.Fatal(err)
	}
	if ps := e.payments(b.ID); len(ps) != 1 || ps[0].State != metering.PaymentFailed {
		t.Fatalf("declined card: %+v", ps)
	}
	if u := e.usage(b.ID); u.PaymentState != metering.PaymentFailed {
		t.Fatalf("usage %+v", u)
	}

	// Without the sandbox nothing can be forced.
	plain := e.service(e.store, nil)
	_, err = plain.ForcePaymentOutcome(ctx, p.ID, billing.OutcomeSettle, 0)
	wantPayProblem(t, err, problem.Conflict, "")
}

// TestInvoiceIsCollected: an invoice is collected at its close, less what
// the period's upgrade already collected; a later debit is not a first one.
func TestInvoiceIsCollected(t *testing.T) {
	e := newBillingEnv(t)
	e.payEnv()
	a := e.account(metering.PlanStarter)
	e.addMethod(a.ID, ach("6789"))
	if _, err := e.svc.ChangePlan(t.Context(), a.ID, metering.PlanGrowth); err != nil {
		t.Fatal(err)
	}
	e.clock.Set(thursday.AddDate(0, 0, 6))
	e.settle(e.svc)
	e.clock.Set(thursday.AddDate(0, 1, 1))
	invs, err := e.svc.ClosePeriods(t.Context(), a.ID)
	if err != nil || len(invs) != 1 {
		t.Fatalf("invoices %+v %v", invs, err)
	}
	ps := e.payments(a.ID)
	// Starter's $29 flat + the $120 upgrade; the upgrade was collected.
	if len(ps) != 2 || ps[1].Purpose != billing.PurposeInvoice || ps[1].InvoiceID != invs[0].ID ||
		ps[1].AmountCents != invs[0].TotalCents-120_00 || ps[1].FirstDebit || ps[1].State != billing.PaymentPending {
		t.Fatalf("invoice %+v, payments %+v", invs[0], ps)
	}
	if u := e.usage(a.ID); u.PaymentState != metering.PaymentOK {
		t.Fatalf("a later debit on its way leaves the account ok: %+v", u)
	}
}

// TestAlertsFollowThePlanWhileSettling: 75 % of the introductory volume is
// not 75 % of the plan's, so no alert is sent for it.
func TestAlertsFollowThePlanWhileSettling(t *testing.T) {
	e := newBillingEnv(t)
	e.payEnv()
	a := e.account(metering.PlanStarter)
	if _, err := e.ids.AddPortalUser(t.Context(), a.ID, "ann@example.com", "Ann"); err != nil {
		t.Fatal(err)
	}
	e.addMethod(a.ID, ach("6789"))
	if _, err := e.svc.ChangePlan(t.Context(), a.ID, metering.PlanGrowth); err != nil {
		t.Fatal(err)
	}
	if got := e.use(a.ID, metering.IntroIncluded*9/10); got != admission.Admitted {
		t.Fatalf("use: %v", got)
	}
	n, err := e.nt.CheckAlerts(t.Context(), e.svc, a.ID)
	if err != nil || n != 0 {
		t.Fatalf("alerts at 90 %% of the introductory volume: %d %v", n, err)
	}
}

// TestFirstDebitDaysPerScheme: the sandbox's first debit takes 4 business
// days over ACH, 5 over SEPA and 3 over Bacs, all within the 3 to 6 the
// domain allows, counted from a Thursday across the weekend.
func TestFirstDebitDaysPerScheme(t *testing.T) {
	tests := []struct {
		currency metering.Currency
		details  billing.MethodDetails
		days     int
	}{
		{metering.USD, ach("6789"), 4},
		{metering.EUR, billing.MethodDetails{Type: "direct_debit", Scheme: "sepa", HolderName: "A", IBAN: sandboxIBAN("6789")}, 5},
		{metering.GBP, billing.MethodDetails{Type: "direct_debit", Scheme: "bacs", HolderName: "A", SortCode: "12-34-56", AccountNumber: "12346789"}, 3},
	}
	for _, tc := range tests {
		t.Run(string(tc.currency), func(t *testing.T) {
			e := newBillingEnv(t)
			e.payEnv()
			a, err := e.svc.CreateAccount(t.Context(), "Acme", metering.PlanStarter, tc.currency)
			if err != nil {
				t.Fatal(err)
			}
			if m := e.addMethod(a.ID, tc.details); m.Last4 != "6789" {
				t.Fatalf("method %+v", m)
			}
			if _, err := e.svc.ChangePlan(t.Context(), a.ID, metering.PlanGrowth); err != nil {
				t.Fatal(err)
			}
			p := e.payments(a.ID)[0]
			want := (billing.Calendar{}).AddBusinessDays(thursday, tc.days)
			if !p.FirstDebit || !p.SettleBy.Equal(want) || p.Currency != tc.currency {
				t.Fatalf("payment %+v, want settlement %s", p, want)
			}
		})
	}
}

// TestFailedUpgradeIsCollectedOnce: an upgrade's charge that failed is
// collected once, whichever comes first: a retry pending when the period
// closes is left out of the invoice's collection; once the period is
// invoiced, the invoice collects the charge and the failed upgrade payment
// can no longer be retried.
func TestFailedUpgradeIsCollectedOnce(t *testing.T) {
	ctx := t.Context()
	failUpgrade := func(e *billingEnv) (metering.Account, billing.Payment) {
		a := e.account(metering.PlanStarter)
		e.addMethod(a.ID, ach(sandboxpay.FailSuffix))
		if _, err := e.svc.ChangePlan(ctx, a.ID, metering.PlanGrowth); err != nil {
			t.Fatal(err)
		}
		e.clock.Set(thursday.AddDate(0, 0, 6))
		e.settle(e.svc)
		failed := e.payments(a.ID)[0]
		if failed.Purpose != billing.PurposeUpgrade || failed.State != metering.PaymentFailed {
			t.Fatalf("upgrade payment %+v", failed)
		}
		e.addMethod(a.ID, ach("6789"))
		return a, failed
	}

	t.Run("retried before the close", func(t *testing.T) {
		e := newBillingEnv(t)
		e.payEnv()
		a, failed := failUpgrade(e)
		retry, err := e.svc.RetryPayment(ctx, a.ID, failed.ID)
		if err != nil {
			t.Fatal(err)
		}
		e.clock.Set(thursday.AddDate(0, 1, 1))
		invs, err := e.svc.ClosePeriods(ctx, a.ID)
		if err != nil || len(invs) != 1 {
			t.Fatalf("invoices %+v %v", invs, err)
		}
		ps := e.payments(a.ID)
		last := ps[len(ps)-1]
		if last.Purpose != billing.PurposeInvoice || last.AmountCents != invs[0].TotalCents-retry.AmountCents {
			t.Fatalf("the invoice (total %d) collects %+v; the retry collects %d", invs[0].TotalCents, last, retry.AmountCents)
		}
	})
	t.Run("invoiced before a retry", func(t *testing.T) {
		e := newBillingEnv(t)
		e.payEnv()
		a, failed := failUpgrade(e)
		e.clock.Set(thursday.AddDate(0, 1, 1))
		invs, err := e.svc.ClosePeriods(ctx, a.ID)
		if err != nil || len(invs) != 1 {
			t.Fatalf("invoices %+v %v", invs, err)
		}
		ps := e.payments(a.ID)
		if last := ps[len(ps)-1]; last.Purpose != billing.PurposeInvoice || last.AmountCents != invs[0].TotalCents {
			t.Fatalf("the invoice (total %d) collects %+v", invs[0].TotalCents, last)
		}
		_, err = e.svc.RetryPayment(ctx, a.ID, failed.ID)
		wantPayProblem(t, err, problem.Conflict, "payment")
	})
}
