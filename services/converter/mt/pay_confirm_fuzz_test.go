package mt

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/ledgerlane/platform/services/converter/payment"
	"github.com/ledgerlane/platform/services/converter/statement"
)

// FuzzParseConfirmation: no input makes the MT900/MT910 reader or writer
// panic or hang, every failure is a ParseError, and whatever the writer
// produces reads back as the same type.
func FuzzParseConfirmation(f *testing.F) {
	f.Add([]byte("{1:F01BANKDEFFXXXX0000000000}{2:I910BANKGB2LXXXXN}{3:{121:174c245f-2682-4291-ad67-2a41e530cd27}}{4:\n:20:REF\n:21:REL\n:25P:123\nBANKDEFF\n:13D:2501011426+0100\n:32A:250101EUR1,\n:50F:/1\n1/A\n2/B\n3/DE/Berlin\n:52A:BANKDEFF\n:56D:NAME\n:72:/ACC/abc\n def\n-}"))
	f.Add([]byte("{1:F01BANKDEFFXXXX0000000000}{2:I900BANKGB2LXXXXN}{4:\n:20:A\n:21:B\n:25:X\n:32A:250101JPY1,\n-}"))
	if m, err := filepath.Glob(filepath.Join("..", "..", "..", "..", "shared", "samples", "pairs", "cbpr_mt_to_mx", "*mt9[01]0*.input.fin")); err == nil {
		for _, p := range m {
			if b, err := os.ReadFile(p); err == nil {
				f.Add(b)
			}
		}
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		DetectPayment(in)
		pays, _, err := ParsePayments(in, "MT910")
		if err != nil {
			var pe *statement.ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("not a ParseError: %v", err)
			}
			return
		}
		for _, p := range pays {
			typ := "910"
			if p.Kind == payment.DebitConfirmation {
				typ = "900"
			}
			pages, _, err := RenderPayments(typ, []*payment.Payment{p}, statement.Options{TranslitProfile: "german"})
			if err != nil {
				var pe *statement.ParseError
				if !errors.As(err, &pe) {
					t.Fatalf("render: not a ParseError: %v", err)
				}
				continue
			}
			back, _, err := ParsePayments([]byte(pages[0]), "MT"+typ)
			if err != nil {
				t.Fatalf("written message does not read back: %v\n%s", err, pages[0])
			}
			if back[0].Kind != p.Kind {
				t.Fatalf("%s read back as %s\n%s", p.Kind, back[0].Kind, pages[0])
			}
		}
	})
}
