package mt

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shopspring/decimal"
	"gopkg.in/yaml.v3"

	"github.com/ledgerlane/platform/services/converter/statement"
)

// The wolph/mt940 expected files are Python pickles in YAML. Reading them as
// yaml.Node trees avoids resolving the python tags.

func ymap(n *yaml.Node, key string) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			v := n.Content[i+1]
			for v.Kind == yaml.AliasNode {
				v = v.Alias
			}
			return v
		}
	}
	return nil
}

func yscalar(n *yaml.Node) (string, bool) {
	if n == nil || n.Tag == "!!null" {
		return "", false
	}
	if n.Kind == yaml.SequenceNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	return n.Value, true
}

// ydate decodes mt940.models.Date: a pickled datetime.date, 4 bytes
// (year high, year low, month, day).
func ydate(t *testing.T, n *yaml.Node) (statement.Date, bool) {
	s, ok := yscalar(n)
	if !ok {
		return statement.Date{}, false
	}
	b, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(s), ""))
	if err != nil || len(b) != 4 {
		t.Fatalf("bad pickled date %q", s)
	}
	return statement.Date{Year: int(b[0])<<8 | int(b[1]), Month: timeMonth(b[2]), Day: int(b[3])}, true
}

func yamount(t *testing.T, n *yaml.Node) decimal.Decimal {
	s, ok := yscalar(ymap(n, "amount"))
	if !ok {
		t.Fatal("amount missing")
	}
	d, err := decimal.NewFromString(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// wolphKnown lists expected files where wolph/mt940 reads differently from
// the SWIFT grammar on purpose; the reason is checked by hand.
var wolphKnown = map[string]string{}

func TestWolphExpected(t *testing.T) {
	dir := filepath.Join(sharedDir(t), "samples", "mt", "wolph_mt940")
	files, _ := filepath.Glob(filepath.Join(dir, "*.expected.yml"))
	if len(files) == 0 {
		t.Fatal("no expected files")
	}
	for _, yf := range files {
		name := strings.TrimSuffix(filepath.Base(yf), ".expected.yml")
		t.Run(name, func(t *testing.T) {
			if why, ok := wolphKnown[name]; ok {
				t.Skip(why)
			}
			raw, err := os.ReadFile(yf)
			if err != nil {
				t.Fatal(err)
			}
			var doc yaml.Node
			if err := yaml.Unmarshal(raw, &doc); err != nil {
				t.Fatal(err)
			}
			root := doc.Content[0]
			src := filepath.Join(dir, name+".sta")
			if _, err := os.Stat(src); err != nil {
				src = filepath.Join(dir, name+".txt")
			}
			in, err := os.ReadFile(src)
			if err != nil {
				t.Fatal(err)
			}
			stmts, _, err := Parse(in, statement.Options{Field86Profile: "german"})
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			var got []statement.Entry
			for _, s := range stmts {
				got = append(got, s.Entries...)
			}
			want := ymap(root, "transactions")
			if want == nil {
				t.Fatal("no transactions in expected file")
			}
			if len(want.Content) != len(got) {
				t.Fatalf("%d entries, want %d", len(got), len(want.Content))
			}
			for i, tn := range want.Content {
				d := ymap(tn, "data")
				e := got[i]
				amt := yamount(t, ymap(d, "amount"))
				status, _ := yscalar(ymap(d, "status"))
				wantMark, wantRev := statement.Credit, false
				switch status {
				case "D":
					wantMark = statement.Debit
				case "RC":
					wantMark, wantRev = statement.Debit, true
				case "RD":
					wantMark, wantRev = statement.Credit, true
				}
				if !amt.Abs().Equal(e.Value) || e.Mark != wantMark || e.Reversal != wantRev {
					t.Errorf("entry %d: %s %s rev=%v, want %s status %s", i, e.Mark, e.Value, e.Reversal, amt, status)
				}
				if wd, ok := ydate(t, ymap(d, "date")); ok && wd != e.ValueDate {
					t.Errorf("entry %d: value date %s, want %s", i, e.ValueDate, wd)
				}
				if wd, ok := ydate(t, ymap(d, "entry_date")); ok && wd != e.BookingDate {
					t.Errorf("entry %d: booking date %s, want %s", i, e.BookingDate, wd)
				}
				for _, c := range []struct {
					key string
					got string
				}{
					{"customer_reference", e.CustomerReference},
					{"bank_reference", e.BankReference},
					{"id", e.TransactionType},
					{"funds_code", e.FundsCode},
				} {
					w, ok := yscalar(ymap(d, c.key))
					if first, _, found := strings.Cut(w, "\n"); found && c.key == "customer_reference" {
						// wolph appends the :86: KREF+ text to a "KREF+"
						// reference; the :61: field itself holds only the first line.
						w = first
					}
					if c.key != "id" {
						w = strings.TrimSpace(w)
					}
					if ok && w != c.got {
						t.Errorf("entry %d: %s %q, want %q", i, c.key, c.got, w)
					}
				}
			}
			// Balances: wolph keeps the last statement's final balances.
			data := ymap(root, "data")
			for _, c := range []struct {
				key string
				typ statement.BalanceType
			}{{"final_opening_balance", statement.OpeningBooked}, {"final_closing_balance", statement.ClosingBooked}} {
				wb := ymap(data, c.key)
				if wb == nil {
					continue
				}
				var b statement.Balance
				found := false
				for _, s := range stmts {
					if x, ok := s.Balance(c.typ); ok && !x.Intermediate {
						b, found = x, true
					}
				}
				if !found {
					t.Errorf("%s missing", c.key)
					continue
				}
				amt := yamount(t, ymap(wb, "amount"))
				// wolph stores debit balances as negative amounts.
				if !amt.Equal(signed(b.Mark, b.Value)) {
					t.Errorf("%s: %s %s, want %s", c.key, b.Mark, b.Value, amt)
				}
				if wd, ok := ydate(t, ymap(wb, "date")); ok && wd != b.Date {
					t.Errorf("%s: date %s, want %s", c.key, b.Date, wd)
				}
			}
		})
	}
}
