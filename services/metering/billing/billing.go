package billing

import (
	"context"
	"errors"
	"fmt"
	"github.com/ledgerlane/platform/services/metering"

	"github.com/google/uuid"

	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/services/metering/admission/quota"
)

// Plan changes (docs/billing.md has the rules and why):
//
//   - An upgrade takes effect at once. It adds the full flat price difference
//     of the two plans to the period's invoice (not prorated: the new plan's
//     whole included volume applies to the whole period, usage already
//     consumed included, and prorating while forgiving overage would let an
//     upgrade on the last day buy off a month's overage for cents). The
//     billing date does not move, except that leaving Free (whose period is
//     the calendar month) anchors the paid period on the 1st, so the period
//     and its usage carry on unchanged. Overage accrued so far is forgiven
//     and a spend cap it reached stops refusing.
//   - A downgrade is scheduled for the end of the current period and can be
//     canceled until then; asking for another plan replaces it, and an
//     upgrade cancels it.

// planRank orders plans by price: the price list is cheapest first.
func planRank(id string) int {
	for i, p := range metering.Plans() {
		if p.ID == id {
			return i
		}
	}
	return -1
}

// ChangePlan moves the account to planID: an upgrade at once, a downgrade at
// the end of the current period. Asking for the current plan while a
// downgrade is scheduled cancels the downgrade. It returns the change made.
func (s *Service) ChangePlan(ctx context.Context, accountID, planID string) (PlanChange, error) {
	to, ok := metering.PlanByID(planID)
	if !ok {
		return PlanChange{}, problem.New(problem.InvalidInput, fmt.Sprintf("unknown plan %q", planID)).WithField("plan")
	}
	a, err := s.accounts.CurrentAccount(ctx, accountID)
	if err != nil {
		return PlanChange{}, err
	}
	from, ok := metering.PlanByID(a.PlanID)
	if !ok {
		return PlanChange{}, fmt.Errorf("change plan: account %s has unknown plan %q", a.ID, a.PlanID)
	}
	switch r := planRank(to.ID) - planRank(from.ID); {
	case r > 0:
		return s.upgrade(ctx, a, from, to)
	case r < 0:
		return s.scheduleDowngrade(ctx, a, from, to)
	case a.ScheduledPlanID != "":
		return s.CancelDowngrade(ctx, accountID)
	default:
		return PlanChange{}, problem.New(problem.Conflict, "the account is already on the "+to.ID+" plan").WithField("plan")
	}
}

func (s *Service) upgrade(ctx context.Context, a metering.Account, from, to metering.Plan) (PlanChange, error) {
	if err := s.checkPaymentFor(ctx, a, to); err != nil {
		return PlanChange{}, err
	}
	now := s.timestamp()
	start, end := quota.Period(from.CalendarMonth, a.BillingAnchor, now)
	anchor := a.BillingAnchor
	if from.CalendarMonth && !to.CalendarMonth {
		anchor = start // leaving Free: the paid period is the calendar month's
	}
	oldPrice, _ := from.MonthlyPrice.In(a.BillingCurrency)
	newPrice, _ := to.MonthlyPrice.In(a.BillingCurrency)
	// Overage so far is forgiven before the change is recorded: if the
	// record then fails, the customer has lost nothing (the invoice bills
	// overage from the usage and the plan, never from the counter alone).
	if s.counters == nil {
		return PlanChange{}, problem.New(problem.Unavailable, "usage counters are not configured: an upgrade needs them to carry usage over")
	}
	used, err := s.counters.ForgiveOverage(ctx, a.ID, start, end)
	if err != nil {
		s.countersUnreachable(ctx, err)
		return PlanChange{}, problem.New(problem.Unavailable, "usage counters are unreachable; retry shortly").WithRetryAfter(1)
	}
	ch := PlanChange{
		ID: uuid.NewString(), AccountID: a.ID, Kind: ChangeUpgrade, FromPlan: from.ID, ToPlan: to.ID,
		RequestedAt: now, EffectiveAt: now, ChargeCents: newPrice - oldPrice, UsedAtChange: used,
	}
	if err := s.store.Upgrade(ctx, ch, anchor); err != nil {
		if errors.Is(err, metering.ErrConflict) {
			return PlanChange{}, problem.New(problem.Conflict, "the plan changed meanwhile; read it and retry").WithField("plan")
		}
		return PlanChange{}, fmt.Errorf("upgrade: %w", err)
	}
	s.log.InfoContext(ctx, "plan upgraded", "account_id", a.ID, "from", from.ID, "to", to.ID, "charge_cents", ch.ChargeCents)
	s.accounts.AccountChanged(ctx, a.ID)
	// The charge is collected now; the invoice later collects only the rest.
	// A processor failure leaves it to the invoice rather than undo the
	// upgrade.
	if _, err := s.collect(ctx, a, Payment{Purpose: PurposeUpgrade, PeriodStart: start, AmountCents: ch.ChargeCents}); err != nil {
		s.log.WarnContext(ctx, "upgrade charge not collected; the invoice will", "account_id", a.ID, "err", err)
	}
	return ch, nil
}

