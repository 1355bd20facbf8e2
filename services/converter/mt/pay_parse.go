package mt

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/ledgerlane/platform/services/converter/bankid"
	"github.com/ledgerlane/platform/services/converter/payment"
	"github.com/ledgerlane/platform/services/converter/statement"
)

// PaymentTypes are the MT payment types this package reads and writes. An
// MT103, MT202 or MT205 whose :72: starts with /RETN/ is a return
// (payment.Return, pacs.004).
var PaymentTypes = []string{"MT103", "MT200", "MT202", "MT202COV", "MT205", "MT205COV", "MT900", "MT910", "MT199", "MT299"}

// ParsePayments reads every MT103, MT202, MT202COV, MT205, MT205COV, MT900
// or MT910 in input. want is the type the caller named ("" or one of PaymentTypes); a
// message of another type is refused so that from means what it says
// (MT202 and MT205 read each other's COV variants too).
func ParsePayments(input []byte, want string) ([]*payment.Payment, []statement.Warning, error) {
	return parseEach(input, func(p payParser) (*payment.Payment, error) { return p.parse(want) })
}

// DetectPayment recognises the MT payment types: from block 2 ({2:I103…},
// {2:O202…}, {2:I910…}) with block 3's {119:COV}, else, for bare block 4
// text, from the fields present (:32A: with :50a: and :59a: is an MT103;
// :32A: with :58a: an MT202, with :50a: also an MT202COV). Bare MT900/MT910
// text is read only when the caller names the type.
func DetectPayment(input []byte) (typ, version string, ok bool) {
	s, b2 := finHead(input)
	if s == nil {
		return "", "", false
	}
	if b2 != nil {
		t := string(b2)
		cov := bytes.Contains(s, []byte("{119:COV}"))
		switch t {
		case "103":
			return "MT103", "", true
		case "202", "205":
			if cov {
				return "MT" + t + "COV", "", true
			}
			return "MT" + t, "", true
		case "200", "900", "910", "199", "299":
			return "MT" + t, "", true
		}
		return "", "", false
	}
	if bytes.HasPrefix(s, []byte("{1:")) || bytes.HasPrefix(s, []byte("{4:")) || bytes.HasPrefix(s, []byte(":")) {
		// The whole input, in place and in one pass: a statement file
		// (its detector comes after this one) can be long.
		f := lineFields(input)
		if f&f32A == 0 {
			return "", "", false
		}
		has50 := f&(f50A|f50F|f50K) != 0
		if f&(f58A|f58D) != 0 {
			if has50 {
				return "MT202COV", "", true
			}
			return "MT202", "", true
		}
		if has50 && f&(f59|f59A|f59F) != 0 {
			return "MT103", "", true
		}
	}
	return "", "", false
}

// finHead is the start of input as the MT detectors read it, in place
// (they run on every MT conversion, and a string of the head would be a
// copy of up to 4 KiB each time): at most detectWindow bytes without
// leading space and framing, nil for XML or nothing; and the message type
// of block 2 ("103"), nil when there is none.
func finHead(input []byte) (s, b2 []byte) {
	head := input
	if len(head) > detectWindow {
		head = head[:detectWindow]
	}
	s = bytes.TrimLeft(head, " \t\r\n\x01\ufeff")
	if len(s) == 0 || s[0] == '<' {
		return nil, nil
	}
	if i := bytes.Index(s, []byte("{2:")); i >= 0 && len(s) >= i+7 && (s[i+3] == 'I' || s[i+3] == 'O') {
		return s, s[i+4 : i+7]
	}
	return s, nil
}

func hasField(s, tag string) bool {
	p := ":" + tag + ":"
	return strings.HasPrefix(s, p) || strings.Contains(s, "\n"+p)
}

type payParser struct {
	w   *payment.Warner
	m   *finMessage
	typ string // "103", "202", "205"
	cov bool
	// seqB: reading sequence B (the underlying customer transfer) of a COV.
	seqB bool
}

func (p *payParser) path(f *finField) string {
	if f == nil {
		return "message " + strconv.Itoa(p.m.no)
	}
	return "message " + strconv.Itoa(p.m.no) + ", line " + strconv.Itoa(f.line) + ", field :" + f.tag + ":"
}

func (p *payParser) fail(f *finField, format string, args ...any) error {
	pe := &statement.ParseError{Message: p.m.no, Line: p.m.line, Reason: fmt.Sprintf(format, args...)}
	if f != nil {
		pe.Line, pe.Field = f.line, ":"+f.tag+":"
	}
	return pe
}

func (p *payParser) warn(code string, f *finField, format string, args ...any) {
	line := 0
	if f != nil {
		line = f.line
	}
	p.w.Add(code, p.path(f), line, format, args...)
}

// kind decides the message type from block 2 and block 3, else the fields.
func (p *payParser) kind(want string) error {
	b2 := p.m.block2
	switch {
	case len(b2) >= 4 && (b2[0] == 'I' || b2[0] == 'O'):
		p.typ = b2[1:4]
	case strings.EqualFold(want, "MT900") || strings.EqualFold(want, "MT910") || strings.EqualFold(want, "MT199") || strings.EqualFold(want, "MT299"):
		p.typ = want[2:] // bare block 4: the caller names the type
	default:
		p.typ = "103"
		for _, f := range p.m.fields {
			if f.tag == "58A" || f.tag == "58D" {
				p.typ = "202"
			}
		}
	}
	switch p.typ {
	case "103", "200", "202", "205", "900", "910", "199", "299":
	default:
		return p.fail(nil, "MT%s is not a payment type this converter reads (MT103, MT200, MT202, MT205 and their COV variants, MT900, MT910, MT199/MT299 with a status)", clip(p.typ))
	}
	p.cov = p.m.block3["119"] == "COV" && (p.typ == "202" || p.typ == "205")
	if (p.typ == "202" || p.typ == "205") && !p.cov {
		for _, f := range p.m.fields {
			if strings.HasPrefix(f.tag, "50") || strings.HasPrefix(f.tag, "59") {
				p.cov = true // sequence B without the 119 flag
			}
		}
	}
	got := "MT" + p.typ
	if p.cov {
		got += "COV"
	}
	if want != "" && !strings.EqualFold(want, got) && !strings.EqualFold(strings.TrimSuffix(want, "COV"), "MT"+p.typ) {
		return p.fail(nil, "message is %s, not %s", got, want)
	}
	return nil
}

