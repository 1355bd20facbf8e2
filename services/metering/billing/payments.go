package billing

import (
	"context"
	"errors"
	"fmt"
	"github.com/ledgerlane/platform/services/metering"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/services/metering/notify"
)

// Payment methods and settlement (docs/billing.md, "Payment methods"):
//
//   - An account pays by card or by bank direct debit in the scheme of its
//     billing currency: ACH (USD), SEPA (EUR), Bacs (GBP).
//   - A plan that is DirectDebitOnly (Scale) never has a card as its default
//     method: making one the default, upgrading without a direct-debit
//     default, or removing the default are refused (direct-debit-required).
//   - An upgrade's charge is collected at once from the default method, and
//     each invoice at its close (less what the period's upgrades collected).
//     A card settles or fails at once; a direct debit is pending until its
//     settlement date, 3 to 6 business days after it starts for the
//     account's first direct debit.
//   - Until the first direct debit settles the account runs on introductory
//     limits; after a payment fails it runs at Free limits until a payment
//     settles. The limits ride on the credential lookup as the plan's do.

// Payment method types and schemes.
const (
	MethodCard        = "card"
	MethodDirectDebit = "direct_debit"

	SchemeCard = "card"
	SchemeACH  = "ach"
	SchemeSEPA = "sepa"
	SchemeBacs = "bacs"
)

// Payment states. The account's payment standing the limits follow
// (Standing) is metering.PaymentOK, metering.PaymentSettling or
// metering.PaymentFailed.
const (
	PaymentPending = "pending"
	PaymentSettled = "settled"
	// PaymentFailed is both a payment's state and the standing: a payment
	// failed and none settled since.
	PaymentFailed = metering.PaymentFailed
)

// Payment purposes.
const (
	PurposeUpgrade = "upgrade"
	PurposeInvoice = "invoice"
	PurposeRetry   = "retry"
)

// SchemeFor is the direct-debit scheme of a billing currency.
func SchemeFor(c metering.Currency) string {
	switch c {
	case metering.USD:
		return SchemeACH
	case metering.EUR:
		return SchemeSEPA
	case metering.GBP:
		return SchemeBacs
	}
	return ""
}

// PaymentMethod is a card or a direct-debit mandate of an account. Only the
// last four characters of the number (card number, account number or IBAN)
// are kept; the processor holds the rest behind ProcessorRef.
type PaymentMethod struct {
	ID        string // UUID
	AccountID string
	Type      string // MethodCard or MethodDirectDebit
	Scheme    string // SchemeCard, or the direct-debit scheme
	// Brand is a card's network ("visa", "mastercard", "amex", "card"); the
	// bank's sort code or routing number for a debit, which the holder
	// recognises and which is not secret.
	Brand      string
	Last4      string
	HolderName string
	// ProcessorRef is the processor's token or mandate id.
	ProcessorRef string
	IsDefault    bool
	CreatedAt    time.Time
	RemovedAt    *time.Time
}

// Payment is one collection from a payment method.
type Payment struct {
	ID          string // UUID
	AccountID   string
	MethodID    string
	MethodType  string
	Scheme      string
	Purpose     string // PurposeUpgrade, PurposeInvoice or PurposeRetry
	InvoiceID   string // PurposeInvoice only
	RetryOf     string // PurposeRetry only: the failed payment it retries
	PeriodStart time.Time
	AmountCents int64
	Currency    metering.Currency
	// FirstDebit: the account's first direct debit (none had settled when
	// it started); it runs the account on introductory limits while pending.
	FirstDebit   bool
	State        string // PaymentPending, PaymentSettled or PaymentFailed
	ProcessorRef string
	CreatedAt    time.Time
	// SettleBy is when the outcome is due: the settlement date.
	SettleBy      time.Time
	ResolvedAt    *time.Time
	FailureReason string
	// IdempotencyKey goes with the processor call that starts the payment
	// (not stored): an invoice's attempt n carries "invoice:<id>:<n>", so
	// a processor that sees the same key twice starts one collection.
	IdempotencyKey string
}

