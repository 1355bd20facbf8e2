package mt

import (
	"bytes"
	"reflect"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/ledgerlane/platform/services/converter/engine"
	"github.com/ledgerlane/platform/services/converter/payment"
	"github.com/ledgerlane/platform/services/converter/statement"
)

// The messages with several transactions under one sequence A: MT101
// (request for transfer, pain.001) and MT204 (financial markets direct
// debit, pacs.010). They are read and written with the payment reader's and
// writer's machinery (FIN blocks, parties, agents, amounts, the X character
// set) into the payment model, the transactions (sequence B) in
// Payment.Transactions; mx has pain.001 and pacs.010.

// BatchTypes are the MT types with sequence B transactions this package
// reads and writes.
var BatchTypes = []string{"MT101", "MT204"}

// batchKinds is the payment kind of each type, without the "MT" prefix.
var batchKinds = map[string]payment.Kind{"101": payment.Initiation, "204": payment.FIDirectDebit}

// BatchFormats is what this package adds to a conversion engine for MT101
// and MT204: their parsers, renderers and detector. The detector must run
// before the cash management one: bare block 4 text of both has a :30:
// before the first :21:, which that detector takes for an MT210.
func BatchFormats() engine.FormatSet {
	set := engine.FormatSet{Parsers: paymentParsers(BatchTypes, ParseBatch)}
	for _, t := range BatchTypes {
		set.Renderers = append(set.Renderers, paymentRenderer(t[2:], []string{t, payment.MXType(batchKinds[t[2:]])}, RenderBatch))
	}
	// MT104 and MT107 are read only to be refused by name, and no target
	// takes them (payment.RefusedDirectDebit says why).
	for _, t := range []string{"MT104", "MT107"} {
		set.Parsers = append(set.Parsers, engine.Parser{Type: t,
			ParsePayments: func([]byte, string, statement.Options) ([]*payment.Payment, []statement.Warning, error) {
				return nil, nil, &statement.ParseError{Field: "{2:}", Reason: payment.RefusedDirectDebit}
			}})
		set.Renderers = append(set.Renderers, engine.Renderer{Type: t, MediaType: MediaType, Refuses: payment.RefusedDirectDebits(),
			RenderPayments: func([]*payment.Payment, string, statement.Options) ([]string, []statement.Warning, error) {
				return nil, nil, &statement.ParseError{Reason: payment.RefusedDirectDebit}
			}})
	}
	for i := range set.Renderers {
		if set.Renderers[i].Refuses == nil {
			set.Renderers[i].Refuses = payment.RefusedDirectDebits()
		}
	}
	set.Detectors = []engine.Detector{DetectBatch}
	return set
}

// DetectBatch recognises MT101 and MT204 from block 2, else, for bare block
// 4 text, from fields no other type has in that place: :28D: (message
// index, MT101) and :19: (sum of amounts) with :30:, which makes an MT204.
// MT104 and MT107 are recognised by block 2 only, to be refused by name.
func DetectBatch(input []byte) (typ, version string, ok bool) {
	s, b2 := finHead(input)
	if s == nil {
		return "", "", false
	}
	if b2 != nil {
		switch t := string(b2); t {
		case "101", "204", "104", "107":
			return "MT" + t, "", true
		}
		return "", "", false
	}
	if !bytes.HasPrefix(s, []byte("{1:")) && !bytes.HasPrefix(s, []byte("{4:")) && !bytes.HasPrefix(s, []byte(":")) {
		return "", "", false
	}
	switch f := lineFields(s); {
	case f&f28D != 0 && f&f30 != 0:
		return "MT101", "", true
	case f&f19 != 0 && f&f30 != 0 && f&f32B != 0:
		return "MT204", "", true
	}
	return "", "", false
}

// ParseBatch reads every MT101 or MT204 in input; want is the type the
// caller named (one of BatchTypes), and a message of the other type is
// refused.
func ParseBatch(input []byte, want string) ([]*payment.Payment, []statement.Warning, error) {
	return parseEach(input, func(p payParser) (*payment.Payment, error) { return p.parseBatch(want) })
}

