package mx

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/ledgerlane/platform/services/converter/statement"
)

// FuzzParsePacs002: no input makes the pacs.002 reader or writer panic or
// hang, every failure is a ParseError, and whatever the writer produces
// reads back.
func FuzzParsePacs002(f *testing.F) {
	f.Add([]byte(`<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pacs.002.001.10"><FIToFIPmtStsRpt><GrpHdr><MsgId>A</MsgId><CreDtTm>2025-01-01T10:00:00+00:00</CreDtTm></GrpHdr><TxInfAndSts><OrgnlGrpInf><OrgnlMsgId>O</OrgnlMsgId><OrgnlMsgNmId>MT103</OrgnlMsgNmId></OrgnlGrpInf><OrgnlInstrId>I</OrgnlInstrId><TxSts>RJCT</TxSts><StsRsnInf><Rsn><Cd>AC04</Cd></Rsn><AddtlInf>x</AddtlInf></StsRsnInf></TxInfAndSts></FIToFIPmtStsRpt></Document>`))
	// A gpi status (AccptncDtTm) and a reject naming the rejected transfer (OrgnlTxRef).
	f.Add([]byte(`<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pacs.002.001.10"><FIToFIPmtStsRpt><GrpHdr><MsgId>A</MsgId><CreDtTm>2025-01-01T10:00:00+00:00</CreDtTm></GrpHdr><TxInfAndSts><OrgnlInstrId>I</OrgnlInstrId><TxSts>ACSP</TxSts><StsRsnInf><Rsn><Cd>G000</Cd></Rsn></StsRsnInf><AccptncDtTm>2025-01-01T12:03:00+02:00</AccptncDtTm></TxInfAndSts></FIToFIPmtStsRpt></Document>`))
	f.Add([]byte(`<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pacs.002.001.10"><FIToFIPmtStsRpt><GrpHdr><MsgId>A</MsgId><CreDtTm>2025-01-01T10:00:00+00:00</CreDtTm></GrpHdr><TxInfAndSts><OrgnlGrpInf><OrgnlMsgId>O</OrgnlMsgId><OrgnlMsgNmId>MT103</OrgnlMsgNmId></OrgnlGrpInf><TxSts>RJCT</TxSts><OrgnlTxRef><IntrBkSttlmAmt Ccy="EUR">10.5</IntrBkSttlmAmt><IntrBkSttlmDt>2025-01-01</IntrBkSttlmDt><Dbtr><Pty><Nm>D</Nm></Pty></Dbtr><DbtrAcct><Id><Othr><Id>1</Id></Othr></Id></DbtrAcct><Cdtr><Agt><FinInstnId><BICFI>BANKGB2L</BICFI></FinInstnId></Agt></Cdtr></OrgnlTxRef></TxInfAndSts></FIToFIPmtStsRpt></Document>`))
	if m, err := filepath.Glob(filepath.Join("..", "..", "..", "..", "shared", "samples", "pairs", "cbpr_mx_to_mt", "*pacs.002*.input.xml")); err == nil {
		for _, p := range m {
			if b, err := os.ReadFile(p); err == nil {
				f.Add(b)
			}
		}
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		DetectPayment(in)
		pays, _, err := ParsePayments(in, typePacs2, "")
		if err != nil {
			var pe *statement.ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("not a ParseError: %v", err)
			}
			return
		}
		docs, _, err := RenderPayments(pays, typePacs2, pacs2v10)
		if err != nil {
			var pe *statement.ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("render: not a ParseError: %v", err)
			}
			return
		}
		for _, d := range docs {
			if _, _, err := ParsePayments([]byte(d), typePacs2, ""); err != nil {
				t.Fatalf("written document does not read back: %v\n%s", err, d)
			}
		}
	})
}