func (p *payParser) parse(want string) (*payment.Payment, error) {
	if t := caseTypeOf(p.m, want); t != "" {
		return p.parseCase(t, want) // exceptions and investigations: pay_case.go
	}
	if err := p.kind(want); err != nil {
		return nil, err
	}
	if (p.typ == "103" || p.typ == "202" || p.typ == "205") && !p.cov && p.hasReturn() {
		return p.parseReturn(want)
	}
	if (p.typ == "103" || p.typ == "202" || p.typ == "205") && !p.cov && p.hasReject() {
		return p.parseReject(want)
	}
	pay := &payment.Payment{MT: p.typ, Kind: payment.Customer}
	switch p.typ {
	case "900":
		pay.Kind = payment.DebitConfirmation
	case "910":
		pay.Kind = payment.CreditConfirmation
	case "199", "299":
		pay.Kind = payment.Status
	}
	if p.typ == "200" || p.typ == "202" || p.typ == "205" {
		pay.Kind = payment.Institution
		if p.cov {
			pay.Kind = payment.Cover
		}
	}
	if err := p.header(pay); err != nil {
		return nil, err
	}
	if f := p.m.block3["119"]; f != "" && f != "COV" {
		pay.ValidationFlag = f
		p.warn(payment.CodeValidationFlag, nil, "block 3 field 119 %s has no MX element", clip(f))
	}
	var err error
	switch {
	case p.typ == "103":
		err = p.customer(pay, p.m.fields)
	case pay.Kind.Confirmation():
		err = p.confirmation(pay)
	case pay.Kind == payment.Status:
		err = p.status(pay)
	default:
		err = p.institution(pay)
	}
	if err != nil {
		return nil, err
	}
	return pay, nil
}

// header reads blocks 1 to 3: sender and receiver, UETR, output time.
func (p *payParser) header(pay *payment.Payment) error {
	b1, b2 := p.m.block1, p.m.block2
	var lt1 string
	if len(b1) >= 15 && b1[0] == 'F' {
		lt1 = b1[3:15]
	}
	switch {
	case len(b2) >= 16 && b2[0] == 'I':
		// Input message: block 1 is the sender, block 2 names the receiver.
		pay.Header.From, pay.Header.To = ltBIC(lt1), ltBIC(b2[4:16])
	case len(b2) >= 26 && b2[0] == 'O':
		// Output message: block 1 is the receiver; the sender is in the MIR.
		pay.Header.From, pay.Header.To = ltBIC(b2[14:26]), ltBIC(lt1)
		if len(b2) >= 46 {
			// Output date and time (YYMMDDHHMM) in the receiver's time: kept as UTC.
			if t, err := time.Parse("0601021504", b2[36:46]); err == nil {
				pay.Header.CreatedAt = t
			}
		}
	default:
		pay.Header.From = ltBIC(lt1)
	}
	for _, b := range []string{pay.Header.From, pay.Header.To} {
		if b != "" && !payment.IsBIC(b) {
			return p.fail(nil, "T27: the logical terminal address in blocks 1/2 does not hold a BIC (%q)", clip(b))
		}
	}
	if u := p.m.block3["121"]; u != "" {
		if !payment.IsUETR(u) {
			return p.fail(nil, "block 3 field 121 %q is not a UUID v4 in lower case (T48)", clip(u))
		}
		pay.UETR = u
	}
	pay.CreatedAt = pay.Header.CreatedAt
	return nil
}

// ltBIC turns a 12-character logical terminal address into its BIC: the
// first 8 characters and the branch, without the terminal code.
func ltBIC(lt string) string {
	if len(lt) != 12 || lt == "NOTPROVIXDED" {
		return "" // the placeholder the writers use when there is no BIC
	}
	return lt[:8] + lt[9:]
}

// single keeps track of non-repeatable fields by the number of their tag
// (two digits: :50F: and :50K: are one field). An array on the stack: a map
// per message grew past its first buckets with every MT103.
type single [100]bool

// has reports whether field number key ("20") was seen.
func (s *single) has(key string) bool { return s[tagNumber(key)] }

// tagNumber is the number of a tag's two leading digits (fieldTag checked
// them).
func tagNumber(tag string) int { return int(tag[0]-'0')*10 + int(tag[1]-'0') }

func (p *payParser) once(seen *single, f *finField) {
	n := tagNumber(f.tag)
	if seen[n] {
		p.warn(payment.CodeDuplicateField, f, "field :%s: occurs again; the last occurrence is used", f.tag)
	}
	seen[n] = true
}

// customer reads the fields of an MT103 (or sequence B of a COV, where
// pay.Kind is Customer and the header is the cover's).
func (p *payParser) customer(pay *payment.Payment, fields []finField) error {
	seen := single{}
	var got customerGot
	for i := range fields {
		f := &fields[i]
		if f.tag != "23E" && f.tag != "71F" {
			p.once(&seen, f)
		}
		if err := p.customerField(pay, f, &got); err != nil {
			return err
		}
	}
	// Sequence B of a COV (the underlying transfer) has no :20:, :23B:,
	// :32A: or :71A:.
	if err := p.mandatory(present{"20", p.seqB || seen.has("20")}, present{"23B", p.seqB || seen.has("23")}, present{"32A", p.seqB || seen.has("32")},
		present{"50a", seen.has("50")}, present{"59a", seen.has("59")}, present{"71A", p.seqB || seen.has("71")}); err != nil {
		return err
	}
	if p.seqB {
		return nil
	}
	p.customerRules(pay, &got)
	return nil
}