func (p *payParser) parseBatch(want string) (*payment.Payment, error) {
	pay, err := p.ownType(want, "101", batchKinds, "MT101 or MT204")
	if err != nil {
		return nil, err
	}
	if pay.Kind == payment.Initiation {
		err = p.mt101(pay)
	} else {
		err = p.mt204(pay)
	}
	if err != nil {
		return nil, err
	}
	// The UETR of block 3 is one transaction's: the only one's.
	if pay.UETR != "" {
		if len(pay.Transactions) == 1 {
			pay.Transactions[0].UETR = pay.UETR
		} else {
			p.warn(payment.CodeFieldDropped, nil, "block 3 UETR %s names none of the %d transactions and is not carried", pay.UETR, len(pay.Transactions))
		}
		pay.UETR = ""
	}
	return pay, nil
}

// splitSequences cuts the fields at each field tagged start after the
// first field (MT101 :21:; MT204 the second :20:): sequence A, then one
// sequence B each.
func splitSequences(fields []finField, start string, skip int) (a []finField, bs [][]finField) {
	end := len(fields)
	for i := skip; i < len(fields); i++ {
		if fields[i].tag == start {
			end = i
			break
		}
	}
	a = fields[:end]
	for i := end; i < len(fields); {
		j := i + 1
		for j < len(fields) && fields[j].tag != start {
			j++
		}
		bs = append(bs, fields[i:j])
		i = j
	}
	return a, bs
}

// onceIn warns about a field that occurs again under key in one sequence.
func (p *payParser) onceIn(seen map[string]bool, key string, f *finField) {
	if seen[key] {
		p.warn(payment.CodeDuplicateField, f, "field :%s: occurs again in its sequence; the last occurrence is used", f.tag)
	}
	seen[key] = true
}

// optionKey is the key under which a field is non-repeatable: its number
// for a party or agent (:50F: and :50H: are one field), the whole tag
// otherwise (:21: and :21F: are two). MT101's instructing party (:50C:,
// :50L:) is a field of its own beside the ordering customer.
func optionKey(tag string) string {
	switch {
	case tag == "50C" || tag == "50L":
		return "50CL"
	case len(tag) == 3 && strings.Contains("50 52 53 56 57 58 59", tag[:2]):
		return tag[:2]
	}
	return tag
}

// mt101 reads sequence A (:20:, :21R:, :28D:, :50C:/:50L: instructing
// party, :50F:/:50G:/:50H: ordering customer, :52a:, :51A:, :30:, :25:)
// and every sequence B (from :21:).
func (p *payParser) mt101(pay *payment.Payment) error {
	a, bs := splitSequences(p.m.fields, "21", 0)
	seen := map[string]bool{}
	var debtor *payment.Party
	var servicer *payment.Agent
	for i := range a {
		f := &a[i]
		var err error
		switch f.tag {
		case "20":
			p.onceIn(seen, "20", f)
			pay.MessageID, err = p.reference(f)
		case "21R":
			p.onceIn(seen, "21R", f)
			pay.BatchReference, err = p.reference(f)
		case "28D":
			p.onceIn(seen, "28D", f)
			err = p.messageIndex(f)
		case "50C", "50L":
			p.onceIn(seen, "50CL", f)
			pay.InitiatingParty, err = p.instructingParty(f)
		case "50F", "50G", "50H":
			p.onceIn(seen, "50FGH", f)
			debtor, err = p.party(f)
		case "52A", "52C":
			p.onceIn(seen, "52", f)
			servicer, err = p.agent(f)
		case "51A":
			p.warn(payment.CodeFieldDropped, f, "sending institution has no pain.001 element")
		case "30":
			p.onceIn(seen, "30", f)
			pay.SettlementDate, err = p.cashDate(f)
		case "25":
			p.warn(payment.CodeFieldDropped, f, "the authorisation (:25:) has no pain.001 element")
		default:
			p.warn(payment.CodeUnknownField, f, "field :%s: is not defined for MT101 sequence A", f.tag)
		}
		if err != nil {
			return err
		}
	}
	if err := p.mandatory(present{"20", pay.MessageID != ""}, present{"28D", seen["28D"]}, present{"30", !pay.SettlementDate.IsZero()}, present{"21", len(bs) > 0}); err != nil {
		return err
	}
	for n, fields := range bs {
		tx := &payment.Payment{Kind: payment.Customer, Debtor: debtor, DebtorAgent: servicer, SettlementDate: pay.SettlementDate}
		if err := p.mt101Transaction(tx, fields, n+1); err != nil {
			return err
		}
		pay.Transactions = append(pay.Transactions, tx)
	}
	return nil
}

