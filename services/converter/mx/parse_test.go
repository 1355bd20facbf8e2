package mx

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/ledgerlane/platform/services/converter/statement"
)

const appHdr = `<AppHdr xmlns="urn:iso:std:iso:20022:tech:xsd:head.001.001.02">
<Fr><FIId><FinInstnId><BICFI>RBOSGB2LXXX</BICFI></FinInstnId></FIId></Fr>
<To><FIId><FinInstnId><BICFI>CNORGB22XXX</BICFI></FinInstnId></FIId></To>
<BizMsgIdr>BIZ-1</BizMsgIdr><MsgDefIdr>camt.053.001.08</MsgDefIdr><CreDt>2022-10-20T17:00:00+00:00</CreDt>
</AppHdr>`

const minimal08 = `<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.08"><BkToCstmrStmt>
<GrpHdr><MsgId>M1</MsgId><CreDtTm>2024-03-04T10:00:00Z</CreDtTm></GrpHdr>
<Stmt><Id>S1</Id><StmtPgntn><PgNb>2</PgNb><LastPgInd>false</LastPgInd></StmtPgntn><ElctrncSeqNb>7</ElctrncSeqNb>
<Acct><Id><Othr><Id>12345</Id></Othr></Id><Ccy>EUR</Ccy><Ownr><Nm>Owner</Nm><Id><OrgId><AnyBIC>COBADEFFXXX</AnyBIC></OrgId></Id></Ownr></Acct>
<Bal><Tp><CdOrPrtry><Cd>PRCD</Cd></CdOrPrtry></Tp><Amt Ccy="EUR">10.50</Amt><CdtDbtInd>CRDT</CdtDbtInd><Dt><Dt>2024-03-03</Dt></Dt></Bal>
<Bal><Tp><CdOrPrtry><Cd>CLBD</Cd></CdOrPrtry></Tp><Amt Ccy="EUR">5.50</Amt><CdtDbtInd>CRDT</CdtDbtInd><Dt><DtTm>2024-03-04T23:30:00-05:00</DtTm></Dt></Bal>
<Ntry><Amt Ccy="EUR">5.00</Amt><CdtDbtInd>DBIT</CdtDbtInd><RvslInd>true</RvslInd><Sts><Cd>BOOK</Cd></Sts>
<BookgDt><Dt>2024-03-04</Dt></BookgDt><ValDt><Dt>2024-03-05</Dt></ValDt><AcctSvcrRef>B1</AcctSvcrRef>
<BkTxCd><Domn><Cd>PMNT</Cd><Fmly><Cd>RCDT</Cd><SubFmlyCd>ESCT</SubFmlyCd></Fmly></Domn><Prtry><Cd>NTRF+166+9310</Cd><Issr>DK</Issr></Prtry></BkTxCd>
<NtryDtls><TxDtls><Refs><InstrId>I1</InstrId><EndToEndId>E1</EndToEndId><MndtId>M1</MndtId></Refs>
<RltdPties><Dbtr><Pty><Nm>Payer</Nm></Pty></Dbtr><DbtrAcct><Id><IBAN>DE89370400440532013000</IBAN></Id></DbtrAcct><Cdtr><Pty><Nm>Us</Nm></Pty></Cdtr></RltdPties>
<RmtInf><Ustrd>line 1</Ustrd><Ustrd>line 2</Ustrd></RmtInf></TxDtls></NtryDtls>
<AddtlNtryInf>info &amp; more</AddtlNtryInf></Ntry>
</Stmt></BkToCstmrStmt></Document>`

