package finance_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ledgerlane/platform/pkg/cursor"
	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/services/finance"
	"github.com/ledgerlane/platform/services/finance/budgets"
	"github.com/ledgerlane/platform/services/finance/memory"
	"github.com/ledgerlane/platform/services/finance/recurring"
	"github.com/ledgerlane/platform/services/finance/seed"
)

// fuzzEnv is the demo on a memory store, built once per fuzz target.
func fuzzEnv(f *testing.F) (*budgets.Service, seed.DemoData, finance.Caller) {
	store := memory.New()
	d, err := seed.Demo(context.Background(), store, tenant, now)
	if err != nil {
		f.Fatal(err)
	}
	svc := finance.NewService(finance.Config{Store: store, Cursors: cursor.New([]byte("fuzz")), Clock: func() time.Time { return now }})
	rec := recurring.NewService(recurring.Config{Kernel: svc, Store: store})
	return budgets.NewService(budgets.Config{Kernel: svc, Recurring: rec, Store: store}), d, finance.Caller{UserID: d.UserID, GrantID: d.GrantWriteID, OwnerAccountID: tenant}
}

// clientError: every refusal of client input is a 4xx problem, never an
// internal error.
func clientError(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	var p *problem.Problem
	if !errors.As(err, &p) || p.Type == problem.Internal {
		t.Fatalf("not a client problem: %v", err)
	}
}

// FuzzGoalInput: any values of a goal's text, amount and date fields give
// a goal or a 4xx naming a field, never a 5xx.
func FuzzGoalInput(f *testing.F) {
	svc, _, c := fuzzEnv(f)
	for _, s := range [][5]string{
		{"Boat", "5000.00", "10", "2027-01-01", "manual"},
		{"", "-1", "1e3", "2026-02-30", "budget_driven"},
		{"a\x00b", "0.001", "١٢", "9999-12-31", "account_driven"},
		{strings.Repeat("x", 300), "999999999999.99", "", "", ""},
	} {
		f.Add(s[0], s[1], s[2], s[3], s[4])
	}
	f.Fuzz(func(t *testing.T, name, target, current, date, mode string) {
		in := budgets.GoalInput{Name: &name, TargetAmount: &target, CurrentAmount: &current, TargetDate: &date, TrackingMode: &mode}
		res, err := svc.CreateGoal(context.Background(), c, in)
		clientError(t, err)
		if err != nil {
			var p *problem.Problem
			if errors.As(err, &p) && p.Field == "" {
				t.Fatalf("a refusal names no field: %v", err)
			}
			return
		}
		if !res.Data.TargetAmount.IsPositive() || res.Data.Name != strings.TrimSpace(name) {
			t.Fatalf("stored %+v from %q %q", res.Data.Goal, name, target)
		}
	})
}

// FuzzAllocations: any allocated_amount or allocation_value gives a budget
// or a 4xx naming the item or group field.
func FuzzAllocations(f *testing.F) {
	svc, d, c := fuzzEnv(f)
	b, err := svc.GetBudget(context.Background(), c, d.Budgets.Active)
	if err != nil {
		f.Fatal(err)
	}
	item, group := b.Data.Groups[0].Items[0].ID, b.Data.Groups[0].ID
	for _, s := range [][2]string{{"450.00", "25"}, {"-1", "100.001"}, {"1e9", "abc"}, {"", "١"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, amount, value string) {
		cur, err := svc.GetBudget(context.Background(), c, d.Budgets.Active)
		if err != nil {
			t.Fatal(err)
		}
		_, err = svc.UpdateBudgetAllocations(context.Background(), c, budgets.AllocationUpdate{BudgetID: d.Budgets.Active,
			ExpectedVersion: cur.Data.Version, Items: []budgets.ItemAllocation{{ID: item, AllocatedAmount: amount}}})
		clientError(t, err)
		_, err = svc.UpdateBudgetAllocations(context.Background(), c, budgets.AllocationUpdate{BudgetID: d.Budgets.Active,
			ExpectedVersion: cur.Data.Version, Groups: []budgets.GroupAllocation{{ID: group, AllocationValue: value}}})
		clientError(t, err)
	})
}

// FuzzNormalizeCounterparty: never panics, is idempotent and keeps at
// most two words.
func FuzzNormalizeCounterparty(f *testing.F) {
	for _, s := range []string{"NETFLIX.COM 866-579-7172 CA", "SQ *BLUE BOTTLE #12", "", "ß ǅ ÿÿÿ", "\xff\xfe"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n := recurring.NormalizeCounterparty(s)
		if again := recurring.NormalizeCounterparty(n); again != n {
			t.Fatalf("%q → %q → %q", s, n, again)
		}
		if len(strings.Fields(n)) > 2 {
			t.Fatalf("%q → %q", s, n)
		}
	})
}