// MethodDetails is what a person enters for a new payment method. Which
// fields apply depends on Type and Scheme; the others must be empty.
type MethodDetails struct {
	Type       string
	Scheme     string // direct debit: SchemeACH, SchemeSEPA or SchemeBacs
	HolderName string
	// Card.
	CardNumber        string
	ExpMonth, ExpYear int
	// SEPA.
	IBAN string
	// ACH: RoutingNumber and AccountNumber; Bacs: SortCode and AccountNumber.
	RoutingNumber string
	SortCode      string
	AccountNumber string
	// MakeDefault asks for the new method to be the default.
	MakeDefault bool
}

// Collection is the processor's answer to a payment it was asked to start.
type Collection struct {
	Ref string
	// State is PaymentPending, or PaymentSettled or PaymentFailed when the
	// outcome is known at once (cards).
	State  string
	Reason string // failed only
	// BusinessDays until a pending payment's outcome is due.
	BusinessDays int
}

// PaymentProcessor moves the money. The domain asks it to set methods up and
// start collections, and for a pending payment's outcome once it is due; a
// processor that pushes outcomes instead (webhooks) calls RecordPaymentOutcome.
// Adapters live outside this package: sandboxpay (make run, tests); a
// deployment would plug in GoCardless for ACH, SEPA and Bacs mandates and
// Stripe for cards (docs/billing.md).
type PaymentProcessor interface {
	// SetUp registers a checked method: tokenizes the card or creates the
	// mandate, and answers its reference. details is in canonical form.
	SetUp(ctx context.Context, accountID string, details MethodDetails) (ref string, err error)
	// Collect starts collecting p from m; p.IdempotencyKey, when set,
	// is the processor's idempotency key. An error wrapping
	// ErrPaymentRefused is definitive (the processor will not collect this
	// payment: a revoked mandate, a closed account); any other error is
	// transient (unreachable, timed out, a 5xx) and the invoice's
	// collection is retried (collection.go).
	Collect(ctx context.Context, m PaymentMethod, p Payment) (Collection, error)
	// Outcome is a due pending payment's outcome: PaymentSettled,
	// PaymentFailed (with a reason) or still PaymentPending.
	Outcome(ctx context.Context, m PaymentMethod, p Payment) (state, reason string, err error)
}

// SandboxProcessor is a processor whose outcomes an operator or a test may
// choose (ForcePaymentOutcome refuses any other).
type SandboxProcessor interface {
	PaymentProcessor
	Sandbox() bool
}

// First direct debits settle in 3 to 6 business days: a processor's
// estimate outside that range is clamped into it.
const (
	firstDebitMinDays = 3
	firstDebitMaxDays = 6
)

func noProcessor() error {
	return problem.New(problem.Unavailable, "no payment processor is configured")
}

func directDebitRequired(detail string) error {
	return problem.New(problem.DirectDebitRequired, detail).WithField("payment_method")
}