// messageIndex reads :28D: n/total. A chained MT101 (more than one
// message) has no pain.001 place: each message converts on its own.
func (p *payParser) messageIndex(f *finField) error {
	v := strings.TrimSpace(f.lines[0])
	n, total, ok := strings.Cut(v, "/")
	if !ok || len(n) == 0 || len(n) > 5 || len(total) == 0 || len(total) > 5 || !allDigits(n) || !allDigits(total) {
		return p.fail(f, "T75: message index %q is not n/total (5n/5n)", clip(v))
	}
	if v != "1/1" {
		p.warn(payment.CodeFieldDropped, f, "message %s of a chain: pain.001 has no message index, this message converts on its own", v)
	}
	return nil
}

// instructingParty reads :50C: (a BIC) or :50L: (a party identifier).
func (p *payParser) instructingParty(f *finField) (*payment.Party, error) {
	lines := trimLines(f.lines)
	if len(lines) != 1 || len(lines[0]) > 35 {
		return nil, p.fail(f, "T77: option %s holds one line", f.tag[2:])
	}
	if f.tag == "50C" {
		if !payment.IsBIC(lines[0]) {
			return nil, p.fail(f, "T27: %q is not a BIC", clip(lines[0]))
		}
		return &payment.Party{BIC: lines[0]}, nil
	}
	return &payment.Party{IDs: []payment.PartyID{{OrgForm: true, Value: lines[0]}}}, nil
}

// mt101Transaction reads one sequence B: :21:, :21F:, :23E:, :32B:,
// :50a:, :52a:, :56a:, :57a:, :59a:, :70:, :77B:, :33B:, :71A:, :25A:,
// :36:. n is its ordinal, for messages.
func (p *payParser) mt101Transaction(tx *payment.Payment, fields []finField, n int) error {
	seen := map[string]bool{}
	var f32, f33, f36 *finField // for the line and field of the network rules
	for i := range fields {
		f := &fields[i]
		if f.tag != "23E" {
			p.onceIn(seen, optionKey(f.tag), f)
		}
		var err error
		switch f.tag {
		case "21":
			tx.EndToEndID, err = p.reference(f)
		case "21F":
			tx.DealReference, err = p.reference(f)
		case "23E":
			err = p.mt101Code(tx, f)
		case "32B":
			f32 = f
			tx.Amount, err = p.currencyAmount(f, f.lines[0])
		case "50C", "50L":
			p.warn(payment.CodeFieldDropped, f, "an instructing party of one transaction has no pain.001 element (InitgPty is the message's)")
		case "50F", "50G", "50H":
			tx.Debtor, err = p.party(f)
		case "52A", "52C":
			tx.DebtorAgent, err = p.agent(f)
		case "56A", "56C", "56D":
			tx.Intermediary, err = p.agent(f)
		case "57A", "57C", "57D":
			tx.CreditorAgent, err = p.agent(f)
		case "59", "59A", "59F":
			tx.Creditor, err = p.party(f)
		case "70":
			p.seqB = true // MT101 has no /ROC/ convention: :21: is the end-to-end reference
			p.remittance(tx, f)
			p.seqB = false
		case "77B":
			for _, l := range f.lines {
				if l = strings.TrimSpace(l); l != "" {
					tx.Regulatory = append(tx.Regulatory, l)
				}
			}
		case "33B":
			f33 = f
			tx.InstructedAmount, err = p.currencyAmount(f, f.lines[0])
		case "71A":
			tx.ChargeBearer, err = p.chargeBearer(f)
		case "25A":
			v := strings.TrimSpace(f.lines[0])
			if !strings.HasPrefix(v, "/") || len(v) < 2 || len(v) > 35 {
				return p.fail(f, "T14: charges account %q is not /account (1 to 34 characters)", clip(v))
			}
			tx.ChargesAccount = v[1:]
		case "36":
			f36 = f
			var ok bool
			if tx.ExchangeRate, ok = mtDecimal(strings.TrimSpace(f.lines[0])); !ok || !tx.ExchangeRate.IsPositive() {
				return p.fail(f, "T40: exchange rate %q is not a positive number with a decimal comma", clip(f.lines[0]))
			}
		default:
			p.warn(payment.CodeUnknownField, f, "field :%s: is not defined for MT101 sequence B", f.tag)
		}
		if err != nil {
			return err
		}
	}
	for _, req := range []struct {
		tag string
		got bool
	}{{"32B", tx.Amount.Currency != ""}, {"59a", tx.Creditor != nil}, {"71A", tx.ChargeBearer != ""}} {
		if !req.got {
			return p.fail(nil, "T13: mandatory field :%s: is missing in transaction %d (sequence B)", req.tag, n)
		}
	}
	if tx.Debtor == nil {
		return p.fail(nil, "D61: the ordering customer (:50F:, :50G: or :50H:) must be in sequence A or in every sequence B; transaction %d has none", n)
	}
	if f36 != nil && f33 == nil {
		p.warn(payment.CodeNonstandard, f36, "transaction %d: :36: needs :33B: (rule D54)", n)
	}
	if f33 != nil && tx.InstructedAmount.Currency == tx.Amount.Currency {
		p.warn(payment.CodeNonstandard, f33, "transaction %d: the currency of :33B: must differ from :32B:'s (rule C2)", n)
	}
	if f32 != nil && tx.Amount.Value.IsZero() && f33 == nil {
		p.warn(payment.CodeNonstandard, f32, "transaction %d: a :32B: amount of zero needs :33B: with the ordered amount (rule D60)", n)
	}
	if tx.Intermediary != nil && tx.CreditorAgent == nil {
		p.warn(payment.CodeRuleC81, nil, "C81: :56a: in transaction %d requires :57a:", n)
	}
	return nil
}

