package mx

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ledgerlane/platform/services/converter/engine"
	"github.com/ledgerlane/platform/services/converter/statement"
)

// TestStatementAppHdr: camt.052/053 written from an MT statement that came
// with FIN blocks 1/2 carry the head.001.001.02 AppHdr in the SWIFT envelope
// (as payments do) and validate part by part; a bare block-4 file stays a
// bare Document; the header reads back and gives the MT its blocks 1/2.
func TestStatementAppHdr(t *testing.T) {
	dir := sharedDir(t)
	bare := ":20:B1\r\n:25:DE89370400440532013000\r\n:28C:1/1\r\n:60F:C260301EUR100,00\r\n:62F:C260301EUR100,00\r\n-"
	for _, tc := range []struct {
		name, file, in, to string
		// want are the header's elements; nil: no envelope.
		want  []string
		warns []string
	}{
		{name: "MT940 output message", file: "c_53_1_1__mt940_camt_053_B_D.input.fin", to: "camt.053", want: []string{
			"<Fr><FIId><FinInstnId><BICFI>RBOSGB2L</BICFI>", "<To><FIId><FinInstnId><BICFI>CNORGB22</BICFI>",
			"<BizMsgIdr>Stmnt-100-01</BizMsgIdr>", "<MsgDefIdr>camt.053.001.08</MsgDefIdr>",
			"<BizSvc>swift.cbprplus.02</BizSvc>", "<CreDt>2022-10-20T17:00:00+00:00</CreDt>",
			"<CreDtTm>2022-10-20T17:00:00Z</CreDtTm>",
		}},
		{name: "MT942 output message", file: "c_52_1_1__mt942_camt_052_C_D.input.fin", to: "camt.052", want: []string{
			"<BICFI>MEDBITMM</BICFI>", "<BICFI>VEBHIT2M</BICFI>", "<BizMsgIdr>100-01</BizMsgIdr>",
			"<MsgDefIdr>camt.052.001.08</MsgDefIdr>",
		}},
		{name: "camt.053.001.02 has no CBPR+ service", file: "c_53_1_1__mt940_camt_053_B_D.input.fin", to: "camt.053.001.02", want: []string{
			"<MsgDefIdr>camt.053.001.02</MsgDefIdr><CreDt>",
		}},
		{name: "input message without sender", in: "{2:I940CNORGB22XXXXN}{4:\r\n" + bare + "}", to: "camt.053", want: []string{
			"<Fr><FIId><FinInstnId><Nm>NOTPROVIDED</Nm>", "<To><FIId><FinInstnId><BICFI>CNORGB22</BICFI>",
		}, warns: []string{CodeHeaderDefaulted}},
		{name: "bare block 4", in: bare, to: "camt.053"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := []byte(tc.in)
			if tc.file != "" {
				in = readSample(t, filepath.Join(dir, "samples", "pairs", "cbpr_mt_to_mx", tc.file))
			}
			res, err := testEngine.Convert(engine.Request{Input: in, To: tc.to})
			if err != nil {
				t.Fatal(err)
			}
			out := res.Pages[0]
			xmllint(t, res.TargetVersion, out)
			compact := regexp.MustCompile(`>\s+<`).ReplaceAllString(out, "><")
			if tc.want == nil {
				if strings.Contains(out, "Envelope") || strings.Contains(out, "AppHdr") {
					t.Fatalf("bare source got a header:\n%s", out)
				}
				return
			}
			if !strings.Contains(compact, `<Envelope xmlns="urn:swift:xsd:envelope"><AppHdr xmlns="urn:iso:std:iso:20022:tech:xsd:head.001.001.02">`) {
				t.Fatalf("no envelope with AppHdr:\n%s", out)
			}
			for _, w := range tc.want {
				if !strings.Contains(compact, w) {
					t.Errorf("lacks %s:\n%s", w, out)
				}
			}
			got := map[string]bool{}
			for _, w := range res.Warnings {
				got[w.Code] = true
			}
			for _, c := range tc.warns {
				if !got[c] {
					t.Errorf("no %s warning: %v", c, res.Warnings)
				}
			}
			// Back to MT: the header gives the blocks, and camt again keeps it.
			mtType := "MT940"
			if tc.to == "camt.052" {
				mtType = "MT942"
			}
			back, err := testEngine.Convert(engine.Request{Input: []byte(out), To: mtType})
			if err != nil {
				t.Fatal(err)
			}
			stmts, _, err := Parse([]byte(out), "", statement.Options{})
			if err != nil {
				t.Fatal(err)
			}
			h := stmts[0].Header
			if to := h.To; to != "" && !strings.Contains(back.Pages[0], "{2:I"+mtType[2:]+to[:8]) {
				t.Errorf("MT block 2 lacks the receiver %s: %s", to, back.Pages[0][:80])
			}
			again, err := testEngine.Convert(engine.Request{Input: []byte(back.Pages[0]), To: tc.to})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(again.Pages[0], "<AppHdr") {
				t.Errorf("camt → MT → camt lost the AppHdr")
			}
		})
	}
}
