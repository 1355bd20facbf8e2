package budgets

import (
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/ledgerlane/platform/services/finance"
)

// Budget methods: the spec's eight values. Each is a rule set (methods.go).
const (
	MethodFiftyThirtyTwenty = "fifty_thirty_twenty"
	MethodPayYourselfFirst  = "pay_yourself_first"
	MethodZeroBased         = "zero_based"
	MethodEnvelope          = "envelope"
	MethodKakeibo           = "kakeibo"
	MethodFire              = "fire"
	MethodValuesBased       = "values_based"
	MethodCustom            = "custom"
)

// Methods lists the budget methods in the order they are documented.
var Methods = []string{MethodFiftyThirtyTwenty, MethodPayYourselfFirst, MethodZeroBased, MethodEnvelope,
	MethodKakeibo, MethodFire, MethodValuesBased, MethodCustom}

// Period types (ours; the spec leaves the values open).
const (
	// PeriodMonthly is the calendar month.
	PeriodMonthly = "monthly"
	// PeriodMonthlyAnchored is a month starting on PeriodAnchorDay (a pay
	// day such as the 25th) and ending the day before it next month.
	PeriodMonthlyAnchored = "monthly_anchored"
	// PeriodBiweekly is fourteen days, anchored on PeriodAnchorDate.
	PeriodBiweekly = "biweekly"
)

// Allocation types of a target group.
const (
	// AllocPercent: allocation_value is a percentage of the period's income.
	AllocPercent = "percent_of_income"
	// AllocAmount: allocation_value is an amount per period; for a group
	// it is the sum of its items' allocations.
	AllocAmount = "amount"
	// AllocRemainder: what is left of the period's income after every other
	// group's allocation (pay-yourself-first's "everything else").
	AllocRemainder = "remainder"
)

// Income types of a budget.
const (
	IncomeSalary   = "salary"
	IncomeVariable = "variable"
)

// Budget features (enabled_features) that change how progress is computed.
const (
	FeatureRollover  = "rollover"   // a group's remaining carries into the next period
	FeatureAnomalies = "anomalies"  // unusual spends are flagged
	FeaturePhases    = "phases"     // savings first, then spending (phase_active)
	FeatureAssignAll = "assign_all" // remaining is income not yet assigned
)

// Budget is a spending plan over periods, made of target groups of items,
// one item per category. At most one budget per user is active.
type Budget struct {
	ID                    string
	UserID                string
	Name                  string
	MethodType            string
	PeriodType            string
	PeriodAnchorDay       int       // PeriodMonthlyAnchored: 1-28
	PeriodAnchorDate      time.Time // PeriodBiweekly: a date a period starts on
	IsActive              bool
	IncomeType            string
	ExpectedMonthlyIncome *decimal.Decimal
	Currency              string
	EnabledFeatures       []string
	Groups                []TargetGroup
	// AlertThresholds are the percentages of a group's allocation at which
	// budget.threshold_reached is sent (thresholds.go), ascending; none:
	// no alerts.
	AlertThresholds []int32
	Version         int64
	CreatedAt       time.Time
	UpdatedAt       time.Time
	ArchivedAt      *time.Time
	// LastWrite fingerprints the last allocations PATCH under an
	// Idempotency-Key (write_mark.go); nil when the last one had none. Not
	// on the wire.
	LastWrite *finance.WriteMark
}

// TargetGroup is a group of budget items (e.g. "Needs" under 50/30/20).
type TargetGroup struct {
	ID              string          `json:"id"`
	Name            string          `json:"name"`
	SortOrder       int32           `json:"sort_order"`
	AllocationType  string          `json:"allocation_type"`
	AllocationValue decimal.Decimal `json:"allocation_value"`
	// Role is what the group is for in its method: "savings" groups are
	// paid first under the phased methods; "spending" otherwise.
	Role  string       `json:"role,omitempty"`
	Items []BudgetItem `json:"items"`
}

// Group roles.
const (
	RoleSpending = "spending"
	RoleSavings  = "savings"
)

// BudgetItem allocates an amount per period to one category. Rows in the
// category's subcategories count toward the item unless a subcategory has
// an item of its own.
type BudgetItem struct {
	ID              string          `json:"id"`
	CategoryID      string          `json:"category_id"`
	AllocatedAmount decimal.Decimal `json:"allocated_amount"`
}

// HasFeature reports whether the budget enables feature f.
func (b Budget) HasFeature(f string) bool {
	for _, x := range b.EnabledFeatures {
		if x == f {
			return true
		}
	}
	return false
}

// ItemByID finds an item of the budget.
func (b Budget) ItemByID(id string) (BudgetItem, TargetGroup, bool) {
	for _, g := range b.Groups {
		for _, it := range g.Items {
			if it.ID == id {
				return it, g, true
			}
		}
	}
	return BudgetItem{}, TargetGroup{}, false
}

// ProgressSnapshot is a frozen past period's progress as one grant saw it,
// stored the first time the closed period is read.
type ProgressSnapshot struct {
	BudgetID    string
	UserID      string
	GrantID     string
	PeriodStart time.Time
	Data        []byte // the BudgetProgress as JSON
	CreatedAt   time.Time
}

// CompareBudgets is the order budgets are listed in: the active one first,
// then newest first (creation time, then id, descending).
func CompareBudgets(a, b Budget) int {
	if a.IsActive != b.IsActive {
		if a.IsActive {
			return -1
		}
		return 1
	}
	if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
		return c
	}
	return strings.Compare(b.ID, a.ID)
}
