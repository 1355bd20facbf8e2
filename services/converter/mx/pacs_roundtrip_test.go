package mx

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/ledgerlane/platform/services/converter/mt"
	"github.com/ledgerlane/platform/services/converter/payment"
	"github.com/ledgerlane/platform/services/converter/statement"
)

// genPayment makes a customer credit transfer with the shapes real ones
// have, and the troubles they bring: long names and addresses, characters
// outside the SWIFT X set, structured and unstructured addresses.
func genPayment(r *rand.Rand, xOnly bool) *payment.Payment {
	bics := []string{"DEUTDEFFXXX", "BNPAFRPP", "NWBKGB2L", "CHASUS33XXX", "UBSWCHZH80A", "RBOSGB2LXXX"}
	bic := func() string { return bics[r.IntN(len(bics))] }
	words := []string{"Müller", "GmbH", "Société", "Générale", "Acme", "Trading", "Co", "Ltd", "Straße", "Rue", "de", "la", "Paix", "Invoice", "2025-0042", "payment", "for", "goods", "&", "services", "O'Neil", "Łódź", "Ærø"}
	if xOnly {
		// Only characters of the SWIFT X set: a difference can then not
		// hide behind transliteration.
		words = []string{"Mueller", "GmbH", "Societe", "Acme", "Trading", "Co", "Ltd", "Strasse", "Rue", "de", "la", "Paix", "Invoice", "2025-0042", "payment", "for", "goods", "services", "O'Neil", "(VAT)", "12,50", "a/b"}
	}
	text := func(max int) string {
		var b strings.Builder
		for b.Len() < max {
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(words[r.IntN(len(words))])
			if r.IntN(4) == 0 {
				break
			}
		}
		return strings.TrimSpace(b.String())
	}
	ccys := []string{"EUR", "USD", "JPY", "KWD", "GBP"}
	ccy := ccys[r.IntN(len(ccys))]
	amt := decimal.New(r.Int64N(1_000_000_000)+1, -int32(payment.MinorUnits(ccy)))
	p := &payment.Payment{
		Kind:           payment.Customer,
		Header:         payment.Header{From: bic(), To: bic(), CreatedAt: time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)},
		InstructionID:  fmt.Sprintf("REF%d", r.IntN(1e9)),
		UETR:           payment.NewUETR(),
		SettlementDate: statement.Date{Year: 2025, Month: time.Month(1 + r.IntN(12)), Day: 1 + r.IntN(28)},
		Amount:         statement.Amount{Value: amt, Currency: ccy},
		ChargeBearer:   []string{"DEBT", "CRED", "SHAR"}[r.IntN(3)],
	}
	p.MessageID = p.InstructionID
	if r.IntN(2) == 0 {
		p.EndToEndID = fmt.Sprintf("E2E-%d", r.IntN(1e12))
	}
	party := func() *payment.Party {
		pt := &payment.Party{Name: text(20 + r.IntN(80))}
		switch r.IntN(3) {
		case 0:
			pt.Account = "DE89370400440532013000"
		case 1:
			pt.Account = fmt.Sprintf("%d", r.IntN(1e9))
		}
		switch r.IntN(3) {
		case 0:
			pt.Address = payment.Address{Street: text(30), Building: fmt.Sprint(1 + r.IntN(200)), Town: text(25), Country: "DE"}
		case 1:
			pt.Address = payment.Address{Town: text(20), Country: "FR", Lines: []string{text(30)}}
		default:
			pt.Address = payment.Address{Lines: []string{text(30), text(60)}}
		}
		return pt
	}
	p.Debtor, p.Creditor = party(), party()
	if r.IntN(2) == 0 {
		p.Intermediary = &payment.Agent{BIC: bic()}
		p.CreditorAgent = &payment.Agent{BIC: bic()}
	}
	if r.IntN(3) == 0 {
		p.CreditorAgent = &payment.Agent{BIC: bic(), Account: fmt.Sprint(r.IntN(1e6))}
	}
	if r.IntN(2) == 0 {
		p.Remittance = []string{text(140)}
	}
	if r.IntN(3) == 0 {
		p.InstructionsForNextAgent = []payment.Instruction{{Text: text(100)}}
	}
	if r.IntN(3) == 0 {
		p.InstructionsForCreditorAgent = []payment.Instruction{{Code: "PHOB", Text: "0044123456"}, {Text: text(60)}}
	}
	if r.IntN(4) == 0 {
		p.ServiceLevels = []string{"SDVA"}
	}
	if r.IntN(4) == 0 {
		p.Regulatory = []string{"/BENEFRES/DE//PAYMENT FOR GOODS"}
	}
	if p.ChargeBearer == "CRED" {
		p.SenderCharges = []statement.Amount{{Value: decimal.New(1500, -int32(payment.MinorUnits(ccy))), Currency: ccy}}
	}
	return p
}

