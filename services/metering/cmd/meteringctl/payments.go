package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/ledgerlane/platform/services/metering/billing"
)

// Payment methods and payments (docs/billing.md, "Payment methods"). The
// details typed here go to the payment processor once; only the last four
// characters are stored. With the sandbox processor (PAYMENT_PROCESSOR=
// sandbox) an operator chooses outcomes with `payment force`.

func printMethods(w io.Writer, ms []billing.PaymentMethod) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tTYPE\tSCHEME\tBRAND\tLAST4\tHOLDER\tDEFAULT\tCREATED")
	for _, m := range ms {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%t\t%s\n", m.ID, m.Type, m.Scheme, m.Brand, m.Last4, m.HolderName, m.IsDefault,
			m.CreatedAt.Format(time.RFC3339))
	}
	return tw.Flush()
}

func printPayments(w io.Writer, ps []billing.Payment) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tPURPOSE\tAMOUNT\tCURRENCY\tSCHEME\tSTATE\tFIRST_DEBIT\tCREATED\tSETTLE_BY\tREASON")
	for _, p := range ps {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%t\t%s\t%s\t%s\n", p.ID, p.Purpose, p.AmountCents, p.Currency, p.Scheme, p.State,
			p.FirstDebit, p.CreatedAt.Format(time.RFC3339), p.SettleBy.Format(time.RFC3339), p.FailureReason)
	}
	return tw.Flush()
}

func methodAdd(ctx context.Context, args []string, stdout, stderr io.Writer, open opener) error {
	var d billing.MethodDetails
	svc, acct, closeFn, err := accountCmd(ctx, "payment-method add", args, stderr, open, func(fs *flag.FlagSet) {
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
	}, "type", "holder")
	if err != nil {
		return err
	}
	defer closeFn()
	m, err := svc.AddPaymentMethod(ctx, acct, d)
	if err != nil {
		return err
	}
	return printMethods(stdout, []billing.PaymentMethod{m})
}

func methodList(ctx context.Context, args []string, stdout, stderr io.Writer, open opener) error {
	svc, acct, closeFn, err := accountCmd(ctx, "payment-method list", args, stderr, open, nil)
	if err != nil {
		return err
	}
	defer closeFn()
	ms, err := svc.PaymentMethods(ctx, acct)
	if err != nil {
		return err
	}
	return printMethods(stdout, ms)
}

func methodDefault(ctx context.Context, args []string, stdout, stderr io.Writer, open opener) error {
	var id string
	svc, acct, closeFn, err := accountCmd(ctx, "payment-method default", args, stderr, open,
		func(fs *flag.FlagSet) { fs.StringVar(&id, "id", "", "payment method ID") }, "id")
	if err != nil {
		return err
	}
	defer closeFn()
	m, err := svc.SetDefaultPaymentMethod(ctx, acct, id)
	if err != nil {
		return err
	}
	return printMethods(stdout, []billing.PaymentMethod{m})
}

func methodRemove(ctx context.Context, args []string, stdout, stderr io.Writer, open opener) error {
	var id string
	svc, acct, closeFn, err := accountCmd(ctx, "payment-method remove", args, stderr, open,
		func(fs *flag.FlagSet) { fs.StringVar(&id, "id", "", "payment method ID") }, "id")
	if err != nil {
		return err
	}
	defer closeFn()
	if err := svc.RemovePaymentMethod(ctx, acct, id); err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "removed %s\n", id)
	return err
}

func paymentList(ctx context.Context, args []string, stdout, stderr io.Writer, open opener) error {
	svc, acct, closeFn, err := accountCmd(ctx, "payment list", args, stderr, open, nil)
	if err != nil {
		return err
	}
	defer closeFn()
	ps, err := svc.Payments(ctx, acct)
	if err != nil {
		return err
	}
	state, err := svc.PaymentState(ctx, acct)
	if err != nil {
		return err
	}
	if err := printPayments(stdout, ps); err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "payment_state: %s\n", state)
	return err
}

func paymentRetry(ctx context.Context, args []string, stdout, stderr io.Writer, open opener) error {
	var id string
	svc, acct, closeFn, err := accountCmd(ctx, "payment retry", args, stderr, open,
		func(fs *flag.FlagSet) { fs.StringVar(&id, "id", "", "the failed payment's ID") }, "id")
	if err != nil {
		return err
	}
	defer closeFn()
	p, err := svc.RetryPayment(ctx, acct, id)
	if err != nil {
		return err
	}
	return printPayments(stdout, []billing.Payment{p})
}

func paymentForce(ctx context.Context, args []string, stdout, stderr io.Writer, open opener) error {
	fs := flag.NewFlagSet("payment force", flag.ContinueOnError)
	id := fs.String("id", "", "payment ID")
	outcome := fs.String("outcome", "", "settle, fail or delay")
	days := fs.Int("days", 1, "delay: business days to add to the settlement date")
	if err := parse(fs, args, stderr, "id", "outcome"); err != nil {
		return err
	}
	svc, closeFn, err := open(ctx, openOptions{})
	if err != nil {
		return err
	}
	defer closeFn()
	p, err := svc.ForcePaymentOutcome(ctx, *id, *outcome, *days)
	if err != nil {
		return err
	}
	return printPayments(stdout, []billing.Payment{p})
}

// invoiceCollectDue makes the due invoice collection attempts now, as the
// billing tick does (docs/billing.md, "Collecting an invoice").
func invoiceCollectDue(ctx context.Context, args []string, stdout, stderr io.Writer, open opener) error {
	fs := flag.NewFlagSet("invoice collect-due", flag.ContinueOnError)
	if err := parse(fs, args, stderr); err != nil {
		return err
	}
	svc, closeFn, err := open(ctx, openOptions{})
	if err != nil {
		return err
	}
	defer closeFn()
	n, err := svc.CollectDue(ctx)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "made %d collection attempts\n", n)
	return err
}

func paymentSettleDue(ctx context.Context, args []string, stdout, stderr io.Writer, open opener) error {
	fs := flag.NewFlagSet("payment settle-due", flag.ContinueOnError)
	if err := parse(fs, args, stderr); err != nil {
		return err
	}
	svc, closeFn, err := open(ctx, openOptions{})
	if err != nil {
		return err
	}
	defer closeFn()
	n, err := svc.SettleDue(ctx)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "resolved %d payments\n", n)
	return err
}
