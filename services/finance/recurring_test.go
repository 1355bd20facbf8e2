package finance_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/ledgerlane/platform/services/finance"
	"github.com/ledgerlane/platform/services/finance/recurring"
)

// history generates the rows of one stream: n occurrences stepping by
// freq from start, amount each, ids "<prefix>-<i>".
func history(prefix, account, merchant, amount, freq string, start time.Time, n int) []finance.BudgetRow {
	var out []finance.BudgetRow
	d := start
	for i := range n {
		out = append(out, finance.BudgetRow{ID: fmt.Sprintf("%s-%02d", prefix, i), AccountID: account, Merchant: merchant,
			Amount: finance.Money{Amount: dec(amount), Currency: "USD"}, Date: d})
		d = step(d, freq, i)
	}
	return out
}

func step(d time.Time, freq string, i int) time.Time {
	switch freq {
	case finance.FrequencyWeekly:
		return d.AddDate(0, 0, 7)
	case finance.FrequencyBiweekly:
		return d.AddDate(0, 0, 14)
	case finance.FrequencySemiMonthly:
		if d.Day() < 15 {
			return time.Date(d.Year(), d.Month(), 15, 0, 0, 0, 0, time.UTC)
		}
		if last := time.Date(d.Year(), d.Month()+1, 0, 0, 0, 0, 0, time.UTC); d.Before(last) {
			return last
		}
		return time.Date(d.Year(), d.Month()+1, 15, 0, 0, 0, 0, time.UTC)
	case finance.FrequencyQuarterly:
		return d.AddDate(0, 3, 0)
	case finance.FrequencyAnnually:
		return d.AddDate(1, 0, 0)
	}
	return d.AddDate(0, 1, 0)
}

func without(rows []finance.BudgetRow, ids ...string) []finance.BudgetRow {
	return slices.DeleteFunc(slices.Clone(rows), func(r finance.BudgetRow) bool { return slices.Contains(ids, r.ID) })
}

// renamed gives the rows ids the name the user wrote, keeping the bank's.
func renamed(rows []finance.BudgetRow, name string, ids ...string) []finance.BudgetRow {
	out := slices.Clone(rows)
	for i := range out {
		if slices.Contains(ids, out[i].ID) {
			out[i].BankMerchant, out[i].Merchant = out[i].Merchant, name
		}
	}
	return out
}

func TestNormalizeCounterparty(t *testing.T) {
	for in, want := range map[string]string{
		"NETFLIX.COM 866-579-7172 CA": "netflix",
		"Netflix":                     "netflix",
		"SQ *BLUE BOTTLE COFFEE #123": "blue bottle",
		"24 Hour Fitness":             "hour fitness",
		"Portland General Electric":   "portland general",
		"POS DEBIT 0412 ":             "",
		"":                            "",
	} {
		if got := recurring.NormalizeCounterparty(in); got != want {
			t.Errorf("%q: got %q, want %q", in, got, want)
		}
	}
}