// mt101Code reads :23E: CODE[/info]: INTC and CORT are the category
// purpose, CHQB an instruction for the creditor agent, every other code an
// instruction for the debtor agent (the receiver).
func (p *payParser) mt101Code(tx *payment.Payment, f *finField) error {
	code, info, _ := strings.Cut(strings.TrimSpace(f.lines[0]), "/")
	if !payment.MT101Codes[code] {
		return p.fail(f, "T47: instruction code %q is not one MT101 defines", clip(code))
	}
	switch {
	case (code == "INTC" || code == "CORT") && tx.CategoryPurpose == "":
		tx.CategoryPurpose = code
	case code == "CHQB":
		tx.InstructionsForCreditorAgent = append(tx.InstructionsForCreditorAgent, payment.Instruction{Code: code, Text: info})
	default:
		tx.InstructionsForNextAgent = append(tx.InstructionsForNextAgent, payment.Instruction{Code: code, Text: info})
	}
	return nil
}

// mt204 reads sequence A (:20:, :19:, :30:, :57a:, :58a:, :72:) and every
// sequence B (from the second :20:: :20:, :21:, :32B:, :53a:, :72:).
func (p *payParser) mt204(pay *payment.Payment) error {
	a, bs := splitSequences(p.m.fields, "20", 1)
	seen := map[string]bool{}
	var has19 bool
	for i := range a {
		f := &a[i]
		p.onceIn(seen, optionKey(f.tag), f)
		var err error
		switch f.tag {
		case "20":
			pay.MessageID, err = p.reference(f)
		case "19":
			has19 = true
			v := strings.TrimSpace(f.lines[0])
			var ok bool
			if len(v) > 17 {
				return p.fail(f, "T40: sum of amounts %q is longer than 17 characters", clip(v))
			}
			if pay.Amount.Value, ok = mtDecimal(v); !ok {
				return p.fail(f, "T40: sum of amounts %q is not digits with one decimal comma", clip(v))
			}
		case "30":
			pay.SettlementDate, err = p.cashDate(f)
		case "57A", "57B", "57D":
			pay.CreditorAgent, err = p.agent(f)
		case "58A", "58D":
			pay.CreditorFI, err = p.agent(f)
		case "72":
			if t := p.cashText(f); t != "" {
				pay.InstructionsForCreditorAgent = append(pay.InstructionsForCreditorAgent, payment.Instruction{Text: t})
			}
		default:
			p.warn(payment.CodeUnknownField, f, "field :%s: is not defined for MT204 sequence A", f.tag)
		}
		if err != nil {
			return err
		}
	}
	if err := p.mandatory(present{"20", pay.MessageID != ""}, present{"19", has19}, present{"30", !pay.SettlementDate.IsZero()}, present{"20 (sequence B)", len(bs) > 0}); err != nil {
		return err
	}
	sum := pay.Amount.Value
	pay.Amount.Value = decimal.Zero // the sum of the :32B: amounts, in their currency
	for n, fields := range bs {
		tx := &payment.Payment{Kind: payment.Institution, SettlementDate: pay.SettlementDate}
		seen := map[string]bool{}
		for i := range fields {
			f := &fields[i]
			p.onceIn(seen, optionKey(f.tag), f)
			var err error
			switch f.tag {
			case "20":
				tx.InstructionID, err = p.reference(f)
			case "21":
				tx.EndToEndID, err = p.reference(f)
			case "32B":
				tx.Amount, err = p.currencyAmount(f, f.lines[0])
			case "53A", "53B", "53D":
				tx.DebtorFI, err = p.agent(f)
			case "72":
				tx.AdditionalInfo = p.cashText(f)
			default:
				p.warn(payment.CodeUnknownField, f, "field :%s: is not defined for MT204 sequence B", f.tag)
			}
			if err != nil {
				return err
			}
		}
		switch {
		case tx.Amount.Currency == "":
			return p.fail(nil, "T13: mandatory field :32B: is missing in transaction %d (sequence B)", n+1)
		case tx.DebtorFI == nil:
			return p.fail(nil, "T13: mandatory field :53a: is missing in transaction %d (sequence B)", n+1)
		case pay.Amount.Currency != "" && tx.Amount.Currency != pay.Amount.Currency:
			return p.fail(nil, "C02: the currency of every :32B: must be the same (transaction %d is %s, not %s)", n+1, tx.Amount.Currency, pay.Amount.Currency)
		}
		pay.Amount.Currency = tx.Amount.Currency
		pay.Amount.Value = pay.Amount.Value.Add(tx.Amount.Value)
		pay.Transactions = append(pay.Transactions, tx)
	}
	if !sum.Equal(pay.Amount.Value) {
		p.warn(payment.CodeNonstandard, nil, "C01: :19: %s is not the sum of the :32B: amounts (%s); the sum is carried", sum, pay.Amount.Value)
	}
	return nil
}

