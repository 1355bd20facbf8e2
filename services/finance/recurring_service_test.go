package finance_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/ledgerlane/platform/services/finance"
	"github.com/ledgerlane/platform/services/finance/recurring"
)

// TestDetectRecurringOnDemo: detection over the demo's two years finds the
// streams the demo was generated with, keeps their rule ids, links their
// rows, and is idempotent; bills then come from the detected streams.
func TestDetectRecurringOnDemo(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	seeded, err := e.store.ListRecurringRules(ctx, e.demo.UserID)
	if err != nil {
		t.Fatal(err)
	}
	rules, err := e.recurring.Detect(ctx, e.demo.UserID)
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]recurring.Rule{}
	for _, r := range rules {
		byID[r.ID] = r
		t.Logf("%s %s %s %s %s active=%v n=%d next=%s", r.Merchant, r.Frequency, r.StreamType, r.ExpectedAmount.Amount,
			r.Status, r.IsActive, r.Occurrences, r.NextExpectedDate.Format(finance.DateLayout))
	}
	for _, s := range seeded {
		r, ok := byID[s.ID]
		if !ok || !r.IsActive || r.Frequency != s.Frequency || r.StreamType != s.StreamType || r.Status != recurring.StreamMature {
			t.Errorf("seeded %s (%s): detected as %+v", s.Merchant, s.Frequency, r)
		}
		if r.DisplayName != s.DisplayName || r.LogoURL != s.LogoURL {
			t.Errorf("%s lost its display name or logo", s.Merchant)
		}
	}
	rows := all(t, e, e.read, finance.TransactionQuery{})
	linked := map[string]int{}
	for _, tx := range rows {
		if tx.RecurringRuleID != "" {
			linked[tx.RecurringRuleID]++
			if _, ok := byID[tx.RecurringRuleID]; !ok {
				t.Fatalf("row %s points at an unknown rule", tx.ID)
			}
		}
	}
	for _, r := range rules {
		if r.Status != recurring.StreamStale && linked[r.ID] != r.Occurrences {
			t.Errorf("%s: %d rows linked, %d occurrences", r.Merchant, linked[r.ID], r.Occurrences)
		}
	}
	again, err := e.recurring.Detect(ctx, e.demo.UserID)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(ruleIDs(again)) != fmt.Sprint(ruleIDs(rules)) {
		t.Errorf("a second detection changed the rules: %v → %v", ruleIDs(rules), ruleIDs(again))
	}
	bills, err := e.recurring.ListUpcomingBills(ctx, e.read, 31)
	if err != nil {
		t.Fatal(err)
	}
	if len(bills.Data) == 0 {
		t.Fatal("no bills")
	}
	for _, b := range bills.Data {
		if r := byID[b.RuleID]; !r.IsActive || r.StreamType != recurring.StreamOutflow || r.Status == "" {
			t.Errorf("bill from rule %+v", r)
		}
	}
}

func ruleIDs(rules []recurring.Rule) []string {
	var out []string
	for _, r := range rules {
		out = append(out, r.ID+"/"+r.Status)
	}
	return out
}