func TestDetectStreams(t *testing.T) {
	today := date("2026-05-20")
	acct := "a1"
	tests := []struct {
		name   string
		rows   []finance.BudgetRow
		want   map[string]string // merchant → frequency (exactly these streams)
		status map[string]string // merchant → status
		count  map[string]int    // merchant → occurrences
		amount map[string]string // merchant → expected amount
	}{
		{name: "monthly subscription",
			rows: history("n", acct, "Netflix", "-15.49", finance.FrequencyMonthly, date("2025-05-05"), 13),
			want: map[string]string{"Netflix": finance.FrequencyMonthly}, status: map[string]string{"Netflix": recurring.StreamMature},
			count: map[string]int{"Netflix": 13}},
		// The demo's user renames a Netflix charge now and then: the row
		// is still Netflix's and stays in the stream, whichever occurrence
		// it is; the stream keeps the bank's name.
		{name: "a row the user renamed",
			rows: renamed(history("n", acct, "Netflix", "-15.49", finance.FrequencyMonthly, date("2025-05-05"), 13),
				"Netflix (work lunch)", "n-06", "n-12"),
			want: map[string]string{"Netflix": finance.FrequencyMonthly}, count: map[string]int{"Netflix": 13}},
		{name: "a missed month",
			rows: without(history("n", acct, "Netflix", "-15.49", finance.FrequencyMonthly, date("2025-11-05"), 7), "n-03"),
			want: map[string]string{"Netflix": finance.FrequencyMonthly}, count: map[string]int{"Netflix": 6}},
		{name: "a price change",
			rows: append(history("a", acct, "Spotify", "-11.99", finance.FrequencyMonthly, date("2025-09-21"), 5),
				history("b", acct, "SPOTIFY", "-13.99", finance.FrequencyMonthly, date("2026-02-21"), 3)...),
			want: map[string]string{"SPOTIFY": finance.FrequencyMonthly}, count: map[string]int{"SPOTIFY": 8},
			amount: map[string]string{"SPOTIFY": "-13.99"}},
		{name: "a one-off at the same merchant",
			rows: append(history("g", acct, "24 Hour Fitness", "-49.99", finance.FrequencyMonthly, date("2025-12-03"), 6),
				finance.BudgetRow{ID: "x", AccountID: acct, Merchant: "24 Hour Fitness", Amount: finance.Money{Amount: dec("-120.00"), Currency: "USD"}, Date: date("2026-03-17")},
				finance.BudgetRow{ID: "y", AccountID: acct, Merchant: "24 Hour Fitness", Amount: finance.Money{Amount: dec("-49.99"), Currency: "USD"}, Date: date("2026-05-19")}),
			want: map[string]string{"24 Hour Fitness": finance.FrequencyMonthly}, count: map[string]int{"24 Hour Fitness": 6}},
		{name: "weekly", rows: history("w", acct, "Farm Box", "-32.00", finance.FrequencyWeekly, date("2026-03-02"), 11),
			want: map[string]string{"Farm Box": finance.FrequencyWeekly}},
		{name: "biweekly pay", rows: history("p", acct, "Acme Payroll", "2100.00", finance.FrequencyBiweekly, date("2026-01-02"), 10),
			want: map[string]string{"Acme Payroll": finance.FrequencyBiweekly}},
		{name: "semi-monthly pay", rows: history("s", acct, "Northwind Payroll", "3412.55", finance.FrequencySemiMonthly, date("2025-11-15"), 12),
			want: map[string]string{"Northwind Payroll": finance.FrequencySemiMonthly}},
		{name: "quarterly", rows: history("q", acct, "City Water", "-180.20", finance.FrequencyQuarterly, date("2024-05-10"), 9),
			want: map[string]string{"City Water": finance.FrequencyQuarterly}},
		{name: "yearly", rows: history("y", acct, "Amazon Prime", "-139.00", finance.FrequencyAnnually, date("2023-06-01"), 3),
			want: map[string]string{"Amazon Prime": finance.FrequencyAnnually}, status: map[string]string{"Amazon Prime": recurring.StreamEarly}},
		{name: "two occurrences are not a stream", rows: history("n", acct, "Hulu", "-7.99", finance.FrequencyMonthly, date("2026-03-20"), 2),
			want: map[string]string{}},
		{name: "stale", rows: history("n", acct, "Disney+", "-13.99", finance.FrequencyMonthly, date("2025-06-09"), 6),
			want: map[string]string{"Disney+": finance.FrequencyMonthly}, status: map[string]string{"Disney+": recurring.StreamStale}},
		{name: "irregular dates", rows: []finance.BudgetRow{
			{ID: "1", AccountID: acct, Merchant: "Hardware", Amount: finance.Money{Amount: dec("-20"), Currency: "USD"}, Date: date("2026-01-01")},
			{ID: "2", AccountID: acct, Merchant: "Hardware", Amount: finance.Money{Amount: dec("-20"), Currency: "USD"}, Date: date("2026-01-20")},
			{ID: "3", AccountID: acct, Merchant: "Hardware", Amount: finance.Money{Amount: dec("-20"), Currency: "USD"}, Date: date("2026-03-30")},
			{ID: "4", AccountID: acct, Merchant: "Hardware", Amount: finance.Money{Amount: dec("-20"), Currency: "USD"}, Date: date("2026-04-03")},
		}, want: map[string]string{}},
		{name: "own transfers are not streams", rows: func() []finance.BudgetRow {
			rows := history("t", acct, "Transfer to savings", "-500", finance.FrequencyMonthly, date("2025-10-01"), 8)
			for i := range rows {
				rows[i].TransferPairID = "pair"
			}
			return rows
		}(), want: map[string]string{}},
		{name: "daily coffee is not a subscription", rows: func() []finance.BudgetRow {
			r := rand.New(rand.NewPCG(1, 2))
			var rows []finance.BudgetRow
			for d := date("2026-01-01"); d.Before(today); d = d.AddDate(0, 0, 1+r.IntN(2)) {
				rows = append(rows, finance.BudgetRow{ID: d.Format("c-2006-01-02"), AccountID: acct, Merchant: "Starbucks",
					Amount: finance.Money{Amount: decimal.New(-450-r.Int64N(200), -2), Currency: "USD"}, Date: d})
			}
			return rows
		}(), want: map[string]string{}},
		{name: "income and expense at one merchant are two streams",
			rows: append(history("o", acct, "Costco", "-65.00", finance.FrequencyAnnually, date("2023-07-01"), 3),
				history("i", acct, "Costco", "40.00", finance.FrequencyAnnually, date("2023-07-15"), 3)...),
			want: map[string]string{"Costco": finance.FrequencyAnnually}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := recurring.DetectStreams(tc.rows, today)
			freq := map[string]string{}
			for _, s := range got {
				freq[s.Merchant] = s.Frequency
				if st, ok := tc.status[s.Merchant]; ok && s.Status != st {
					t.Errorf("%s status %s, want %s", s.Merchant, s.Status, st)
				}
				if n, ok := tc.count[s.Merchant]; ok && len(s.TransactionIDs) != n {
					t.Errorf("%s has %d occurrences, want %d: %v", s.Merchant, len(s.TransactionIDs), n, s.TransactionIDs)
				}
				if a, ok := tc.amount[s.Merchant]; ok && !s.ExpectedAmount.Amount.Equal(dec(a)) {
					t.Errorf("%s expected amount %s, want %s", s.Merchant, s.ExpectedAmount.Amount, a)
				}
				if slices.Contains(s.TransactionIDs, "x") {
					t.Errorf("the one-off joined the stream")
				}
			}
			if tc.name == "income and expense at one merchant are two streams" {
				if len(got) != 2 || got[0].StreamType == got[1].StreamType {
					t.Fatalf("streams: %+v", got)
				}
				return
			}
			if len(freq) != len(tc.want) {
				t.Fatalf("streams %v, want %v", freq, tc.want)
			}
			for m, f := range tc.want {
				if freq[m] != f {
					t.Errorf("%s: %q, want %q (all: %v)", m, freq[m], f, freq)
				}
			}
		})
	}
}

