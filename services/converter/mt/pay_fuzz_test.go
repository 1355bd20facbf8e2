package mt

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/ledgerlane/platform/services/converter/statement"
)

// FuzzParsePayments: no input makes the MT payment reader or writer panic or
// hang, every failure is a ParseError, and whatever the writer produces the
// reader reads back.
func FuzzParsePayments(f *testing.F) {
	f.Add([]byte("{1:F01BANKDEFFXXXX0000000000}{2:I103BANKGB2LXXXXN}{3:{121:174c245f-2682-4291-ad67-2a41e530cd27}}{4:\n:20:REF\n:23B:CRED\n:32A:250101EUR1,\n:50F:/1\n1/A\n2/B\n3/DE/Berlin\n:59:/2\nB\n:70:/ROC/X\nrem\n:71A:SHA\n:72:/ACC/abc\n//def\n-}"))
	f.Add([]byte(":20:A\n:23B:CRED\n:32A:250101JPY1,\n:50K:A\n:59A:BANKDEFF\n:71A:BEN\n:71F:JPY0,\n"))
	if m, err := filepath.Glob(filepath.Join("..", "..", "..", "..", "shared", "samples", "pairs", "cbpr_mt_to_mx", "*103*.input.fin")); err == nil {
		for _, p := range m {
			if b, err := os.ReadFile(p); err == nil {
				f.Add(b)
			}
		}
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		DetectPayment(in)
		pays, _, err := ParsePayments(in, "")
		if err != nil {
			var pe *statement.ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("not a ParseError: %v", err)
			}
			return
		}
		var customers = pays[:0:0]
		for _, p := range pays {
			if p.MT == "103" {
				customers = append(customers, p)
			}
		}
		pages, _, err := RenderPayments("103", customers, statement.Options{TranslitProfile: "german"})
		if err != nil {
			var pe *statement.ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("render: not a ParseError: %v", err)
			}
			return
		}
		for _, pg := range pages {
			if _, _, err := ParsePayments([]byte(pg), "MT103"); err != nil {
				t.Fatalf("written message does not read back: %v\n%s", err, pg)
			}
		}
	})
}
