package mt

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/ledgerlane/platform/services/converter/payment"
	"github.com/ledgerlane/platform/services/converter/statement"
)

// FuzzParseReturns: no input makes the /RETN/ reader or writer panic or
// hang, every failure is a ParseError, and whatever the writer produces
// reads back as a return of the same type.
func FuzzParseReturns(f *testing.F) {
	f.Add([]byte("{1:F01CHASGB2LXXXX0000000000}{2:O1030703210511CHASUS33XXXX00000000002105110703N}{3:{121:174c245f-2682-4291-ad67-2a41e530cd27}}{4:\n:20:P4B2A-006\n:23B:CRED\n:32A:210511USD136480,\n:50A:ANBTUS44XXX\n:59F:1/GB Engineering\n2/Industrial Park\n3/GB/Cambridge\n:71A:SHA\n:72:/RETN/99\n/AC04/\n/MREF/A2B0506272708\n/TREF/E2E040445062713+\n-}"))
	f.Add([]byte(":20:A\n:21:B\n:32A:250101EUR1,\n:58A:BANKGB2L\n:72:/RETN/32A\n/AM09/WRONG AMOUNT\n/TEXT/x\n//y\n"))
	if m, err := filepath.Glob(filepath.Join("..", "..", "..", "..", "shared", "samples", "pairs", "cbpr_mt_to_mx", "*004*.input.fin")); err == nil {
		for _, p := range m {
			if b, err := os.ReadFile(p); err == nil {
				f.Add(b)
			}
		}
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		IsReturn(in)
		pays, _, err := ParseReturns(in, "")
		if err != nil {
			var pe *statement.ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("not a ParseError: %v", err)
			}
			return
		}
		typ := pays[0].MT
		pages, _, err := RenderReturns(typ, pays, statement.Options{TranslitProfile: "german"})
		if err != nil {
			var pe *statement.ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("render: not a ParseError: %v", err)
			}
			return
		}
		for _, pg := range pages {
			back, _, err := ParseReturns([]byte(pg), "MT"+typ)
			if err != nil {
				t.Fatalf("written message does not read back: %v\n%s", err, pg)
			}
			if back[0].MT != typ {
				t.Fatalf("written as MT%s, read back as MT%s", typ, back[0].MT)
			}
		}
	})
}

// FuzzParseRejects: an MT103, MT202 or MT205 with /REJT/ in :72: reads as a
// status report (or fails with a ParseError), never panics, and what the
// writer makes of it in its own type reads back as the same reject.
func FuzzParseRejects(f *testing.F) {
	f.Add([]byte("{1:F01CHASGB2LXXXX0000000000}{2:I103CHASUS33XXXXN}{3:{121:174c245f-2682-4291-ad67-2a41e530cd27}}{4:\n:20:REJ-1\n:23B:CRED\n:32A:210511USD136480,\n:50A:ANBTUS44XXX\n:59:GB ENGINEERING\n:71A:SHA\n:72:/REJT/59\n/AC04/ACCOUNT CLOSED\n/MREF/A2B0506272708\n/TREF/E2E040445062713\n-}"))
	f.Add([]byte(":20:A\n:21:B\n:32A:250101EUR1,\n:58A:BANKGB2L\n:72:/REJT/99\n/AM05/\n/TEXT/x\n//y\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		pays, _, err := ParsePayments(in, "")
		if err != nil {
			var pe *statement.ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("not a ParseError: %v", err)
			}
			return
		}
		p := pays[0]
		if p.Kind != payment.Status || p.MT == "199" || p.MT == "299" {
			return
		}
		pages, _, err := RenderPayments(p.MT, pays[:1], statement.Options{TranslitProfile: "german"})
		if err != nil {
			var pe *statement.ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("render: not a ParseError: %v", err)
			}
			return
		}
		back, _, err := ParsePayments([]byte(pages[0]), "MT"+p.MT)
		if err != nil {
			t.Fatalf("written reject does not read back: %v\n%s", err, pages[0])
		}
		if back[0].Kind != payment.Status || back[0].MT != p.MT || back[0].TransactionStatus != "RJCT" {
			t.Fatalf("read back as %s MT%s %s", back[0].Kind, back[0].MT, back[0].TransactionStatus)
		}
	})
}
