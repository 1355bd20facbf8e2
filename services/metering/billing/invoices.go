package billing

import (
	"context"
	"errors"
	"fmt"
	"github.com/ledgerlane/platform/services/metering"
	"time"

	"github.com/google/uuid"

	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/services/metering/admission/quota"
	"github.com/ledgerlane/platform/services/metering/notify"
)

// DefaultCloseGrace is how long after its end a period is invoiced: long
// enough for usage that gateways journalled during a Redis outage to be
// reconciled into the counters (docs/limits.md, "When Redis is down").
const DefaultCloseGrace = 10 * time.Minute

// Invoices returns the account's invoices, oldest first.
func (s *Service) Invoices(ctx context.Context, accountID string) ([]Invoice, error) {
	if _, err := s.accounts.Account(ctx, accountID); err != nil {
		return nil, err
	}
	return s.store.Invoices(ctx, accountID)
}

// closeBatch is how many due accounts the closing job reads at a time.
const closeBatch = 500

// CloseDue invoices the ended periods (ClosePeriods) of the accounts whose
// oldest period without an invoice ended at least the close grace ago, and
// returns how many invoices it created. It reads only those accounts
// (Account.NextCloseAt, indexed), so its cost follows the periods to close,
// not the number of accounts. Any number of replicas may run it at once:
// the store keeps exactly one invoice per account and period.
func (s *Service) CloseDue(ctx context.Context) (int, error) {
	due := s.timestamp().Add(-s.closeGrace)
	n := 0
	var errs []error
	for after := ""; ; {
		ids, err := s.store.AccountsDueForClose(ctx, due, after, closeBatch)
		if err != nil {
			return n, errors.Join(append(errs, fmt.Errorf("close due: %w", err))...)
		}
		for _, id := range ids {
			invs, err := s.ClosePeriods(ctx, id)
			n += len(invs)
			if err != nil {
				errs = append(errs, fmt.Errorf("account %s: %w", id, err))
			}
		}
		if len(ids) < closeBatch || ctx.Err() != nil {
			return n, errors.Join(errs...)
		}
		after = ids[len(ids)-1]
	}
}

// ClosePeriods invoices the account's periods that ended at least the close
// grace ago and have no invoice yet, oldest first, and returns the invoices
// it created (another closer may have created some of them first: those are
// not returned). It then records the end of the first period left open as
// the account's NextCloseAt.
func (s *Service) ClosePeriods(ctx context.Context, accountID string) ([]Invoice, error) {
	if s.counters == nil {
		return nil, problem.New(problem.Unavailable, "usage counters are not configured: invoices need them")
	}
	a, err := s.accounts.CurrentAccount(ctx, accountID)
	if err != nil {
		return nil, err
	}
	changes, err := s.store.PlanChanges(ctx, accountID)
	if err != nil {
		return nil, fmt.Errorf("close periods: %w", err)
	}
	limits, err := s.store.LimitChanges(ctx, accountID)
	if err != nil {
		return nil, fmt.Errorf("close periods: %w", err)
	}
	invs, err := s.store.Invoices(ctx, accountID)
	if err != nil {
		return nil, fmt.Errorf("close periods: %w", err)
	}
	h := history{account: a, changes: changes, limits: limits}
	var start time.Time
	if len(invs) > 0 {
		start = invs[len(invs)-1].PeriodEnd
	} else {
		first := h.planAt(a.CreatedAt)
		start, _ = quota.Period(first.CalendarMonth, a.BillingAnchor, a.CreatedAt)
	}
	now := s.timestamp()
	var out []Invoice
	for {
		_, end := quota.Period(h.planAt(start).CalendarMonth, a.BillingAnchor, start)
		if now.Before(end.Add(s.closeGrace)) {
			// Written after the invoices, never before: a closer that
			// stops in between leaves the older NextCloseAt, and the next
			// tick looks again. No plan change moves an open period's end
			// earlier (an upgrade keeps the billing date, leaving Free
			// anchors on the 1st, the calendar month's start; a downgrade
			// waits for the end), so the value stays right until then.
			if a.NextCloseAt == nil || !a.NextCloseAt.Equal(end) {
				if err := s.store.SetNextClose(ctx, a.ID, end); err != nil {
					return out, fmt.Errorf("set next close: %w", err)
				}
			}
			return out, nil
		}
		inv, err := s.draftInvoice(ctx, h, start, end)
		if err != nil {
			return out, err
		}
		stored, created, err := s.store.CreateInvoice(ctx, inv)
		if err != nil {
			return out, fmt.Errorf("create invoice: %w", err)
		}
		if created {
			s.log.InfoContext(ctx, "invoice created", "account_id", a.ID, "invoice_id", stored.ID,
				"period_start", stored.PeriodStart, "total_cents", stored.TotalCents)
			out = append(out, stored)
			// The first attempt now; the billing tick makes any later one.
			if _, err := s.attemptCollection(ctx, stored); err != nil {
				s.log.WarnContext(ctx, "invoice not collected", "account_id", a.ID, "invoice_id", stored.ID, "err", err)
			}
		}
		start = stored.PeriodEnd
	}
}