// checkDetails checks d against the account's currency and answers it in
// canonical form, and the brand and last four characters to keep.
func checkDetails(a metering.Account, d MethodDetails, now time.Time) (MethodDetails, string, string, error) {
	d.HolderName = strings.TrimSpace(d.HolderName)
	switch {
	case d.HolderName == "":
		return d, "", "", problem.New(problem.InvalidInput, "holder_name is required").WithField("holder_name")
	case utf8.RuneCountInString(d.HolderName) > metering.MaxNameLen:
		return d, "", "", problem.New(problem.InvalidInput, fmt.Sprintf("holder_name is longer than %d characters", metering.MaxNameLen)).WithField("holder_name")
	}
	extra := func(field string) error {
		return problem.New(problem.InvalidInput, field+" does not apply to this payment method").WithField(field)
	}
	switch d.Type {
	case MethodCard:
		if d.Scheme != "" && d.Scheme != SchemeCard {
			return d, "", "", problem.New(problem.InvalidInput, `a card's scheme is "card" (or empty)`).WithField("scheme")
		}
		for f, v := range map[string]string{"iban": d.IBAN, "routing_number": d.RoutingNumber, "sort_code": d.SortCode, "account_number": d.AccountNumber} {
			if v != "" {
				return d, "", "", extra(f)
			}
		}
		num, brand, err := ParseCardNumber(d.CardNumber)
		if err != nil {
			return d, "", "", err
		}
		if d.ExpMonth < 1 || d.ExpMonth > 12 {
			return d, "", "", problem.New(problem.InvalidInput, "exp_month must be 1 to 12").WithField("exp_month")
		}
		// A card is valid to the end of its expiry month.
		if d.ExpYear < now.Year() || d.ExpYear > now.Year()+20 || (d.ExpYear == now.Year() && time.Month(d.ExpMonth) < now.Month()) {
			return d, "", "", problem.New(problem.InvalidInput, "the card has expired or exp_year is not a four-digit year").WithField("exp_year")
		}
		d.Scheme, d.CardNumber = SchemeCard, num
		return d, brand, num[len(num)-4:], nil
	case MethodDirectDebit:
	default:
		return d, "", "", problem.New(problem.InvalidInput, `type must be "card" or "direct_debit"`).WithField("type")
	}
	want := SchemeFor(a.BillingCurrency)
	if d.Scheme != want {
		return d, "", "", problem.New(problem.InvalidInput, fmt.Sprintf("the account is billed in %s, so its direct debit scheme must be %q (%s)",
			strings.ToUpper(string(a.BillingCurrency)), want, strings.ToUpper(want))).WithField("scheme")
	}
	if d.CardNumber != "" {
		return d, "", "", extra("card_number")
	}
	if d.ExpMonth != 0 || d.ExpYear != 0 {
		return d, "", "", extra("exp_month")
	}
	var err error
	switch d.Scheme {
	case SchemeSEPA:
		for f, v := range map[string]string{"routing_number": d.RoutingNumber, "sort_code": d.SortCode, "account_number": d.AccountNumber} {
			if v != "" {
				return d, "", "", extra(f)
			}
		}
		if d.IBAN, err = ParseIBAN(d.IBAN); err != nil {
			return d, "", "", err
		}
		return d, d.IBAN[:2], d.IBAN[len(d.IBAN)-4:], nil
	case SchemeACH:
		if d.IBAN != "" {
			return d, "", "", extra("iban")
		}
		if d.SortCode != "" {
			return d, "", "", extra("sort_code")
		}
		if d.RoutingNumber, err = ParseRoutingNumber(d.RoutingNumber); err != nil {
			return d, "", "", err
		}
		if d.AccountNumber, err = ParseUSAccountNumber(d.AccountNumber); err != nil {
			return d, "", "", err
		}
		return d, d.RoutingNumber, d.AccountNumber[len(d.AccountNumber)-4:], nil
	default: // Bacs
		if d.IBAN != "" {
			return d, "", "", extra("iban")
		}
		if d.RoutingNumber != "" {
			return d, "", "", extra("routing_number")
		}
		if d.SortCode, err = ParseSortCode(d.SortCode); err != nil {
			return d, "", "", err
		}
		if d.AccountNumber, err = ParseUKAccountNumber(d.AccountNumber); err != nil {
			return d, "", "", err
		}
		return d, d.SortCode[:2] + "-" + d.SortCode[2:4] + "-" + d.SortCode[4:], d.AccountNumber[4:], nil
	}
}

