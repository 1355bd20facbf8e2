package mt

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/ledgerlane/platform/services/converter/payment"
	"github.com/ledgerlane/platform/services/converter/statement"
)

// FuzzParseCash: no input makes the MT210, MT920 or MT110/111/112 reader or
// writer panic or hang, every failure is a ParseError, and whatever the
// writer produces reads back as the same type with the same items.
func FuzzParseCash(f *testing.F) {
	f.Add([]byte("{1:F01BANKDEFFXXXX0000000000}{2:I210BANKGB2LXXXXN}{3:{121:174c245f-2682-4291-ad67-2a41e530cd27}}{4:\n:20:REF\n:25:ACC\n:30:250101\n:21:I1\n:32B:EUR1,5\n:50C:BANKDEFF\n:21:I2\n:32B:EUR2,\n:52D:NAME\n:56A:BANKDEFF\n-}"))
	f.Add([]byte("{1:F01BANKDEFFXXXX0000000000}{2:I920BANKGB2LXXXXN}{4:\n:20:R\n:12:942\n:25:A\n:34F:EURD1,\n:34F:EURC2,\n:12:940\n:25:B\n-}"))
	f.Add([]byte("{1:F01BANKDEFFXXXX0000000000}{2:I110BANKGB2LXXXXN}{4:\n:20:R\n:53B:/1\n:72:ABC\n:21:1\n:30:250101\n:32A:250102JPY1,\n:50K:NAME\n:52B:X\n:59:/2\nPAYEE\n-}"))
	f.Add([]byte(":20:R\n:21:C\n:30:250101\n:32B:EUR1,\n:59:1/A\n3/GB/London\n:76:/Accepted/ok\n-"))
	if m, err := filepath.Glob(filepath.Join("..", "..", "..", "..", "shared", "samples", "pairs", "cbpr_mt_to_mx", "*mt[29][12]0*.input.fin")); err == nil {
		more, _ := filepath.Glob(filepath.Join("..", "..", "..", "..", "shared", "samples", "pairs", "cbpr_mt_to_mx", "*mt11[012]*.input.fin"))
		for _, p := range append(m, more...) {
			if b, err := os.ReadFile(p); err == nil {
				f.Add(b)
			}
		}
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		typ, _, _ := DetectCash(in)
		pays, _, err := ParseCash(in, typ)
		if err != nil {
			var pe *statement.ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("not a ParseError: %v", err)
			}
			return
		}
		for _, p := range pays {
			pages, _, err := RenderCash(p.MT, []*payment.Payment{p}, statement.Options{TranslitProfile: "german"})
			if err != nil {
				var pe *statement.ParseError
				if !errors.As(err, &pe) {
					t.Fatalf("render: not a ParseError: %v", err)
				}
				continue
			}
			n := 0
			for _, page := range pages {
				back, _, err := ParseCash([]byte(page), "MT"+p.MT)
				if err != nil {
					t.Fatalf("written message does not read back: %v\n%s", err, page)
				}
				n += len(back[0].Cash.Items)
			}
			if n != len(p.Cash.Items) {
				t.Fatalf("%d items read back as %d\n%q", len(p.Cash.Items), n, pages)
			}
		}
	})
}