// customerGot records what the network validated rules of MT103 look at:
// the :23E: fields and which optional fields were read.
type customerGot struct {
	f23E                                            []*finField
	has53, has54, has55, has56, has57, has33, has36 bool
}

// customerField reads one field of an MT103.
func (p *payParser) customerField(pay *payment.Payment, f *finField, got *customerGot) (err error) {
	switch f.tag {
	case "20":
		pay.InstructionID, err = p.reference(f)
		pay.MessageID = pay.InstructionID
	case "13C":
		p.warn(payment.CodeFieldDropped, f, "time indication %q is not carried", clip(f.lines[0]))
	case "23B":
		return p.bankOperation(pay, f)
	case "23E":
		got.f23E = append(got.f23E, f)
		err = p.instructionCode(pay, f)
	case "26T":
		pay.Purpose = strings.TrimSpace(f.lines[0])
	case "32A":
		err = p.valueDateAmount(pay, f)
	case "33B":
		got.has33 = true
		pay.InstructedAmount, err = p.currencyAmount(f, f.lines[0])
	case "36":
		got.has36 = true
		var ok bool
		if pay.ExchangeRate, ok = mtDecimal(strings.TrimSpace(f.lines[0])); !ok || !pay.ExchangeRate.IsPositive() {
			return p.fail(f, "T40: exchange rate %q is not a positive number with a decimal comma", clip(f.lines[0]))
		}
	case "50A", "50F", "50K", "51A", "52A", "52D", "53A", "53B", "53D", "54A", "54B", "54D",
		"55A", "55B", "55D", "56A", "56C", "56D", "57A", "57B", "57C", "57D", "59", "59A", "59F":
		err = p.partyField(pay, f, got)
	case "70":
		p.remittance(pay, f)
	case "71A":
		pay.ChargeBearer, err = p.chargeBearer(f)
	case "71F":
		var a statement.Amount
		if a, err = p.currencyAmount(f, f.lines[0]); err == nil {
			pay.SenderCharges = append(pay.SenderCharges, a)
		}
	case "71G":
		pay.ReceiverCharges, err = p.currencyAmount(f, f.lines[0])
	case "72":
		err = p.senderToReceiver(pay, f)
	case "77B":
		for _, l := range f.lines {
			if l = strings.TrimSpace(l); l != "" {
				pay.Regulatory = append(pay.Regulatory, l)
			}
		}
	case "77T":
		p.warn(payment.CodeFieldDropped, f, "envelope contents (MT103 REMIT) are not carried")
	default:
		p.warn(payment.CodeUnknownField, f, "field :%s: is not defined for MT%s", f.tag, p.typ)
	}
	return err
}

// bankOperation reads :23B: (rule T36); codes other than CRED have no
// pacs.008 element.
func (p *payParser) bankOperation(pay *payment.Payment, f *finField) error {
	pay.BankOperationCode = strings.TrimSpace(f.lines[0])
	switch pay.BankOperationCode {
	case "CRED", "SPRI", "SSTD", "SPAY", "CRTS":
	default:
		return p.fail(f, "T36: bank operation code %q is not CRED, CRTS, SPAY, SPRI or SSTD", clip(pay.BankOperationCode))
	}
	if pay.BankOperationCode != "CRED" {
		p.warn(payment.CodeFieldDropped, f, "bank operation code %s has no pacs.008 element; CBPR+ payments are CRED", pay.BankOperationCode)
	}
	return nil
}

// partyField reads the parties and agents, :50a: to :59a:.
func (p *payParser) partyField(pay *payment.Payment, f *finField, got *customerGot) (err error) {
	switch f.tag {
	case "50A", "50F", "50K":
		pay.Debtor, err = p.party(f)
	case "51A":
		p.warn(payment.CodeFieldDropped, f, "sending institution has no pacs.008 element")
	case "52A", "52D":
		pay.DebtorAgent, err = p.agent(f)
	case "53A", "53B", "53D":
		got.has53 = true
		err = p.correspondent(pay, f, &pay.SendersCorrespondent)
	case "54A", "54B", "54D":
		got.has54 = true
		pay.ReceiversCorrespondent, err = p.agent(f)
	case "55A", "55B", "55D":
		got.has55 = true
		pay.ThirdReimbursement, err = p.agent(f)
	case "56A", "56C", "56D":
		got.has56 = true
		pay.Intermediary, err = p.agent(f)
	case "57A", "57B", "57C", "57D":
		got.has57 = true
		pay.CreditorAgent, err = p.agent(f)
	case "59", "59A", "59F":
		pay.Creditor, err = p.party(f)
	}
	return err
}

// customerRules checks the network validated rules of MT103, as warnings:
// D75 (:36: exactly when the currencies differ), the charges rules, the
// :23E: codes :23B: allows (E01, E02), E06 and C81.
func (p *payParser) customerRules(pay *payment.Payment, got *customerGot) {
	if got.has33 && pay.InstructedAmount.Currency != pay.Amount.Currency && !got.has36 || got.has36 && (!got.has33 || pay.InstructedAmount.Currency == pay.Amount.Currency) {
		p.warn(payment.CodeRuleD75, nil, "D75: :36: must be present exactly when :33B:'s currency differs from :32A:'s")
	}
	p.chargesRules(pay)
	switch pay.BankOperationCode {
	case "SPRI":
		for _, f := range got.f23E {
			switch c, _, _ := strings.Cut(f.lines[0], "/"); c {
			case "SDVA", "TELB", "PHOB", "INTC":
			default:
				p.warn(payment.CodeRuleE01, f, "E01: with :23B: SPRI, :23E: may only be SDVA, TELB, PHOB or INTC, not %s", clip(c))
			}
		}
	case "SSTD", "SPAY":
		if len(got.f23E) > 0 {
			p.warn(payment.CodeRuleE02, got.f23E[0], "E02: :23E: is not allowed with :23B: %s", pay.BankOperationCode)
		}
	}
	if got.has55 && (!got.has53 || !got.has54) {
		p.warn(payment.CodeRuleE06, nil, "E06: :55a: requires :53a: and :54a:")
	}
	if got.has56 && !got.has57 {
		p.warn(payment.CodeRuleC81, nil, "C81: :56a: requires :57a:")
	}
}

