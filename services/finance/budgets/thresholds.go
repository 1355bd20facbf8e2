package budgets

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/shopspring/decimal"

	"github.com/ledgerlane/platform/services/finance"
)

// Alert thresholds (ours; docs: services/finance/README.md, "Alert
// thresholds"). A budget carries percentages of a group's allocation; when
// a group's spent in the current period reaches one, every grant whose view
// reaches it gets one budget.threshold_reached for that (budget, group,
// period, threshold), never a second.
const (
	MinAlertThreshold  = 1
	MaxAlertThreshold  = 1000
	MaxAlertThresholds = 5
)

// DefaultAlertThresholds are a new budget's thresholds.
var DefaultAlertThresholds = []int32{80, 100}

// ParseAlertThresholds checks the thresholds a client sent (field names
// the member) and returns them ascending: each 1 to 1000, at most 5,
// none twice.
func ParseAlertThresholds(in []int32, field string) ([]int32, error) {
	if len(in) > MaxAlertThresholds {
		return nil, finance.Invalid(field, fmt.Sprintf("%s takes at most %d thresholds", field, MaxAlertThresholds))
	}
	out := make([]int32, 0, len(in))
	for i, t := range in {
		f := fmt.Sprintf("%s[%d]", field, i)
		if t < MinAlertThreshold || t > MaxAlertThreshold {
			return nil, finance.Invalid(f, fmt.Sprintf("%s must be a whole percentage from %d to %d", f, MinAlertThreshold, MaxAlertThreshold))
		}
		if slices.Contains(out, t) {
			return nil, finance.Invalid(f, fmt.Sprintf("%s repeats %d: each threshold is listed once", f, t))
		}
		out = append(out, t)
	}
	slices.Sort(out)
	return out, nil
}

// ThresholdAlert is one threshold a grant saw a group of a budget reach in
// a period: the sent-table's row, whose key (grant, budget, group, period
// start, threshold) is sent at most once.
type ThresholdAlert struct {
	UserID, GrantID, BudgetID, GroupID string
	PeriodStart, PeriodEnd             time.Time
	Threshold                          int32
	CreatedAt                          time.Time
}

// ReachedThreshold is a group of a progress at or above a threshold.
type ReachedThreshold struct {
	GroupID   string
	Threshold int32
}

// ReachedThresholds lists, for each spending group of p with a positive
// allocation, the thresholds its spent has reached: spent × 100 ≥
// threshold × allocated, exactly. Savings groups are left out (reaching
// their allocation is the plan working, not spending running over), and so
// are groups with nothing allocated (no percentage to speak of, as
// spent_percentage is absent for them).
func ReachedThresholds(p BudgetProgress, thresholds []int32) []ReachedThreshold {
	var out []ReachedThreshold
	for _, g := range p.Groups {
		if g.Role == RoleSavings || !g.Allocated.IsPositive() {
			continue
		}
		pct := g.Spent.Mul(decNum(100))
		for _, t := range thresholds {
			if pct.GreaterThanOrEqual(g.Allocated.Mul(decimal.NewFromInt32(t))) {
				out = append(out, ReachedThreshold{GroupID: g.GroupID, Threshold: t})
			}
		}
	}
	return out
}

// AlertPublisher sends budget.threshold_reached (the finance events
// package, in the wiring). An error means it was not published.
type AlertPublisher interface {
	BudgetThresholdReached(ctx context.Context, a ThresholdAlert) error
}

// CheckThresholds sends budget.threshold_reached for every threshold the
// user's active budget has reached in the current period, per grant and as
// that grant sees the budget (its hidden accounts and categories count
// nothing, as on GET /v1/budgets/{id}/progress), that no earlier check
// sent. Each alert is claimed in the store first (a unique key over grant,
// budget, group, period and threshold), so racing checks on several
// replicas, and checks after a restart, send it once; a claim whose publish
// fails is released, and the next check tries again.
//
// It is called after every committed write that can move spending or an
// allocation (the finance Notifier's Written, the allocations
// PATCH, the method switch); without a publisher it does nothing.
func (s *Service) CheckThresholds(ctx context.Context, userID string) error {
	if s.alerts == nil {
		return nil
	}
	u, err := s.store.GetUser(ctx, userID)
	if err != nil {
		return fmt.Errorf("budget thresholds: user: %w", err)
	}
	if u.OwnerAccountID == "" {
		return nil // no tenant owns it, so no endpoint can hear of it
	}
	all, err := s.store.ListBudgets(ctx, userID)
	if err != nil {
		return fmt.Errorf("budget thresholds: budgets: %w", err)
	}
	if len(all) == 0 || !all[0].IsActive || len(all[0].AlertThresholds) == 0 {
		return nil
	}
	b := all[0]
	grants, err := s.store.ListGrants(ctx, userID)
	if err != nil {
		return fmt.Errorf("budget thresholds: grants: %w", err)
	}
	now := s.k.Now()
	p := b.PeriodContaining(now)
	var errs []error
	for _, g := range grants {
		c := finance.Caller{UserID: userID, GrantID: g.ID, OwnerAccountID: u.OwnerAccountID, Mode: u.Mode}
		if err := s.checkGrant(ctx, c, b, p, now); err != nil {
			errs = append(errs, fmt.Errorf("grant %s: %w", g.ID, err))
		}
	}
	return errors.Join(errs...)
}

// AfterWrite checks the user's thresholds after a committed write (the
// Notifier hook, the budget writes). It never fails the write: a failure is
// logged, and the next write checks again. It runs to its end even when the
// client that made the write has gone: the write committed.
func (s *Service) AfterWrite(ctx context.Context, userID string) {
	if s.alerts == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), alertCheckTimeout)
	defer cancel()
	if err := s.CheckThresholds(ctx, userID); err != nil {
		s.k.Log().WarnContext(ctx, "budget thresholds: check failed", "user_id", userID, "err", err)
	}
}

// alertCheckTimeout bounds a check after a write.
const alertCheckTimeout = 10 * time.Second

func (s *Service) checkGrant(ctx context.Context, c finance.Caller, b Budget, p Period, now time.Time) error {
	sc, err := s.k.Scope(ctx, c, true)
	if err != nil {
		return err
	}
	prog, err := s.figures(ctx, c, sc, visibleBudget(sc, b), p)
	if err != nil {
		return err
	}
	for _, r := range ReachedThresholds(prog, b.AlertThresholds) {
		a := ThresholdAlert{UserID: c.UserID, GrantID: c.GrantID, BudgetID: b.ID, GroupID: r.GroupID,
			PeriodStart: p.Start, PeriodEnd: p.End, Threshold: r.Threshold, CreatedAt: now}
		claimed, err := s.store.ClaimThresholdAlert(ctx, a)
		if err != nil {
			return fmt.Errorf("claim alert: %w", err)
		}
		if !claimed {
			continue
		}
		if err := s.alerts.BudgetThresholdReached(ctx, a); err != nil {
			// Unclaimed, the next check sends it; the event id is derived
			// from the key, so a publish that did go through after all
			// is dropped as a duplicate downstream.
			if rerr := s.store.ReleaseThresholdAlert(ctx, a); rerr != nil {
				err = errors.Join(err, rerr)
			}
			return fmt.Errorf("publish alert: %w", err)
		}
	}
	return nil
}
