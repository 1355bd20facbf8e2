package metering

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/services/metering/admission/quota"
	"github.com/ledgerlane/platform/services/metering/notify"
)

// Limits is what the account may do now: its plan's bucket and included
// volume, its billing settings, and the current window. The gateway enforces
// it; it changes when the plan or a billing setting changes.
func (s *Service) Limits(ctx context.Context, accountID string) (quota.Limits, error) {
	a, err := s.CurrentAccount(ctx, accountID)
	if err != nil {
		return quota.Limits{}, fmt.Errorf("limits: %w", err)
	}
	l, err := limitsOf(a, s.timestamp())
	if err != nil {
		return quota.Limits{}, err
	}
	return s.paymentLimits(ctx, a, l)
}

func limitsOf(a Account, now time.Time) (quota.Limits, error) {
	p, ok := PlanByID(a.PlanAt(now))
	if !ok {
		return quota.Limits{}, fmt.Errorf("limits: account %s has unknown plan %q", a.ID, a.PlanAt(now))
	}
	price, _ := p.OveragePer1000.In(a.BillingCurrency)
	start, end := quota.Period(p.CalendarMonth, a.BillingAnchor, now)
	return quota.Limits{
		Plan: p.ID, RatePerSecond: p.RatePerSecond, Burst: p.Burst,
		MonthlyQuota: p.IncludedConversions, HardStop: p.HardStop || a.HardStop,
		OveragePer1000: price, OverageCapCents: a.OverageCapCents, Currency: string(a.BillingCurrency),
		PeriodStart: start, PeriodEnd: end, TestQuota: quota.TestPool,
	}, nil
}

// UsageSummary is GET /v1/usage.
type UsageSummary struct {
	Plan            string
	MonthlyQuota    int64
	Used            int64
	Remaining       int64 // clamped at zero
	OverageAllowed  bool  // the plan and billing settings allow overage
	OverageBlocked  bool  // the included volume is spent and no more overage may flow
	OverageCapCents *int64
	Currency        string
	PeriodStart     time.Time
	PeriodEnd       time.Time // also resets_at
	TestQuota       int64
	TestUsed        int64
	TestRemaining   int64
	// ScheduledPlan is a downgrade waiting for ScheduledAt (the period's
	// end); empty and nil when none is.
	ScheduledPlan string
	ScheduledAt   *time.Time
	// PaymentState is PaymentOK, PaymentSettling or PaymentFailed.
	PaymentState string
}

// Usage reads the account's counters for the current window.
func (s *Service) Usage(ctx context.Context, accountID string) (UsageSummary, error) {
	if s.counters == nil {
		return UsageSummary{}, problem.New(problem.Unavailable, "usage counters are not configured")
	}
	l, err := s.Limits(ctx, accountID)
	if err != nil {
		return UsageSummary{}, err
	}
	a, err := s.CurrentAccount(ctx, accountID)
	if err != nil {
		return UsageSummary{}, err
	}
	state, err := s.paymentState(ctx, a)
	if err != nil {
		return UsageSummary{}, err
	}
	u, err := s.counters.Usage(ctx, accountID, l)
	if err != nil {
		s.countersUnreachable(ctx, err)
		return UsageSummary{}, problem.New(problem.Unavailable, "usage counters are unreachable; retry shortly")
	}
	sum := summarize(l, u)
	sum.PaymentState = state
	if a.ScheduledAt != nil {
		at := *a.ScheduledAt
		sum.ScheduledPlan, sum.ScheduledAt = a.ScheduledPlanID, &at
	}
	return sum, nil
}

func summarize(l quota.Limits, u quota.Usage) UsageSummary {
	allowed := !l.HardStop && l.OveragePer1000 > 0
	return UsageSummary{
		Plan: l.Plan, MonthlyQuota: l.MonthlyQuota, Used: u.Used,
		Remaining:       max(0, l.MonthlyQuota-u.Used),
		OverageAllowed:  allowed,
		OverageBlocked:  u.LiveBlocked,
		OverageCapCents: l.OverageCapCents, Currency: l.Currency,
		PeriodStart: l.PeriodStart, PeriodEnd: l.PeriodEnd,
		TestQuota: l.TestQuota, TestUsed: u.TestUsed, TestRemaining: max(0, l.TestQuota-u.TestUsed),
	}
}