// chargesRules checks :71F: and :71G: against :71A:: none of the sender's
// with OUR (E13), none of the receiver's with SHA (D50), and with BEN at
// least one of the sender's and none of the receiver's (E15).
func (p *payParser) chargesRules(pay *payment.Payment) {
	switch pay.ChargeBearer {
	case "DEBT":
		if len(pay.SenderCharges) > 0 {
			p.warn(payment.CodeRuleE13, nil, "E13: :71F: is not allowed with :71A: OUR")
		}
	case "SHAR":
		if pay.ReceiverCharges.Currency != "" {
			p.warn(payment.CodeRuleD50, nil, "D50: :71G: is not allowed with :71A: SHA")
		}
	case "CRED":
		if len(pay.SenderCharges) == 0 || pay.ReceiverCharges.Currency != "" {
			p.warn(payment.CodeRuleE15, nil, "E15: with :71A: BEN at least one :71F: is mandatory and :71G: is not allowed")
		}
	}
}

// chargeBearer reads :71A: OUR, BEN or SHA as the ChrgBr code.
func (p *payParser) chargeBearer(f *finField) (string, error) {
	switch v := strings.TrimSpace(f.lines[0]); v {
	case "OUR":
		return "DEBT", nil
	case "BEN":
		return "CRED", nil
	case "SHA":
		return "SHAR", nil
	default:
		return "", p.fail(f, "T08: details of charges %q is not OUR, BEN or SHA", clip(v))
	}
}

// reference reads a 16x reference (:20:, :21:).
func (p *payParser) reference(f *finField) (string, error) {
	v := strings.TrimSpace(f.lines[0])
	if v == "" {
		return "", p.fail(f, "T13: reference is empty")
	}
	if len(v) > 16 {
		return "", p.fail(f, "T33: reference %q is longer than 16 characters", clip(v))
	}
	if strings.HasPrefix(v, "/") || strings.HasSuffix(v, "/") || strings.Contains(v, "//") {
		p.warn(payment.CodeRuleT26, f, "T26: reference %q starts or ends with '/' or contains '//'", v)
	}
	return v, nil
}

// instructionCode reads :23E: CODE[/info].
func (p *payParser) instructionCode(pay *payment.Payment, f *finField) error {
	code, info, _ := strings.Cut(strings.TrimSpace(f.lines[0]), "/")
	switch code {
	case "CHQB", "HOLD", "PHOB", "TELB":
		pay.InstructionsForCreditorAgent = append(pay.InstructionsForCreditorAgent, payment.Instruction{Code: code, Text: info})
	case "PHON", "TELE", "PHOI", "TELI":
		pay.InstructionsForNextAgent = append(pay.InstructionsForNextAgent, payment.Instruction{Code: code, Text: info})
	case "SDVA":
		pay.ServiceLevels = append(pay.ServiceLevels, "SDVA")
	case "INTC", "CORT":
		if pay.CategoryPurpose != "" {
			p.warn(payment.CodeFieldDropped, f, "a second category purpose %s has no place beside %s", code, pay.CategoryPurpose)
			return nil
		}
		pay.CategoryPurpose = code
	case "REPA":
		p.warn(payment.CodeFieldDropped, f, "instruction code REPA has no pacs.008 element")
	default:
		return p.fail(f, "T47: instruction code %q is not one MT103 defines", clip(code))
	}
	return nil
}

// valueDateAmount reads :32A: YYMMDD CCY amount.
func (p *payParser) valueDateAmount(pay *payment.Payment, f *finField) error {
	v := strings.TrimSpace(f.lines[0])
	if len(v) < 10 {
		return p.fail(f, "T50: expected YYMMDD, currency and amount, got %q", clip(v))
	}
	d, ok := yymmdd(v[:6])
	if !ok {
		return p.fail(f, "T50: %q is not a valid date", v[:6])
	}
	pay.SettlementDate = d
	a, err := p.currencyAmount(f, v[6:])
	pay.Amount = a
	return err
}

// yymmdd reads a SWIFT date; years are 1980-2079 as for statements.
func yymmdd(s string) (statement.Date, bool) {
	if len(s) != 6 || !allDigits(s) {
		return statement.Date{}, false
	}
	y, m, d := atoi2(s[:2]), atoi2(s[2:4]), atoi2(s[4:6])
	if y < 80 {
		y += 2000
	} else {
		y += 1900
	}
	if m < 1 || m > 12 || d < 1 || d > daysIn(y, m) {
		return statement.Date{}, false
	}
	return statement.Date{Year: y, Month: time.Month(m), Day: d}, true
}

// currencyAmount reads "EUR1234,56" and checks the decimals against ISO 4217.
func (p *payParser) currencyAmount(f *finField, s string) (statement.Amount, error) {
	s = strings.TrimSpace(s)
	if len(s) < 4 {
		return statement.Amount{}, p.fail(f, "T52: expected a currency and an amount, got %q", clip(s))
	}
	ccy, num := s[:3], s[3:]
	if !payment.IsCurrency(ccy) {
		return statement.Amount{}, p.fail(f, "T52: %q is not an ISO 4217 currency code", clip(ccy))
	}
	if len(num) > 15 {
		return statement.Amount{}, p.fail(f, "T40: amount %q is longer than 15 characters", clip(num))
	}
	v, ok := mtDecimal(num)
	if !ok {
		return statement.Amount{}, p.fail(f, "T40: amount %q is not digits with one decimal comma", clip(num))
	}
	if i := strings.IndexByte(num, ','); i >= 0 {
		if dec := len(num) - i - 1; dec > payment.MinorUnits(ccy) {
			return statement.Amount{}, p.fail(f, "C03: %s has %d decimals, %s allows %d", clip(num), dec, ccy, payment.MinorUnits(ccy))
		}
	}
	return statement.Amount{Value: v, Currency: ccy}, nil
}