// TestDetectStreamsProperties: on random histories of several streams with
// noise (missed occurrences, jitter of a day, price changes, one-offs),
// every planted stream with at least 5 kept occurrences is found with its
// frequency; no row is in two streams; occurrences are in date order and
// of the stream's account, direction and currency; next_expected is after
// the last occurrence; detection does not depend on the rows' order.
func TestDetectStreamsProperties(t *testing.T) {
	today := date("2026-05-20")
	freqs := []string{finance.FrequencyWeekly, finance.FrequencyBiweekly, finance.FrequencyMonthly,
		finance.FrequencyQuarterly, finance.FrequencyAnnually}
	for seed := range uint64(200) {
		r := rand.New(rand.NewPCG(seed, 7))
		var rows []finance.BudgetRow
		planted := map[string]string{}
		for s := range 1 + r.IntN(4) {
			freq := freqs[r.IntN(len(freqs))]
			merchant := fmt.Sprintf("Merchant%c Service", 'A'+s)
			n := 8 + r.IntN(10)
			start := today.AddDate(0, 0, -int(float64(n)*map[string]float64{finance.FrequencyWeekly: 7, finance.FrequencyBiweekly: 14,
				finance.FrequencyMonthly: 30.44, finance.FrequencyQuarterly: 91.3, finance.FrequencyAnnually: 365.25}[freq]))
			amount := decimal.New(-(500 + r.Int64N(20000)), -2)
			d, kept := start, 0
			lastMiss := 0
			for i := range n {
				// At most one miss in four occurrences, never the first or last.
				missed := i-lastMiss >= 4 && i < n-1 && r.IntN(5) == 0
				if missed {
					lastMiss = i
				} else {
					jitter := 0
					if freq != finance.FrequencyWeekly {
						jitter = r.IntN(3) - 1
					}
					rows = append(rows, finance.BudgetRow{ID: fmt.Sprintf("%d-%d-%d", seed, s, i), AccountID: "acct", Merchant: merchant,
						Amount: finance.Money{Amount: amount, Currency: "USD"}, Date: d.AddDate(0, 0, jitter)})
					kept++
				}
				if r.IntN(10) == 0 { // a price change of up to 15 %
					amount = amount.Mul(decimal.New(100+r.Int64N(16), -2)).Round(2)
				}
				if r.IntN(12) == 0 { // a one-off of another size
					rows = append(rows, finance.BudgetRow{ID: fmt.Sprintf("%d-%d-%d-x", seed, s, i), AccountID: "acct", Merchant: merchant,
						Amount: finance.Money{Amount: amount.Mul(decimal.NewFromInt(3)), Currency: "USD"}, Date: d.AddDate(0, 0, 3)})
				}
				d = step(d, freq, i)
			}
			if kept >= 5 {
				planted[merchant] = freq
			}
		}
		got := recurring.DetectStreams(rows, today)
		found := map[string]string{}
		seen := map[string]bool{}
		byID := map[string]finance.BudgetRow{}
		for _, row := range rows {
			byID[row.ID] = row
		}
		for _, s := range got {
			found[s.Merchant] = s.Frequency
			prev := time.Time{}
			for _, id := range s.TransactionIDs {
				if seen[id] {
					t.Fatalf("seed %d: row %s in two streams", seed, id)
				}
				seen[id] = true
				row := byID[id]
				if row.Date.Before(prev) || row.AccountID != s.AccountID || row.Amount.Currency != s.ExpectedAmount.Currency ||
					row.Amount.Amount.IsPositive() != (s.StreamType == recurring.StreamInflow) {
					t.Fatalf("seed %d: occurrence %+v does not fit %+v", seed, row, s)
				}
				prev = row.Date
			}
			if len(s.TransactionIDs) < recurring.MinStreamOccurrences || !s.NextExpectedDate.After(s.LastDate) {
				t.Fatalf("seed %d: stream %+v", seed, s)
			}
		}
		for m, f := range planted {
			if found[m] != f {
				t.Errorf("seed %d: %s planted %s, found %q", seed, m, f, found[m])
			}
		}
		shuffled := slices.Clone(rows)
		r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		again := recurring.DetectStreams(shuffled, today)
		if fmt.Sprint(again) != fmt.Sprint(got) {
			t.Fatalf("seed %d: order changes the result", seed)
		}
	}
}
