package mx

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/ledgerlane/platform/services/converter/statement"
)

// FuzzParseCamt054: no input makes the camt.054 (confirmation) reader or
// writer panic or hang, every failure is a ParseError, and whatever the
// writer produces reads back.
func FuzzParseCamt054(f *testing.F) {
	f.Add([]byte(`<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.054.001.08"><BkToCstmrDbtCdtNtfctn><GrpHdr><MsgId>A</MsgId></GrpHdr><Ntfctn><Id>A</Id><Acct><Id><Othr><Id>1</Id></Othr></Id></Acct><Ntry><Amt Ccy="EUR">1.5</Amt><CdtDbtInd>CRDT</CdtDbtInd><Sts><Cd>BOOK</Cd></Sts><BookgDt><DtTm>2025-01-01T10:00:00+01:00</DtTm></BookgDt><ValDt><Dt>2025-01-01</Dt></ValDt><BkTxCd><Prtry><Cd>NOTPROVIDED</Cd></Prtry></BkTxCd><NtryDtls><TxDtls><Refs><InstrId>I</InstrId></Refs><RltdPties><Dbtr><Pty><Nm>X</Nm></Pty></Dbtr></RltdPties><AddtlTxInf>info</AddtlTxInf></TxDtls></NtryDtls></Ntry></Ntfctn></BkToCstmrDbtCdtNtfctn></Document>`))
	if m, err := filepath.Glob(filepath.Join("..", "..", "..", "..", "shared", "samples", "pairs", "cbpr_mx_to_mt", "*camt.054*.input.xml")); err == nil {
		for _, p := range m {
			if b, err := os.ReadFile(p); err == nil {
				f.Add(b)
			}
		}
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		DetectPayment(in)
		pays, _, err := ParsePayments(in, typeCamt54, "")
		if err != nil {
			var pe *statement.ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("not a ParseError: %v", err)
			}
			return
		}
		docs, _, err := RenderPayments(pays, typeCamt54, camt54v08)
		if err != nil {
			var pe *statement.ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("render: not a ParseError: %v", err)
			}
			return
		}
		for _, d := range docs {
			if _, _, err := ParsePayments([]byte(d), typeCamt54, ""); err != nil {
				t.Fatalf("written document does not read back: %v\n%s", err, d)
			}
		}
	})
}