// AddPaymentMethod checks d, sets it up with the processor and stores it.
// The account's first method becomes its default, when it may be; a card
// asked to be the default of a direct-debit-only plan is refused before
// anything is set up.
func (s *Service) AddPaymentMethod(ctx context.Context, accountID string, d MethodDetails) (PaymentMethod, error) {
	a, err := s.accounts.CurrentAccount(ctx, accountID)
	if err != nil {
		return PaymentMethod{}, err
	}
	if s.processor == nil {
		return PaymentMethod{}, noProcessor()
	}
	d, brand, last4, err := checkDetails(a, d, s.timestamp())
	if err != nil {
		return PaymentMethod{}, err
	}
	plan, _ := metering.PlanByID(a.PlanID)
	if d.MakeDefault && d.Type == MethodCard && plan.DirectDebitOnly {
		return PaymentMethod{}, directDebitRequired("the " + plan.ID + " plan is billed only by direct debit: a card cannot be its default payment method")
	}
	existing, err := s.store.PaymentMethods(ctx, accountID)
	if err != nil {
		return PaymentMethod{}, fmt.Errorf("payment methods: %w", err)
	}
	if len(existing) >= maxPaymentMethods {
		return PaymentMethod{}, problem.New(problem.Conflict, fmt.Sprintf("an account has at most %d payment methods; remove one first", maxPaymentMethods))
	}
	ref, err := s.processor.SetUp(ctx, accountID, d)
	if err != nil {
		return PaymentMethod{}, err
	}
	hasDefault := slices.ContainsFunc(existing, func(m PaymentMethod) bool { return m.IsDefault })
	m := PaymentMethod{
		ID: uuid.NewString(), AccountID: accountID, Type: d.Type, Scheme: d.Scheme, Brand: brand, Last4: last4,
		HolderName: d.HolderName, ProcessorRef: ref, CreatedAt: s.timestamp(),
		IsDefault: d.MakeDefault || (!hasDefault && (d.Type == MethodDirectDebit || !plan.DirectDebitOnly)),
	}
	if err := s.store.AddPaymentMethod(ctx, m); err != nil {
		return PaymentMethod{}, fmt.Errorf("add payment method: %w", err)
	}
	s.log.InfoContext(ctx, "payment method added", "account_id", accountID, "method_id", m.ID, "type", m.Type, "scheme", m.Scheme, "default", m.IsDefault)
	if m.IsDefault {
		s.collectOpenInvoices(ctx, accountID)
	}
	return m, nil
}

// maxPaymentMethods bounds an account's methods (a listing, not a wallet).
const maxPaymentMethods = 10

// PaymentMethods returns the account's methods that were not removed,
// oldest first.
func (s *Service) PaymentMethods(ctx context.Context, accountID string) ([]PaymentMethod, error) {
	if _, err := s.accounts.Account(ctx, accountID); err != nil {
		return nil, err
	}
	return s.store.PaymentMethods(ctx, accountID)
}

func (s *Service) method(ctx context.Context, accountID, methodID string) (PaymentMethod, error) {
	ms, err := s.store.PaymentMethods(ctx, accountID)
	if err != nil {
		return PaymentMethod{}, err
	}
	for _, m := range ms {
		if m.ID == methodID {
			return m, nil
		}
	}
	return PaymentMethod{}, problem.New(problem.NotFound, "no such payment method").WithField("payment_method")
}

// SetDefaultPaymentMethod makes one of the account's methods its default.
// A card on a direct-debit-only plan is refused (direct-debit-required);
// another account's method is not found.
func (s *Service) SetDefaultPaymentMethod(ctx context.Context, accountID, methodID string) (PaymentMethod, error) {
	a, err := s.accounts.CurrentAccount(ctx, accountID)
	if err != nil {
		return PaymentMethod{}, err
	}
	m, err := s.method(ctx, accountID, methodID)
	if err != nil {
		return PaymentMethod{}, err
	}
	if plan, _ := metering.PlanByID(a.PlanID); m.Type == MethodCard && plan.DirectDebitOnly {
		return PaymentMethod{}, directDebitRequired("the " + plan.ID + " plan is billed only by direct debit: a card cannot be its default payment method")
	}
	if err := s.store.SetDefaultPaymentMethod(ctx, accountID, methodID); err != nil {
		return PaymentMethod{}, fmt.Errorf("set default payment method: %w", err)
	}
	m.IsDefault = true
	s.log.InfoContext(ctx, "default payment method set", "account_id", accountID, "method_id", methodID)
	s.collectOpenInvoices(ctx, accountID)
	return m, nil
}

