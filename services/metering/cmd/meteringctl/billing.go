package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/ledgerlane/platform/services/metering/billing"
	"github.com/ledgerlane/platform/services/metering/identity"
)

func printChange(w io.Writer, ch billing.PlanChange) error {
	tw := table(w)
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

func planChange(fs *flag.FlagSet, _ *openOptions) action {
	plan := fs.String("plan", "", "plan: free, starter, growth or scale")
	return action{do: func(ctx context.Context, e env) error {
		return show(e.stdout, printChange)(e.svc.ChangePlan(ctx, e.account, *plan))
	}}
}

func planCancel(ctx context.Context, e env) error {
	return show(e.stdout, printChange)(e.svc.CancelDowngrade(ctx, e.account))
}

func planList(ctx context.Context, e env) error {
	return show(e.stdout, printPlanChanges)(e.svc.PlanChanges(ctx, e.account))
}

func printPlanChanges(w io.Writer, changes []billing.PlanChange) error {
	tw := table(w)
	fmt.Fprintln(tw, "KIND\tFROM\tTO\tREQUESTED\tEFFECTIVE\tCHARGE")
	for _, c := range changes {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\n", c.Kind, c.FromPlan, c.ToPlan,
			c.RequestedAt.Format(time.RFC3339), c.EffectiveAt.Format(time.RFC3339), c.ChargeCents)
	}
	return tw.Flush()
}

func printInvoices(w io.Writer, invs []billing.Invoice) error {
	tw := table(w)
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

func invoiceClose(ctx context.Context, e env) error {
	invs, err := e.svc.ClosePeriods(ctx, e.account)
	if err != nil {
		return err
	}
	if len(invs) == 0 {
		_, err := fmt.Fprintln(e.stdout, "no ended period is waiting for an invoice")
		return err
	}
	return printInvoices(e.stdout, invs)
}

func invoiceList(ctx context.Context, e env) error {
	return show(e.stdout, printInvoices)(e.svc.Invoices(ctx, e.account))
}

func creditGrant(fs *flag.FlagSet, _ *openOptions) action {
	cents := fs.String("cents", "", "credit in minor units of the billing currency")
	return action{do: func(ctx context.Context, e env) error {
		n, err := strconv.ParseInt(*cents, 10, 64)
		if err != nil {
			n = -1 // the service names the field
		}
		if err := e.svc.GrantCredit(ctx, e.account, n); err != nil {
			return err
		}
		_, err = fmt.Fprintf(e.stdout, "granted %d to %s\n", n, e.account)
		return err
	}}
}

func userAdd(fs *flag.FlagSet, _ *openOptions) action {
	email := fs.String("email", "", "e-mail address")
	name := fs.String("name", "", "name")
	return action{do: func(ctx context.Context, e env) error {
		u, err := e.svc.people.AddPortalUser(ctx, e.account, *email, *name)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(e.stdout, "user %s <%s> added to %s\n", u.ID, u.Email, e.account)
		return err
	}}
}

func userList(ctx context.Context, e env) error {
	return show(e.stdout, printUsers)(e.svc.people.PortalUsers(ctx, e.account))
}

func printUsers(w io.Writer, users []identity.PortalUser) error {
	tw := table(w)
	fmt.Fprintln(tw, "ID\tEMAIL\tNAME")
	for _, u := range users {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", u.ID, u.Email, u.Name)
	}
	return tw.Flush()
}