// RenderBatch writes each payment as FIN messages of type typ ("101",
// "204"). An MT101 holds the transactions of one debtor, account servicer
// and requested execution date: a pain.001 becomes one MT101 per payment
// information block. An MT101 with several transactions is written with
// PAY_MT101_MULTIPLE_TRANSACTIONS, which is lossy so that strict refuses it:
// from November 2026 FIN takes one transaction per MT101.
func RenderBatch(typ string, ps []*payment.Payment, opts statement.Options) ([]string, []statement.Warning, error) {
	r := newPayRenderer(typ, opts)
	defer r.release()
	want := batchKinds[typ]
	var pages []string
	for i, p := range ps {
		r.no = i + 1
		if p.Kind != want {
			return nil, nil, &statement.ParseError{Message: r.no, Reason: "MT" + typ + " is written from a " + payment.MXType(want) + " (" + string(want) + "), not from a " + string(p.Kind) + " message"}
		}
		if len(p.Transactions) == 0 {
			return nil, nil, &statement.ParseError{Message: r.no, Reason: "the " + payment.MXType(want) + " has no transaction to write"}
		}
		if typ == "101" && len(p.Transactions) > 1 {
			// Lossy, so the engine's strict check refuses it like any other.
			r.w.Add(payment.CodeMT101Multiple, r.path(""), 0, "MT101 with %d transactions: %s", len(p.Transactions), payment.RefusedMT101Batch)
		}
		var err error
		if typ == "101" {
			err = r.mt101(p)
		} else {
			err = r.mt204(p)
		}
		if err != nil {
			return nil, nil, err
		}
		r.b = append(r.b, "-}"...)
		pages = append(pages, string(r.b))
	}
	return r.result(pages)
}

// batchBlocks writes blocks 1 to 4's start with the UETR of the only
// transaction that has one; another transaction's UETR has no field.
func (r *payRenderer) batchBlocks(p *payment.Payment, rel string) (from, to string) {
	h := *p
	h.UETR = ""
	for i, tx := range p.Transactions {
		switch {
		case tx.UETR == "":
		case len(p.Transactions) == 1:
			h.UETR = tx.UETR
		default:
			r.w.Add(payment.CodeFieldDropped, r.path(rel+"["+strconv.Itoa(i+1)+"]/PmtId/UETR"), 0, "the UETR of one of several transactions has no MT%s field", r.typ)
		}
	}
	return r.blocks(&h, r.typ)
}

