// Package sandboxpay is a payment processor without money: the one the local
// stack and tests run, and the one a staging deployment would. Its outcomes
// are chosen by the details a person enters, and an operator or a test can
// force them (metering.Service.ForcePaymentOutcome); it keeps no state, so
// every replica answers alike.
//
// Outcomes, by the last four characters of the card number, the account
// number or the IBAN:
//
//	0002  fails: a card is declined at once, a debit fails on its date
//	0003  a debit stays pending past its date until forced (a delay)
//	0004  collecting answers a transient error, as an unreachable processor
//	      would: an invoice's collection is retried, then fails
//	0005  collecting is refused (billing.ErrPaymentRefused): definitive
//	else  a card settles at once, a debit settles on its date
//
// A deployment plugs in a real processor behind the same interface:
// GoCardless for ACH, SEPA and Bacs mandates, Stripe for cards
// (docs/billing.md). Neither adapter is written.
package sandboxpay

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/ledgerlane/platform/services/metering"
	"github.com/ledgerlane/platform/services/metering/billing"
)

// The sandbox's magic endings.
const (
	FailSuffix        = "0002"
	DelaySuffix       = "0003"
	UnreachableSuffix = "0004"
	RefuseSuffix      = "0005"
)

// ErrUnreachable is the sandbox's transient error (UnreachableSuffix).
var ErrUnreachable = errors.New("the payment processor did not answer (sandbox)")

// Processor is the sandbox processor.
type Processor struct {
	// FirstDebitDays are the business days a first direct debit takes, by
	// scheme; LaterDebitDays those of every later one.
	FirstDebitDays map[string]int
	LaterDebitDays int
}

var _ billing.SandboxProcessor = (*Processor)(nil)

// New returns the sandbox with its default timings: a first debit takes 4
// business days over ACH, 5 over SEPA and 3 over Bacs (its three-day
// cycle); a later one 2.
func New() *Processor {
	return &Processor{
		FirstDebitDays: map[string]int{billing.SchemeACH: 4, billing.SchemeSEPA: 5, billing.SchemeBacs: 3},
		LaterDebitDays: 2,
	}
}

// Sandbox marks the processor whose outcomes may be forced.
func (*Processor) Sandbox() bool { return true }

// SetUp answers a made-up token or mandate reference.
func (*Processor) SetUp(_ context.Context, _ string, d billing.MethodDetails) (string, error) {
	if d.Type == billing.MethodCard {
		return "sbx_card_" + uuid.NewString(), nil
	}
	return "sbx_mandate_" + d.Scheme + "_" + uuid.NewString(), nil
}

// Collect settles or declines a card at once and starts a debit.
func (p *Processor) Collect(_ context.Context, m billing.PaymentMethod, pay billing.Payment) (billing.Collection, error) {
	switch {
	case strings.HasSuffix(m.Last4, UnreachableSuffix):
		return billing.Collection{}, ErrUnreachable
	case strings.HasSuffix(m.Last4, RefuseSuffix):
		return billing.Collection{}, fmt.Errorf("mandate or card not usable (sandbox): %w", billing.ErrPaymentRefused)
	}
	ref := "sbx_pay_" + uuid.NewString()
	if m.Type == billing.MethodCard {
		if strings.HasSuffix(m.Last4, FailSuffix) {
			return billing.Collection{Ref: ref, State: metering.PaymentFailed, Reason: "card declined (sandbox)"}, nil
		}
		return billing.Collection{Ref: ref, State: billing.PaymentSettled}, nil
	}
	days := p.LaterDebitDays
	if pay.FirstDebit {
		days = p.FirstDebitDays[m.Scheme]
	}
	return billing.Collection{Ref: ref, State: billing.PaymentPending, BusinessDays: days}, nil
}

// Outcome of a debit whose date has come.
func (*Processor) Outcome(_ context.Context, m billing.PaymentMethod, _ billing.Payment) (string, string, error) {
	switch {
	case strings.HasSuffix(m.Last4, FailSuffix):
		return metering.PaymentFailed, "the bank refused the debit (sandbox)", nil
	case strings.HasSuffix(m.Last4, DelaySuffix):
		return billing.PaymentPending, "", nil
	}
	return billing.PaymentSettled, "", nil
}
