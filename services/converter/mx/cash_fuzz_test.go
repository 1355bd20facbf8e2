package mx

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/ledgerlane/platform/services/converter/statement"
)

// FuzzParseCashMX: no input makes the camt.057, camt.060 or camt.107/108/109
// reader or writer panic or hang, every failure is a ParseError, and
// whatever the writer produces reads back.
func FuzzParseCashMX(f *testing.F) {
	f.Add([]byte(`<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.057.001.06"><NtfctnToRcv><GrpHdr><MsgId>A</MsgId><CreDtTm>2025-01-01T10:00:00+00:00</CreDtTm></GrpHdr><Ntfctn><Id>A</Id><Dbtr><Agt><FinInstnId><BICFI>BANKDEFF</BICFI></FinInstnId></Agt></Dbtr><Itm><Id>I</Id><UETR>174c245f-2682-4291-ad67-2a41e530cd27</UETR><Amt Ccy="EUR">1.5</Amt><XpctdValDt>2025-01-02</XpctdValDt></Itm></Ntfctn></NtfctnToRcv></Document>`))
	f.Add([]byte(`<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.060.001.05"><AcctRptgReq><GrpHdr><MsgId>A</MsgId><CreDtTm>2025-01-01T10:00:00Z</CreDtTm></GrpHdr><RptgReq><ReqdMsgNmId>camt.052.001.08</ReqdMsgNmId><Acct><Id><Othr><Id>1</Id></Othr></Id></Acct><AcctOwnr><Agt><FinInstnId><BICFI>BANKDEFF</BICFI></FinInstnId></Agt></AcctOwnr><ReqdTxTp><Sts><Cd>BOOK</Cd></Sts><CdtDbtInd>CRDT</CdtDbtInd><FlrLmt><Amt Ccy="EUR">1</Amt><CdtDbtInd>BOTH</CdtDbtInd></FlrLmt></ReqdTxTp></RptgReq></AcctRptgReq></Document>`))
	f.Add([]byte(`<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.109.001.01"><ChqCxlOrStopRpt><GrpHdr><MsgId>A</MsgId><CreDtTm>2025-01-01T10:00:00Z</CreDtTm><NbOfChqs>1</NbOfChqs></GrpHdr><Chq><ChqNb>1</ChqNb><IsseDt>2025-01-01</IsseDt><Amt Ccy="GBP">1</Amt><ChqCxlOrStopSts><Sts><Prtry>X</Prtry></Sts></ChqCxlOrStopSts></Chq></ChqCxlOrStopRpt></Document>`))
	for _, pattern := range []string{"*camt.05[78]*.xml", "*camt.10[789]*.xml", "*camt_0[56][07]*.xml", "*camt_10[789]*.xml"} {
		if m, err := filepath.Glob(filepath.Join("..", "..", "..", "..", "shared", "samples", "pairs", "cbpr_*", pattern)); err == nil {
			for _, p := range m {
				if b, err := os.ReadFile(p); err == nil {
					f.Add(b)
				}
			}
		}
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		typ, _, _ := DetectCash(in)
		pays, _, err := ParseCash(in, typ, "")
		if err != nil {
			var pe *statement.ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("not a ParseError: %v", err)
			}
			return
		}
		docs, _, err := RenderCash(pays, typ, cashVersions[typ])
		if err != nil {
			var pe *statement.ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("render: not a ParseError: %v", err)
			}
			return
		}
		for _, d := range docs {
			back, _, err := ParseCash([]byte(d), typ, "")
			if err != nil {
				t.Fatalf("written document does not read back: %v\n%s", err, d)
			}
			if len(back[0].Cash.Items) != len(pays[0].Cash.Items) {
				t.Fatalf("%d items read back as %d", len(pays[0].Cash.Items), len(back[0].Cash.Items))
			}
		}
	})
}