// canonical is a payment as both formats can state it, for comparison.
type canonical struct {
	Header                    [2]string
	Ref, E2E, UETR, Date      string
	Amount, Instructed        string
	Charges                   string
	SenderCharges             string
	Intermediary, CdtrAgt     string
	DbtrAgt                   string
	DebtorName, CreditorName  string
	DebtorAcct, CreditorAcct  string
	DebtorAddr, CreditorAddr  string
	Remittance                string
	InstrCdtr, InstrNxt       string
	ServiceLevels, Regulatory string
}

func canon(p *payment.Payment) canonical {
	ag := func(a *payment.Agent, def string) string {
		if a == nil {
			return bic8(def)
		}
		return bic8(a.BIC) + "|" + a.Account
	}
	addr := func(a payment.Address) string {
		return fmt.Sprintf("%s|%s|%s|%s|%s|%q", a.Street, a.Building, a.PostCode, a.Town, a.Country, a.Lines)
	}
	instr := func(is []payment.Instruction) string {
		var s []string
		for _, i := range is {
			s = append(s, i.Code+":"+i.Text)
		}
		return strings.Join(s, ";")
	}
	inst := p.InstructedAmount
	if inst.Currency == "" {
		inst = p.Amount
	}
	var sc []string
	for _, c := range p.SenderCharges {
		sc = append(sc, c.Currency+c.Value.String())
	}
	e2e := p.EndToEndID
	if e2e == "NOTPROVIDED" {
		e2e = ""
	}
	return canonical{
		Header: [2]string{bic8(p.Header.From), bic8(p.Header.To)},
		Ref:    p.InstructionID, E2E: e2e, UETR: p.UETR, Date: p.SettlementDate.String(),
		Amount: p.Amount.Currency + p.Amount.Value.String(), Instructed: inst.Currency + inst.Value.String(),
		Charges: p.ChargeBearer, SenderCharges: strings.Join(sc, ","),
		Intermediary: ag(p.Intermediary, ""), CdtrAgt: ag(p.CreditorAgent, p.Header.To), DbtrAgt: ag(p.DebtorAgent, p.Header.From),
		DebtorName: p.Debtor.Name, CreditorName: p.Creditor.Name, DebtorAcct: p.Debtor.Account, CreditorAcct: p.Creditor.Account,
		DebtorAddr: addr(p.Debtor.Address), CreditorAddr: addr(p.Creditor.Address),
		Remittance: strings.Join(p.Remittance, " "), InstrCdtr: instr(p.InstructionsForCreditorAgent), InstrNxt: instr(p.InstructionsForNextAgent),
		ServiceLevels: strings.Join(p.ServiceLevels, ","), Regulatory: strings.Join(p.Regulatory, "\n"),
	}
}

// explains lists the warning codes that may account for a difference in
// each field; money, dates and identifiers may never differ.
var explains = map[string][]string{
	"Ref": {payment.CodeTruncated, payment.CodeTransliterated}, "E2E": {payment.CodeTruncated, payment.CodeTransliterated},
	"DebtorName": {payment.CodeTruncated, payment.CodeTransliterated}, "CreditorName": {payment.CodeTruncated, payment.CodeTransliterated},
	"DebtorAddr":   {payment.CodeTruncated, payment.CodeTransliterated, payment.CodeAddressFlattened},
	"CreditorAddr": {payment.CodeTruncated, payment.CodeTransliterated, payment.CodeAddressFlattened},
	"Remittance":   {payment.CodeTruncated, payment.CodeTransliterated},
	"InstrCdtr":    {payment.CodeTruncated, payment.CodeTransliterated}, "InstrNxt": {payment.CodeTruncated, payment.CodeTransliterated},
	"Regulatory": {payment.CodeTruncated, payment.CodeTransliterated},
}

