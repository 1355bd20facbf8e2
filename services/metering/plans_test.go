package metering_test

import (
	"slices"
	"testing"

	"github.com/ledgerlane/platform/services/metering"
)

func TestPlans(t *testing.T) {
	currencies := []metering.Currency{metering.USD, metering.EUR, metering.GBP}
	tests := []struct {
		id              string
		included        int64
		hardStop        bool
		calendarMonth   bool
		paid            bool
		directDebitOnly bool
		rate, burst     int
	}{
		{metering.PlanFree, 1_000, true, true, false, false, 5, 10},
		{metering.PlanStarter, 25_000, false, false, true, false, 20, 40},
		{metering.PlanGrowth, 250_000, false, false, true, false, 100, 200},
		{metering.PlanScale, 2_000_000, false, false, true, true, 500, 1_000},
	}
	if got := len(metering.Plans()); got != len(tests) {
		t.Fatalf("%d plans, want %d", got, len(tests))
	}
	for i, tc := range tests {
		t.Run(tc.id, func(t *testing.T) {
			p, ok := metering.PlanByID(tc.id)
			if !ok {
				t.Fatalf("plan %q missing", tc.id)
			}
			if metering.Plans()[i].ID != tc.id {
				t.Errorf("Plans()[%d] = %q, want %q (cheapest first)", i, metering.Plans()[i].ID, tc.id)
			}
			if p.IncludedConversions != tc.included || p.HardStop != tc.hardStop || p.CalendarMonth != tc.calendarMonth ||
				p.DirectDebitOnly != tc.directDebitOnly || p.RatePerSecond != tc.rate || p.Burst != tc.burst {
				t.Errorf("plan = %+v", p)
			}
			if p.Burst < p.RatePerSecond {
				t.Errorf("burst %d below rate %d", p.Burst, p.RatePerSecond)
			}
			for _, c := range currencies {
				flat, ok1 := p.MonthlyPrice.In(c)
				over, ok2 := p.OveragePer1000.In(c)
				if !ok1 || !ok2 {
					t.Fatalf("no %s price", c)
				}
				if tc.paid != (flat > 0) || tc.paid != (over > 0) {
					t.Errorf("%s: flat %d, overage %d; paid = %v", c, flat, over, tc.paid)
				}
				// Overage must cost more per conversion than the included volume,
				// or nobody would stay within it.
				if tc.paid && over*p.IncludedConversions <= flat*1_000 {
					t.Errorf("%s: overage %d per 1,000 is cheaper than the included volume", c, over)
				}
			}
		})
	}
	if _, ok := metering.PlanByID("enterprise"); ok {
		t.Error("unknown plan found")
	}
	if _, ok := (metering.Prices{}).In("chf"); ok {
		t.Error("price in an unsupported currency")
	}
}

func TestScopeLists(t *testing.T) {
	tests := []struct {
		name string
		got  []string
		want []string
	}{
		{"DefaultConversionScopes", metering.DefaultConversionScopes(),
			[]string{"convert", "normalize", "validate", "formats:read", "jobs:read", "enrich"}},
		{"OptInConversionScopes", metering.OptInConversionScopes(),
			[]string{"webhooks:manage", "connections:manage", "finance_sandbox:manage", "finance_grants:manage"}},
		{"FinanceReadScopes", metering.FinanceReadScopes(),
			[]string{"transactions:read", "categories:read", "accounts:read", "budgets:read", "goals:read",
				"holdings:read", "debt:read", "insights:read", "net_worth:read"}},
		{"FinanceWriteScopes", metering.FinanceWriteScopes(),
			[]string{"transactions:write", "categories:write", "budgets:write", "goals:write"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if !slices.Equal(tc.got, tc.want) {
				t.Errorf("got %q, want %q", tc.got, tc.want)
			}
		})
	}
}

func TestScopeListsAreCopies(t *testing.T) {
	for name, f := range map[string]func() []string{
		"DefaultConversionScopes": metering.DefaultConversionScopes,
		"OptInConversionScopes":   metering.OptInConversionScopes,
		"FinanceReadScopes":       metering.FinanceReadScopes,
		"FinanceWriteScopes":      metering.FinanceWriteScopes,
	} {
		t.Run(name, func(t *testing.T) {
			f()[0] = "tampered"
			if f()[0] == "tampered" {
				t.Error("caller changed the catalogue")
			}
		})
	}
}