// mtDecimal reads SWIFT's number format: digits with exactly one decimal
// comma (which may end it).
func mtDecimal(s string) (decimal.Decimal, bool) {
	i := strings.IndexByte(s, ',')
	if i <= 0 || strings.Count(s, ",") != 1 || !allDigits(s[:i]) || (i+1 < len(s) && !allDigits(s[i+1:])) {
		return decimal.Decimal{}, false
	}
	frac := s[i+1:]
	coef, err := strconv.ParseInt(s[:i]+frac, 10, 64)
	if err != nil {
		return decimal.Decimal{}, false
	}
	return decimal.New(coef, -int32(len(frac))), true
}

// clearing codes of the MT party identifier "//XX…" and their ISO 20022
// clearing system (ExternalClearingSystemIdentification1Code).
var clearingCodes = map[string]string{
	"AT": "ATBLZ", "AU": "AUBSB", "BL": "DEBLZ", "CC": "CACPA", "CN": "CNAPS", "CP": "USPID", "ES": "ESNCC",
	"FW": "USABA", "GR": "GRBIC", "HK": "HKNCC", "IE": "IENCC", "IN": "INFSC", "IT": "ITNCC", "NZ": "NZNCC",
	"PL": "PLKNR", "PT": "PTNCC", "RU": "RUCBC", "SC": "GBDSC", "SW": "CHBCC",
}

// ClearingPrefix is the MT "//XX" code of an ISO clearing system, "" when
// MT has none.
func clearingPrefix(sys string) string {
	for k, v := range clearingCodes {
		if v == sys {
			return k
		}
	}
	return ""
}

// identifier reads a party identifier line: "/account", "/C/account",
// "/D/account" or "//XX123" (a clearing code).
func identifier(l string) (account, sys, member string) {
	switch {
	case strings.HasPrefix(l, "//") && len(l) > 4:
		code := l[2:4]
		if s, ok := clearingCodes[code]; ok {
			return "", s, l[4:]
		}
		return "", code, l[4:]
	case strings.HasPrefix(l, "/C/"), strings.HasPrefix(l, "/D/"):
		return l[3:], "", ""
	}
	return strings.TrimPrefix(l, "/"), "", ""
}

// agent reads an option A, B, C or D financial institution.
func (p *payParser) agent(f *finField) (*payment.Agent, error) {
	a := &payment.Agent{}
	lines := trimLines(f.lines)
	if len(lines) > 0 && strings.HasPrefix(lines[0], "/") {
		a.Account, a.ClearingSystem, a.ClearingMember = identifier(lines[0])
		lines = lines[1:]
	}
	switch f.tag[len(f.tag)-1] {
	case 'A':
		if len(lines) != 1 {
			return nil, p.fail(f, "T27: option A holds an optional party identifier and one BIC")
		}
		if !payment.IsBIC(lines[0]) {
			return nil, p.fail(f, "T27: %q is not a BIC", clip(lines[0]))
		}
		a.BIC = lines[0]
	case 'B':
		if len(lines) > 0 {
			a.Location = lines[0]
			p.warn(payment.CodeFieldDropped, f, "location %q of option B has no MX element", clip(lines[0]))
		}
	case 'C':
		if len(lines) > 0 {
			return nil, p.fail(f, "T77: option C holds a party identifier only")
		}
	case 'D':
		var err error
		if a.Name, a.Address, err = p.nameAddress(f, lines, "T77: option D needs a name and address", "agent"); err != nil {
			return nil, err
		}
	}
	if a.BIC == "" && a.Name == "" && a.Account == "" && a.ClearingMember == "" {
		return nil, p.fail(f, "T77: the field identifies no institution")
	}
	p.checkAccount(f, a.Account)
	return a, nil
}

// correspondent reads :53a:. 53B with an account only is the settlement
// account (SttlmAcct), otherwise the instructing reimbursement agent.
func (p *payParser) correspondent(pay *payment.Payment, f *finField, dst **payment.Agent) error {
	a, err := p.agent(f)
	if err != nil {
		return err
	}
	if f.tag == "53B" && a.Location == "" && a.Account != "" && a.ClearingMember == "" {
		pay.SettlementAccount = a.Account
		return nil
	}
	*dst = a
	return nil
}

// party reads :50a: or :59a:.
func (p *payParser) party(f *finField) (*payment.Party, error) {
	pt := &payment.Party{}
	lines := trimLines(f.lines)
	opt := f.tag[2:]
	if len(lines) > 0 && strings.HasPrefix(lines[0], "/") && (opt != "F" || !isNumberedLine(lines[0])) {
		pt.Account, _, _ = identifier(lines[0])
		if pt.Account == "" {
			pt.Account = lines[0]
		}
		if pt.Account == "NOTPROVIDED" {
			pt.Account = "" // the placeholder writers put where 50F needs an identifier
		}
		lines = lines[1:]
	} else if opt == "F" && len(lines) > 0 && !isNumberedLine(lines[0]) {
		// 50F party identifier: CODE/CC/identifier.
		code, rest, _ := strings.Cut(lines[0], "/")
		cc, id, _ := strings.Cut(rest, "/")
		switch code {
		case "ARNU", "CCPT", "CUST", "DRLC", "EMPL", "NIDN", "SOSE", "TXID":
			pt.IDs = append(pt.IDs, payment.PartyID{Scheme: code, Issuer: cc, Value: id})
		default:
			return nil, p.fail(f, "T55: party identifier code %q is not ARNU, CCPT, CUST, DRLC, EMPL, NIDN, SOSE or TXID", clip(code))
		}
		lines = lines[1:]
	}
	switch opt {
	case "A", "G": // MT101's G is A with a mandatory account
		if len(lines) != 1 || !payment.IsBIC(lines[0]) {
			return nil, p.fail(f, "T27: option %s holds an optional account and one BIC", opt)
		}
		pt.BIC = lines[0]
	case "F":
		if err := p.numbered(f, pt, lines); err != nil {
			return nil, err
		}
	default: // 50K, 59; MT101's 50H (account, name and address)
		var err error
		if pt.Name, pt.Address, err = p.nameAddress(f, lines, "T77: name and address are missing", "party"); err != nil {
			return nil, err
		}
	}
	p.checkAccount(f, pt.Account)
	return pt, nil
}

