package mx

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ledgerlane/platform/services/converter/engine"
	"github.com/ledgerlane/platform/services/converter/mt"
	"github.com/ledgerlane/platform/services/converter/statement"
)

// testEngine has the MT and camt formats (no file renderers).
var testEngine = engine.New(mt.Formats(), Formats())

// mtSamples lists the MT sample files (bank files and the CBPR+ MT inputs
// of statements).
func mtSamples(t *testing.T) []string {
	dir := sharedDir(t)
	var files []string
	_ = filepath.WalkDir(filepath.Join(dir, "samples", "mt"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !strings.HasSuffix(p, ".yml") && !strings.HasSuffix(p, ".md") {
			files = append(files, p)
		}
		return nil
	})
	m, _ := filepath.Glob(filepath.Join(dir, "samples", "pairs", "cbpr_mt_to_mx", "*mt94*.input.fin"))
	return append(files, m...)
}

func requireRenderer(t *testing.T, typ string) {
	for _, f := range testEngine.Formats() {
		if f.To == typ {
			return
		}
	}
	t.Skipf("no %s renderer registered", typ)
}

// TestMTToCamt: every MT sample that parses converts to camt.053 (MT940,
// MT950) or camt.052 (MT942) documents that are schema-valid in both
// versions and carry the MT statement's amounts, dates and references.
func TestMTToCamt(t *testing.T) {
	files := mtSamples(t)
	for _, f := range files {
		rel, _ := filepath.Rel(filepath.Join(sharedDir(t), "samples"), f)
		t.Run(rel, func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, to := range []string{"camt.053", "camt.052"} {
				for _, v := range []string{to + ".001.02", to + ".001.08"} {
					res, err := testEngine.Convert(engine.Request{Input: data, To: to, Options: statement.Options{TargetVersion: v}})
					if err != nil {
						if errors.Is(err, engine.ErrUnsupported) || errors.Is(err, engine.ErrUndetectable) {
							continue // e.g. MT942 to camt.053: not a pair
						}
						var pe *statement.ParseError
						if errors.As(err, &pe) {
							t.Logf("%s: %v", res0(res), err)
							return
						}
						t.Fatalf("%s: %v", v, err)
					}
					for _, page := range res.Pages {
						xmllint(t, v, page)
					}
					checkAgainstMT(t, data, res)
				}
			}
		})
	}
}

func res0(*engine.Result) string { return "not convertible" }

// checkAgainstMT parses the MT source and the camt result and compares the
// meaning: entries, amounts, dates, balances and references.
func checkAgainstMT(t *testing.T, mtText []byte, res *engine.Result) {
	t.Helper()
	mtStmts, _, err := mt.Parse(mtText, statement.Options{})
	if err != nil {
		t.Fatalf("MT reparse: %v", err)
	}
	typ := strings.TrimSuffix(strings.TrimSuffix(res.TargetVersion, ".001.02"), ".001.08")
	back, _, err := Parse([]byte(res.Pages[0]), typ, statement.Options{})
	if err != nil {
		t.Fatalf("camt reparse: %v", err)
	}
	if len(back) != len(mtStmts) {
		t.Fatalf("statements: MT %d, camt %d", len(mtStmts), len(back))
	}
	for i := range mtStmts {
		m, c := mtStmts[i], back[i]
		if len(m.Entries) != len(c.Entries) {
			t.Fatalf("statement %d entries: MT %d, camt %d", i+1, len(m.Entries), len(c.Entries))
		}
		for j := range m.Entries {
			me, ce := m.Entries[j], c.Entries[j]
			if !me.Value.Equal(ce.Value) || me.Mark != ce.Mark || me.ValueDate != ce.ValueDate || me.Reversal != ce.Reversal {
				t.Errorf("statement %d entry %d: MT %s %s %s, camt %s %s %s", i+1, j+1, me.Mark, me.Value, me.ValueDate, ce.Mark, ce.Value, ce.ValueDate)
			}
			// Reading camt takes InstrId, else EndToEndId, as the account
			// owner's reference: an MT entry without one (NONREF, or ASN's
			// counterparty IBAN in its place) reads back its end-to-end id.
			cust := ref(me.CustomerReference)
			if cust == "" {
				cust = me.EndToEndID
			}
			if ref(me.BankReference) != ce.BankReference || len(me.BankReference) <= 35 && cust != ce.CustomerReference && len(me.CustomerReference) <= 35 {
				t.Errorf("statement %d entry %d references: MT %q/%q, camt %q/%q", i+1, j+1, me.CustomerReference, me.BankReference, ce.CustomerReference, ce.BankReference)
			}
		}
		for _, mb := range m.Balances {
			cb, ok := c.Balance(mb.Type)
			if !ok || !cb.Value.Equal(mb.Value) || cb.Mark != mb.Mark || cb.Date != mb.Date {
				t.Errorf("statement %d balance %s: MT %s %s %s, camt %+v", i+1, mb.Type, mb.Mark, mb.Value, mb.Date, cb)
			}
		}
	}
}