// same reports whether every transaction has the same value of get, which
// then belongs in sequence A.
func same[T any](txs []*payment.Payment, get func(*payment.Payment) T) bool {
	for _, tx := range txs[1:] {
		if !reflect.DeepEqual(get(tx), get(txs[0])) {
			return false
		}
	}
	return true
}

func (r *payRenderer) mt101(p *payment.Payment) error {
	_, to := r.batchBlocks(p, "PmtInf/CdtTrfTxInf")
	txs := p.Transactions
	r.cash20(p, "")
	if p.BatchReference != "" {
		r.line("21R", r.fit(r.x(p.BatchReference), 16, "PmtInf/PmtInfId", ":21R:"))
	}
	r.line("28D", "1/1")
	if ip := p.InitiatingParty; ip != nil {
		switch {
		case payment.IsBIC(ip.BIC) && !sameBIC(ip.BIC, p.Header.From):
			r.line("50C", ip.BIC)
		case ip.BIC == "" && len(ip.IDs) > 0:
			r.line("50L", r.fit(r.x(ip.IDs[0].Value), 35, "GrpHdr/InitgPty/Id/OrgId/Othr/Id", ":50L:"))
		case ip.BIC == "" && ip.Name != "":
			r.w.Add(payment.CodeFieldDropped, r.path("GrpHdr/InitgPty/Nm"), 0, "an initiating party known by name only has no MT101 field (:50C: BIC, :50L: identifier)")
		}
	}
	debtorInA := same(txs, func(tx *payment.Payment) *payment.Party { return tx.Debtor })
	servicerInA := same(txs, func(tx *payment.Payment) *payment.Agent { return tx.DebtorAgent })
	if debtorInA {
		if err := r.orderingCustomer(txs[0].Debtor, "PmtInf/Dbtr"); err != nil {
			return err
		}
	}
	if servicerInA {
		r.accountServicer(txs[0].DebtorAgent, to, "PmtInf/DbtrAgt")
	}
	date := p.SettlementDate
	if date.IsZero() {
		date = txs[0].SettlementDate
	}
	if date.IsZero() {
		return &statement.ParseError{Message: r.no, Field: "PmtInf/ReqdExctnDt", Reason: "MT101 needs the requested execution date (:30:)"}
	}
	r.line("30", string(appendYYMMDD(nil, date)))
	for i, tx := range txs {
		src := "PmtInf/CdtTrfTxInf[" + strconv.Itoa(i+1) + "]"
		if err := r.mt101Transaction(tx, src, to, !debtorInA, !servicerInA); err != nil {
			return err
		}
	}
	return nil
}

// orderingCustomer writes MT101 :50a:: option G for a BIC, F for a
// structured address, H (account, name and address) otherwise; the
// payment writer's :50A:/:50K: are the same lines under other letters.
func (r *payRenderer) orderingCustomer(d *payment.Party, src string) error {
	if d == nil {
		return &statement.ParseError{Message: r.no, Field: src, Reason: "MT101 needs the ordering customer (:50a:)"}
	}
	e := *d
	if e.Account == "" || e.Account == "NOTPROVIDED" {
		if e.Name != "" && !e.Address.Structured() || e.Name == "" && e.BIC != "" {
			// Options G and H need the account; F takes /NOTPROVIDED itself.
			r.w.Add(payment.CodeFieldDefaulted, r.path(src+"Acct"), 0, ":50a: needs the ordering customer's account: /NOTPROVIDED is written")
			e.Account = "NOTPROVIDED"
		}
	}
	start := len(r.b)
	if err := r.party("50", &e, src, true); err != nil {
		return err
	}
	if e.Account == "NOTPROVIDED" && !bytes.HasPrefix(r.b[start:], []byte(":50F:")) {
		// party leaves the placeholder out; G and H must have an account.
		r.b = append(r.b[:start+5], append([]byte("/NOTPROVIDED\r\n"), r.b[start+5:]...)...)
	}
	switch {
	case bytes.HasPrefix(r.b[start:], []byte(":50A:")):
		r.b[start+3] = 'G'
	case bytes.HasPrefix(r.b[start:], []byte(":50K:")):
		r.b[start+3] = 'H'
	}
	return nil
}

