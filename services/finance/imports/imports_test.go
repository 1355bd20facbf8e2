package imports

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/ledgerlane/platform/services/finance"
)

var importNow = time.Date(2026, 5, 20, 14, 30, 0, 0, time.UTC)

func entry(date, amount string, credit bool, ref string) StatementEntry {
	return StatementEntry{BookingDate: date, ValueDate: date, Amount: amount, Currency: "EUR", Credit: credit, BankReference: ref}
}

func TestPrepareImport(t *testing.T) {
	account := finance.Account{ID: "acc", Currency: "EUR"}
	tests := []struct {
		name    string
		entries []StatementEntry
		amounts []string // accepted entries' signed amounts
		refused []string // "row:reason"
	}{
		{"debit is negative, credit positive", []StatementEntry{entry("2026-01-02", "25.5", false, "R1"), entry("2026-01-02", "100", true, "R2")},
			[]string{"-25.5", "100"}, nil},
		{"currency of another account", []StatementEntry{{BookingDate: "2026-01-02", Amount: "1", Currency: "USD"}},
			nil, []string{"1:currency_mismatch"}},
		{"pending", []StatementEntry{{BookingDate: "2026-01-02", Amount: "1", Currency: "EUR", Pending: true}},
			nil, []string{"1:pending"}},
		{"date before 1900", []StatementEntry{entry("1899-12-31", "1", true, "")}, nil, []string{"1:date_out_of_range"}},
		{"date over a year ahead", []StatementEntry{entry("2027-05-21", "1", true, "")}, nil, []string{"1:date_out_of_range"}},
		{"a year ahead is fine", []StatementEntry{entry("2027-05-20", "1", true, "")}, []string{"1"}, nil},
		{"no date", []StatementEntry{{Amount: "1", Currency: "EUR"}}, nil, []string{"1:date_out_of_range"}},
		{"16 integer digits", []StatementEntry{entry("2026-01-02", "1234567890123456", true, "")}, nil, []string{"1:amount_out_of_range"}},
		{"7 decimals", []StatementEntry{entry("2026-01-02", "1.1234567", true, "")}, nil, []string{"1:amount_out_of_range"}},
		{"rows count over the file, refusals in order", []StatementEntry{
			entry("2026-01-02", "1", true, ""), {BookingDate: "2026-01-02", Amount: "1", Currency: "GBP"},
			entry("2026-01-03", "2", false, ""), {BookingDate: "2026-01-02", Amount: "1", Currency: "EUR", Pending: true},
		}, []string{"1", "-2"}, []string{"2:currency_mismatch", "4:pending"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			acc, ref := prepareImport(tt.entries, account, importNow)
			var amounts, refused []string
			for _, e := range acc {
				amounts = append(amounts, e.amount.Amount.String())
				if e.amount.Currency != "EUR" || e.key == "" {
					t.Errorf("entry %+v", e)
				}
			}
			for _, r := range ref {
				refused = append(refused, fmt.Sprintf("%d:%s", r.Row, r.Reason))
				if r.Detail == "" {
					t.Errorf("refusal without detail: %+v", r)
				}
			}
			if strings.Join(amounts, ",") != strings.Join(tt.amounts, ",") || strings.Join(refused, ",") != strings.Join(tt.refused, ",") {
				t.Fatalf("accepted %v refused %v, want %v %v", amounts, refused, tt.amounts, tt.refused)
			}
		})
	}
}

func TestImportKey(t *testing.T) {
	d := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
	m := func(s string) finance.Money {
		return finance.Money{Amount: decimal.RequireFromString(s), Currency: "EUR"}
	}
	k := importKey(d, m("-12.50"), "REF", 1)
	tests := []struct {
		name string
		key  string
		same bool
	}{
		{"amount by value", importKey(d, m("-12.5"), "REF", 1), true},
		{"other date", importKey(d.AddDate(0, 0, 1), m("-12.50"), "REF", 1), false},
		{"other sign", importKey(d, m("12.50"), "REF", 1), false},
		{"other currency", importKey(d, finance.Money{Amount: decimal.RequireFromString("-12.50"), Currency: "USD"}, "REF", 1), false},
		{"other reference", importKey(d, m("-12.50"), "REF2", 1), false},
		{"other ordinal", importKey(d, m("-12.50"), "REF", 2), false},
		{"no shifting between parts", importKey(d, m("-12.50"), "REF1", 0), false},
	}
	for _, tt := range tests {
		if (tt.key == k) != tt.same {
			t.Errorf("%s: same=%v, want %v", tt.name, tt.key == k, tt.same)
		}
	}
}