// RemovePaymentMethod removes one of the account's methods. The default of
// a direct-debit-only plan stays until another direct debit replaces it.
// Payments already started from it carry on.
func (s *Service) RemovePaymentMethod(ctx context.Context, accountID, methodID string) error {
	a, err := s.accounts.CurrentAccount(ctx, accountID)
	if err != nil {
		return err
	}
	m, err := s.method(ctx, accountID, methodID)
	if err != nil {
		return err
	}
	if plan, _ := metering.PlanByID(a.PlanID); m.IsDefault && plan.DirectDebitOnly {
		return directDebitRequired("the " + plan.ID + " plan is billed only by direct debit: make another direct debit the default before removing this one")
	}
	if err := s.store.RemovePaymentMethod(ctx, accountID, methodID, s.timestamp()); err != nil {
		return fmt.Errorf("remove payment method: %w", err)
	}
	s.log.InfoContext(ctx, "payment method removed", "account_id", accountID, "method_id", methodID)
	return nil
}

// Payments returns the account's payments, oldest first.
func (s *Service) Payments(ctx context.Context, accountID string) ([]Payment, error) {
	if _, err := s.accounts.Account(ctx, accountID); err != nil {
		return nil, err
	}
	return s.store.Payments(ctx, accountID)
}

// checkPaymentFor refuses a move onto plan to that the account's payment
// methods cannot pay for: a direct-debit-only plan needs a direct-debit
// default method.
func (s *Service) checkPaymentFor(ctx context.Context, a metering.Account, to metering.Plan) error {
	if !to.DirectDebitOnly {
		return nil
	}
	ms, err := s.store.PaymentMethods(ctx, a.ID)
	if err != nil {
		return fmt.Errorf("payment methods: %w", err)
	}
	for _, m := range ms {
		if m.IsDefault && m.Type == MethodDirectDebit {
			return nil
		}
	}
	return directDebitRequired(fmt.Sprintf("the %s plan is billed only by direct debit: add a %s direct debit and make it the default payment method first",
		to.ID, strings.ToUpper(SchemeFor(a.BillingCurrency))))
}

// collect starts a payment of amount from the account's default method and
// stores it. Without a default method nothing is collected (the amount
// stays on the invoice) and the zero Payment is returned. p.ID is kept when
// set (an invoice's attempt derives it). When the processor answers an
// error the payment is returned unstored, with its method, beside it.
func (s *Service) collect(ctx context.Context, a metering.Account, p Payment) (Payment, error) {
	if s.processor == nil || p.AmountCents <= 0 {
		return Payment{}, nil
	}
	ms, err := s.store.PaymentMethods(ctx, a.ID)
	if err != nil {
		return Payment{}, fmt.Errorf("payment methods: %w", err)
	}
	i := slices.IndexFunc(ms, func(m PaymentMethod) bool { return m.IsDefault })
	if i < 0 {
		return Payment{}, nil
	}
	m := ms[i]
	now := s.timestamp()
	if p.ID == "" {
		p.ID = uuid.NewString()
	}
	p.AccountID, p.MethodID, p.MethodType, p.Scheme = a.ID, m.ID, m.Type, m.Scheme
	p.Currency, p.CreatedAt, p.State = a.BillingCurrency, now, PaymentPending
	if m.Type == MethodDirectDebit {
		prior, err := s.store.Payments(ctx, a.ID)
		if err != nil {
			return Payment{}, fmt.Errorf("payments: %w", err)
		}
		p.FirstDebit = !slices.ContainsFunc(prior, func(q Payment) bool {
			return q.MethodType == MethodDirectDebit && q.State == PaymentSettled
		})
	}
	c, err := s.processor.Collect(ctx, m, p)
	if err != nil {
		return p, fmt.Errorf("collect: %w", err)
	}
	p.ProcessorRef, p.SettleBy = c.Ref, now
	switch c.State {
	case PaymentSettled, PaymentFailed:
		p.State, p.FailureReason, p.ResolvedAt = c.State, c.Reason, &now
	default:
		days := c.BusinessDays
		if p.FirstDebit {
			days = min(max(days, firstDebitMinDays), firstDebitMaxDays)
		}
		p.SettleBy = s.calendar.AddBusinessDays(now, days)
	}
	if err := s.store.CreatePayment(ctx, p); err != nil {
		return Payment{}, fmt.Errorf("create payment: %w", err)
	}
	s.paymentRecorded(ctx, p)
	s.log.InfoContext(ctx, "payment started", "account_id", a.ID, "payment_id", p.ID, "purpose", p.Purpose,
		"amount_cents", p.AmountCents, "scheme", p.Scheme, "state", p.State, "first_debit", p.FirstDebit, "settle_by", p.SettleBy)
	return p, nil
}

