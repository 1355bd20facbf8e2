package mx

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/ledgerlane/platform/services/converter/payment"
	"github.com/ledgerlane/platform/services/converter/statement"
)

// FuzzParseInvestigations: no input makes the camt.056, camt.029, camt.105
// or camt.106 reader or writer panic or hang, every failure is a
// ParseError, and whatever the writer produces reads back.
func FuzzParseInvestigations(f *testing.F) {
	f.Add([]byte(`<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.056.001.08"><FIToFIPmtCxlReq><Assgnmt><Id>A</Id><Assgnr><Agt><FinInstnId><BICFI>BANKDEFF</BICFI></FinInstnId></Agt></Assgnr><Assgne><Agt><FinInstnId><BICFI>BANKGB2L</BICFI></FinInstnId></Agt></Assgne><CreDtTm>2025-01-01T10:00:00+00:00</CreDtTm></Assgnmt><Undrlyg><TxInf><Case><Id>C</Id><Cretr><Pty><Nm>X</Nm></Pty></Cretr></Case><OrgnlGrpInf><OrgnlMsgId>O</OrgnlMsgId><OrgnlMsgNmId>pacs.009.001.08</OrgnlMsgNmId><OrgnlCreDtTm>2025-01-01T09:00:00+01:00</OrgnlCreDtTm></OrgnlGrpInf><OrgnlInstrId>I</OrgnlInstrId><OrgnlIntrBkSttlmAmt Ccy="EUR">1.5</OrgnlIntrBkSttlmAmt><OrgnlIntrBkSttlmDt>2025-01-01</OrgnlIntrBkSttlmDt><CxlRsnInf><Rsn><Prtry>LONGREASON</Prtry></Rsn><AddtlInf>x</AddtlInf></CxlRsnInf></TxInf></Undrlyg></FIToFIPmtCxlReq></Document>`))
	f.Add([]byte(`<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.029.001.09"><RsltnOfInvstgtn><Assgnmt><Id>A</Id><Assgnr><Agt><FinInstnId><BICFI>BANKDEFF</BICFI></FinInstnId></Agt></Assgnr><Assgne><Agt><FinInstnId><BICFI>BANKGB2L</BICFI></FinInstnId></Agt></Assgne><CreDtTm>2025-01-01T10:00:00+00:00</CreDtTm></Assgnmt><Sts><Conf>RJCR</Conf></Sts><CxlDtls><TxInfAndSts><CxlStsId>S</CxlStsId><CxlStsRsnInf><Rsn><Cd>LEGL</Cd></Rsn></CxlStsRsnInf></TxInfAndSts></CxlDtls></RsltnOfInvstgtn></Document>`))
	f.Add([]byte(`<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.106.001.02"><ChrgsPmtReq><GrpHdr><MsgId>M</MsgId><CreDtTm>2025-01-01T10:00:00+00:00</CreDtTm></GrpHdr><Chrgs><Sngl><UndrlygTx><InstrId>I</InstrId></UndrlygTx><Amt Ccy="JPY">10</Amt><CdtDbtInd>DBIT</CdtDbtInd><Tp><Prtry><Id>LONGCODE</Id></Prtry></Tp></Sngl></Chrgs></ChrgsPmtReq></Document>`))
	for _, pat := range []string{"cbpr_mx_to_mt/*camt.0[25]*.input.xml", "cbpr_mx_to_mt/*camt.10[56]*.input.xml", "cbpr_mt_to_mx/*camt*0[25]*.expected.xml", "cbpr_mt_to_mx/*camt*10[56]*.expected.xml"} {
		if m, err := filepath.Glob(filepath.Join("..", "..", "..", "..", "shared", "samples", "pairs", pat)); err == nil {
			for _, p := range m {
				if b, err := os.ReadFile(p); err == nil {
					f.Add(b)
				}
			}
		}
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		DetectInvestigation(in)
		pays, _, err := ParseInvestigations(in, "")
		if err != nil {
			var pe *statement.ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("not a ParseError: %v", err)
			}
			return
		}
		for _, p := range pays {
			typ := ""
			for ty, k := range caseKinds {
				if k == p.Kind {
					typ = ty
				}
			}
			docs, _, err := RenderInvestigations([]*payment.Payment{p}, typ, caseVersions[typ][0])
			if err != nil {
				var pe *statement.ParseError
				if !errors.As(err, &pe) {
					t.Fatalf("render: not a ParseError: %v", err)
				}
				continue
			}
			if _, _, err := ParseInvestigations([]byte(docs[0]), typ); err != nil {
				t.Fatalf("written document does not read back: %v\n%s", err, docs[0])
			}
		}
	})
}