// accountServicer writes MT101 :52a: (option A or C) unless it is the
// receiver, which an absent :52a: means.
func (r *payRenderer) accountServicer(a *payment.Agent, to, src string) {
	if a == nil || a.Name == "" && a.Account == "" && a.ClearingMember == "" && sameBIC(a.BIC, to) {
		return
	}
	if a.BIC == "" && (a.Name != "" || !a.Address.IsZero()) {
		r.w.Add(payment.CodeFieldDropped, r.path(src+"/FinInstnId"), 0, "MT101 :52a: has options A and C only: an account servicer without BIC or code is written by its identifier, its name is dropped")
		b := *a
		b.Name, b.Address = "", payment.Address{}
		a = &b
	}
	if a.BIC == "" && r.identifierLine(a, src) == "" {
		return
	}
	r.agent("52", a, src, "AC")
}

func (r *payRenderer) mt101Transaction(tx *payment.Payment, src, to string, debtor, servicer bool) error {
	e2e := tx.EndToEndID
	if e2e == "" || e2e == "NOTPROVIDED" {
		e2e = firstNonEmpty(tx.InstructionID, "NONREF")
		r.w.Add(payment.CodeFieldDefaulted, r.path(src+"/PmtId/EndToEndId"), 0, "no end-to-end id: :21: %s", e2e)
	}
	r.line("21", r.fit(r.x(e2e), 16, src+"/PmtId/EndToEndId", ":21:"))
	if tx.DealReference != "" {
		r.line("21F", r.fit(r.x(tx.DealReference), 16, src+"/XchgRateInf/CtrctId", ":21F:"))
	}
	if c := tx.CategoryPurpose; c != "" {
		if c == "INTC" || c == "CORT" {
			r.line("23E", c)
		} else {
			r.w.Add(payment.CodeFieldDropped, r.path(src+"/PmtTpInf/CtgyPurp"), 0, "category purpose %s has no MT101 :23E: code", clip(c))
		}
	}
	for i, in := range append(append([]payment.Instruction(nil), tx.InstructionsForCreditorAgent...), tx.InstructionsForNextAgent...) {
		code := in.Code
		if !payment.MT101Codes[code] {
			code = "OTHR" // free text for the receiver: :23E: OTHR/text
			in.Text = strings.TrimSpace(strings.TrimSpace(in.Code+" ") + in.Text)
		}
		v := code
		if in.Text != "" {
			v += "/" + r.fit(r.x(in.Text), 30, src+"/InstrForDbtrAgt["+strconv.Itoa(i+1)+"]", ":23E: "+code)
		}
		r.line("23E", v)
	}
	amt, err := r.amount(tx.Amount, "32B")
	if err != nil {
		return err
	}
	r.line("32B", tx.Amount.Currency+amt)
	if debtor {
		if err := r.orderingCustomer(tx.Debtor, src+"/Dbtr"); err != nil {
			return err
		}
	}
	if servicer {
		r.accountServicer(tx.DebtorAgent, to, src+"/DbtrAgt")
	}
	if tx.Intermediary != nil {
		r.agent("56", tx.Intermediary, src+"/IntrmyAgt1", "ACD")
	}
	if tx.CreditorAgent != nil {
		r.agent("57", tx.CreditorAgent, src+"/CdtrAgt", "ACD")
	}
	if err := r.party("59", tx.Creditor, src+"/Cdtr", false); err != nil {
		return err
	}
	if rem := strings.Join(tx.Remittance, " "); rem != "" {
		r.field("70", r.wrap(r.x(rem), 35, 4, src+"/RmtInf/Ustrd", ":70:"))
	}
	r.regulatory(tx.Regulatory, src+"/RgltryRptg")
	if tx.InstructedAmount.Currency != "" {
		a, err := r.amount(tx.InstructedAmount, "33B")
		if err != nil {
			return err
		}
		r.line("33B", tx.InstructedAmount.Currency+a)
	}
	r.chargeBearer(tx.ChargeBearer, src+"/ChrgBr")
	if tx.ChargesAccount != "" {
		r.line("25A", "/"+r.fit(r.x(tx.ChargesAccount), 34, "PmtInf/ChrgsAcct/Id", ":25A:"))
	}
	r.exchangeRate(tx.ExchangeRate, src+"/XchgRateInf/XchgRate")
	return nil
}