func TestParseMapping(t *testing.T) {
	for name, input := range map[string]string{
		"bare":          minimal08,
		"apphdr-first":  appHdr + minimal08,
		"envelope":      `<Envelope xmlns="urn:swift:xsd:envelope">` + appHdr + minimal08 + `</Envelope>`,
		"prefixed":      strings.NewReplacer("<Document xmlns=", "<c:Document xmlns:c=", "</Document>", "</c:Document>").Replace(minimal08),
		"bom+xmldecl":   "\xef\xbb\xbf<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" + minimal08,
		"latin1-header": "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>" + minimal08,
	} {
		t.Run(name, func(t *testing.T) {
			if typ, v, ok := Detect([]byte(input)); !ok || typ != "camt.053" || v != "camt.053.001.08" {
				t.Fatalf("Detect = %q %q %v", typ, v, ok)
			}
			stmts, _, err := Parse([]byte(input), "camt.053", statement.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if name == "prefixed" {
				// A prefixed Document's children are unprefixed here, so in
				// no namespace; the parser reads by local name regardless.
				t.Log("prefixed parsed")
			}
			s := stmts[0]
			check := func(field string, got, want any) {
				t.Helper()
				if got != want {
					t.Errorf("%s = %v, want %v", field, got, want)
				}
			}
			check("Reference", s.Reference, "S1")
			check("MessageID", s.MessageID, "M1")
			check("StatementNumber", s.StatementNumber, "7")
			check("SequenceNumber", s.SequenceNumber, "2")
			check("LastPage", s.LastPage, false)
			check("Account.Other", s.Account.Other, "12345")
			check("Account.Owner", s.Account.Owner, "Owner")
			check("Account.OwnerBIC", s.Account.OwnerBIC, "COBADEFFXXX")
			check("Account.Currency", s.Account.Currency, "EUR")
			if strings.Contains(name, "apphdr") || name == "envelope" {
				check("Account.Servicer", s.Account.Servicer, "RBOSGB2LXXX")
			}
			check("balances", len(s.Balances), 2)
			check("opening type", s.Balances[0].Type, statement.OpeningBooked)
			check("opening intermediate", s.Balances[0].Intermediate, true)
			check("closing intermediate", s.Balances[1].Intermediate, true)
			check("closing date", s.Balances[1].Date.String(), "2024-03-04")
			e := s.Entries[0]
			check("amount", e.Value.String(), "5")
			check("mark", e.Mark, statement.Debit)
			check("reversal", e.Reversal, true)
			check("booking", e.BookingDate.String(), "2024-03-04")
			check("value", e.ValueDate.String(), "2024-03-05")
			check("bank ref", e.BankReference, "B1")
			check("domain", e.BankTxDomain+"/"+e.BankTxFamily+"/"+e.BankTxSubFamily, "PMNT/RCDT/ESCT")
			check("type", e.TransactionType, "NTRF")
			check("gvc", e.GVC+"/"+e.Primanota, "166/9310")
			check("cust ref", e.CustomerReference, "I1")
			check("e2e", e.EndToEndID, "E1")
			check("mandate", e.MandateID, "M1")
			// A reversed debit's counterparty is the creditor of the
			// original payment... here the entry books as a debit reversing
			// a credit, so the original payer (Dbtr) is the counterparty.
			check("counterparty", e.Counterparty.Name, "Payer")
			check("counterparty iban", e.Counterparty.IBAN, "DE89370400440532013000")
			check("remittance", strings.Join(e.Remittance, "|"), "line 1|line 2")
			check("info", e.Info, "info & more")
		})
	}
}

func TestParseErrors(t *testing.T) {
	cases := map[string]struct {
		input, field string
	}{
		"not xml":         {"hello", ""},
		"other message":   {`<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.054.001.08"/>`, "Document"},
		"no statement":    {`<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.02"><BkToCstmrStmt><GrpHdr><MsgId>1</MsgId></GrpHdr></BkToCstmrStmt></Document>`, "BkToCstmrStmt/Stmt"},
		"bad amount":      {strings.Replace(minimal08, ">5.00<", ">5,00<", 1), "BkToCstmrStmt/Stmt[1]/Ntry[1]/Amt"},
		"negative":        {strings.Replace(minimal08, ">5.00<", ">-5.00<", 1), "BkToCstmrStmt/Stmt[1]/Ntry[1]/Amt"},
		"bad direction":   {strings.Replace(minimal08, "<CdtDbtInd>DBIT", "<CdtDbtInd>X", 1), "BkToCstmrStmt/Stmt[1]/Ntry[1]/CdtDbtInd"},
		"bad date":        {strings.Replace(minimal08, "2024-03-05", "2024-13-05", 1), "BkToCstmrStmt/Stmt[1]/Ntry[1]/ValDt"},
		"bad currency":    {strings.Replace(minimal08, `<Amt Ccy="EUR">5.00`, `<Amt Ccy="E1">5.00`, 1), "BkToCstmrStmt/Stmt[1]/Ntry[1]/Amt/@Ccy"},
		"truncated":       {minimal08[:len(minimal08)/2], ""},
		"wrong family":    {strings.ReplaceAll(minimal08, "camt.053", "camt.052"), "Document"},
		"unknown charset": {"<?xml version=\"1.0\" encoding=\"EBCDIC\"?>" + minimal08, ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, _, err := Parse([]byte(tc.input), "camt.053", statement.Options{})
			var pe *statement.ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("want ParseError, got %v", err)
			}
			if tc.field != "" && pe.Field != tc.field {
				t.Errorf("field = %q, want %q (%v)", pe.Field, tc.field, err)
			}
		})
	}
}

