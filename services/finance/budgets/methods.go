package budgets

import (
	"slices"
	"time"

	"github.com/shopspring/decimal"

	"github.com/ledgerlane/platform/services/finance"
)

// MethodMeta describes a budget method to clients (BudgetMethodMeta).
type MethodMeta struct {
	DisplayName string
	// IsNameEditable: whether the groups may be renamed.
	IsNameEditable bool
	// HasFixedGroups: whether the method's groups are fixed (no group may
	// be added or removed).
	HasFixedGroups bool
}

// methodRules is one method's rule set.
type methodRules struct {
	meta     MethodMeta
	features []string
	// groups makes the method's starting groups from the user's top-level
	// categories, classified.
	groups func(c catClasses) []groupSpec
}

type groupSpec struct {
	name  string
	alloc string
	value int64 // percent for AllocPercent
	role  string
	cats  []string
}

// catClasses sorts a user's top-level expense categories into needs and
// wants, and names the savings category.
type catClasses struct {
	needs, wants, culture, travel []string
	all                           []string // every top-level expense category
	savings                       string   // the transfer category money set aside goes to
}

var needNames = []string{"Housing", "Utilities", "Groceries", "Transport", "Health"}

func classify(cats []finance.Category) catClasses {
	var c catClasses
	for _, cat := range cats {
		if cat.TypeTag == finance.CategoryTransfer && cat.Name == "Savings & Investments" {
			c.savings = cat.ID
		}
		if cat.ParentID != "" || cat.TypeTag != finance.CategoryExpense {
			continue
		}
		c.all = append(c.all, cat.ID)
		switch {
		case slices.Contains(needNames, cat.Name):
			c.needs = append(c.needs, cat.ID)
		case cat.Name == "Travel":
			c.travel = append(c.travel, cat.ID)
			c.wants = append(c.wants, cat.ID)
		case cat.Name == "Entertainment" || !cat.IsSystem():
			c.culture = append(c.culture, cat.ID)
			c.wants = append(c.wants, cat.ID)
		default:
			c.wants = append(c.wants, cat.ID)
		}
	}
	return c
}

func (c catClasses) savingsList() []string {
	if c.savings == "" {
		return nil
	}
	return []string{c.savings}
}

func (c catClasses) without(ids ...[]string) []string {
	var out []string
	for _, id := range c.all {
		skip := false
		for _, l := range ids {
			skip = skip || slices.Contains(l, id)
		}
		if !skip {
			out = append(out, id)
		}
	}
	return out
}

// perTopLevel is one amount group per top-level expense category, plus a
// savings group.
func perTopLevel(c catClasses, names map[string]string) []groupSpec {
	var out []groupSpec
	for _, id := range c.all {
		out = append(out, groupSpec{name: names[id], alloc: AllocAmount, role: RoleSpending, cats: []string{id}})
	}
	return append(out, groupSpec{name: "Savings", alloc: AllocAmount, role: RoleSavings, cats: c.savingsList()})
}