func (s *Service) scheduleDowngrade(ctx context.Context, a metering.Account, from, to metering.Plan) (PlanChange, error) {
	now := s.timestamp()
	_, end := quota.Period(from.CalendarMonth, a.BillingAnchor, now)
	ch := PlanChange{
		ID: uuid.NewString(), AccountID: a.ID, Kind: ChangeDowngrade, FromPlan: from.ID, ToPlan: to.ID,
		RequestedAt: now, EffectiveAt: end,
	}
	if err := s.store.ScheduleDowngrade(ctx, ch); err != nil {
		if errors.Is(err, metering.ErrConflict) {
			return PlanChange{}, problem.New(problem.Conflict, "the plan changed meanwhile; read it and retry").WithField("plan")
		}
		return PlanChange{}, fmt.Errorf("schedule downgrade: %w", err)
	}
	s.log.InfoContext(ctx, "downgrade scheduled", "account_id", a.ID, "from", from.ID, "to", to.ID, "at", end)
	return ch, nil
}

// CancelDowngrade cancels the account's scheduled downgrade; with none, it
// answers a conflict problem.
func (s *Service) CancelDowngrade(ctx context.Context, accountID string) (PlanChange, error) {
	if _, err := s.accounts.CurrentAccount(ctx, accountID); err != nil {
		return PlanChange{}, err
	}
	ch, err := s.store.CancelDowngrade(ctx, accountID, s.timestamp())
	switch {
	case errors.Is(err, metering.ErrNotFound):
		return PlanChange{}, problem.New(problem.Conflict, "no downgrade is scheduled").WithField("plan")
	case err != nil:
		return PlanChange{}, fmt.Errorf("cancel downgrade: %w", err)
	}
	s.log.InfoContext(ctx, "downgrade canceled", "account_id", accountID, "to", ch.ToPlan)
	return ch, nil
}

// PlanChanges returns the account's plan changes that were not canceled,
// oldest first.
func (s *Service) PlanChanges(ctx context.Context, accountID string) ([]PlanChange, error) {
	if _, err := s.accounts.Account(ctx, accountID); err != nil {
		return nil, err
	}
	return s.store.PlanChanges(ctx, accountID)
}

// GrantCredit adds credit to an account (an operator's goodwill or a
// correction); the next invoices take it until it is used up.
func (s *Service) GrantCredit(ctx context.Context, accountID string, cents int64) error {
	if cents <= 0 || cents > metering.MaxCapCents {
		return problem.New(problem.InvalidInput, "credit must be a positive whole number of cents").WithField("cents")
	}
	if err := s.store.GrantCredit(ctx, accountID, cents); err != nil {
		return err
	}
	s.log.InfoContext(ctx, "credit granted", "account_id", accountID, "cents", cents)
	return nil
}
