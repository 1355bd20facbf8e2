package accounting_test

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ledgerlane/platform/services/jobs/accounting"
)

func TestReadCSV(t *testing.T) {
	for _, tc := range []struct {
		name    string
		in      string
		entries int
		bad     bool
	}{
		{"empty", "", 0, false},
		{"header only", header, 0, false},
		{"three", threeEntries, 3, false},
		{"formula guard removed", statementCSV("A,EUR,2026-01-01,,1.00,credit,,,,'=SUM(A1),,,,,booked,S"), 1, false},
		{"missing column", "account,currency\r\nA,EUR\r\n", 0, true},
		{"bad date", statementCSV("A,EUR,01.02.2026,,1.00,credit,,,,,,,,,booked,S"), 0, true},
		{"bad amount", statementCSV("A,EUR,2026-01-01,,1e5,credit,,,,,,,,,booked,S"), 0, true},
		{"float-ish amount", statementCSV("A,EUR,2026-01-01,,1.0000001,credit,,,,,,,,,booked,S"), 0, true},
		{"bad currency", statementCSV("A,eur,2026-01-01,,1.00,credit,,,,,,,,,booked,S"), 0, true},
		{"bad quoting", header + "\"A,EUR\r\n", 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			es, err := accounting.ReadCSV(tc.in)
			if (err != nil) != tc.bad || len(es) != tc.entries {
				t.Fatalf("got %d entries, err %v", len(es), err)
			}
			if tc.name == "formula guard removed" && es[0].Counterparty != "=SUM(A1)" {
				t.Fatalf("counterparty %q", es[0].Counterparty)
			}
		})
	}
}

// The ids' invariants: deterministic, unique within a statement, and
// independent of what else the statement holds (an entry keeps its id in an
// overlapping statement as long as its duplicates before it are the same).
func TestAssignIDsProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
	for range 200 {
		n := 1 + rng.IntN(30)
		es := make([]accounting.Entry, n)
		for i := range es {
			es[i] = accounting.Entry{Account: pick("A", "B"), Currency: "EUR", BookingDate: pick("2026-01-01", "2026-01-02"),
				Amount: pick("1.00", "-1.00", "2.50"), BankReference: pick("", "R1"), Reference: pick("", "C1")}
		}
		a := append([]accounting.Entry(nil), es...)
		b := append([]accounting.Entry(nil), es...)
		accounting.AssignIDs(a)
		accounting.AssignIDs(b)
		seen := map[string]bool{}
		for i := range a {
			if a[i].ID != b[i].ID || len(a[i].ID) != 32 {
				t.Fatalf("ids are not deterministic: %q %q", a[i].ID, b[i].ID)
			}
			if seen[a[i].ID] {
				t.Fatalf("duplicate id %s in one statement", a[i].ID)
			}
			seen[a[i].ID] = true
		}
		// A prefix of the statement (an earlier, shorter statement) gives
		// its entries the same ids.
		k := rng.IntN(n) + 1
		p := append([]accounting.Entry(nil), es[:k]...)
		accounting.AssignIDs(p)
		for i := range p {
			if p[i].ID != a[i].ID {
				t.Fatal("an entry's id changed when later entries were added")
			}
		}
	}
}

func FuzzReadCSV(f *testing.F) {
	f.Add(threeEntries)
	f.Add(header)
	f.Add("account\r\n\"")
	f.Add(strings.Repeat(",", 20))
	f.Fuzz(func(t *testing.T, s string) {
		es, err := accounting.ReadCSV(s)
		if err != nil {
			return
		}
		seen := map[string]bool{}
		for _, e := range es {
			if seen[e.ID] {
				t.Fatalf("duplicate id for %+v", e)
			}
			seen[e.ID] = true
		}
	})
}
