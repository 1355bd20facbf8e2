package budgets

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"

	"github.com/shopspring/decimal"

	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/services/finance"
)

// Limits of PATCH /v1/budgets/{id}/allocations (ours).
const (
	MaxAllocationItems  = 500
	MaxAllocationGroups = 50
)

// percentValue is a percentage from 0 to 100 with at most two places.
var percentValue = regexp.MustCompile(`^[0-9]{1,3}(\.[0-9]{1,2})?$`)

// AllocationUpdate is PATCH /v1/budgets/{id}/allocations: the items and
// groups listed change, the others stay.
type AllocationUpdate struct {
	BudgetID        string
	ExpectedVersion int64
	Items           []ItemAllocation
	Groups          []GroupAllocation
	// AlertThresholds replace the budget's when not empty;
	// ClearAlertThresholds removes them all (no alerts).
	AlertThresholds      []int32
	ClearAlertThresholds bool
}

// ItemAllocation sets one item's allocated amount (a decimal string).
type ItemAllocation struct {
	ID              string
	AllocatedAmount string
}

// GroupAllocation sets a percent_of_income group's percentage.
type GroupAllocation struct {
	ID              string
	AllocationValue string
}

// UpdateBudgetAllocations answers PATCH /v1/budgets/{id}/allocations.
//
// Method rules: an item's allocated_amount can change in every group (in
// an amount group the group's allocation_value is the sum of its items,
// recomputed here; in percent and remainder groups the items are
// per-category guides and the group's allocation follows the income). A
// group's allocation_value can change only on percent_of_income groups,
// except under fifty_thirty_twenty, whose percentages are the method; the
// percent groups together may not exceed 100. Archived budgets are
// read-only (409 conflict). A compare-and-swap on the budget's version;
// a PATCH that changes nothing keeps it.
func (s *Service) UpdateBudgetAllocations(ctx context.Context, c finance.Caller, u AllocationUpdate) (finance.Result[BudgetView], error) {
	var res finance.Result[BudgetView]
	sc, err := s.k.WriteScope(ctx, c)
	if err != nil {
		return res, err
	}
	id, err := finance.RequiredUUID(u.BudgetID, "id")
	if err != nil {
		return res, err
	}
	if u.ExpectedVersion <= 0 {
		return res, finance.Invalid("expected_version", "expected_version is required: send the version you read")
	}
	switch {
	case len(u.Items) == 0 && len(u.Groups) == 0 && len(u.AlertThresholds) == 0 && !u.ClearAlertThresholds:
		return res, finance.Invalid("items", "send at least one of items, groups, alert_thresholds or clear_alert_thresholds")
	case len(u.AlertThresholds) > 0 && u.ClearAlertThresholds:
		return res, finance.Invalid("alert_thresholds", "send alert_thresholds or clear_alert_thresholds, not both")
	case len(u.Items) > MaxAllocationItems:
		return res, finance.Invalid("items", fmt.Sprintf("at most %d items", MaxAllocationItems))
	case len(u.Groups) > MaxAllocationGroups:
		return res, finance.Invalid("groups", fmt.Sprintf("at most %d groups", MaxAllocationGroups))
	}
	var thresholds []int32 // checked before the budget is read: a refusal costs no read
	if len(u.AlertThresholds) > 0 {
		if thresholds, err = ParseAlertThresholds(u.AlertThresholds, "alert_thresholds"); err != nil {
			return res, err
		}
	}
	fp := u
	fp.ExpectedVersion = 0
	pw, err := finance.NewPendingWrite(c, "budget-allocations", fp)
	if err != nil {
		return res, finance.Internal("fingerprint allocations update", err)
	}
	old, err := s.loadBudget(ctx, c, id)
	if err != nil {
		return res, err
	}
	b, err := applyAllocations(sc, old, u)
	if err != nil {
		return res, err
	}
	switch {
	case u.ClearAlertThresholds:
		b.AlertThresholds = nil
	case thresholds != nil:
		b.AlertThresholds = thresholds
	}
	if !old.IsActive {
		return res, problem.New(problem.Conflict, "an archived budget cannot change; switch the method to start a new one")
	}
	if old.Version != u.ExpectedVersion {
		if pw.Replays(old.LastWrite, old.Version, u.ExpectedVersion) {
			// The retry of the write that made this version, whose
			// answer was lost: answer it again.
			res, err := s.GetBudget(ctx, c, id)
			res.Replayed = err == nil
			return res, err
		}
		return res, budgetVersionConflict(old.Version)
	}
	if sameGroups(old.Groups, b.Groups) && slices.Equal(old.AlertThresholds, b.AlertThresholds) {
		return s.GetBudget(ctx, c, id)
	}
	b.Version, b.UpdatedAt = old.Version+1, s.k.Now()
	b.LastWrite = pw.Mark(b.Version)
	switch err := s.store.UpdateBudgetGroups(ctx, b, old.Version); {
	case errors.Is(err, finance.ErrVersionConflict):
		return res, budgetVersionConflict(0)
	case errors.Is(err, finance.ErrNotFound):
		return res, problem.New(problem.NotFound, "budget not found")
	case err != nil:
		return res, finance.Internal("update budget", err)
	}
	s.AfterWrite(ctx, c.UserID) // an allocation or a threshold moved
	return s.GetBudget(ctx, c, id)
}

