package mt

import (
	"strings"
	"testing"

	"github.com/ledgerlane/platform/services/converter/bankid"
	"github.com/ledgerlane/platform/services/converter/statement"
)

// FuzzSepa86: any :86: text (and :61: reference) read with the plain and
// the sepa profile neither panics nor fails; the MT940 written from it reads
// back; and once read, written and read again, the entry's parties and
// references are a fixed point: writing and reading them again changes
// nothing. An account taken from the :61: reference is never left in it.
func FuzzSepa86(f *testing.F) {
	f.Add("NL44ABNA0548041814", "NL44ABNA0548041814 multi tank card bv\n/TRTP/Zakelijke Europese Incasso/CSID/NL36ZZZ340698640000/NAME/MU\nLTI TANK CARD BV/MARF/MTC244K/REMI/Relatienummer 1755481/Factuurn\nr.7903792/IBAN/NL44ABNA0548041814/BIC/ABNANL2A/EREF/1755481/5570")
	f.Add("NONREF", "/EREF/TRANSACTIONID 0050001563521719//CNTP/NL32INGB0000012345/INGBNL2A/ING BANK NV INZAKE WEB///REMI/USTD//ORDER 1234/")
	f.Add("EREF", "/EREF/08-12-2015 10:22 0030001100999991/BENM//NAME/Rabobank RCKV/\nREMI/2015 Order 347347/PURP/SALA/RTRN/MS03/ULTD//NAME/Max")
	f.Add("NONREF", "/REMI/STRD/CUR/1234567890123456//ORDP//NAME/X/ADDR/Y/ID/Z")
	f.Add("X", "free text /NAME/inside/IBAN/DE88500700100175526303")
	f.Fuzz(func(t *testing.T, ref, text string) {
		if strings.ContainsAny(ref, "\r\n") {
			return
		}
		lines := strings.Split(strings.ReplaceAll(text, "\r", ""), "\n")
		for i, l := range lines {
			// A line that starts a field or ends the message is not :86: text.
			if strings.HasPrefix(l, ":") || strings.HasPrefix(l, "-") || strings.HasPrefix(l, "{") {
				lines[i] = "." + l
			}
		}
		in := ":20:A\n:25:NL53ASNB0781269733\n:28C:1\n:60F:C240101EUR10,\n:61:2401010101D1,NTRF" + ref +
			"\n:86:" + strings.Join(lines, "\n") + "\n:62F:C240101EUR9,\n-"
		for _, profile := range []string{"plain", "sepa"} {
			opts := statement.Options{Field86Profile: profile}
			st, _, err := Parse([]byte(in), opts)
			if err != nil || len(st) != 1 || len(st[0].Entries) != 1 {
				return // the :61: itself may not be one; FuzzParse covers those
			}
			e := st[0].Entries[0]
			if tok, _, _ := strings.Cut(ref, " "); len(tok) > 16 && !strings.Contains(tok, "/") && bankid.IBANShaped(tok) && e.CustomerReference != "" {
				t.Fatalf("account %q read as reference %q", tok, e.CustomerReference)
			}
			once := roundTrip86(t, st, opts)
			twice := roundTrip86(t, []*statement.Statement{{
				Kind: st[0].Kind, Reference: "A", Account: st[0].Account, Balances: st[0].Balances,
				Entries: []statement.Entry{once}, LastPage: true,
			}}, opts)
			if parties(once) != parties(twice) {
				t.Fatalf("%s: not a fixed point:\n%+v\n%+v", profile, parties(once), parties(twice))
			}
		}
	})
}

type partyKey struct {
	cp                                     statement.Counterparty
	e2e, mandate, cred, purp, rtrn, curRef string
	ultD, ultC                             string
}

func parties(e statement.Entry) partyKey {
	return partyKey{e.Counterparty, e.EndToEndID, e.MandateID, e.CreditorID, e.Purpose, e.ReturnReason, e.CreditorReference, e.UltimateDebtor, e.UltimateCreditor}
}

// roundTrip86 writes st as MT940 and reads its only entry back.
func roundTrip86(t *testing.T, st []*statement.Statement, opts statement.Options) statement.Entry {
	t.Helper()
	pages, _, err := Render("940", st, opts)
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	back, _, err := Parse([]byte(strings.Join(pages, "\r\n")), opts)
	if err != nil || len(back) == 0 || len(back[0].Entries) != 1 {
		t.Fatalf("MT940 written does not read back: %v\n%s", err, strings.Join(pages, "\r\n"))
	}
	return back[0].Entries[0]
}
