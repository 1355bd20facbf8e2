package mt_test

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/ledgerlane/platform/services/converter/builtin"
	"github.com/ledgerlane/platform/services/converter/engine"
	"github.com/ledgerlane/platform/services/converter/mt"
	"github.com/ledgerlane/platform/services/converter/mx"
	"github.com/ledgerlane/platform/services/converter/statement"
)

// eng is the engine the converter ships.
var eng = builtin.Engine()

func registered(typ string) bool {
	for _, f := range eng.Formats() {
		if strings.EqualFold(f.To, typ) {
			return true
		}
	}
	return false
}

// TestGeneratedViaCamt053: MT940 -> camt.053 -> MT940, over generated
// statements and both camt versions, keeps what MT940 -> MT940 keeps.
func TestGeneratedViaCamt053(t *testing.T) {
	if !registered("camt.053") {
		t.Skip("no camt.053 renderer registered")
	}
	for _, v := range []string{"camt.053.001.02", "camt.053.001.08"} {
		t.Run(v, func(t *testing.T) {
			mt.GeneratedRoundTrips(t, 11, 150, func(t *testing.T, in []byte) []byte {
				camt, err := eng.Convert(engine.Request{Input: in, From: "MT940", To: "camt.053", Options: statement.Options{TargetVersion: v}})
				if err != nil {
					t.Fatalf("MT940 -> %s: %v", v, err)
				}
				back, err := eng.Convert(engine.Request{Input: []byte(camt.Pages[0]), From: "camt.053", To: "MT940"})
				if err != nil {
					t.Fatalf("%s -> MT940: %v", v, err)
				}
				return []byte(strings.Join(back.Pages, "\r\n"))
			})
		})
	}
}

// TestGeneratedCamtViaMT940: camt.053 -> MT940 -> camt.053, over generated
// statements in both camt versions, keeps what MT940 can carry.
func TestGeneratedCamtViaMT940(t *testing.T) {
	if !registered("camt.053") {
		t.Skip("no camt.053 renderer registered")
	}
	for _, v := range []string{"camt.053.001.02", "camt.053.001.08"} {
		t.Run(v, func(t *testing.T) {
			mt.GeneratedCamtRoundTrips(t, 12, 150, func(t *testing.T, st *statement.Statement) []*statement.Statement {
				doc, _, err := mx.Render([]*statement.Statement{st}, "camt.053", v)
				if err != nil {
					t.Fatalf("render %s: %v", v, err)
				}
				toMT, err := eng.Convert(engine.Request{Input: []byte(doc), From: "camt.053", To: "MT940"})
				if err != nil {
					t.Fatalf("%s -> MT940: %v", v, err)
				}
				back, err := eng.Convert(engine.Request{Input: []byte(strings.Join(toMT.Pages, "\r\n")), From: "MT940", To: "camt.053", Options: statement.Options{TargetVersion: v}})
				if err != nil {
					t.Fatalf("MT940 -> %s: %v", v, err)
				}
				stmts, _, err := mx.Parse([]byte(back.Pages[0]), "camt.053", statement.Options{})
				if err != nil {
					t.Fatalf("parse %s: %v", v, err)
				}
				return stmts
			})
		})
	}
}

// TestViaCamt053: MT940 -> camt.053 -> MT940 keeps amounts, dates,
// balances and references, over the shared samples.
func TestViaCamt053(t *testing.T) {
	if !registered("camt.053") {
		t.Skip("no camt.053 renderer registered")
	}
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "..", "..", "..", "..", "shared", "samples", "mt")
	files, _ := filepath.Glob(filepath.Join(dir, "*", "*"))
	if len(files) == 0 {
		t.Skip("shared samples not found")
	}
	for _, f := range files {
		if strings.HasSuffix(f, ".yml") {
			continue
		}
		in, _ := os.ReadFile(f)
		orig, _, err := mt.Parse(in, statement.Options{})
		if err != nil {
			continue
		}
		t.Run(filepath.Base(f), func(t *testing.T) {
			camt, err := eng.Convert(engine.Request{Input: in, From: "MT940", To: "camt.053"})
			if err != nil {
				t.Skipf("MT940 -> camt.053: %v", err)
			}
			var back []*statement.Statement
			for _, p := range camt.Pages {
				res, err := eng.Convert(engine.Request{Input: []byte(p), From: "camt.053", To: "MT940"})
				if err != nil {
					t.Fatalf("camt.053 -> MT940: %v", err)
				}
				for _, page := range res.Pages {
					st, _, err := mt.Parse([]byte(page), statement.Options{})
					if err != nil {
						t.Fatalf("re-parse: %v", err)
					}
					back = append(back, st...)
				}
			}
			var want, got []statement.Entry
			for _, s := range orig {
				if s.Account.Currency != "" {
					want = append(want, s.Entries...)
				}
			}
			for _, s := range back {
				got = append(got, s.Entries...)
			}
			if len(got) != len(want) {
				t.Fatalf("%d entries, want %d", len(got), len(want))
			}
			for i := range want {
				w, g := want[i], got[i]
				if !g.Value.Equal(w.Value) || g.Mark != w.Mark || g.Reversal != w.Reversal || g.ValueDate != w.ValueDate || g.BookingDate != w.BookingDate {
					t.Errorf("entry %d: %s %s rev=%v %s/%s, want %s %s rev=%v %s/%s", i, g.Mark, g.Value, g.Reversal, g.ValueDate, g.BookingDate, w.Mark, w.Value, w.Reversal, w.ValueDate, w.BookingDate)
				}
				if w.CustomerReference != "" && len(w.CustomerReference) <= 16 && g.CustomerReference != w.CustomerReference {
					t.Errorf("entry %d: reference %q, want %q", i, g.CustomerReference, w.CustomerReference)
				}
			}
		})
	}
}