func TestEntryReference(t *testing.T) {
	tests := []struct {
		e    StatementEntry
		want string
	}{
		{StatementEntry{BankReference: "B", CustomerReference: "C", EndToEndID: "E"}, "B"},
		{StatementEntry{CustomerReference: " C ", EndToEndID: "E"}, "C"},
		{StatementEntry{CustomerReference: "NONREF", EndToEndID: "E"}, "E"},
		{StatementEntry{CustomerReference: "nonref", EndToEndID: "NOTPROVIDED"}, ""},
	}
	for _, tt := range tests {
		if got := entryReference(tt.e); got != tt.want {
			t.Errorf("entryReference(%+v) = %q, want %q", tt.e, got, tt.want)
		}
	}
}

// Identical entries of one file get ordinals, so both are kept, and the same
// file keyed again gives the same keys.
func TestImportKeysOfTwins(t *testing.T) {
	twins := []StatementEntry{entry("2026-01-02", "3.68", true, "NONREF"), entry("2026-01-02", "3.68", true, "NONREF")}
	a, _ := prepareImport(twins, finance.Account{Currency: "EUR"}, importNow)
	b, _ := prepareImport(twins, finance.Account{Currency: "EUR"}, importNow)
	if a[0].key == a[1].key || a[0].key != b[0].key || a[1].key != b[1].key {
		t.Fatalf("twin keys %s %s / %s %s", a[0].key, a[1].key, b[0].key, b[1].key)
	}
}

func TestMatchBankRows(t *testing.T) {
	day := func(s string) time.Time { d, _ := finance.ParseDate(s); return d }
	created := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	bank := func(id, date, amount string, mods ...func(*finance.Transaction)) finance.Transaction {
		t := finance.Transaction{ID: id, Date: day(date), Amount: finance.Money{Amount: decimal.RequireFromString(amount), Currency: "EUR"},
			Source: finance.SourceBankSync, CreatedAt: created}
		for _, m := range mods {
			m(&t)
		}
		return t
	}
	ent := func(date, value, amount string) importEntry {
		e := importEntry{date: day(date), amount: finance.Money{Amount: decimal.RequireFromString(amount), Currency: "EUR"}}
		if value != "" {
			e.valueDate = day(value)
		}
		return e
	}
	pending := func(t *finance.Transaction) { t.IsPending = true }
	manual := func(t *finance.Transaction) { t.Source = finance.SourceManual }
	usd := func(t *finance.Transaction) { t.Amount.Currency = "USD" }
	later := func(t *finance.Transaction) { t.CreatedAt = created.Add(time.Hour) }
	tests := []struct {
		name    string
		entries []importEntry
		rows    []finance.Transaction
		claimed []string
		want    []string // bank row id per entry, "" for none
	}{
		{"same date and amount", []importEntry{ent("2026-01-02", "", "-5")}, []finance.Transaction{bank("a", "2026-01-02", "-5.00")}, nil, []string{"a"}},
		{"other amount", []importEntry{ent("2026-01-02", "", "-5")}, []finance.Transaction{bank("a", "2026-01-02", "5")}, nil, []string{""}},
		{"other date", []importEntry{ent("2026-01-02", "", "-5")}, []finance.Transaction{bank("a", "2026-01-03", "-5")}, nil, []string{""}},
		{"value date", []importEntry{ent("2026-01-02", "2026-01-01", "-5")}, []finance.Transaction{bank("a", "2026-01-01", "-5")}, nil, []string{"a"}},
		{"booking date before value date", []importEntry{ent("2026-01-02", "2026-01-01", "-5")},
			[]finance.Transaction{bank("v", "2026-01-01", "-5"), bank("b", "2026-01-02", "-5")}, nil, []string{"b"}},
		{"pending rows are not matched", []importEntry{ent("2026-01-02", "", "-5")}, []finance.Transaction{bank("a", "2026-01-02", "-5", pending)}, nil, []string{""}},
		{"manual rows are not matched", []importEntry{ent("2026-01-02", "", "-5")}, []finance.Transaction{bank("a", "2026-01-02", "-5", manual)}, nil, []string{""}},
		{"other currency", []importEntry{ent("2026-01-02", "", "-5")}, []finance.Transaction{bank("a", "2026-01-02", "-5", usd)}, nil, []string{""}},
		{"a row claimed by an earlier import", []importEntry{ent("2026-01-02", "", "-5")}, []finance.Transaction{bank("a", "2026-01-02", "-5")}, []string{"a"}, []string{""}},
		{"one to one", []importEntry{ent("2026-01-02", "", "-5"), ent("2026-01-02", "", "-5"), ent("2026-01-02", "", "-5")},
			[]finance.Transaction{bank("b", "2026-01-02", "-5", later), bank("a", "2026-01-02", "-5")}, nil, []string{"a", "b", ""}},
		{"an already claimed entry takes no row", []importEntry{func() importEntry { e := ent("2026-01-02", "", "-5"); e.claimed = true; return e }()},
			[]finance.Transaction{bank("a", "2026-01-02", "-5")}, nil, []string{""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			claimed := map[string]bool{}
			for _, id := range tt.claimed {
				claimed[id] = true
			}
			matchBankRows(tt.entries, tt.rows, claimed)
			var got []string
			for _, e := range tt.entries {
				got = append(got, e.bankRowID)
			}
			if strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Fatalf("matched %q, want %q", got, tt.want)
			}
		})
	}
}

