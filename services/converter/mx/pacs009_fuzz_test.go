package mx

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/ledgerlane/platform/services/converter/statement"
)

// FuzzParsePacs009: no input makes the pacs.009 reader or writer panic or
// hang, every failure is a ParseError, and whatever the writer produces
// reads back.
func FuzzParsePacs009(f *testing.F) {
	f.Add([]byte(`<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pacs.009.001.08"><FICdtTrf><GrpHdr><MsgId>A</MsgId></GrpHdr><CdtTrfTxInf><PmtId><EndToEndId>E</EndToEndId></PmtId><IntrBkSttlmAmt Ccy="EUR">1.5</IntrBkSttlmAmt><IntrBkSttlmDt>2025-01-01</IntrBkSttlmDt><Dbtr><FinInstnId><BICFI>BANKDEFF</BICFI></FinInstnId></Dbtr><Cdtr><FinInstnId><Nm>B</Nm></FinInstnId></Cdtr><UndrlygCstmrCdtTrf><Dbtr><Nm>A</Nm></Dbtr><DbtrAgt><FinInstnId><BICFI>BANKDEFF</BICFI></FinInstnId></DbtrAgt><CdtrAgt><FinInstnId><BICFI>BANKFRPP</BICFI></FinInstnId></CdtrAgt><Cdtr><Nm>B</Nm><PstlAdr><TwnNm>X</TwnNm><Ctry>DE</Ctry></PstlAdr></Cdtr><InstdAmt Ccy="USD">2</InstdAmt></UndrlygCstmrCdtTrf></CdtTrfTxInf></FICdtTrf></Document>`))
	if m, err := filepath.Glob(filepath.Join("..", "..", "..", "..", "shared", "samples", "pairs", "cbpr_mx_to_mt", "*pacs.009*.input.xml")); err == nil {
		for _, p := range m[:min(len(m), 4)] {
			if b, err := os.ReadFile(p); err == nil {
				f.Add(b)
			}
		}
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		DetectPayment(in)
		pays, _, err := ParsePayments(in, typePacs9, "")
		if err != nil {
			var pe *statement.ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("not a ParseError: %v", err)
			}
			return
		}
		docs, _, err := RenderPayments(pays, typePacs9, pacs9v08)
		if err != nil {
			var pe *statement.ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("render: not a ParseError: %v", err)
			}
			return
		}
		for _, d := range docs {
			if _, _, err := ParsePayments([]byte(d), typePacs9, ""); err != nil {
				t.Fatalf("written document does not read back: %v\n%s", err, d)
			}
		}
	})
}