// RetryPayment collects a failed payment's amount again, from the account's
// default method now. It answers the new payment.
func (s *Service) RetryPayment(ctx context.Context, accountID, paymentID string) (Payment, error) {
	a, err := s.accounts.CurrentAccount(ctx, accountID)
	if err != nil {
		return Payment{}, err
	}
	old, err := s.store.GetPayment(ctx, paymentID)
	if errors.Is(err, metering.ErrNotFound) || (err == nil && old.AccountID != accountID) {
		return Payment{}, problem.New(problem.NotFound, "no such payment").WithField("payment")
	}
	if err != nil {
		return Payment{}, err
	}
	if old.State != PaymentFailed {
		return Payment{}, problem.New(problem.Conflict, "only a failed payment can be retried").WithField("payment")
	}
	prior, err := s.store.Payments(ctx, accountID)
	if err != nil {
		return Payment{}, fmt.Errorf("payments: %w", err)
	}
	// One retry at a time: a second click must not collect twice.
	if slices.ContainsFunc(prior, func(q Payment) bool { return q.RetryOf == old.ID && q.State != PaymentFailed }) {
		return Payment{}, problem.New(problem.Conflict, "the payment is already retried").WithField("payment")
	}
	// A failed upgrade charge whose period has been invoiced since is the
	// invoice's to collect (owed counts it): retrying it would collect it
	// twice.
	if root := retryRoot(prior, old); root.Purpose == PurposeUpgrade {
		invs, err := s.store.Invoices(ctx, accountID)
		if err != nil {
			return Payment{}, fmt.Errorf("invoices: %w", err)
		}
		if slices.ContainsFunc(invs, func(inv Invoice) bool { return inv.PeriodStart.Equal(root.PeriodStart) }) {
			return Payment{}, problem.New(problem.Conflict,
				"this upgrade charge is now part of the period's invoice; retry the invoice's payment instead").WithField("payment")
		}
	}
	if s.processor == nil {
		return Payment{}, noProcessor()
	}
	p, err := s.collect(ctx, a, Payment{Purpose: PurposeRetry, RetryOf: old.ID, InvoiceID: old.InvoiceID, PeriodStart: old.PeriodStart, AmountCents: old.AmountCents})
	if err != nil {
		return Payment{}, err
	}
	if p.ID == "" {
		return Payment{}, problem.New(problem.Conflict, "the account has no default payment method to collect from").WithField("payment_method")
	}
	if p.State == PaymentSettled {
		s.invoicePaymentResolved(ctx, p) // a card settles at once
	}
	return p, nil
}