func (r *payRenderer) mt204(p *payment.Payment) error {
	from, _ := r.batchBlocks(p, "CdtInstr/DrctDbtTxInf")
	r.cash20(p, "")
	sum := p.Transactions[0].Amount
	for i, tx := range p.Transactions[1:] {
		if tx.Amount.Currency != sum.Currency {
			return &statement.ParseError{Message: r.no, Field: "DrctDbtTxInf[" + strconv.Itoa(i+2) + "]/IntrBkSttlmAmt", Reason: "MT204 needs one currency for all transactions (rule C02)"}
		}
		sum.Value = sum.Value.Add(tx.Amount.Value)
	}
	if p.Amount.Currency != "" && !p.Amount.Value.Equal(sum.Value) {
		r.w.Add(payment.CodeNonstandard, r.path("CdtInstr/TtlIntrBkSttlmAmt"), 0, "TtlIntrBkSttlmAmt %s is not the sum of the transactions; :19: is the sum %s (rule C01)", p.Amount.Value, sum.Value)
	}
	a19, err := r.amount(sum, "19")
	if err != nil {
		return err
	}
	r.line("19", a19)
	date := p.SettlementDate
	if date.IsZero() {
		date = p.Transactions[0].SettlementDate
	}
	if date.IsZero() {
		return &statement.ParseError{Message: r.no, Field: "CdtInstr/IntrBkSttlmDt", Reason: "MT204 needs the value date (:30:)"}
	}
	r.line("30", string(appendYYMMDD(nil, date)))
	if p.CreditorAgent != nil {
		r.agent("57", p.CreditorAgent, "CdtInstr/CdtrAgt", "ABD")
	}
	r.agentUnlessSender("58", p.CreditorFI, from, "CdtInstr/Cdtr")
	r.instructions72(p.InstructionsForCreditorAgent, "CdtInstr/InstrForCdtrAgt")
	for i, tx := range p.Transactions {
		src := "CdtInstr/DrctDbtTxInf[" + strconv.Itoa(i+1) + "]"
		if !tx.SettlementDate.IsZero() && tx.SettlementDate != date {
			r.w.Add(payment.CodeFieldDropped, r.path(src+"/IntrBkSttlmDt"), 0, "MT204 has one value date (:30:); transaction %d's %s is not carried", i+1, tx.SettlementDate)
		}
		ref := tx.InstructionID
		if ref == "" {
			ref = "NONREF"
			r.w.Add(payment.CodeFieldDefaulted, r.path(src+"/PmtId/InstrId"), 0, "no instruction id: :20: NONREF")
		}
		r.line("20", r.fit(r.x(ref), 16, src+"/PmtId/InstrId", ":20:"))
		if e := tx.EndToEndID; e != "" && e != "NOTPROVIDED" {
			r.line("21", r.fit(r.x(e), 16, src+"/PmtId/EndToEndId", ":21:"))
		}
		a, err := r.amount(tx.Amount, "32B")
		if err != nil {
			return err
		}
		r.line("32B", tx.Amount.Currency+a)
		if tx.DebtorFI == nil {
			return &statement.ParseError{Message: r.no, Field: src + "/Dbtr", Reason: "MT204 needs the debit institution (:53a:)"}
		}
		r.agent("53", tx.DebtorFI, src+"/Dbtr", "ABD")
		if tx.AdditionalInfo != "" {
			r.field("72", r.wrap(r.x(tx.AdditionalInfo), 35, 6, src+"/InstrForDbtrAgt", ":72:"))
		}
	}
	return nil
}

// instructions72 writes instruction texts as one :72: (6 x 35).
func (r *payRenderer) instructions72(ins []payment.Instruction, src string) {
	var texts []string
	for _, in := range ins {
		t := in.Text
		if in.Code != "" {
			t = strings.TrimSpace("/" + in.Code + "/" + t)
		}
		if t != "" {
			texts = append(texts, t)
		}
	}
	if len(texts) > 0 {
		r.field("72", r.wrap(r.x(strings.Join(texts, " ")), 35, 6, src, ":72:"))
	}
}