// history is what an invoice is computed from besides the counters.
type history struct {
	account metering.Account
	changes []PlanChange // not canceled, by EffectiveAt
	limits  []LimitChange
}

// planAt is the plan in force at t.
func (h history) planAt(t time.Time) metering.Plan {
	id := h.account.PlanAt(t)
	for _, c := range h.changes {
		if c.EffectiveAt.After(t) {
			id = c.FromPlan
			break
		}
	}
	p, _ := metering.PlanByID(id)
	return p
}

// planBefore is the plan in force just before t (the plan a period ending
// at t ended on).
func (h history) planBefore(t time.Time) metering.Plan {
	id := h.account.PlanAt(t.Add(-time.Microsecond))
	for _, c := range h.changes {
		if !c.EffectiveAt.Before(t) {
			id = c.FromPlan
			break
		}
	}
	p, _ := metering.PlanByID(id)
	return p
}

// capBefore is the overage cap in force just before t.
func (h history) capBefore(t time.Time) *int64 {
	var c *int64
	for _, l := range h.limits {
		if !l.At.Before(t) {
			break
		}
		c = l.OverageCapCents
	}
	return c
}

// draftInvoice computes the invoice of [start, end): the flat price of the
// plan the period started on, each upgrade's charge, and overage at the
// rate of the plan it ended on for the live conversions past both that
// plan's included volume and the usage at the last upgrade (overage before
// it is forgiven), never more than the counter accrued (usage counted while
// a hard stop refused overage is not billed) and never more than the cap
// in force at the end. Thousandths of a minor unit round down.
func (s *Service) draftInvoice(ctx context.Context, h history, start, end time.Time) (Invoice, error) {
	a := h.account
	first, last := h.planAt(start), h.planBefore(end)
	inv := Invoice{
		ID: uuid.NewString(), AccountID: a.ID, PeriodStart: start, PeriodEnd: end, PlanID: last.ID,
		Currency: a.BillingCurrency, OverageCapCents: h.capBefore(end), CreatedAt: s.timestamp(),
	}
	now := inv.CreatedAt
	inv.Collection = InvoiceCollection{State: CollectionCollecting, NextAttemptAt: &now}
	if price, _ := first.MonthlyPrice.In(a.BillingCurrency); price > 0 {
		inv.Lines = append(inv.Lines, InvoiceLine{Kind: LineFlat, Quantity: 1, AmountCents: price,
			Description: fmt.Sprintf("%s plan, %s to %s", first.ID, start.Format(time.DateOnly), end.Format(time.DateOnly))})
	}
	var usedAtUpgrade int64
	for _, c := range h.changes {
		if c.Kind != ChangeUpgrade || c.EffectiveAt.Before(start) || !c.EffectiveAt.Before(end) {
			continue
		}
		usedAtUpgrade = c.UsedAtChange
		inv.Lines = append(inv.Lines, InvoiceLine{Kind: LineUpgrade, Quantity: 1, AmountCents: c.ChargeCents,
			Description: fmt.Sprintf("upgrade %s to %s on %s", c.FromPlan, c.ToPlan, c.EffectiveAt.Format(time.DateOnly))})
	}
	if !last.HardStop {
		window, _ := quota.Period(last.CalendarMonth, a.BillingAnchor, start)
		used, accrued, err := s.counters.Counter(ctx, a.ID, window)
		if err != nil {
			s.countersUnreachable(ctx, err)
			return Invoice{}, problem.New(problem.Unavailable, "usage counters are unreachable; retry shortly").WithRetryAfter(1)
		}
		rate, _ := last.OveragePer1000.In(a.BillingCurrency)
		units := max(0, used-max(last.IncludedConversions, usedAtUpgrade))
		cents := OverageCents(units, rate, accrued, inv.OverageCapCents)
		if units > 0 {
			desc := fmt.Sprintf("%d conversions past the included volume at %s per 1,000", units, notify.FormatMinor(rate, string(a.BillingCurrency)))
			if inv.OverageCapCents != nil && cents == *inv.OverageCapCents {
				desc += " (capped at the spend cap)"
			}
			inv.Lines = append(inv.Lines, InvoiceLine{Kind: LineOverage, Quantity: units, AmountCents: cents, Description: desc})
		}
	}
	for _, l := range inv.Lines {
		inv.SubtotalCents += l.AmountCents
	}
	inv.TotalCents = inv.SubtotalCents
	return inv, nil
}

// OverageCents is the overage an invoice bills for units conversions at
// ratePer1000 minor units per 1,000: never more than the counter accrued
// (accruedMilli, thousandths of a minor unit) nor than the cap (nil: none),
// rounded down to a whole minor unit.
func OverageCents(units, ratePer1000, accruedMilli int64, capCents *int64) int64 {
	milli := min(units*ratePer1000, max(0, accruedMilli))
	cents := milli / 1000
	if capCents != nil {
		cents = min(cents, *capCents)
	}
	return cents
}
