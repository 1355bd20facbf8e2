package mt

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/ledgerlane/platform/services/converter/payment"
	"github.com/ledgerlane/platform/services/converter/statement"
)

// FuzzParseInvestigations: no input makes the common group reader (MTn90,
// n91, n92, n95, n96) or writer panic or hang, every failure is a
// ParseError, and whatever the writer produces reads back as the same kind.
func FuzzParseInvestigations(f *testing.F) {
	f.Add([]byte("{1:F01BANKDEFFXXXX0000000000}{2:I192BANKGB2LXXXXN}{3:{121:174c245f-2682-4291-ad67-2a41e530cd27}}{4:\n:20:CSE\n:21:REF\n:11S:103\n250101\n1234567890\n:79:/DUPL/text\n/UETR/174c245f-2682-4291-ad67-2a41e530cd27\nmore\n:32A:250101EUR1,5\n-}"))
	f.Add([]byte(":20:A\n:21:B\n:76:/RJCR/LEGL\n:77A:/UETR/174c245f-2682-4291-ad67-2a41e\n//530cd27\n:11R:202\n250101\n:79:copy\n-"))
	f.Add([]byte(":20:A\n:21:B\n:25:123\n:32C:250101EUR10,\n:52D:BANK\nTOWN\n:71B:/COMM/EUR4,/C\n/OURC/EUR6,/C\nfree text\n:72:/CHRQ/BANKDEFF\n/REC/x\n-"))
	f.Add([]byte(":20:A\n:21:B\n:32B:JPY10,\n:57A:BANKDEFF\n:71B:charges\n-"))
	f.Add([]byte(":20:A\n:21:B\n:75:/3/\n:77A:please\n:11S:103\n250101\n-"))
	for _, pat := range []string{"cbpr_mt_to_mx/*mt[12n]9[0-6]*.input.fin", "cbpr_mt_to_mx/custom__camt106*.input.fin", "cbpr_mx_to_mt/*camt.0[25]*.expected.fin", "cbpr_mx_to_mt/*camt.10[56]*.expected.fin"} {
		if m, err := filepath.Glob(filepath.Join("..", "..", "..", "..", "shared", "samples", "pairs", pat)); err == nil {
			for _, p := range m {
				if b, err := os.ReadFile(p); err == nil {
					f.Add(b)
				}
			}
		}
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		typ, _, ok := DetectInvestigation(in)
		if !ok {
			typ = "MT192"
		}
		pays, _, err := ParsePayments(in, typ)
		if err != nil {
			var pe *statement.ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("not a ParseError: %v", err)
			}
			return
		}
		for _, p := range pays {
			mtType := p.MT
			pages, _, err := RenderPayments(mtType, []*payment.Payment{p}, statement.Options{TranslitProfile: "german"})
			if err != nil {
				var pe *statement.ParseError
				if !errors.As(err, &pe) {
					t.Fatalf("render: not a ParseError: %v", err)
				}
				continue
			}
			back, _, err := ParsePayments([]byte(pages[0]), "MT"+mtType)
			if err != nil {
				t.Fatalf("written message does not read back: %v\n%s", err, pages[0])
			}
			if back[0].Kind != p.Kind {
				t.Fatalf("%s read back as %s\n%s", p.Kind, back[0].Kind, pages[0])
			}
		}
	})
}
