package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/ledgerlane/platform/services/metering/billing"
)

// Payment methods and payments (docs/billing.md, "Payment methods"). The
// details typed here go to the payment processor once; only the last four
// characters are stored. With the sandbox processor (PAYMENT_PROCESSOR=
// sandbox) an operator chooses outcomes with `payment force`.

func printMethods(w io.Writer, ms []billing.PaymentMethod) error {
	tw := table(w)
	fmt.Fprintln(tw, "ID\tTYPE\tSCHEME\tBRAND\tLAST4\tHOLDER\tDEFAULT\tCREATED")
	for _, m := range ms {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%t\t%s\n", m.ID, m.Type, m.Scheme, m.Brand, m.Last4, m.HolderName, m.IsDefault,
			m.CreatedAt.Format(time.RFC3339))
	}
	return tw.Flush()
}

func printPayments(w io.Writer, ps []billing.Payment) error {
	tw := table(w)
	fmt.Fprintln(tw, "ID\tPURPOSE\tAMOUNT\tCURRENCY\tSCHEME\tSTATE\tFIRST_DEBIT\tCREATED\tSETTLE_BY\tREASON")
	for _, p := range ps {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%t\t%s\t%s\t%s\n", p.ID, p.Purpose, p.AmountCents, p.Currency, p.Scheme, p.State,
			p.FirstDebit, p.CreatedAt.Format(time.RFC3339), p.SettleBy.Format(time.RFC3339), p.FailureReason)
	}
	return tw.Flush()
}

func methodAdd(fs *flag.FlagSet, _ *openOptions) action {
	var d billing.MethodDetails
	fs.StringVar(&d.Type, "type", "", "card or direct_debit")
	fs.StringVar(&d.Scheme, "scheme", "", "direct debit: ach (USD), sepa (EUR) or bacs (GBP)")
	fs.StringVar(&d.HolderName, "holder", "", "card holder or account holder name")
	fs.StringVar(&d.CardNumber, "card-number", "", "card: the number")
	fs.IntVar(&d.ExpMonth, "exp-month", 0, "card: expiry month 1-12")
	fs.IntVar(&d.ExpYear, "exp-year", 0, "card: expiry year, four digits")
	fs.StringVar(&d.IBAN, "iban", "", "sepa: the IBAN")
	fs.StringVar(&d.RoutingNumber, "routing-number", "", "ach: the ABA routing number")
	fs.StringVar(&d.SortCode, "sort-code", "", "bacs: the sort code")
	fs.StringVar(&d.AccountNumber, "account-number", "", "ach and bacs: the account number")
	fs.BoolVar(&d.MakeDefault, "default", false, "make it the default method")
	return action{do: func(ctx context.Context, e env) error {
		return show(e.stdout, printMethod)(e.svc.AddPaymentMethod(ctx, e.account, d))
	}}
}

func methodList(ctx context.Context, e env) error {
	return show(e.stdout, printMethods)(e.svc.PaymentMethods(ctx, e.account))
}

func methodDefault(fs *flag.FlagSet, _ *openOptions) action {
	id := fs.String("id", "", "payment method ID")
	return action{do: func(ctx context.Context, e env) error {
		return show(e.stdout, printMethod)(e.svc.SetDefaultPaymentMethod(ctx, e.account, *id))
	}}
}

func printMethod(w io.Writer, m billing.PaymentMethod) error {
	return printMethods(w, []billing.PaymentMethod{m})
}

func methodRemove(fs *flag.FlagSet, _ *openOptions) action {
	id := fs.String("id", "", "payment method ID")
	return action{do: func(ctx context.Context, e env) error {
		if err := e.svc.RemovePaymentMethod(ctx, e.account, *id); err != nil {
			return err
		}
		_, err := fmt.Fprintf(e.stdout, "removed %s\n", *id)
		return err
	}}
}

func paymentList(ctx context.Context, e env) error {
	ps, err := e.svc.Payments(ctx, e.account)
	if err != nil {
		return err
	}
	state, err := e.svc.PaymentState(ctx, e.account)
	if err != nil {
		return err
	}
	if err := printPayments(e.stdout, ps); err != nil {
		return err
	}
	_, err = fmt.Fprintf(e.stdout, "payment_state: %s\n", state)
	return err
}

func printPayment(w io.Writer, p billing.Payment) error {
	return printPayments(w, []billing.Payment{p})
}

func paymentRetry(fs *flag.FlagSet, _ *openOptions) action {
	id := fs.String("id", "", "the failed payment's ID")
	return action{do: func(ctx context.Context, e env) error {
		return show(e.stdout, printPayment)(e.svc.RetryPayment(ctx, e.account, *id))
	}}
}

func paymentForce(fs *flag.FlagSet, _ *openOptions) action {
	id := fs.String("id", "", "payment ID")
	outcome := fs.String("outcome", "", "settle, fail or delay")
	days := fs.Int("days", 1, "delay: business days to add to the settlement date")
	return action{do: func(ctx context.Context, e env) error {
		return show(e.stdout, printPayment)(e.svc.ForcePaymentOutcome(ctx, *id, *outcome, *days))
	}}
}

// invoiceCollectDue makes the due invoice collection attempts now, as the
// billing tick does (docs/billing.md, "Collecting an invoice").
func invoiceCollectDue(ctx context.Context, e env) error {
	n, err := e.svc.CollectDue(ctx)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(e.stdout, "made %d collection attempts\n", n)
	return err
}

// paymentSettleDue resolves the payments whose settlement date has come,
// as the billing tick does.
func paymentSettleDue(ctx context.Context, e env) error {
	n, err := e.svc.SettleDue(ctx)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(e.stdout, "resolved %d payments\n", n)
	return err
}
