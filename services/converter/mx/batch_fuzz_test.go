package mx

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/ledgerlane/platform/services/converter/statement"
)

// FuzzParseBatchMX: no input makes the pain.001 or pacs.010 reader or
// writer panic or hang, every failure is a ParseError, and whatever the
// writer produces reads back with the same transactions.
func FuzzParseBatchMX(f *testing.F) {
	f.Add([]byte(`<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pain.001.001.09"><CstmrCdtTrfInitn><GrpHdr><MsgId>M</MsgId><CreDtTm>2026-11-01T10:00:00+01:00</CreDtTm><NbOfTxs>2</NbOfTxs><InitgPty><Nm>X</Nm></InitgPty></GrpHdr>` +
		`<PmtInf><PmtInfId>P</PmtInfId><PmtMtd>TRF</PmtMtd><BtchBookg>true</BtchBookg><ReqdExctnDt><DtTm>2026-11-02T09:00:00Z</DtTm></ReqdExctnDt><Dbtr><Nm>D</Nm></Dbtr><DbtrAcct><Id><IBAN>DE89370400440532013000</IBAN></Id></DbtrAcct><DbtrAgt><FinInstnId><BICFI>DEUTDEFF</BICFI></FinInstnId></DbtrAgt><InstrForDbtrAgt>/URGP/ /OTHR/x</InstrForDbtrAgt>` +
		`<CdtTrfTxInf><PmtId><EndToEndId>E</EndToEndId></PmtId><Amt><EqvtAmt><Amt Ccy="EUR">1.5</Amt><CcyOfTrf>USD</CcyOfTrf></EqvtAmt></Amt><XchgRateInf><XchgRate>1.1</XchgRate><CtrctId>C</CtrctId></XchgRateInf><Cdtr><Nm>C</Nm></Cdtr></CdtTrfTxInf>` +
		`<CdtTrfTxInf><PmtId><EndToEndId>F</EndToEndId></PmtId><Amt><InstdAmt Ccy="JPY">2</InstdAmt></Amt><ChrgBr>DEBT</ChrgBr><Cdtr><Nm>G</Nm></Cdtr><InstrForCdtrAgt><Cd>CHQB</Cd></InstrForCdtrAgt></CdtTrfTxInf></PmtInf></CstmrCdtTrfInitn></Document>`))
	f.Add([]byte(`<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pacs.010.001.03"><FIDrctDbt><GrpHdr><MsgId>M</MsgId><CreDtTm>2026-11-01T10:00:00Z</CreDtTm><NbOfTxs>1</NbOfTxs></GrpHdr><CdtInstr><CdtId>C</CdtId><IntrBkSttlmDt>2026-11-02</IntrBkSttlmDt><Cdtr><FinInstnId><BICFI>NDEAFIHH</BICFI></FinInstnId></Cdtr>` +
		`<DrctDbtTxInf><PmtId><EndToEndId>E</EndToEndId></PmtId><IntrBkSttlmAmt Ccy="USD">1</IntrBkSttlmAmt><Dbtr><FinInstnId><Nm>B</Nm></FinInstnId></Dbtr><InstrForDbtrAgt>x</InstrForDbtrAgt></DrctDbtTxInf></CdtInstr></FIDrctDbt></Document>`))
	for _, pattern := range []string{"*mt101_pain_001*.xml", "*mt204_pacs_010*.xml"} {
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
		docs, _, err := RenderBatch(pays, typ, batchVersions[typ][0])
		if err != nil {
			var pe *statement.ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("render: not a ParseError: %v", err)
			}
			return
		}
		for i, d := range docs {
			back, _, err := ParseBatch([]byte(d), typ)
			if err != nil {
				t.Fatalf("written document does not read back: %v\n%s", err, d)
			}
			n := 0
			for _, b := range back {
				n += len(b.Transactions)
			}
			if n != len(pays[i].Transactions) {
				t.Fatalf("%d transactions read back as %d\n%s", len(pays[i].Transactions), n, d)
			}
		}
	})
}
