package mx

import (
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ledgerlane/platform/services/converter/engine"
	"github.com/ledgerlane/platform/services/converter/mt"
	"github.com/ledgerlane/platform/services/converter/statement"
)

// The camt entry as an independent reader sees it: encoding/xml into
// structs of this test's own, none of the package's reader. Unqualified
// tags match the elements of any camt namespace; .001.02 names parties
// directly, .001.08 inside Pty.
type xParty struct {
	Nm    string `xml:"Nm"`
	PtyNm string `xml:"Pty>Nm"`
}

type xAcct struct {
	IBAN string `xml:"Id>IBAN"`
	Othr string `xml:"Id>Othr>Id"`
}

type xAgt struct {
	BICFI string `xml:"FinInstnId>BICFI"`
	BIC   string `xml:"FinInstnId>BIC"`
	MmbId string `xml:"FinInstnId>ClrSysMmbId>MmbId"`
}

type xEntry struct {
	Mark string `xml:"CdtDbtInd"`
	Tx   struct {
		EndToEndID string   `xml:"Refs>EndToEndId"`
		InstrID    string   `xml:"Refs>InstrId"`
		MndtID     string   `xml:"Refs>MndtId"`
		Dbtr       xParty   `xml:"RltdPties>Dbtr"`
		DbtrAcct   xAcct    `xml:"RltdPties>DbtrAcct"`
		Cdtr       xParty   `xml:"RltdPties>Cdtr"`
		CdtrAcct   xAcct    `xml:"RltdPties>CdtrAcct"`
		DbtrAgt    xAgt     `xml:"RltdAgts>DbtrAgt"`
		CdtrAgt    xAgt     `xml:"RltdAgts>CdtrAgt"`
		Ustrd      []string `xml:"RmtInf>Ustrd"`
	} `xml:"NtryDtls>TxDtls"`
}

type xStmts struct {
	Stmts []struct {
		Entries []xEntry `xml:"Ntry"`
	} `xml:"Stmt"`
}

// xmlEntries reads every Ntry of a camt.053 page, in or out of an Envelope.
func xmlEntries(t *testing.T, page string) []xEntry {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(page))
	for {
		tok, err := d.Token()
		if err != nil {
			t.Fatalf("no BkToCstmrStmt: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "BkToCstmrStmt" {
			var s xStmts
			if err := d.DecodeElement(&s, &se); err != nil {
				t.Fatal(err)
			}
			var out []xEntry
			for _, st := range s.Stmts {
				out = append(out, st.Entries...)
			}
			return out
		}
	}
}

// party is what one entry says of its counterparty.
type party struct {
	role, name, acct, bic string
}

func (e xEntry) counterparty() party {
	tx := e.Tx
	p, a, g, role := tx.Cdtr, tx.CdtrAcct, tx.CdtrAgt, "Cdtr"
	if e.Mark == "CRDT" {
		p, a, g, role = tx.Dbtr, tx.DbtrAcct, tx.DbtrAgt, "Dbtr"
	}
	return party{role, p.Nm + p.PtyNm, a.IBAN + a.Othr, g.BICFI + g.BIC + g.MmbId}
}