var rules = map[string]methodRules{
	MethodFiftyThirtyTwenty: {
		meta:     MethodMeta{DisplayName: "50/30/20", IsNameEditable: false, HasFixedGroups: true},
		features: []string{FeatureAnomalies},
		groups: func(c catClasses) []groupSpec {
			return []groupSpec{
				{name: "Needs", alloc: AllocPercent, value: 50, role: RoleSpending, cats: c.needs},
				{name: "Wants", alloc: AllocPercent, value: 30, role: RoleSpending, cats: c.wants},
				{name: "Savings & debt", alloc: AllocPercent, value: 20, role: RoleSavings, cats: c.savingsList()},
			}
		},
	},
	MethodPayYourselfFirst: {
		meta:     MethodMeta{DisplayName: "Pay yourself first", IsNameEditable: true, HasFixedGroups: true},
		features: []string{FeatureAnomalies, FeaturePhases},
		groups: func(c catClasses) []groupSpec {
			return []groupSpec{
				{name: "Pay yourself first", alloc: AllocPercent, value: 20, role: RoleSavings, cats: c.savingsList()},
				{name: "Everything else", alloc: AllocRemainder, role: RoleSpending, cats: c.all},
			}
		},
	},
	MethodZeroBased: {
		meta:     MethodMeta{DisplayName: "Zero-based", IsNameEditable: true, HasFixedGroups: false},
		features: []string{FeatureAnomalies, FeatureAssignAll},
	},
	MethodEnvelope: {
		meta:     MethodMeta{DisplayName: "Envelope", IsNameEditable: true, HasFixedGroups: false},
		features: []string{FeatureAnomalies, FeatureRollover},
	},
	MethodKakeibo: {
		meta:     MethodMeta{DisplayName: "Kakeibo", IsNameEditable: false, HasFixedGroups: true},
		features: []string{FeatureAnomalies},
		groups: func(c catClasses) []groupSpec {
			return []groupSpec{
				{name: "Survival", alloc: AllocAmount, role: RoleSpending, cats: c.needs},
				{name: "Optional", alloc: AllocAmount, role: RoleSpending, cats: c.without(c.needs, c.culture, c.travel)},
				{name: "Culture", alloc: AllocAmount, role: RoleSpending, cats: c.culture},
				{name: "Extra", alloc: AllocAmount, role: RoleSpending, cats: c.travel},
			}
		},
	},
	MethodFire: {
		meta:     MethodMeta{DisplayName: "FIRE", IsNameEditable: true, HasFixedGroups: true},
		features: []string{FeatureAnomalies, FeaturePhases},
		groups: func(c catClasses) []groupSpec {
			return []groupSpec{
				{name: "Invest", alloc: AllocPercent, value: 40, role: RoleSavings, cats: c.savingsList()},
				{name: "Essentials", alloc: AllocAmount, role: RoleSpending, cats: c.needs},
				{name: "Lifestyle", alloc: AllocAmount, role: RoleSpending, cats: c.wants},
			}
		},
	},
	MethodValuesBased: {
		meta:     MethodMeta{DisplayName: "Values-based", IsNameEditable: true, HasFixedGroups: false},
		features: []string{FeatureAnomalies},
		groups: func(c catClasses) []groupSpec {
			return []groupSpec{
				{name: "Essentials", alloc: AllocAmount, role: RoleSpending, cats: c.needs},
				{name: "Experiences", alloc: AllocAmount, role: RoleSpending, cats: c.without(c.needs)},
				{name: "Future me", alloc: AllocAmount, role: RoleSavings, cats: c.savingsList()},
			}
		},
	},
	MethodCustom: {
		meta:     MethodMeta{DisplayName: "Custom", IsNameEditable: true, HasFixedGroups: false},
		features: []string{FeatureAnomalies},
		groups: func(c catClasses) []groupSpec {
			return []groupSpec{
				{name: "Spending", alloc: AllocAmount, role: RoleSpending, cats: c.all},
				{name: "Savings", alloc: AllocAmount, role: RoleSavings, cats: c.savingsList()},
			}
		},
	},
}

// ValidMethod reports whether m is one of the eight budget methods.
func ValidMethod(m string) bool { _, ok := rules[m]; return ok }

// MetaFor returns the method's meta (zero for an unknown method).
func MetaFor(m string) MethodMeta { return rules[m].meta }

// BudgetTemplate is what a new budget is made from.
type BudgetTemplate struct {
	Method   string
	UserID   string
	Currency string
	// Categories are the user's categories (system and own).
	Categories []finance.Category
	// MonthlySpend is the average monthly spend per category id over the
	// last full months (subcategories rolled up to their top level, the
	// savings category on its own); it seeds item allocations.
	MonthlySpend map[string]decimal.Decimal
	// MonthlyIncome seeds expected_monthly_income; nil leaves it unset.
	MonthlyIncome *decimal.Decimal
	NewID         func() string
	Now           time.Time
}

// NewBudget builds a budget of the template's method: its groups from the
// method's rules over the user's categories, item allocations from the
// recent monthly spend (rounded up to whole units), a monthly period.
func NewBudget(t BudgetTemplate) Budget {
	r := rules[t.Method]
	c := classify(t.Categories)
	names := map[string]string{}
	for _, cat := range t.Categories {
		names[cat.ID] = cat.Name
	}
	var specs []groupSpec
	if r.groups != nil {
		specs = r.groups(c)
	} else {
		specs = perTopLevel(c, names)
	}
	b := Budget{ID: t.NewID(), UserID: t.UserID, Name: r.meta.DisplayName + " budget", MethodType: t.Method,
		PeriodType: PeriodMonthly, IsActive: true, IncomeType: IncomeSalary, ExpectedMonthlyIncome: t.MonthlyIncome,
		Currency: t.Currency, EnabledFeatures: slices.Clone(r.features), AlertThresholds: slices.Clone(DefaultAlertThresholds),
		Version: 1, CreatedAt: t.Now, UpdatedAt: t.Now}
	for i, s := range specs {
		g := TargetGroup{ID: t.NewID(), Name: s.name, SortOrder: int32(i + 1), AllocationType: s.alloc,
			AllocationValue: decimal.NewFromInt(s.value), Role: s.role}
		var sum decimal.Decimal
		for _, cat := range s.cats {
			amount := t.MonthlySpend[cat].Ceil()
			if amount.IsNegative() {
				amount = decimal.Zero
			}
			sum = sum.Add(amount)
			g.Items = append(g.Items, BudgetItem{ID: t.NewID(), CategoryID: cat, AllocatedAmount: amount})
		}
		if s.alloc == AllocAmount {
			g.AllocationValue = sum
		} else if s.alloc == AllocRemainder {
			g.AllocationValue = decimal.Zero
		}
		b.Groups = append(b.Groups, g)
	}
	return b
}