func isNumberedLine(l string) bool { return len(l) >= 2 && l[0] >= '1' && l[0] <= '8' && l[1] == '/' }

// numbered reads option F's lines 1/ to 8/.
func (p *payParser) numbered(f *finField, pt *payment.Party, lines []string) error {
	var name []string
	for _, l := range lines {
		if !isNumberedLine(l) {
			return p.fail(f, "T54: option F line %q does not start with a number 1 to 8 and '/'", clip(l))
		}
		n, v := l[0], l[2:]
		switch n {
		case '1':
			name = append(name, v)
		case '2':
			pt.Address.Lines = append(pt.Address.Lines, v)
		case '3':
			cc, town, _ := strings.Cut(v, "/")
			if !payment.IsCountry(cc) {
				return p.fail(f, "T73: line 3/ must start with an ISO country code, got %q", clip(cc))
			}
			if pt.Address.Country != "" {
				pt.Address.Town = joinWrapped([]string{pt.Address.Town, town}, 33)
				continue
			}
			pt.Address.Country, pt.Address.Town = cc, town
		case '4':
			d, err := time.Parse("20060102", v)
			if err != nil {
				return p.fail(f, "T50: line 4/ date of birth %q is not YYYYMMDD", clip(v))
			}
			pt.BirthDate = statement.DateOf(d)
		case '5':
			cc, city, _ := strings.Cut(v, "/")
			pt.BirthCountry, pt.BirthCity = cc, city
		case '6', '7':
			cc, rest, _ := strings.Cut(v, "/")
			scheme := "CUST"
			if n == '7' {
				scheme = "NIDN"
			}
			issuer := cc
			if n == '6' {
				if iss, id, ok := strings.Cut(rest, "/"); ok {
					issuer, rest = cc+"/"+iss, id
				}
			}
			pt.IDs = append(pt.IDs, payment.PartyID{Scheme: scheme, Issuer: issuer, Value: rest})
		case '8':
			p.warn(payment.CodeFieldDropped, f, "line 8/ (continuation of an identifier) is not carried")
		}
	}
	pt.Name = joinWrapped(name, 33)
	if strings.TrimSpace(pt.Name) == "" {
		return p.fail(f, "T56: option F needs a name (line 1/)")
	}
	if pt.Address.Country == "" && len(pt.Address.Lines) > 0 {
		p.warn(payment.CodeAddressUnstructured, f, "%s has address lines but no 3/ country and town: from November 2026 CBPR+ refuses unstructured addresses", partyName(f.tag))
	}
	return nil
}

// present is a mandatory field, named as T13 names it, and whether the
// message has it.
type present struct {
	name string
	ok   bool
}

// mandatory fails with T13 naming the first of fields the message lacks.
func (p *payParser) mandatory(fields ...present) error {
	for _, f := range fields {
		if !f.ok {
			return p.fail(nil, "T13: mandatory field :%s: is missing", f.name)
		}
	}
	return nil
}

// nameAddress reads the name and address lines of an agent's option D or
// a party's (at most 4, the first the name); missing is the error when
// there are none, what names whose address it is.
func (p *payParser) nameAddress(f *finField, lines []string, missing, what string) (string, payment.Address, error) {
	if len(lines) == 0 {
		return "", payment.Address{}, p.fail(f, "%s", missing)
	}
	if len(lines) > 4 {
		return "", payment.Address{}, p.fail(f, "T77: name and address have more than 4 lines")
	}
	return lines[0], p.addressLines(f, lines[1:], what), nil
}

// addressLines reads the address lines of a K or D option. The last line
// becomes town and country only when it is unmistakably "CC/Town" with a
// known country code; nothing else is guessed.
func (p *payParser) addressLines(f *finField, lines []string, _ string) payment.Address {
	var a payment.Address
	if len(lines) == 0 {
		return a
	}
	last := lines[len(lines)-1]
	if cc, town, ok := strings.Cut(last, "/"); ok && payment.IsCountry(cc) && strings.TrimSpace(town) != "" && !strings.Contains(town, "/") {
		a.Country, a.Town = cc, strings.TrimSpace(town)
		a.Lines = append(a.Lines, lines[:len(lines)-1]...)
		p.warn(payment.CodeAddressHybrid, f, "%s: town %q and country %s read from the last address line", partyName(f.tag), clip(a.Town), cc)
		return a
	}
	a.Lines = append(a.Lines, lines...)
	p.warn(payment.CodeAddressUnstructured, f, "%s has only unstructured address lines: from November 2026 CBPR+ refuses them", partyName(f.tag))
	return a
}

func partyName(tag string) string {
	switch tag[:2] {
	case "50":
		return "the ordering customer (:" + tag + ":, Dbtr)"
	case "59":
		return "the beneficiary (:" + tag + ":, Cdtr)"
	case "52":
		return "the ordering institution (:" + tag + ":)"
	case "56":
		return "the intermediary (:" + tag + ":)"
	case "57":
		return "the account with institution (:" + tag + ":)"
	case "58":
		return "the beneficiary institution (:" + tag + ":)"
	}
	return "field :" + tag + ":"
}