// TestStatementParties: the Dutch slash-coded and ASN :86: (read by default)
// and the German structured one (field86Profile german) convert with their
// counterparties in camt.053, as an independent XML reading of the output
// sees them; the documents are schema-valid; enrich lists every IBAN and
// BIC; and MT940 → camt.053 → MT940 keeps the parties.
func TestStatementParties(t *testing.T) {
	dir := filepath.Join(sharedDir(t), "samples", "mt")
	for _, tc := range []struct {
		file, profile string
		want          map[int]party // flat entry ordinal (0-based) → counterparty
	}{
		{"php-mt940/Asn_sample", "", map[int]party{
			0: {"Cdtr", "j blom", "NL29INGB0006475121", ""},
			1: {"Cdtr", "MULTI TANK CARD BV", "NL44ABNA0548041814", "ABNANL2A"},
			2: {"Cdtr", "paypal (europe) s.a.r.l. et", "DE88500700100175526303", ""},
		}},
		{"wolph_mt940/ASNB_mt940.txt", "", map[int]party{
			0: {"Cdtr", "hr gjlm paulissen", "NL47INGB9999999999", ""},
			1: {"Dbtr", "paulissen g j l m", "NL56ASNB9999999999", ""},
			4: {"Dbtr", "transfer solutions bv", "NL25INGB9999999999", ""},
		}},
		{"php-mt940/Knab_sample2", "", map[int]party{
			0: {"Dbtr", "STRIPE PAYMENTS UK LTD", "123", "SXPYDEHHXXX"},
		}},
		{"php-mt940/Knab_sample3", "", map[int]party{
			0: {"Dbtr", "NAMENAME B.V.", "53851317", "KNABNL2HXXX"},
		}},
		{"php-mt940/Rabo_sample4", "", map[int]party{
			0: {"Cdtr", "Rabobank RCKV", "NL44RABO0123456789", ""},
		}},
		{"wolph_mt940/jejik_rabobank-iban.sta", "", map[int]party{
			0: {"Cdtr", "CONTRA ACCOUNT HOLDER", "NL70ABNA0987654321", ""},
			1: {"Cdtr", "JOHN DOE", "", ""},
		}},
		{"wolph_mt940/betterplace_sepa_snippet.sta", "german", map[int]party{
			0: {"Dbtr", "KARL        KAUFMANN", "DE14508800500194785000", "DRESDEFF508"},
			1: {"Dbtr", "Quentin Quast", "DE03508800500194791600", "DRESDEFF508"},
			2: {"Dbtr", "Karl Kaufmann", "DE14508800500194785000", "DRESDEFF508"},
		}},
		{"php-mt940/Spk_sample", "german", map[int]party{
			2: {"Dbtr", "HANS UND ERNA SCHNEIDER", "0023334400", "76010020"},
			5: {"Cdtr", "DEUTSCHE TELEKOM AG", "0123123322", "12312301"},
		}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			in, err := os.ReadFile(filepath.Join(dir, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			opts := statement.Options{Field86Profile: tc.profile}
			for _, v := range []string{"camt.053.001.02", "camt.053.001.08"} {
				o := opts
				o.TargetVersion = v
				res, err := testEngine.Convert(engine.Request{Input: in, To: "camt.053", Options: o})
				if err != nil {
					t.Fatal(err)
				}
				xmllint(t, v, res.Pages[0])
				got := xmlEntries(t, res.Pages[0])
				for k, want := range tc.want {
					if k >= len(got) {
						t.Fatalf("%s: %d entries, want entry %d", v, len(got), k+1)
					}
					if p := got[k].counterparty(); p != want {
						t.Errorf("%s entry %d: %+v, want %+v", v, k+1, p, want)
					}
					if tx := got[k].Tx; tx.InstrID != "" && strings.Contains(want.acct, tx.InstrID) || tx.EndToEndID != "" && strings.Contains(want.acct, tx.EndToEndID) {
						t.Errorf("%s entry %d: the account %s is a reference (InstrId %q, EndToEndId %q)", v, k+1, want.acct, tx.InstrID, tx.EndToEndID)
					}
				}
				if v != "camt.053.001.08" {
					continue
				}
				// And back to MT940: the parties survive (read back with the
				// profile that wrote them).
				back, err := testEngine.Convert(engine.Request{Input: []byte(res.Pages[0]), To: "MT940", Options: opts})
				if err != nil {
					t.Fatal(err)
				}
				var entries []statement.Entry
				for _, page := range back.Pages {
					stmts, _, err := mt.Parse([]byte(page), opts)
					if err != nil {
						t.Fatal(err)
					}
					for _, s := range stmts {
						entries = append(entries, s.Entries...)
					}
				}
				for k, want := range tc.want {
					cp := entries[k].Counterparty
					bic := cp.BIC + cp.BankCode
					if cp.Name != want.name || cp.IBAN+cp.Account != want.acct || bic != want.bic {
						t.Errorf("MT940 round trip entry %d: %+v, want %+v", k+1, cp, want)
					}
				}
			}
			// Enrich lists each counterparty's account and BIC.
			en, err := testEngine.Enrich(in, "", opts)
			if err != nil {
				t.Fatal(err)
			}
			listed := map[string]string{}
			for _, i := range en.IBANs {
				listed[i.Value] = i.Path
			}
			for _, b := range en.BICs {
				listed[b.Value] = b.Path
			}
			for _, want := range tc.want {
				for _, id := range []string{want.acct, want.bic} {
					if len(id) < 8 || strings.Trim(id, "0123456789") == "" {
						continue // an account number or bank code, neither IBAN nor BIC
					}
					if p, ok := listed[id]; !ok || !strings.Contains(p, "/counterparty") {
						t.Errorf("enrich does not list %s as a counterparty's (%q)", id, p)
					}
				}
			}
		})
	}
}