// BillingChange is a partial update of POST /v1/portal/billing/limits: nil
// fields stay as they are.
type BillingChange struct {
	HardStop        *bool
	OverageCapCents *int64
	ClearCap        bool
}

// MaxCapCents keeps caps (and credit grants) in the int32 range of the
// wire contract.
const MaxCapCents = 1<<31 - 1

// SetBillingLimits applies a change and returns the account as it is now.
// The gateway picks the new limits up with its next credential lookup, within
// its cache TTL (seconds).
func (s *Service) SetBillingLimits(ctx context.Context, accountID string, c BillingChange) (Account, error) {
	a, err := s.CurrentAccount(ctx, accountID)
	if err != nil {
		return Account{}, err
	}
	p, ok := PlanByID(a.PlanID)
	if !ok {
		return Account{}, fmt.Errorf("billing limits: unknown plan %q", a.PlanID)
	}
	switch {
	case c.ClearCap && c.OverageCapCents != nil:
		return Account{}, problem.New(problem.InvalidInput, "send overage_cap_cents or clear_overage_cap, not both").WithField("clear_overage_cap")
	case c.OverageCapCents != nil && (*c.OverageCapCents <= 0 || *c.OverageCapCents > MaxCapCents):
		return Account{}, problem.New(problem.InvalidInput, "overage_cap_cents must be a positive whole number of cents").WithField("overage_cap_cents")
	case c.OverageCapCents != nil && p.HardStop:
		return Account{}, problem.New(problem.InvalidInput, "the "+p.ID+" plan has no overage to cap; spend caps apply to paid plans").WithField("overage_cap_cents")
	}
	hardStop, capCents := a.HardStop, a.OverageCapCents
	if c.HardStop != nil {
		hardStop = *c.HardStop
	}
	if c.ClearCap {
		capCents = nil
	}
	if c.OverageCapCents != nil {
		v := *c.OverageCapCents
		capCents = &v
	}
	if err := s.store.SetBillingLimits(ctx, accountID, hardStop, capCents, s.timestamp()); err != nil {
		return Account{}, err
	}
	a.HardStop, a.OverageCapCents = hardStop, capCents
	s.AccountChanged(ctx, accountID) // a lowered cap or a hard stop can reach a milestone
	s.log.InfoContext(ctx, "billing limits changed", "account_id", accountID, "hard_stop", hardStop, "cap_set", capCents != nil)
	return a, nil
}

// countersUnreachable logs a failed read or write of the usage counters,
// unless the caller gave up first (a client gone, a stopping service): that
// is not the counters' failure, and a stopping stack would log one line per
// request in flight.
func (s *Service) countersUnreachable(ctx context.Context, err error) {
	if ctx.Err() == nil {
		s.log.WarnContext(ctx, "usage counters unreachable", "err", err)
	}
}

// AccountChanged tells the Watcher that the account's plan, billing limits
// or payment standing changed, which can reach a usage alert milestone (a
// lowered cap, a hard stop, Free limits after a failed payment) without new
// usage; usage itself is marked by the counters as they count it. It is the
// one place such a change is announced: the root's limits and plan
// downgrades call it, and billing (an upgrade, a payment's standing)
// through its Accounts port.
func (s *Service) AccountChanged(ctx context.Context, accountID string) {
	if s.watcher != nil {
		s.watcher.AccountChanged(ctx, accountID)
	}
}

// AlertStanding is what the usage alerts (notify.CheckAlerts) read of the
// account: its name, the limits its milestones count against and its live
// usage in the current period. Milestones count against the plan's volume,
// not the introductory or Free volume a payment standing narrows it to for
// a while (the 429's detail and the payment pages say that): otherwise they
// would fire early and, once a period, never for the plan. An unknown
// account answers notify.ErrUnknownAccount.
func (s *Service) AlertStanding(ctx context.Context, accountID string) (notify.Standing, error) {
	st, err := s.alertStanding(ctx, accountID)
	if errors.Is(err, ErrNotFound) {
		err = fmt.Errorf("%w: %w", notify.ErrUnknownAccount, err)
	}
	return st, err
}