// checkAccount warns about an IBAN-shaped account whose check digits fail.
func (p *payParser) checkAccount(f *finField, acct string) {
	if len(acct) >= 15 && len(acct) <= 34 && upperByte(acct[0]) && upperByte(acct[1]) && isDigit(acct[2]) && isDigit(acct[3]) &&
		!bankid.ValidIBAN(acct) && payment.IsCountry(acct[:2]) {
		p.warn(payment.CodeNonstandard, f, "account %q looks like an IBAN but its check digits fail; kept as another account number", clip(acct))
	}
}

func upperByte(c byte) bool { return c >= 'A' && c <= 'Z' }

// remittance reads :70:. A first line "/ROC/ref" is the ordering customer's
// reference: the end-to-end id.
func (p *payParser) remittance(pay *payment.Payment, f *finField) {
	// A continuation line's leading space is text (the writer cut there).
	var lines []string
	for _, l := range f.lines {
		if l = strings.TrimRight(l, " "); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) > 0 && strings.HasPrefix(lines[0], "/ROC/") && !p.seqB {
		pay.EndToEndID = strings.TrimSpace(lines[0][5:])
		lines = lines[1:]
	}
	if len(lines) > 0 {
		pay.Remittance = []string{joinWrapped(lines, 35)}
	}
}

// joinWrapped joins the lines of a wrapped text: a line of full width was
// cut where the text did not end, so it joins the next directly; a shorter
// line ended at a word, so a space joins them. Writers wrap at full width,
// which makes the two directions each other's inverse.
func joinWrapped(lines []string, width int) string {
	var b strings.Builder
	for i, l := range lines {
		if i > 0 && len([]rune(lines[i-1])) < width {
			b.WriteByte(' ')
		}
		b.WriteString(l)
	}
	return b.String()
}

// senderToReceiver reads :72:: /CODE/text lines with "//" continuations.
func (p *payParser) senderToReceiver(pay *payment.Payment, f *finField) error {
	items := codedItems(f.lines, strings.TrimSpace)
	for i, it := range items {
		switch {
		case !it.coded && i == 0:
			return p.fail(f, "T47: the first line must start with a code /CODE/")
		case !it.coded:
			return p.fail(f, "T47: line %q is not /CODE/text", clip(it.line))
		}
	}
	for _, it := range items {
		switch it.code {
		case "INS":
			if payment.IsBIC(it.text) && pay.PreviousInstructingAgent == nil {
				pay.PreviousInstructingAgent = &payment.Agent{BIC: it.text}
				continue
			}
			pay.InstructionsForNextAgent = append(pay.InstructionsForNextAgent, payment.Instruction{Text: "/INS/" + it.text})
		case "BNF":
			if pay.Kind != payment.Customer {
				// MT202/205 carry the beneficiary information CBPR+ puts in RmtInf/Ustrd.
				pay.Remittance = append(pay.Remittance, it.text)
				continue
			}
			pay.InstructionsForNextAgent = append(pay.InstructionsForNextAgent, payment.Instruction{Text: "/BNF/" + it.text})
		case "PHONBEN", "TELEBEN":
			if pay.Kind != payment.Customer {
				code := map[string]string{"PHONBEN": "PHOB", "TELEBEN": "TELB"}[it.code]
				pay.InstructionsForCreditorAgent = append(pay.InstructionsForCreditorAgent, payment.Instruction{Code: code, Text: it.text})
				continue
			}
			pay.InstructionsForNextAgent = append(pay.InstructionsForNextAgent, payment.Instruction{Text: "/" + it.code + "/" + it.text})
		case "ACC":
			pay.InstructionsForCreditorAgent = append(pay.InstructionsForCreditorAgent, payment.Instruction{Text: it.text})
		case "REC":
			pay.InstructionsForNextAgent = append(pay.InstructionsForNextAgent, payment.Instruction{Text: it.text})
		case "SVCLVL":
			pay.ServiceLevels = append(pay.ServiceLevels, it.text)
		case "LOCINS":
			pay.LocalInstrument = it.text
		case "CATPURP":
			if pay.CategoryPurpose == "" {
				pay.CategoryPurpose = it.text
			} else {
				p.warn(payment.CodeFieldDropped, f, "a second category purpose %q has no place beside %s", clip(it.text), pay.CategoryPurpose)
			}
		default:
			pay.InstructionsForNextAgent = append(pay.InstructionsForNextAgent, payment.Instruction{Text: "/" + it.code + "/" + it.text})
		}
	}
	return nil
}

// codedItem is one item of a coded narrative (:72:, :79:): "/CODE/text"
// with its continuation lines joined. coded is false for an item whose
// line is not in that form (line keeps it, for the error).
type codedItem struct {
	code, text, line string
	coded            bool
}

// codedItems splits a coded narrative into items, each line trimmed with
// trim and blank ones skipped: "/CODE/text" starts an item, "//more"
// continues the open one without a space, any other line continues it with
// a space, or starts an uncoded item when none is open.
func codedItems(lines []string, trim func(string) string) []codedItem {
	var items []codedItem
	for _, l := range lines {
		l = trim(l)
		switch {
		case l == "":
		case strings.HasPrefix(l, "//") && len(items) > 0:
			items[len(items)-1].text += l[2:]
		case strings.HasPrefix(l, "/"):
			code, text, ok := strings.Cut(l[1:], "/")
			items = append(items, codedItem{code: code, text: text, line: l, coded: ok})
		case len(items) > 0:
			items[len(items)-1].text += " " + l
		default:
			items = append(items, codedItem{text: l, line: l})
		}
	}
	return items
}

// reasonItem takes a return's or reject's first item after /RETN/ or
// /REJT/ as its reason code when it is one (four capitals or digits), with
// any text after it as information, and reports whether it was.
func reasonItem(it codedItem, reason *string, info *[]string) bool {
	if len(it.code) != 4 || !isUpperAlnum(it.code) {
		return false
	}
	*reason = it.code
	if t := strings.TrimSuffix(it.text, "/"); t != "" {
		*info = append(*info, t)
	}
	return true
}

