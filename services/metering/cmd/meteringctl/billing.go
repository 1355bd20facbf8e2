package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/ledgerlane/platform/services/metering/billing"
)

// accountCmd parses --account plus extra flags and opens the service.
func accountCmd(ctx context.Context, name string, args []string, stderr io.Writer, open opener,
	extra func(fs *flag.FlagSet), required ...string) (svc *services, account string, closeFn func(), err error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	acct := fs.String("account", "", "account ID")
	if extra != nil {
		extra(fs)
	}
	if err := parse(fs, args, stderr, append([]string{"account"}, required...)...); err != nil {
		return nil, "", nil, err
	}
	svc, closeFn, err = open(ctx, openOptions{})
	if err != nil {
		return nil, "", nil, err
	}
	if _, err := svc.Account(ctx, *acct); err != nil {
		closeFn()
		return nil, "", nil, fmt.Errorf("account %q: %w", *acct, err)
	}
	return svc, *acct, closeFn, nil
}

func printChange(w io.Writer, ch billing.PlanChange) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "change\t%s\n", ch.Kind)
	fmt.Fprintf(tw, "from\t%s\n", ch.FromPlan)
	fmt.Fprintf(tw, "to\t%s\n", ch.ToPlan)
	fmt.Fprintf(tw, "effective\t%s\n", ch.EffectiveAt.Format(time.RFC3339))
	if ch.Kind == billing.ChangeUpgrade {
		fmt.Fprintf(tw, "charge\t%s (minor units, on this period's invoice)\n", strconv.FormatInt(ch.ChargeCents, 10))
	}
	if ch.CanceledAt != nil {
		fmt.Fprintf(tw, "canceled\t%s\n", ch.CanceledAt.Format(time.RFC3339))
	}
	return tw.Flush()
}

func planChange(ctx context.Context, args []string, stdout, stderr io.Writer, open opener) error {
	var plan string
	svc, acct, closeFn, err := accountCmd(ctx, "plan change", args, stderr, open,
		func(fs *flag.FlagSet) { fs.StringVar(&plan, "plan", "", "plan: free, starter, growth or scale") }, "plan")
	if err != nil {
		return err
	}
	defer closeFn()
	ch, err := svc.ChangePlan(ctx, acct, plan)
	if err != nil {
		return err
	}
	return printChange(stdout, ch)
}

func planCancel(ctx context.Context, args []string, stdout, stderr io.Writer, open opener) error {
	svc, acct, closeFn, err := accountCmd(ctx, "plan cancel", args, stderr, open, nil)
	if err != nil {
		return err
	}
	defer closeFn()
	ch, err := svc.CancelDowngrade(ctx, acct)
	if err != nil {
		return err
	}
	return printChange(stdout, ch)
}

func planList(ctx context.Context, args []string, stdout, stderr io.Writer, open opener) error {
	svc, acct, closeFn, err := accountCmd(ctx, "plan list", args, stderr, open, nil)
	if err != nil {
		return err
	}
	defer closeFn()
	changes, err := svc.PlanChanges(ctx, acct)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KIND\tFROM\tTO\tREQUESTED\tEFFECTIVE\tCHARGE")
	for _, c := range changes {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\n", c.Kind, c.FromPlan, c.ToPlan,
			c.RequestedAt.Format(time.RFC3339), c.EffectiveAt.Format(time.RFC3339), c.ChargeCents)
	}
	return tw.Flush()
}

func printInvoices(w io.Writer, invs []billing.Invoice) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, inv := range invs {
		fmt.Fprintf(tw, "invoice %s\t%s to %s\tplan %s\t%s\n", inv.ID, inv.PeriodStart.Format(time.DateOnly),
			inv.PeriodEnd.Format(time.DateOnly), inv.PlanID, inv.Currency)
		for _, l := range inv.Lines {
			fmt.Fprintf(tw, "  %s\t%s\t\t%d\n", l.Kind, l.Description, l.AmountCents)
		}
		fmt.Fprintf(tw, "  subtotal\t\t\t%d\n  credit\t\t\t-%d\n  total\t\t\t%d\n", inv.SubtotalCents, inv.CreditCents, inv.TotalCents)
		c := inv.Collection
		fmt.Fprintf(tw, "  collection\t%s, %d attempt(s)", c.State, c.Attempts)
		if c.NextAttemptAt != nil {
			fmt.Fprintf(tw, ", next %s", c.NextAttemptAt.Format(time.RFC3339))
		}
		if c.PaymentID != "" {
			fmt.Fprintf(tw, ", payment %s", c.PaymentID)
		}
		if c.LastError != "" {
			fmt.Fprintf(tw, ", last error: %s", c.LastError)
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}

func invoiceClose(ctx context.Context, args []string, stdout, stderr io.Writer, open opener) error {
	svc, acct, closeFn, err := accountCmd(ctx, "invoice close", args, stderr, open, nil)
	if err != nil {
		return err
	}
	defer closeFn()
	invs, err := svc.ClosePeriods(ctx, acct)
	if err != nil {
		return err
	}
	if len(invs) == 0 {
		fmt.Fprintln(stdout, "no ended period is waiting for an invoice")
		return nil
	}
	return printInvoices(stdout, invs)
}

func invoiceList(ctx context.Context, args []string, stdout, stderr io.Writer, open opener) error {
	svc, acct, closeFn, err := accountCmd(ctx, "invoice list", args, stderr, open, nil)
	if err != nil {
		return err
	}
	defer closeFn()
	invs, err := svc.Invoices(ctx, acct)
	if err != nil {
		return err
	}
	return printInvoices(stdout, invs)
}

func creditGrant(ctx context.Context, args []string, stdout, stderr io.Writer, open opener) error {
	var cents string
	svc, acct, closeFn, err := accountCmd(ctx, "credit grant", args, stderr, open,
		func(fs *flag.FlagSet) {
			fs.StringVar(&cents, "cents", "", "credit in minor units of the billing currency")
		}, "cents")
	if err != nil {
		return err
	}
	defer closeFn()
	n, err := strconv.ParseInt(cents, 10, 64)
	if err != nil {
		n = -1 // the service names the field
	}
	if err := svc.GrantCredit(ctx, acct, n); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "granted %d to %s\n", n, acct)
	return nil
}

func userAdd(ctx context.Context, args []string, stdout, stderr io.Writer, open opener) error {
	var email, name string
	svc, acct, closeFn, err := accountCmd(ctx, "user add", args, stderr, open, func(fs *flag.FlagSet) {
		fs.StringVar(&email, "email", "", "e-mail address")
		fs.StringVar(&name, "name", "", "name")
	}, "email", "name")
	if err != nil {
		return err
	}
	defer closeFn()
	u, err := svc.people.AddPortalUser(ctx, acct, email, name)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "user %s <%s> added to %s\n", u.ID, u.Email, acct)
	return nil
}

func userList(ctx context.Context, args []string, stdout, stderr io.Writer, open opener) error {
	svc, acct, closeFn, err := accountCmd(ctx, "user list", args, stderr, open, nil)
	if err != nil {
		return err
	}
	defer closeFn()
	users, err := svc.people.PortalUsers(ctx, acct)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tEMAIL\tNAME")
	for _, u := range users {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", u.ID, u.Email, u.Name)
	}
	return tw.Flush()
}