// Property: whatever the rows, matching is one to one, pairs only equal
// amounts on the booking or value date, and never takes a claimed row.
func TestMatchBankRowsProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for n := 0; n < 500; n++ {
		var entries []importEntry
		var rows []finance.Transaction
		claimed := map[string]bool{}
		for i := range r.IntN(8) {
			e := importEntry{date: base.AddDate(0, 0, r.IntN(4)), amount: finance.Money{Amount: decimal.NewFromInt(int64(r.IntN(3) - 1)), Currency: "EUR"}}
			if r.IntN(2) == 0 {
				e.valueDate = base.AddDate(0, 0, r.IntN(4))
			}
			e.claimed = r.IntN(5) == 0
			e.row = i
			entries = append(entries, e)
		}
		for i := range r.IntN(8) {
			id := fmt.Sprintf("r%d", i)
			rows = append(rows, finance.Transaction{ID: id, Date: base.AddDate(0, 0, r.IntN(4)), IsPending: r.IntN(6) == 0,
				Source: finance.SourceBankSync, Amount: finance.Money{Amount: decimal.NewFromInt(int64(r.IntN(3) - 1)), Currency: "EUR"}})
			claimed[id] = r.IntN(5) == 0
		}
		matchBankRows(entries, rows, claimed)
		used := map[string]bool{}
		byID := map[string]finance.Transaction{}
		for _, row := range rows {
			byID[row.ID] = row
		}
		for _, e := range entries {
			if e.bankRowID == "" {
				continue
			}
			row := byID[e.bankRowID]
			switch {
			case used[row.ID]:
				t.Fatalf("row %s matched twice", row.ID)
			case e.claimed, claimed[row.ID], row.IsPending:
				t.Fatalf("entry %+v took row %+v", e, row)
			case !row.Amount.Amount.Equal(e.amount.Amount):
				t.Fatalf("amounts differ: %+v %+v", e, row)
			case !row.Date.Equal(e.date) && !row.Date.Equal(e.valueDate):
				t.Fatalf("dates differ: %+v %+v", e, row)
			}
			used[row.ID] = true
		}
	}
}

func TestEntryText(t *testing.T) {
	tests := []struct {
		e               StatementEntry
		merchant, descr string
	}{
		{StatementEntry{Counterparty: "ACME GmbH", Remittance: []string{"Invoice 1", " 2 "}}, "ACME GmbH", "Invoice 1 2"},
		{StatementEntry{Remittance: []string{"", "Rent\tMay"}}, "Rent May", "Rent May"},
		{StatementEntry{Info: "0111111111 GPSEOUL\nSPOEDBETALING"}, "0111111111 GPSEOUL SPOEDBETALING", "0111111111 GPSEOUL SPOEDBETALING"},
		{StatementEntry{Counterparty: strings.Repeat("é", 250)}, strings.Repeat("é", 200), ""},
		{StatementEntry{Counterparty: "a\x00b\x1bc"}, "a b c", ""},
	}
	for _, tt := range tests {
		m, d := entryText(tt.e)
		if m != tt.merchant || d != tt.descr {
			t.Errorf("entryText(%+v) = %q, %q; want %q, %q", tt.e, m, d, tt.merchant, tt.descr)
		}
	}
}