func ref(s string) string {
	if s == "NONREF" {
		return ""
	}
	return s
}

// TestCamtToMTToCamt: camt.053 → MT940 → camt.053 keeps amounts, dates,
// balances and references of every camt.053 sample.
func TestCamtToMTToCamt(t *testing.T) {
	requireRenderer(t, "MT940")
	for _, f := range mxSamples(t) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		typ, _, ok := Detect(data)
		if !ok || invalidOnPurpose(f) {
			continue
		}
		mtType := map[string]string{typeCamt3: "MT940", typeCamt2: "MT942"}[typ]
		t.Run(filepath.Base(f), func(t *testing.T) {
			res, err := testEngine.Convert(engine.Request{Input: data, To: mtType})
			if err != nil {
				var pe *statement.ParseError
				if errors.As(err, &pe) {
					t.Skipf("not representable in %s: %v", mtType, err)
				}
				t.Fatalf("to %s: %v", mtType, err)
			}
			again, err := testEngine.Convert(engine.Request{Input: []byte(strings.Join(res.Pages, "")), From: mtType, To: typ})
			if err != nil {
				t.Fatalf("back to %s: %v", typ, err)
			}
			xmllint(t, again.TargetVersion, again.Pages[0])
			orig, _, err := Parse(data, typ, statement.Options{})
			if err != nil {
				t.Fatal(err)
			}
			back, _, err := Parse([]byte(again.Pages[0]), typ, statement.Options{})
			if err != nil {
				t.Fatal(err)
			}
			entries := func(ss []*statement.Statement) []statement.Entry {
				var out []statement.Entry
				for _, s := range ss {
					out = append(out, s.Entries...)
				}
				return out
			}
			oe, be := entries(orig), entries(back)
			if len(oe) != len(be) {
				t.Fatalf("entries: %d before, %d after", len(oe), len(be))
			}
			for i := range oe {
				o, b := oe[i], be[i]
				if !o.Value.Equal(b.Value) || o.Mark != b.Mark || o.ValueDate != b.ValueDate || o.BookingDate != b.BookingDate || o.Reversal != b.Reversal {
					t.Errorf("entry %d: %s %s %s/%s became %s %s %s/%s", i+1, o.Mark, o.Value, o.ValueDate, o.BookingDate, b.Mark, b.Value, b.ValueDate, b.BookingDate)
				}
				// MT :61: holds references of at most 16 characters.
				if len(o.BankReference) <= 16 && o.BankReference != b.BankReference {
					t.Errorf("entry %d bank reference %q became %q", i+1, o.BankReference, b.BankReference)
				}
			}
			for i, s := range orig {
				if i >= len(back) {
					break
				}
				for _, ob := range s.Balances {
					// MT942 carries no balances, MT940 only these four.
					if typ != typeCamt3 || ob.Type == statement.InterimBooked || ob.Type == statement.InterimAvailable {
						continue
					}
					bb, ok := back[i].Balance(ob.Type)
					if !ok || !bb.Value.Equal(ob.Value) || bb.Mark != ob.Mark || bb.Date != ob.Date {
						t.Errorf("statement %d balance %s %s %s %s became %+v", i+1, ob.Type, ob.Mark, ob.Value, ob.Date, bb)
					}
				}
			}
		})
	}
}
