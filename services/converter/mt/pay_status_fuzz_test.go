package mt

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/ledgerlane/platform/services/converter/statement"
)

// FuzzParseStatus: no input makes the MT199/MT299 status reader or writer
// panic or hang, every failure is a ParseError, and whatever the writer
// produces reads back.
func FuzzParseStatus(f *testing.F) {
	f.Add([]byte("{1:F01BANKDEFFXXXX0000000000}{2:I199BANKGB2LXXXXN}{3:{121:174c245f-2682-4291-ad67-2a41e530cd27}}{4:\n:20:REF\n:21:REL\n:79:/REJT/103\n/XT99/AC05/\n/MREF/M1\n/TREF/T1\n/TEXT/some text\n//more\n/TEXT//UETR/174c245f-2682-4291-ad67-2a41e530cd27\n-}"))
	f.Add([]byte(":20:A\n:21:B\n:79:/REJT/99\n/AC04/\n"))
	// gpi status confirmations (statuses other than a reject).
	f.Add([]byte("{1:F01BANKDEFFXXXX0000000000}{2:I199TRCKCHZZXXXXN}{3:{121:174c245f-2682-4291-ad67-2a41e530cd27}}{4:\n:20:S1\n:21:REL\n:79://2105111203+0200\n//ACSP/G000\n//BANKDEFF\n-}"))
	f.Add([]byte(":20:A\n:21:B\n:79://2513991299-1400\n//ACCC\n"))
	if m, err := filepath.Glob(filepath.Join("..", "..", "..", "..", "shared", "samples", "pairs", "cbpr_mt_to_mx", "*mt199*.input.fin")); err == nil {
		for _, p := range m {
			if b, err := os.ReadFile(p); err == nil {
				f.Add(b)
			}
		}
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		DetectPayment(in)
		pays, _, err := ParsePayments(in, "MT199")
		if err != nil {
			var pe *statement.ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("not a ParseError: %v", err)
			}
			return
		}
		pages, _, err := RenderPayments("299", pays, statement.Options{TranslitProfile: "german"})
		if err != nil {
			var pe *statement.ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("render: not a ParseError: %v", err)
			}
			return
		}
		for _, pg := range pages {
			if _, _, err := ParsePayments([]byte(pg), "MT299"); err != nil {
				t.Fatalf("written message does not read back: %v\n%s", err, pg)
			}
		}
	})
}