// applyAllocations checks u against b and returns b with it applied. Items
// of categories the grant hides are unknown to it (400 naming the item).
func applyAllocations(sc finance.Scope, b Budget, u AllocationUpdate) (Budget, error) {
	groups := make([]TargetGroup, len(b.Groups))
	where := map[string][2]int{} // item id → group, item index
	for gi, g := range b.Groups {
		g.Items = append([]BudgetItem(nil), g.Items...)
		groups[gi] = g
		for ii, it := range g.Items {
			if !sc.HidesCategory(it.CategoryID) {
				where[it.ID] = [2]int{gi, ii}
			}
		}
	}
	seen := map[string]bool{}
	for i, a := range u.Items {
		field := fmt.Sprintf("items[%d].id", i)
		id, err := finance.RequiredUUID(a.ID, field)
		if err != nil {
			return b, err
		}
		at, ok := where[id]
		if !ok {
			return b, finance.Invalid(field, field+" names no item of this budget")
		}
		if seen[id] {
			return b, finance.Invalid(field, "an item is listed once")
		}
		seen[id] = true
		amount, err := finance.ParseAmount(a.AllocatedAmount, fmt.Sprintf("items[%d].allocated_amount", i), b.Currency)
		if err != nil {
			return b, err
		}
		groups[at[0]].Items[at[1]].AllocatedAmount = amount
	}
	for i, a := range u.Groups {
		field := fmt.Sprintf("groups[%d].id", i)
		id, err := finance.RequiredUUID(a.ID, field)
		if err != nil {
			return b, err
		}
		gi := -1
		for j, g := range groups {
			if g.ID == id {
				gi = j
			}
		}
		if gi < 0 {
			return b, finance.Invalid(field, field+" names no group of this budget")
		}
		if seen[id] {
			return b, finance.Invalid(field, "a group is listed once")
		}
		seen[id] = true
		vf := fmt.Sprintf("groups[%d].allocation_value", i)
		switch {
		case groups[gi].AllocationType != AllocPercent:
			return b, finance.Invalid(vf, "only a percent_of_income group takes an allocation_value; an amount group's is the sum of its items")
		case b.MethodType == MethodFiftyThirtyTwenty:
			return b, finance.Invalid(vf, "a 50/30/20 budget keeps its percentages; switch to another method to change them")
		case !percentValue.MatchString(a.AllocationValue):
			return b, finance.Invalid(vf, vf+" must be a percentage from 0 to 100 with at most two decimal places")
		}
		v, _ := decimal.NewFromString(a.AllocationValue)
		if v.GreaterThan(decNum(100)) {
			return b, finance.Invalid(vf, vf+" must be a percentage from 0 to 100 with at most two decimal places")
		}
		groups[gi].AllocationValue = v
	}
	var percent decimal.Decimal
	for gi, g := range groups {
		switch g.AllocationType {
		case AllocPercent:
			percent = percent.Add(g.AllocationValue)
		case AllocAmount:
			var sum decimal.Decimal
			for _, it := range g.Items {
				sum = sum.Add(it.AllocatedAmount)
			}
			groups[gi].AllocationValue = sum
		}
	}
	if percent.GreaterThan(decNum(100)) {
		return b, finance.Invalid("groups", "the percent_of_income groups together may not exceed 100")
	}
	b.Groups = groups
	return b, nil
}

// sameGroups compares groups as stored (jsonb: 450 and 450.00 are one
// value).
func sameGroups(a, b []TargetGroup) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].ID != b[i].ID || !a[i].AllocationValue.Equal(b[i].AllocationValue) || len(a[i].Items) != len(b[i].Items) {
			return false
		}
		for j := range a[i].Items {
			if !a[i].Items[j].AllocatedAmount.Equal(b[i].Items[j].AllocatedAmount) {
				return false
			}
		}
	}
	return true
}

func budgetVersionConflict(current int64) error {
	detail := "the budget changed since you read it: read it again and retry"
	if current > 0 {
		detail = fmt.Sprintf("the budget is at version %d: read it again and retry", current)
	}
	return problem.New(problem.VersionConflict, detail).WithField("expected_version")
}