func (s *Service) alertStanding(ctx context.Context, accountID string) (notify.Standing, error) {
	l, err := s.Limits(ctx, accountID)
	if err != nil {
		return notify.Standing{}, err
	}
	a, err := s.CurrentAccount(ctx, accountID)
	if err != nil {
		return notify.Standing{}, err
	}
	if l.PaymentState != "" {
		if l, err = limitsOf(a, s.timestamp()); err != nil {
			return notify.Standing{}, err
		}
	}
	u, err := s.Usage(ctx, accountID)
	if err != nil {
		return notify.Standing{}, err
	}
	return notify.Standing{AccountName: a.Name, Limits: l, Used: u.Used,
		OverageAllowed: u.OverageAllowed, OverageBlocked: u.OverageBlocked}, nil
}

// PlanAt is the account's plan in force at now: its plan, or the scheduled
// downgrade once it is due.
func (a Account) PlanAt(now time.Time) string {
	if a.ScheduledAt != nil && !now.Before(*a.ScheduledAt) {
		return a.ScheduledPlanID
	}
	return a.PlanID
}

// CurrentAccount reads an account, making a scheduled downgrade that has
// come due its plan (and announcing the change); ErrNotFound for an
// unknown one.
func (s *Service) CurrentAccount(ctx context.Context, id string) (Account, error) {
	a, err := s.store.GetAccount(ctx, id)
	if err != nil {
		return Account{}, err
	}
	now := s.timestamp()
	if a.ScheduledAt != nil && !now.Before(*a.ScheduledAt) {
		if err := s.store.ApplyDowngrade(ctx, id, now); err != nil {
			return Account{}, fmt.Errorf("apply downgrade: %w", err)
		}
		a.PlanID, a.ScheduledPlanID, a.ScheduledAt = a.ScheduledPlanID, "", nil
		s.AccountChanged(ctx, id)
	}
	return a, nil
}

// The account's payment standing, as GET /v1/usage shows it
// (payment_state); billing keeps the payments it follows from.
const (
	PaymentOK = "ok"
	// PaymentSettling: the account's first direct debit is on its way.
	PaymentSettling = "settling"
	// PaymentFailed: a payment failed and none settled since (also a
	// payment's state, billing.PaymentFailed).
	PaymentFailed = "failed"
)

// Introductory limits: while the account's first direct debit settles, its
// plan's limits are capped at these, and overage is refused. They bound what
// an account can run up before its bank has paid once (docs/billing.md).
const (
	IntroIncluded      = 50_000
	IntroRatePerSecond = 50
	IntroBurst         = 100
)

// paymentState is the account's payment standing.
func (s *Service) paymentState(ctx context.Context, a Account) (string, error) {
	if s.payments == nil {
		return PaymentOK, nil
	}
	return s.payments.PaymentState(ctx, a.ID)
}

// paymentLimits adjusts l to the account's payment standing: Free's volume,
// rate and hard stop after a failure, the introductory caps while the first
// direct debit settles. The period and prices stay the plan's.
func (s *Service) paymentLimits(ctx context.Context, a Account, l quota.Limits) (quota.Limits, error) {
	state, err := s.paymentState(ctx, a)
	if err != nil {
		return quota.Limits{}, err
	}
	return limitsFor(state, l), nil
}

func limitsFor(state string, l quota.Limits) quota.Limits {
	switch state {
	case PaymentFailed:
		free, _ := PlanByID(PlanFree)
		l.MonthlyQuota = min(l.MonthlyQuota, free.IncludedConversions)
		l.RatePerSecond, l.Burst = min(l.RatePerSecond, free.RatePerSecond), min(l.Burst, free.Burst)
		l.HardStop, l.PaymentState = true, state
	case PaymentSettling:
		l.MonthlyQuota = min(l.MonthlyQuota, IntroIncluded)
		l.RatePerSecond, l.Burst = min(l.RatePerSecond, IntroRatePerSecond), min(l.Burst, IntroBurst)
		l.HardStop, l.PaymentState = true, state
	}
	return l
}
