package mt

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ledgerlane/platform/services/converter/statement"
)

// FuzzParseInstitution: no input makes the MT202/MT205 (COV) reader or
// writer panic or hang, every failure is a ParseError, and whatever the
// writer produces reads back as the same MT type.
func FuzzParseInstitution(f *testing.F) {
	f.Add([]byte("{1:F01BANKDEFFXXXX0000000000}{2:I202BANKGB2LXXXXN}{3:{119:COV}{121:174c245f-2682-4291-ad67-2a41e530cd27}}{4:\n:20:REF\n:21:REL\n:32A:250101EUR1,\n:52A:BANKDEFF\n:57A:BANKFRPP\n:58A:/123\nBANKBEBB\n:72:/INS/BANKDEFF\n/BNF/abc\n//def\n:50F:/1\n1/A\n2/B\n3/DE/Berlin\n:59:/2\nB\n:70:/ROC/X\nrem\n:33B:USD1,\n-}"))
	f.Add([]byte(":20:A\n:21:B\n:32A:250101JPY1,\n:53B:/ACC\n:56D:NAME\nLINE\n:57B:/X\nLOC\n:58D:NAME\nGB/London\n:72:/PHONBEN/123\n"))
	f.Add([]byte("{1:F01BANKDEFFXXXX0000000000}{2:I205BANKGB2LXXXXN}{4:\n:20:A\n:21:B\n:13C:/CLSTIME/0915+0100\n:32A:250101KWD1,123\n:54A:BANKUS33\n:58A:BANKBEBB\n-}"))
	if m, err := filepath.Glob(filepath.Join("..", "..", "..", "..", "shared", "samples", "pairs", "cbpr_mt_to_mx", "*20[25]*.input.fin")); err == nil {
		for _, p := range m {
			if b, err := os.ReadFile(p); err == nil {
				f.Add(b)
			}
		}
	}
	// MT200 (own account transfer), read as an institution transfer.
	f.Add([]byte("{1:F01RBOSGB2LXXXX0000000000}{2:O2000815221020NDEAFIHHXXXX00000000002210200815N}{4:\n:20:39857579\n:32A:090525USD1000000,\n:53B:/34554-3049\n:56A:CITIUS33\n:57A:CITIUS33MIA\n:72:/ACC/X\n-}"))
	// An MT200 whose narrative starts /RETN/: written as an MT202 it must
	// not read back as a return.
	f.Add([]byte("{1:000000000000000}{2:O2000}:20:0\n:32A:001010AAA0,\n:72:/RETN/"))
	f.Fuzz(func(t *testing.T, in []byte) {
		want := "MT202"
		if typ, _, ok := DetectPayment(in); ok && typ == "MT200" {
			want = typ
		}
		pays, _, err := ParsePayments(in, want)
		if err != nil {
			var pe *statement.ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("not a ParseError: %v", err)
			}
			return
		}
		for _, typ := range []string{"202", "205"} {
			pages, _, err := RenderPayments(typ, pays, statement.Options{TranslitProfile: "german"})
			if err != nil {
				var pe *statement.ParseError
				if !errors.As(err, &pe) {
					t.Fatalf("render: not a ParseError: %v", err)
				}
				return
			}
			for i, pg := range pages {
				back, _, err := ParsePayments([]byte(pg), "MT"+typ)
				if err != nil {
					t.Fatalf("written message does not read back: %v\n%s", err, pg)
				}
				if back[0].MT != typ || back[0].Kind != pays[i].Kind {
					t.Fatalf("MT%s %s read back as MT%s %s\n%s", typ, pays[i].Kind, back[0].MT, back[0].Kind, pg)
				}
				if !strings.HasPrefix(pg, "{1:F01") {
					t.Fatalf("no block 1:\n%s", pg)
				}
			}
		}
	})
}