// trimLines is ls with each line trimmed and empty lines dropped.
func trimLines(ls []string) []string {
	// Nearly always every line is already trimmed and not empty: then the
	// field's own lines are the answer (callers only read and reslice them).
	clean := true
	for _, l := range ls {
		if l == "" || strings.TrimSpace(l) != l {
			clean = false
			break
		}
	}
	if clean {
		return ls
	}
	out := make([]string, 0, len(ls))
	for _, l := range ls {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// institution reads an MT202/MT205 and, for COV, its sequence B (the
// underlying customer credit transfer), which starts at the first :50a:.
// ownAccount completes an MT200 (a financial institution transfer for its
// own account): the sender moves its funds held by the receiver to its
// account with the :57a: institution, so the sender is both debtor and
// creditor (pacs.009 Dbtr and Cdtr) and :57a: the creditor agent; a
// :53B: account is the debited account, DbtrAcct. MT200 has no :21:: the
// end-to-end id is NOTPROVIDED, as CBPR+ writes it.
func (p *payParser) ownAccount(pay *payment.Payment) {
	if pay.DebtorFI != nil || pay.CreditorFI != nil {
		p.warn(payment.CodeUnknownField, nil, "MT200 has no :52a: or :58a:; the sender is debtor and creditor")
	}
	pay.DebtorFI, pay.CreditorFI = nil, nil
	if pay.Header.From != "" {
		pay.CreditorFI = &payment.Agent{BIC: pay.Header.From}
		if pay.SettlementAccount != "" {
			// :53B:/account is the sender's account with the receiver, the
			// one debited: the debtor's account (DbtrAcct).
			pay.DebtorFI = &payment.Agent{BIC: pay.Header.From, Account: pay.SettlementAccount}
			pay.SettlementAccount = ""
		}
	}
	p.warn(payment.CodeAgentDefaulted, nil, "MT200 moves the sender's own funds: Cdtr is the sender (%s), CdtrAgt the :57a: institution", clip(pay.Header.From))
	if pay.EndToEndID == "" {
		pay.EndToEndID = "NOTPROVIDED"
		p.warn(payment.CodeEndToEndDefaulted, nil, "MT200 has no :21:: EndToEndId NOTPROVIDED")
	}
}

func (p *payParser) institution(pay *payment.Payment) error {
	fields := p.m.fields
	var seqB []finField
	for i := range fields {
		if strings.HasPrefix(fields[i].tag, "50") {
			fields, seqB = fields[:i], fields[i:]
			break
		}
	}
	seen := single{}
	var has53, has54, has55, has56, has57 bool
	for i := range fields {
		f := &fields[i]
		if f.tag != "13C" {
			p.once(&seen, f)
		}
		var err error
		switch f.tag {
		case "20":
			pay.InstructionID, err = p.reference(f)
			pay.MessageID = pay.InstructionID
		case "21":
			pay.EndToEndID, err = p.reference(f)
		case "13C":
			p.warn(payment.CodeFieldDropped, f, "time indication %q is not carried", clip(f.lines[0]))
		case "32A":
			err = p.valueDateAmount(pay, f)
		case "52A", "52D":
			pay.DebtorFI, err = p.agent(f)
		case "53A", "53B", "53D":
			has53 = true
			err = p.correspondent(pay, f, &pay.SendersCorrespondent)
		case "54A", "54B", "54D":
			has54 = true
			if p.typ == "205" {
				p.warn(payment.CodeUnknownField, f, "field :%s: is not defined for MT205; it is read as the receiver's correspondent", f.tag)
			}
			pay.ReceiversCorrespondent, err = p.agent(f)
		case "55A", "55B", "55D":
			has55 = true
			pay.ThirdReimbursement, err = p.agent(f)
		case "56A", "56D":
			has56 = true
			pay.Intermediary, err = p.agent(f)
		case "57A", "57B", "57D":
			has57 = true
			pay.CreditorAgent, err = p.agent(f)
		case "58A", "58D":
			pay.CreditorFI, err = p.agent(f)
		case "72":
			err = p.senderToReceiver(pay, f)
		default:
			p.warn(payment.CodeUnknownField, f, "field :%s: is not defined for MT%s sequence A", f.tag, p.typ)
		}
		if err != nil {
			return err
		}
	}
	own := p.typ == "200" // MT200 has no :21: or :58a:: it moves the sender's own funds
	if err := p.mandatory(present{"20", seen.has("20") && pay.InstructionID != ""}, present{"21", own || seen.has("21") && pay.EndToEndID != ""},
		present{"32A", seen.has("32") && pay.Amount.Currency != ""}, present{"58a", own || seen.has("58") && pay.CreditorFI != nil}); err != nil {
		return err
	}
	if p.typ == "200" {
		p.ownAccount(pay)
	}
	if has55 && (!has53 || !has54) {
		p.warn(payment.CodeRuleE06, nil, "E06: :55a: requires :53a: and :54a:")
	}
	if has56 && !has57 {
		p.warn(payment.CodeRuleC81, nil, "C81: :56a: requires :57a:")
	}
	if !p.cov {
		return nil
	}
	if len(seqB) == 0 {
		return p.fail(nil, "T13: MT%sCOV needs sequence B (:50a: and :59a:, the underlying customer credit transfer)", p.typ)
	}
	u := &payment.Payment{Kind: payment.Customer}
	p.seqB = true
	err := p.customer(u, seqB)
	p.seqB = false
	if err != nil {
		return err
	}
	if u.Intermediary != nil && u.CreditorAgent == nil {
		p.warn(payment.CodeRuleC81, nil, "C81: :56a: in sequence B requires :57a:")
	}
	pay.Underlying = u
	return nil
}

// clip shortens a value quoted in a message so that hostile input cannot
// make error texts large.
func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}