// SettleDue asks the processor for the outcome of every pending payment
// whose settlement date has come, and records the outcomes it knows. Every
// replica may run it at once: a payment leaves pending once, and a
// replica that loses the race records nothing. It answers how many
// payments it resolved.
func (s *Service) SettleDue(ctx context.Context) (int, error) {
	if s.processor == nil {
		return 0, nil
	}
	due, err := s.store.DuePayments(ctx, s.timestamp(), 500)
	if err != nil {
		return 0, fmt.Errorf("settle due: %w", err)
	}
	n := 0
	var errs []error
	for _, p := range due {
		m, err := s.store.GetPaymentMethod(ctx, p.MethodID)
		if err != nil {
			errs = append(errs, fmt.Errorf("payment %s: %w", p.ID, err))
			continue
		}
		state, reason, err := s.processor.Outcome(ctx, m, p)
		if err != nil {
			errs = append(errs, fmt.Errorf("payment %s: %w", p.ID, err))
			continue
		}
		if state != PaymentSettled && state != PaymentFailed {
			continue
		}
		ok, err := s.resolve(ctx, p, state, reason)
		if err != nil {
			errs = append(errs, err)
		} else if ok {
			n++
		}
	}
	return n, errors.Join(errs...)
}

func (s *Service) resolve(ctx context.Context, p Payment, state, reason string) (bool, error) {
	ok, err := s.store.ResolvePayment(ctx, p.ID, state, reason, s.timestamp())
	if err != nil {
		return false, fmt.Errorf("resolve payment %s: %w", p.ID, err)
	}
	if ok {
		s.log.InfoContext(ctx, "payment "+state, "account_id", p.AccountID, "payment_id", p.ID, "amount_cents", p.AmountCents, "scheme", p.Scheme)
		p.State = state
		if state == PaymentFailed {
			p.FailureReason = reason
		}
		s.invoicePaymentResolved(ctx, p)
		s.paymentRecorded(ctx, p)
	}
	return ok, nil
}

// paymentRecorded is what follows every payment stored or resolved (collect,
// resolve, a collection that failed for good): the payment standing the
// limits follow may have changed, which the root announces to the usage
// alerts (Accounts.AccountChanged), and a failed payment is mailed.
func (s *Service) paymentRecorded(ctx context.Context, p Payment) {
	s.accounts.AccountChanged(ctx, p.AccountID)
	if p.State == PaymentFailed {
		s.mailPaymentFailed(ctx, p)
	}
}

// mailPaymentFailed tells the account's people that a payment failed and
// what that means for their limits, through the outbox (notify.PaymentFailed:
// once per payment, whatever the number of replicas). A failure to queue it
// is logged: the payment pages and the 429's detail say the same.
func (s *Service) mailPaymentFailed(ctx context.Context, p Payment) {
	if s.notices == nil {
		return
	}
	a, err := s.accounts.Account(ctx, p.AccountID)
	if err == nil {
		free, _ := metering.PlanByID(metering.PlanFree)
		how := "card"
		if p.MethodType == MethodDirectDebit {
			how = strings.ToUpper(p.Scheme) + " direct debit"
		}
		err = s.notices.PaymentFailed(ctx, notify.PaymentFailure{AccountID: a.ID, AccountName: a.Name, PaymentID: p.ID,
			PeriodStart: p.PeriodStart, AmountCents: p.AmountCents, Currency: string(p.Currency), Purpose: p.Purpose,
			Method: how, Reason: p.FailureReason, FreeIncluded: free.IncludedConversions, FreeRate: free.RatePerSecond})
	}
	if err != nil {
		s.log.WarnContext(ctx, "payment failure mail not queued", "account_id", p.AccountID, "payment_id", p.ID, "err", err)
	}
}

// Outcomes an operator or a test may force on a sandbox payment.
const (
	OutcomeSettle = "settle"
	OutcomeFail   = "fail"
	OutcomeDelay  = "delay"
)

