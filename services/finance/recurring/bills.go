package recurring

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/ledgerlane/platform/services/finance"
)

// Upcoming bills: GET /v1/bills/upcoming?days_ahead=.
const (
	DefaultBillsDaysAhead = 30
	MaxBillsDaysAhead     = 365
)

// UpcomingBill is one expected occurrence of an outflow stream.
type UpcomingBill struct {
	RuleID         string
	Merchant       string
	DisplayName    string
	ExpectedAmount finance.Money // positive: what the bill will take
	ExpectedDate   time.Time
	Frequency      string
	StreamType     string
	LogoURL        string
}

// UpcomingBills lists the occurrences of the active outflow rules from
// today through today + daysAhead (both inclusive): each rule's dates step
// by its frequency from its next expected date, and dates before today are
// skipped (a stale next date rolls forward). One line per occurrence, by
// date, then merchant, then rule id. The amount is the rule's expected
// amount as a positive figure.
func UpcomingBills(rules []Rule, today time.Time, daysAhead int) []UpcomingBill {
	today = finance.Day(today)
	end := today.AddDate(0, 0, daysAhead)
	var out []UpcomingBill
	for _, r := range rules {
		if !r.IsActive || r.StreamType != StreamOutflow {
			continue
		}
		for d, n := finance.Day(r.NextExpectedDate), 0; !d.After(end) && n < 2000; d, n = finance.NextOccurrence(d, r.Frequency), n+1 {
			if d.Before(today) {
				continue
			}
			out = append(out, UpcomingBill{RuleID: r.ID, Merchant: r.Merchant, DisplayName: r.DisplayName,
				ExpectedAmount: finance.Money{Amount: r.ExpectedAmount.Amount.Abs(), Currency: r.ExpectedAmount.Currency},
				ExpectedDate:   d, Frequency: r.Frequency, StreamType: r.StreamType, LogoURL: r.LogoURL})
		}
	}
	slices.SortFunc(out, func(a, b UpcomingBill) int {
		if c := a.ExpectedDate.Compare(b.ExpectedDate); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Merchant, b.Merchant); c != 0 {
			return c
		}
		return cmp.Compare(a.RuleID, b.RuleID)
	})
	return out
}

// daysAheadOr checks a days_ahead parameter: 0 means dflt, else 1 to max.
func daysAheadOr(daysAhead, dflt, max int32) (int32, error) {
	switch {
	case daysAhead == 0:
		return dflt, nil
	case daysAhead < 0 || daysAhead > max:
		return 0, finance.Invalid("days_ahead", fmt.Sprintf("days_ahead must be between 1 and %d", max))
	}
	return daysAhead, nil
}

// ListUpcomingBills answers GET /v1/bills/upcoming. days_ahead 0 (absent)
// is DefaultBillsDaysAhead; otherwise 1 to MaxBillsDaysAhead (400 naming
// days_ahead). Rules on excluded accounts or in excluded categories are
// left out (filtered is true when one of them had an occurrence in the
// window); under connection.institution a bill whose merchant or display
// name names an institution loses both and its logo.
func (s *Service) ListUpcomingBills(ctx context.Context, c finance.Caller, daysAhead int32) (finance.Result[[]UpcomingBill], error) {
	var res finance.Result[[]UpcomingBill]
	sc, err := s.k.Scope(ctx, c, true)
	if err != nil {
		return res, err
	}
	if daysAhead, err = daysAheadOr(daysAhead, DefaultBillsDaysAhead, MaxBillsDaysAhead); err != nil {
		return res, err
	}
	rules, err := s.Rules(ctx, c.UserID)
	if err != nil {
		return res, err
	}
	var visible, hidden []Rule
	for _, r := range rules {
		if sc.HidesAccount(r.AccountID) || sc.HidesCategory(r.CategoryID) {
			hidden = append(hidden, r)
		} else {
			visible = append(visible, r)
		}
	}
	today := s.k.Now()
	res.Data = UpcomingBills(visible, today, int(daysAhead))
	res.Filtered = len(UpcomingBills(hidden, today, int(daysAhead))) > 0
	if sc.Grant().Redacts(finance.FieldConnectionInstitution) {
		for i := range res.Data {
			b := &res.Data[i]
			if sc.NamesInstitution(b.Merchant) || sc.NamesInstitution(b.DisplayName) {
				b.Merchant, b.DisplayName, b.LogoURL = "", "", ""
			}
		}
	}
	res.RedactedFields = sc.Redacted(finance.FieldConnectionInstitution)
	return res, nil
}