func TestDetect(t *testing.T) {
	for input, want := range map[string]string{
		`<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.052.001.02">`:                      "camt.052.001.02",
		`<?xml version="1.0"?><Document xmlns='urn:iso:std:iso:20022:tech:xsd:camt.053.001.12'>`: "camt.053.001.12",
		`<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.054.001.08">`:                      "",
		":20:urn:iso:std:iso:20022:tech:xsd:camt.053.001.08":                                     "",
		"": "",
	} {
		_, v, ok := Detect([]byte(input))
		if v != want || ok != (want != "") {
			t.Errorf("Detect(%.40q) = %q %v, want %q", input, v, ok, want)
		}
	}
}

// FuzzParseCamt: no panic, no hang, and whatever parses renders to a
// document that parses again.
func FuzzParseCamt(f *testing.F) {
	f.Add([]byte(minimal08))
	f.Add([]byte(appHdr + minimal08))
	if dir, err := filepath.Abs(filepath.Join("..", "..", "..", "..", "shared", "samples", "mx", "genkgo")); err == nil {
		files, _ := filepath.Glob(filepath.Join(dir, "camt05[23]*.xml"))
		for _, file := range files {
			if data, err := os.ReadFile(file); err == nil {
				f.Add(data)
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		stmts, _, err := Parse(data, "", statement.Options{})
		if err != nil {
			var pe *statement.ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error is not a ParseError: %T %v", err, err)
			}
			return
		}
		typ := typeCamt3
		if stmts[0].Kind == statement.KindReport {
			typ = typeCamt2
		}
		doc, _, err := Render(stmts, typ, typ+".001.08")
		if err != nil {
			return // e.g. a camt.053 without balances: refused, not broken
		}
		if _, _, err := Parse([]byte(doc), typ, statement.Options{}); err != nil {
			t.Fatalf("rendered document does not parse: %v", err)
		}
	})
}

// TestParseUTF16: Windows tools write XML as UTF-16 with a byte-order mark.
func TestParseUTF16(t *testing.T) {
	doc := "<?xml version=\"1.0\" encoding=\"UTF-16\"?>\n" + strings.Replace(minimal08, "Owner", "Müller €", 1)
	for name, order := range map[string]binary.ByteOrder{"le": binary.LittleEndian, "be": binary.BigEndian} {
		t.Run(name, func(t *testing.T) {
			units := utf16.Encode([]rune(doc))
			b := make([]byte, 2+2*len(units))
			order.PutUint16(b, 0xFEFF)
			for i, u := range units {
				order.PutUint16(b[2+2*i:], u)
			}
			if typ, v, ok := Detect(b); !ok || typ != typeCamt3 || v != "camt.053.001.08" {
				t.Fatalf("Detect = %q %q %v", typ, v, ok)
			}
			stmts, _, err := Parse(b, typeCamt3, statement.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if got := stmts[0].Account.Owner; got != "Müller €" {
				t.Fatalf("owner %q", got)
			}
		})
	}
}
