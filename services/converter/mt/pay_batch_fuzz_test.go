package mt

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/ledgerlane/platform/services/converter/payment"
	"github.com/ledgerlane/platform/services/converter/statement"
)

// FuzzParseBatch: no input makes the MT101 or MT204 reader or writer panic
// or hang, every failure is a ParseError, and whatever the writer produces
// reads back as the same type with the same transactions.
func FuzzParseBatch(f *testing.F) {
	f.Add([]byte("{1:F01CORPDEFFAXXX0000000000}{2:I101DEUTDEFFXXXXN}{4:\n:20:B\n:21R:ONE\n:28D:1/1\n:50L:CUST-1\n:50H:/DE89370400440532013000\nMueller\nDE/Berlin\n:52A:DEUTDEFF\n:30:261130\n" +
		":21:I1\n:21F:FX1\n:23E:OTHR/call\n:32B:EUR0,\n:57C://CP1234\n:59:/1\nA\n:70:x\n:77B:/ORDERRES/DE\n:33B:USD1,5\n:71A:OUR\n:25A:/9\n:21:I2\n:23E:INTC\n:32B:EUR2,\n:56A:CHASUS33\n:57D:BANK\n:59A:BNPAFRPP\n:71A:BEN\n:36:1,1\n-}"))
	f.Add([]byte(":20:X\n:19:3,\n:30:261021\n:58D:/1\nNAME\n:72:/REC/x\n:20:A\n:21:M\n:32B:JPY1,\n:53B:/2\n:20:B\n:32B:JPY2,\n:53D:BANK\n-"))
	for _, pattern := range []string{"*mt101*.input.fin", "*mt204*.input.fin"} {
		m, _ := filepath.Glob(filepath.Join("..", "..", "..", "..", "shared", "samples", "pairs", "cbpr_mt_to_mx", pattern))
		for _, p := range m {
			if b, err := os.ReadFile(p); err == nil {
				f.Add(b)
			}
		}
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		typ, _, _ := DetectBatch(in)
		pays, _, err := ParseBatch(in, typ)
		if err != nil {
			var pe *statement.ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("not a ParseError: %v", err)
			}
			return
		}
		for _, p := range pays {
			pages, _, err := RenderBatch(p.MT, []*payment.Payment{p}, statement.Options{TranslitProfile: "german"})
			if err != nil {
				var pe *statement.ParseError
				if !errors.As(err, &pe) {
					t.Fatalf("render: not a ParseError: %v", err)
				}
				continue
			}
			back, _, err := ParseBatch([]byte(pages[0]), "MT"+p.MT)
			if err != nil {
				t.Fatalf("written message does not read back: %v\n%s", err, pages[0])
			}
			if len(back[0].Transactions) != len(p.Transactions) {
				t.Fatalf("%d transactions read back as %d\n%s", len(p.Transactions), len(back[0].Transactions), pages[0])
			}
		}
	})
}