// ForcePaymentOutcome, with a sandbox processor only, settles or fails a
// pending payment now, or delays its settlement date by days business days
// (OutcomeDelay). It is what a real processor's notification would record.
func (s *Service) ForcePaymentOutcome(ctx context.Context, paymentID, outcome string, days int) (Payment, error) {
	if sp, ok := s.processor.(SandboxProcessor); !ok || !sp.Sandbox() {
		return Payment{}, problem.New(problem.Conflict, "outcomes can be forced only with the sandbox payment processor")
	}
	p, err := s.store.GetPayment(ctx, paymentID)
	if errors.Is(err, metering.ErrNotFound) {
		return Payment{}, problem.New(problem.NotFound, "no such payment").WithField("payment")
	}
	if err != nil {
		return Payment{}, err
	}
	if p.State != PaymentPending {
		return Payment{}, problem.New(problem.Conflict, "the payment is already "+p.State).WithField("payment")
	}
	switch outcome {
	case OutcomeSettle, OutcomeFail:
		state, reason := PaymentSettled, ""
		if outcome == OutcomeFail {
			state, reason = PaymentFailed, "failed by the operator (sandbox)"
		}
		ok, err := s.resolve(ctx, p, state, reason)
		if err != nil {
			return Payment{}, err
		}
		if !ok {
			return Payment{}, problem.New(problem.Conflict, "the payment was resolved meanwhile").WithField("payment")
		}
	case OutcomeDelay:
		if days < 1 || days > 30 {
			return Payment{}, problem.New(problem.InvalidInput, "days must be 1 to 30").WithField("days")
		}
		if err := s.store.DelayPayment(ctx, p.ID, s.calendar.AddBusinessDays(p.SettleBy, days)); err != nil {
			if errors.Is(err, metering.ErrConflict) {
				return Payment{}, problem.New(problem.Conflict, "the payment was resolved meanwhile").WithField("payment")
			}
			return Payment{}, err
		}
	default:
		return Payment{}, problem.New(problem.InvalidInput, `outcome must be "settle", "fail" or "delay"`).WithField("outcome")
	}
	return s.store.GetPayment(ctx, paymentID)
}

// RecordPaymentOutcome records a processor's notification that a pending
// payment settled or failed (an adapter's webhook calls it). A payment that
// is no longer pending is left as it is: notifications may repeat.
func (s *Service) RecordPaymentOutcome(ctx context.Context, paymentID, state, reason string) error {
	if state != PaymentSettled && state != PaymentFailed {
		return problem.New(problem.InvalidInput, `state must be "settled" or "failed"`).WithField("state")
	}
	p, err := s.store.GetPayment(ctx, paymentID)
	if err != nil {
		return err
	}
	_, err = s.resolve(ctx, p, state, reason)
	return err
}

// standing is the account's payment standing from its payments: failed
// when a payment failed after the last one that settled (or none settled),
// settling while a first direct debit is pending and no direct debit has
// settled, else ok. (A debit started as the first can see an earlier one
// settle while it is pending, e.g. a retry settling in the billing round
// that closes the period: the account has proven its mandate then.)
func standing(ps []Payment) string {
	var lastSettled time.Time
	debitSettled := false
	for _, p := range ps {
		if p.State == PaymentSettled && p.ResolvedAt != nil && p.ResolvedAt.After(lastSettled) {
			lastSettled = *p.ResolvedAt
		}
		debitSettled = debitSettled || (p.State == PaymentSettled && p.MethodType == MethodDirectDebit)
	}
	settling := false
	for _, p := range ps {
		switch {
		case p.State == PaymentFailed && p.ResolvedAt != nil && !p.ResolvedAt.Before(lastSettled):
			return PaymentFailed
		case p.State == PaymentPending && p.FirstDebit && !debitSettled:
			settling = true
		}
	}
	if settling {
		return metering.PaymentSettling
	}
	return metering.PaymentOK
}

// PaymentState is the account's payment standing: metering.PaymentOK,
// PaymentSettling or PaymentFailed; metering.ErrNotFound for an unknown
// account.
func (s *Service) PaymentState(ctx context.Context, accountID string) (string, error) {
	if _, err := s.accounts.Account(ctx, accountID); err != nil {
		return "", err
	}
	return NewStanding(s.store).PaymentState(ctx, accountID)
}
