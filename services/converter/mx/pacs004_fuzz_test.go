package mx

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/ledgerlane/platform/services/converter/statement"
)

// FuzzParsePacs004: no input makes the pacs.004 reader or writer panic or
// hang, every failure is a ParseError, and whatever the writer produces
// reads back.
func FuzzParsePacs004(f *testing.F) {
	f.Add([]byte(`<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pacs.004.001.09"><PmtRtr><GrpHdr><MsgId>A</MsgId><CreDtTm>2025-01-01T10:00:00+00:00</CreDtTm><NbOfTxs>1</NbOfTxs><SttlmInf><SttlmMtd>INDA</SttlmMtd></SttlmInf></GrpHdr><TxInf><RtrId>A</RtrId><OrgnlInstrId>I</OrgnlInstrId><OrgnlEndToEndId>E</OrgnlEndToEndId><RtrdIntrBkSttlmAmt Ccy="EUR">1.5</RtrdIntrBkSttlmAmt><IntrBkSttlmDt>2025-01-01</IntrBkSttlmDt><RtrChain><Dbtr><Agt><FinInstnId><BICFI>BANKDEFF</BICFI></FinInstnId></Agt></Dbtr><Cdtr><Pty><Nm>N</Nm></Pty></Cdtr></RtrChain><RtrRsnInf><Rsn><Cd>AC04</Cd></Rsn><AddtlInf>x</AddtlInf></RtrRsnInf></TxInf></PmtRtr></Document>`))
	// With the returning bank's charges (ChrgsInf) and the original instructed amount.
	f.Add([]byte(`<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pacs.004.001.09"><PmtRtr><GrpHdr><MsgId>A</MsgId><CreDtTm>2025-01-01T10:00:00+00:00</CreDtTm><NbOfTxs>1</NbOfTxs><SttlmInf><SttlmMtd>INDA</SttlmMtd></SttlmInf></GrpHdr><TxInf><RtrId>A</RtrId><OrgnlInstrId>I</OrgnlInstrId><OrgnlEndToEndId>E</OrgnlEndToEndId><RtrdIntrBkSttlmAmt Ccy="EUR">1.5</RtrdIntrBkSttlmAmt><IntrBkSttlmDt>2025-01-01</IntrBkSttlmDt><RtrdInstdAmt Ccy="EUR">2</RtrdInstdAmt><ChrgBr>DEBT</ChrgBr><ChrgsInf><Amt Ccy="EUR">0.5</Amt><Agt><FinInstnId><BICFI>BANKDEFF</BICFI></FinInstnId></Agt></ChrgsInf><RtrChain><Dbtr><Agt><FinInstnId><BICFI>BANKDEFF</BICFI></FinInstnId></Agt></Dbtr><Cdtr><Pty><Nm>N</Nm></Pty></Cdtr></RtrChain><RtrRsnInf><Rsn><Cd>AC04</Cd></Rsn><AddtlInf>x</AddtlInf></RtrRsnInf></TxInf></PmtRtr></Document>`))
	if m, err := filepath.Glob(filepath.Join("..", "..", "..", "..", "shared", "samples", "pairs", "cbpr_*", "*pacs*004*.xml")); err == nil {
		for _, p := range m {
			if b, err := os.ReadFile(p); err == nil {
				f.Add(b)
			}
		}
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		DetectPayment(in)
		pays, _, err := ParseReturns(in)
		if err != nil {
			var pe *statement.ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("not a ParseError: %v", err)
			}
			return
		}
		docs, _, err := RenderReturns(pays, pacs4v09)
		if err != nil {
			var pe *statement.ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("render: not a ParseError: %v", err)
			}
			return
		}
		for _, d := range docs {
			if _, _, err := ParseReturns([]byte(d)); err != nil {
				t.Fatalf("written document does not read back: %v\n%s", err, d)
			}
		}
	})
}