// assertExplained fails for every field of a and b that differs without a
// warning that explains it.
var explained = map[string]int{}

func assertExplained(t *testing.T, a, b canonical, warns []statement.Warning, detail func() string) {
	t.Helper()
	codes := map[string]bool{}
	for _, w := range warns {
		codes[w.Code] = true
	}
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	for i := 0; i < va.NumField(); i++ {
		name := va.Type().Field(i).Name
		x, y := va.Field(i).Interface(), vb.Field(i).Interface()
		if reflect.DeepEqual(x, y) {
			continue
		}
		ok := false
		for _, c := range explains[name] {
			ok = ok || codes[c]
		}
		explained[name]++
		if !ok {
			t.Errorf("%s changed without a warning that explains it:\n  before %q\n  after  %q\nwarnings %v\n%s", name, x, y, warns, detail())
		}
	}
}

// TestPaymentRoundTripProperties converts generated payments MX → MT → MX
// and MT → MX → MT and checks that every difference is explained by a
// warning, and that every MX document written is schema-valid.
func TestPaymentRoundTripProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 8))
	n := 300
	if testing.Short() {
		n = 40
	}
	for i := range n {
		gen := genPayment(r, i%2 == 1)
		// MX → MT → MX.
		docs, w0, err := RenderPayments([]*payment.Payment{gen}, typePacs8, "pacs.008.001.08")
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if i%25 == 0 {
			xmllintPayment(t, "pacs.008.001.08", docs[0])
		}
		p1, w1, err := ParsePayments([]byte(docs[0]), typePacs8, "")
		if err != nil {
			t.Fatalf("case %d: %v\n%s", i, err, docs[0])
		}
		pages, w2, err := mt.RenderPayments("103", p1, statement.Options{})
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		p2, w3, err := mt.ParsePayments([]byte(pages[0]), "MT103")
		if err != nil {
			t.Fatalf("case %d: %v\n%s", i, err, pages[0])
		}
		docs2, w4, err := RenderPayments(p2, typePacs8, "pacs.008.001.08")
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		p3, w5, err := ParsePayments([]byte(docs2[0]), typePacs8, "")
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		all := append(append(append(append(append(w0, w1...), w2...), w3...), w4...), w5...)
		assertExplained(t, canon(p1[0]), canon(p3[0]), all, func() string { return pages[0] })
		if i%25 == 0 {
			xmllintPayment(t, "pacs.008.001.08", docs2[0])
		}
		// MT → MX → MT.
		mtPages, v0, err := mt.RenderPayments("103", []*payment.Payment{gen}, statement.Options{})
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		q1, v1, err := mt.ParsePayments([]byte(mtPages[0]), "MT103")
		if err != nil {
			t.Fatalf("case %d: %v\n%s", i, err, mtPages[0])
		}
		mx, v2, err := RenderPayments(q1, typePacs8, "pacs.008.001.08")
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		q2, v3, err := ParsePayments([]byte(mx[0]), typePacs8, "")
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		back, v4, err := mt.RenderPayments("103", q2, statement.Options{})
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		q3, v5, err := mt.ParsePayments([]byte(back[0]), "MT103")
		if err != nil {
			t.Fatalf("case %d: %v\n%s", i, err, back[0])
		}
		all = append(append(append(append(append(v0, v1...), v2...), v3...), v4...), v5...)
		assertExplained(t, canon(q1[0]), canon(q3[0]), all, func() string { return mtPages[0] + "\n--\n" + back[0] })
		if i%25 == 0 {
			xmllintPayment(t, "pacs.008.001.08", mx[0])
		}
	}
	t.Logf("differences explained by warnings, per field: %v", explained)
}
