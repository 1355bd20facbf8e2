package mt

import (
	"bytes"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/ledgerlane/platform/services/converter/engine"
	"github.com/ledgerlane/platform/services/converter/payment"
	"github.com/ledgerlane/platform/services/converter/statement"
)

// Exceptions and investigations (the MT common group): n90 advice of
// charges, n91 request for payment of charges, n92 request for
// cancellation, n95 queries and n96 answers, for every category n. They are
// read and written by the payment reader and writer (ParsePayments,
// RenderPayments) into payment.Payment with its Case; the MX side is
// camt.105, camt.106, camt.056, camt.026 and camt.029
// (docs/conversion-formats.md, "Exceptions and investigations").

// caseSuffixes are the common group types after their category digit.
var caseSuffixes = []string{"90", "91", "92", "95", "96"}

// InvestigationTypes are MTn90, MTn91, MTn92, MTn95 and MTn96 for the
// categories 1 to 9 ("MT192", "MT292", …, "MT996").
var InvestigationTypes = func() []string {
	var out []string
	for _, s := range caseSuffixes {
		for n := byte('1'); n <= '9'; n++ {
			out = append(out, "MT"+string(n)+s)
		}
	}
	return out
}()

// isCaseType reports whether t ("192") is a common group type we read.
func isCaseType(t string) bool {
	if len(t) != 3 || t[0] < '1' || t[0] > '9' {
		return false
	}
	for _, s := range caseSuffixes {
		if t[1:] == s {
			return true
		}
	}
	return false
}

// caseKind is the model kind of common group type t.
func caseKind(t string) payment.Kind {
	switch t[1:] {
	case "90":
		return payment.ChargesNotification
	case "91":
		return payment.ChargesRequest
	case "92":
		return payment.Cancellation
	case "95":
		return payment.Query
	}
	return payment.Resolution
}

// DetectInvestigation recognises the common group types from block 2
// ({2:O192…}, {2:I296…}), else, for bare block 4 text, from their own
// fields: :11S: an n92, :11R: or :76: an n96, :75: an n95, :71B: with :32B:
// an n91 and with :32C:/:32D: an n90. The category of bare text is the one
// of the original message named in :11a:, else 1.
func DetectInvestigation(input []byte) (typ, version string, ok bool) {
	s, b2 := finHead(input)
	if s == nil {
		return "", "", false
	}
	if b2 != nil {
		if t := string(b2); isCaseType(t) {
			return "MT" + t, "", true
		}
		return "", "", false
	}
	if !bytes.HasPrefix(s, []byte("{4:")) && !bytes.HasPrefix(s, []byte(":")) {
		return "", "", false
	}
	// Bare text of a statement or payment has none of these fields: look
	// for them in place before making a string of the head.
	if lineFields(s)&(f11S|f11R|f76|f75|f71B) == 0 {
		return "", "", false
	}
	if t := bareCaseType(string(s)); t != "" {
		return "MT" + t, "", true
	}
	return "", "", false
}

// bareCaseType names the common group type of block 4 text by its fields,
// "" when it has none of theirs.
func bareCaseType(s string) string {
	cat := byte('1')
	for _, tag := range []string{"11S", "11R"} {
		if i := strings.Index(s, "\n:"+tag+":"); i >= 0 && i+6 < len(s) && s[i+6] >= '1' && s[i+6] <= '9' {
			cat = s[i+6]
		} else if strings.HasPrefix(s, ":"+tag+":") && len(s) > 5 && s[5] >= '1' && s[5] <= '9' {
			cat = s[5]
		}
	}
	switch {
	case hasField(s, "11S"):
		return string(cat) + "92"
	case hasField(s, "11R"), hasField(s, "76"):
		return string(cat) + "96"
	case hasField(s, "75"):
		return string(cat) + "95"
	case hasField(s, "71B") && hasField(s, "32B"):
		return string(cat) + "91"
	case hasField(s, "71B") && (hasField(s, "32C") || hasField(s, "32D")):
		return string(cat) + "90"
	}
	return ""
}

// caseTypeOf is the common group type of message m ("" when it is not one):
// block 2's, else the type the caller named, else the fields'.
func caseTypeOf(m *finMessage, want string) string {
	if b2 := m.block2; len(b2) >= 4 && (b2[0] == 'I' || b2[0] == 'O') {
		if isCaseType(b2[1:4]) {
			return b2[1:4]
		}
		return ""
	}
	if len(want) == 5 && strings.EqualFold(want[:2], "MT") {
		if isCaseType(want[2:]) {
			return want[2:]
		}
		return ""
	}
	if want != "" {
		return ""
	}
	var b strings.Builder
	for _, f := range m.fields {
		b.WriteString("\n:" + f.tag + ":" + f.lines[0])
	}
	return bareCaseType(b.String())
}

// parseCase reads a common group message of type typ.
func (p *payParser) parseCase(typ, want string) (*payment.Payment, error) {
	p.typ = typ
	if want != "" && !strings.EqualFold(want, "MT"+typ) {
		return nil, p.fail(nil, "message is MT%s, not %s", typ, want)
	}
	pay := &payment.Payment{MT: typ, Kind: caseKind(typ), Case: &payment.Case{}}
	if err := p.header(pay); err != nil {
		return nil, err
	}
	if f := p.m.block3["119"]; f != "" {
		p.warn(payment.CodeValidationFlag, nil, "block 3 field 119 %s has no MX element", clip(f))
	}
	c := pay.Case
	seen := single{}
	var got caseGot
	var copied []string
	for i := range p.m.fields {
		f := &p.m.fields[i]
		p.once(&seen, f)
		cp, err := p.caseField(pay, f, &got)
		if err != nil {
			return nil, err
		}
		if cp != "" {
			copied = append(copied, cp)
		}
	}
	if len(copied) > 0 {
		p.warn(payment.CodeFieldDropped, nil, "the copy of the original message's fields (%s) has no place beside the reference to it and was not carried", clip(strings.Join(copied, " ")))
	}
	if pay.Kind == payment.Cancellation && !got.f79 && pay.Amount.Currency == "" {
		p.warn(payment.CodeNonstandard, nil, "C1: an MT%s needs :79: or a copy of the original's fields", typ)
	}
	if name := caseMissing(pay, &got); name != "" {
		return nil, p.fail(nil, "T13: mandatory field :%s: is missing", name)
	}
	if len(c.Charges) == 0 && got.f71 {
		// :71B: in free text: the charges are the :32a: amount.
		c.Charges = []payment.Charge{{Amount: pay.Amount, Credit: !c.Debit}}
	}
	return pay, nil
}

// caseGot records which of the fields a kind may require were read.
type caseGot struct{ f79, f75, f76, f71, f32, f25 bool }

// caseField reads one field of a common group message. A field the
// message's kind has no place for is a copy of the original's fields: its
// tag (":32B:") is returned and the field is not read.
func (p *payParser) caseField(pay *payment.Payment, f *finField, got *caseGot) (copied string, err error) {
	c := pay.Case
	switch f.tag {
	case "20":
		pay.MessageID, err = p.reference(f)
	case "21":
		if pay.Kind == payment.Resolution {
			c.ID, err = p.reference(f)
		} else {
			pay.InstructionID, err = p.reference(f)
		}
	case "11R", "11S":
		if f.tag == "11R" && pay.Kind == payment.Cancellation {
			p.warn(payment.CodeNonstandard, f, "MT%s refers to its original with :11S:, not :11R:", p.typ)
		}
		err = p.caseOriginal(c, f)
	case "79":
		got.f79 = true
		if pay.Kind == payment.Cancellation {
			p.cancellationText(pay, f)
		} else {
			c.Text = append(c.Text, caseLines(f)...)
		}
	case "75":
		got.f75 = true
		c.ReasonInfo = append(c.ReasonInfo, caseLines(f)...)
	case "76":
		got.f76 = true
		p.caseAnswer(c, f)
	case "77A":
		p.caseNarrative(pay, f)
	case "25":
		got.f25 = true
		lines := trimLines(f.lines)
		if len(lines) == 0 || len(lines[0]) > 35 {
			return "", p.fail(f, "T14: the account identification must be 1 to 35 characters")
		}
		c.Account = lines[0]
	case "71B":
		got.f71 = true
		err = p.caseCharges(pay, f)
	case "32A", "32B", "32C", "32D", "52A", "52D", "57A", "57B", "57D", "72":
		return p.chargesField(pay, f, got)
	default:
		// An n92, n95 or n96 may carry a copy of the original's fields.
		return ":" + f.tag + ":", nil
	}
	return "", err
}

// chargesField reads the amount, agent and :72: fields of an MTn90 or
// MTn91; in other kinds they are a copy of the original's fields, except
// :32A:, which is not defined for MTn90/n91 and is skipped there.
func (p *payParser) chargesField(pay *payment.Payment, f *finField, got *caseGot) (copied string, err error) {
	c := pay.Case
	charges := pay.Kind == payment.ChargesNotification || pay.Kind == payment.ChargesRequest
	switch f.tag {
	case "32A":
		if charges {
			p.warn(payment.CodeUnknownField, f, "field :32A: is not defined for MT%s", p.typ)
			return "", nil
		}
		err = p.valueDateAmount(pay, f)
	case "32B":
		if pay.Kind != payment.ChargesRequest {
			return ":32B:", nil
		}
		got.f32 = true
		pay.Amount, err = p.currencyAmount(f, f.lines[0])
		c.Debit = true
	case "32C", "32D":
		if pay.Kind != payment.ChargesNotification {
			return ":" + f.tag + ":", nil
		}
		got.f32 = true
		err = p.valueDateAmount(pay, f)
		c.Debit = f.tag == "32D"
	case "52A", "52D":
		if !charges {
			return ":" + f.tag + ":", nil
		}
		pay.DebtorAgent, err = p.agent(f)
	case "57A", "57B", "57D":
		if pay.Kind != payment.ChargesRequest {
			return ":" + f.tag + ":", nil
		}
		c.AccountWithInstitution, err = p.agent(f)
	case "72":
		if !charges {
			return ":72:", nil
		}
		p.chargesInstructions(c, f)
	}
	return "", err
}

// caseMissing is the first mandatory field (T13) the message lacks, "" if
// none: :20: and :21:, then :11S: in a cancellation, :76: in an answer,
// :75: in a query, :25:, :32a: and :71B: in MTn90, :32B: and :71B: in
// MTn91.
func caseMissing(pay *payment.Payment, got *caseGot) string {
	c := pay.Case
	switch {
	case pay.MessageID == "":
		return "20"
	case pay.InstructionID == "" && c.ID == "":
		return "21"
	}
	switch pay.Kind {
	case payment.Cancellation:
		if c.OriginalMT == "" {
			return "11S"
		}
	case payment.Resolution:
		if !got.f76 {
			return "76"
		}
	case payment.Query:
		if !got.f75 {
			return "75"
		}
	case payment.ChargesNotification:
		switch {
		case !got.f25:
			return "25"
		case !got.f32:
			return "32a"
		case !got.f71:
			return "71B"
		}
	case payment.ChargesRequest:
		switch {
		case !got.f32:
			return "32B"
		case !got.f71:
			return "71B"
		}
	}
	return ""
}

// original reads :11S: or :11R:: the MT type, the date and optionally the
// session and input sequence number of the original message.
func (p *payParser) caseOriginal(c *payment.Case, f *finField) error {
	lines := trimLines(f.lines)
	if len(lines) < 2 || len(lines[0]) != 3 || !allDigits(lines[0]) {
		return p.fail(f, "T18: expected the original's MT type (3 digits) and its date (YYMMDD) on the next line")
	}
	d, ok := yymmdd(lines[1])
	if !ok {
		return p.fail(f, "T50: %q is not a date YYMMDD", clip(lines[1]))
	}
	c.OriginalMT, c.OriginalDate = lines[0], d
	if len(lines) > 2 {
		if len(lines[2]) != 10 || !allDigits(lines[2]) {
			return p.fail(f, "T18: session and input sequence number %q are not 4 and 6 digits", clip(lines[2]))
		}
		c.OriginalSession, c.OriginalISN = lines[2][:4], lines[2][4:]
	}
	return nil
}

// caseJoined are a field's lines with "//" continuation lines joined to
// the line before them.
func caseJoined(f *finField) []string {
	var out []string
	for _, l := range f.lines {
		l = strings.TrimRight(l, " ")
		switch {
		case l == "":
		case strings.HasPrefix(l, "//") && len(out) > 0:
			out[len(out)-1] += l[2:]
		default:
			out = append(out, l)
		}
	}
	return out
}

func caseLines(f *finField) []string {
	var out []string
	for _, l := range f.lines {
		if l = strings.TrimRight(l, " "); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// caseCode splits "/CODE/rest" with a code of 1 to 4 letters or digits.
func caseCode(l string) (code, rest string, ok bool) {
	if len(l) < 3 || l[0] != '/' {
		return "", "", false
	}
	code, rest, ok = strings.Cut(l[1:], "/")
	if !ok || len(code) > 4 || !isUpperAlnum(code) {
		return "", "", false
	}
	return code, rest, true
}

// uetrLine reads "/UETR/uuid" into pay.UETR.
func (p *payParser) uetrLine(pay *payment.Payment, f *finField, l string) bool {
	u, ok := strings.CutPrefix(l, "/UETR/")
	if !ok {
		return false
	}
	u = strings.TrimSpace(u)
	switch {
	case !payment.IsUETR(u):
		p.warn(payment.CodeNonstandard, f, "/UETR/%s is not a UUID v4 in lower case; kept as text", clip(u))
		return false
	case pay.UETR != "" && pay.UETR != u:
		p.warn(payment.CodeNonstandard, f, "the UETR %s differs from block 3's %s; block 3's is kept", u, pay.UETR)
	default:
		pay.UETR = u
	}
	return true
}

// cancellationText reads an n92's :79: in the form CBPR+ translation writes:
// the reason code /CODE/[text] on the first line, /UETR/uuid, then free
// text (CxlRsnInf/AddtlInf).
func (p *payParser) cancellationText(pay *payment.Payment, f *finField) {
	c := pay.Case
	for i, l := range caseJoined(f) {
		if p.uetrLine(pay, f, l) {
			continue
		}
		if code, rest, ok := caseCode(l); ok && i == 0 {
			c.Reason = code
			if rest = strings.TrimSuffix(rest, "/"); rest != "" {
				c.ReasonInfo = append(c.ReasonInfo, rest)
			}
			continue
		}
		c.ReasonInfo = append(c.ReasonInfo, l)
	}
}

// answer reads an n96's :76:: the answer /CODE/[reason[/text]] (CNCL,
// PDCR, RJCR, …) and further lines of text.
func (p *payParser) caseAnswer(c *payment.Case, f *finField) {
	for i, l := range caseJoined(f) {
		if code, rest, ok := caseCode(l); ok && i == 0 {
			c.Status = code
			reason, text, _ := strings.Cut(strings.TrimSuffix(rest, "/"), "/")
			if reason != "" && len(reason) <= 4 && isUpperAlnum(reason) {
				c.Reason = reason
			} else if reason != "" {
				text = strings.TrimPrefix(rest, "/")
			}
			if text != "" {
				c.ReasonInfo = append(c.ReasonInfo, text)
			}
			continue
		}
		c.ReasonInfo = append(c.ReasonInfo, l)
	}
	if c.Status == "" {
		p.warn(payment.CodeNonstandard, f, ":76: does not start with an answer code /CODE/ (CNCL, PDCR, RJCR, …)")
	}
}

// narrative reads :77A:: /UETR/uuid (with "//" continuations) and text.
func (p *payParser) caseNarrative(pay *payment.Payment, f *finField) {
	c := pay.Case
	for _, l := range caseJoined(f) {
		if p.uetrLine(pay, f, l) {
			continue
		}
		if pay.Kind == payment.Query {
			c.Narrative = append(c.Narrative, l)
		} else {
			c.ReasonInfo = append(c.ReasonInfo, l)
		}
	}
}

// charges reads :71B: in the structured form CBPR+ translation writes, one
// item a line: [/CODE/]CCYamount[/D|/C]. Lines in another form are text
// (the charges record's additional information).
func (p *payParser) caseCharges(pay *payment.Payment, f *finField) error {
	c := pay.Case
	for _, l := range caseLines(f) {
		item, ok, err := p.chargeItem(f, strings.TrimSpace(l), c.Debit || pay.Kind == payment.ChargesRequest)
		if err != nil {
			return err
		}
		if !ok {
			c.Details = append(c.Details, l)
			continue
		}
		c.Charges = append(c.Charges, item)
	}
	if len(c.Charges) > 0 && pay.Amount.Currency != "" {
		var sum decimal.Decimal
		for _, ch := range c.Charges {
			if ch.Amount.Currency != pay.Amount.Currency {
				return nil
			}
			if ch.Credit == c.Debit {
				sum = sum.Sub(ch.Amount.Value)
			} else {
				sum = sum.Add(ch.Amount.Value)
			}
		}
		if !sum.Abs().Equal(pay.Amount.Value) {
			p.warn(payment.CodeNonstandard, f, "the :71B: items add up to %s, :32a: states %s", sum.Abs().String(), pay.Amount.Value.String())
		}
	}
	return nil
}

func (p *payParser) chargeItem(f *finField, l string, debit bool) (payment.Charge, bool, error) {
	var ch payment.Charge
	if code, rest, ok := caseCode(l); ok {
		ch.Code, l = code, rest
	} else if strings.HasPrefix(l, "/") {
		return ch, false, nil
	}
	ch.Credit = !debit
	switch {
	case strings.HasSuffix(l, "/D"):
		ch.Credit, l = false, l[:len(l)-2]
	case strings.HasSuffix(l, "/C"):
		ch.Credit, l = true, l[:len(l)-2]
	}
	if len(l) < 5 || !payment.IsCurrency(l[:3]) {
		return ch, false, nil
	}
	if _, ok := mtDecimal(l[3:]); !ok {
		return ch, false, nil
	}
	a, err := p.currencyAmount(f, l)
	ch.Amount = a
	return ch, err == nil, err
}

// chargesInstructions reads :72: of an n90/n91: /CHRQ/BIC names the
// charges requestor; other /CODE/text items are kept as instructions.
func (p *payParser) chargesInstructions(c *payment.Case, f *finField) {
	for _, l := range caseJoined(f) {
		if v, ok := strings.CutPrefix(l, "/CHRQ/"); ok && payment.IsBIC(strings.TrimSpace(v)) && c.Requestor == nil {
			c.Requestor = &payment.Agent{BIC: strings.TrimSpace(v)}
			continue
		}
		if len(c.Instructions) > 0 && !strings.HasPrefix(l, "/") {
			c.Instructions[len(c.Instructions)-1] += " " + l
			continue
		}
		// /REC/ is the writer's prefix for an instruction without a code.
		c.Instructions = append(c.Instructions, strings.TrimPrefix(l, "/REC/"))
	}
}

// caseMessage writes block 4 of a common group message of type mtType.
func (r *payRenderer) caseMessage(p *payment.Payment, mtType string) (string, error) {
	want := caseKind(mtType)
	if p.Kind != want || p.Case == nil {
		what := string(p.Kind)
		if mx := payment.MXType(p.Kind); mx != "" {
			what += " (" + mx + ")"
		}
		return "", &statement.ParseError{Message: r.no, Reason: "MT" + mtType + " is written from a " + string(want) + " (" + payment.MXType(want) + ") only; the message is a " + what}
	}
	c := p.Case
	if mt := c.OriginalMT; len(mt) == 3 && mt[0] != mtType[0] && p.Kind != payment.ChargesNotification && p.Kind != payment.ChargesRequest {
		r.w.Add(payment.CodeNonstandard, r.path("OrgnlGrpInf/OrgnlMsgNmId"), 0, "MT%s is for category %c messages; the original is an MT%s (MT%c%s is its type)", mtType, mtType[0], mt, mt[0], mtType[1:])
	}
	r.blocks(p, mtType)
	r.caseDropped(p, mtType)
	var err error
	switch p.Kind {
	case payment.Cancellation:
		err = r.cancellationMessage(p, mtType)
	case payment.Resolution, payment.Query:
		err = r.answerMessage(p, mtType)
	default:
		err = r.chargesMessage(p, mtType)
	}
	if err != nil {
		return "", err
	}
	r.b = append(r.b, "-}"...)
	return string(r.b), nil
}

// cancellationMessage writes the fields of an MTn92: :20: (the case id),
// :21:, :11S:, :79: with the reason and the UETR, and :32A: when the
// original amount has its settlement date.
func (r *payRenderer) cancellationMessage(p *payment.Payment, mtType string) error {
	c := p.Case
	r.line("20", r.caseRef(firstNonEmpty(c.ID, p.MessageID), "Case/Id", ":20:"))
	r.line("21", r.caseRef(firstNonEmpty(p.InstructionID, p.OriginalMessageID), "OrgnlInstrId", ":21:"))
	if err := r.field11(c, "11S", mtType); err != nil {
		return err
	}
	if l79 := r.cancellation79(p); len(l79) > 0 {
		r.field("79", l79)
	}
	if p.Amount.Currency != "" && !p.SettlementDate.IsZero() {
		if err := r.field32A(p); err != nil {
			return err
		}
	} else if p.Amount.Currency != "" {
		r.w.Add(payment.CodeFieldDropped, r.path("OrgnlIntrBkSttlmAmt"), 0, "the original amount without its settlement date has no :32A:")
	}
	return nil
}

// cancellation79 is the cancellation's :79:: "/reason/" followed by the
// first reason line, the further reason lines, then /UETR/; at most 35
// lines.
func (r *payRenderer) cancellation79(p *payment.Payment) []string {
	c := p.Case
	var l79 []string
	if c.Reason != "" || len(c.ReasonInfo) > 0 {
		first := ""
		info := c.ReasonInfo
		if c.Reason != "" {
			first = "/" + r.x(c.Reason) + "/"
			if len(info) > 0 {
				first += r.x(info[0])
				info = info[1:]
			}
			l79 = append(l79, r.wrapText(first, "CxlRsnInf/AddtlInf[1]")...)
		}
		for i, s := range info {
			l79 = append(l79, r.wrapText(r.x(s), "CxlRsnInf/AddtlInf["+itoa(i+1)+"]")...)
		}
	}
	if p.UETR != "" {
		l79 = append(l79, "/UETR/"+p.UETR)
	}
	if len(l79) > 35 {
		r.w.Add(payment.CodeTruncated, r.path("CxlRsnInf/AddtlInf"), 0, "CxlRsnInf (%d lines) cut to 35 lines in :79:", len(l79))
		l79 = l79[:35]
	}
	return l79
}

// answerMessage writes the fields of an MTn96 (answer) or MTn95 (query):
// :20:, :21:, the :76: status or :75: query, :77A: with the UETR and the
// further text, :11R:/:11S: and :79:.
func (r *payRenderer) answerMessage(p *payment.Payment, mtType string) error {
	c := p.Case
	r.line("20", r.caseRef(p.MessageID, "CxlStsId", ":20:"))
	r.line("21", r.caseRef(c.ID, "RslvdCase/Id", ":21:"))
	var text []string
	var err error
	if p.Kind == payment.Resolution {
		text, err = r.answer76(c)
	} else {
		text, err = r.query75(c)
	}
	if err != nil {
		return err
	}
	var l77 []string
	if p.UETR != "" {
		l77 = append(l77, "/UETR/"+p.UETR[:29], "//"+p.UETR[29:])
	}
	for i, s := range text {
		l77 = append(l77, r.wrap(r.x(s), 35, 20-len(l77), "CxlStsRsnInf/AddtlInf["+itoa(i+1)+"]", ":77A:")...)
	}
	if len(l77) > 0 {
		r.field("77A", l77)
	}
	if c.OriginalMT != "" {
		tag := "11R"
		if p.Kind == payment.Query {
			tag = "11S"
		}
		if err := r.field11(c, tag, mtType); err != nil {
			return err
		}
	}
	if len(c.Text) > 0 {
		var l79 []string
		for i, s := range c.Text {
			l79 = append(l79, r.wrap(r.x(s), 50, 35-len(l79), "text["+itoa(i+1)+"]", ":79:")...)
		}
		r.field("79", l79)
	}
	return nil
}

// answer76 writes an answer's :76:, "/status/reason", and returns the
// further reason lines for :77A:.
func (r *payRenderer) answer76(c *payment.Case) ([]string, error) {
	if c.Status == "" {
		return nil, &statement.ParseError{Message: r.no, Field: "Sts/Conf", Reason: "the answer has no status code (Sts/Conf: CNCL, PDCR, RJCR, …) for :76:"}
	}
	l76 := "/" + r.x(c.Status) + "/"
	if c.Reason != "" {
		l76 += r.x(c.Reason)
	}
	r.line("76", r.fit(l76, 35, "CxlStsRsnInf/Rsn", ":76:"))
	return c.ReasonInfo, nil
}

// query75 writes a query's :75: (at most six lines; a query needs text)
// and returns its narrative for :77A:.
func (r *payRenderer) query75(c *payment.Case) ([]string, error) {
	var l75 []string
	for i, s := range c.ReasonInfo {
		l75 = append(l75, r.wrap(r.x(s), 35, 6-len(l75), "query["+itoa(i+1)+"]", ":75:")...)
	}
	if len(l75) == 0 {
		return nil, &statement.ParseError{Message: r.no, Field: ":75:", Reason: "the query has no text"}
	}
	r.field("75", l75)
	return c.Narrative, nil
}

// ref writes a 16x reference, NONREF when there is none.
func (r *payRenderer) caseRef(v, src, field string) string {
	if v == "" || v == "NOTPROVIDED" {
		r.w.Add(payment.CodeFieldDefaulted, r.path(src), 0, "no %s: %s NONREF", src, field)
		return "NONREF"
	}
	return r.fit(r.x(v), 16, src, field)
}

// field11 writes :11S: or :11R:: the original's MT type and date (and the
// session and ISN when known).
func (r *payRenderer) field11(c *payment.Case, tag, mtType string) error {
	mt := c.OriginalMT
	if mt == "" {
		if tag == "11S" {
			return &statement.ParseError{Message: r.no, Field: "OrgnlGrpInf/OrgnlMsgNmId", Reason: "MT" + mtType + " needs the original message's type for :11S: (an MT type or a pacs message name)"}
		}
		return nil
	}
	if c.OriginalDate.IsZero() {
		return &statement.ParseError{Message: r.no, Field: "OrgnlGrpInf/OrgnlCreDtTm", Reason: "MT" + mtType + " needs the original message's date for :" + tag + ":"}
	}
	lines := []string{mt, string(appendYYMMDD(nil, c.OriginalDate))}
	if c.OriginalSession != "" {
		lines = append(lines, c.OriginalSession+c.OriginalISN)
	}
	r.field(tag, lines)
	return nil
}

// chargesMessage writes block 4 of an n90 or n91.
func (r *payRenderer) chargesMessage(p *payment.Payment, mtType string) error {
	c := p.Case
	r.line("20", r.caseRef(p.MessageID, "ChrgsId", ":20:"))
	r.line("21", r.caseRef(p.InstructionID, "UndrlygTx/InstrId", ":21:"))
	a, err := r.amount(p.Amount, "32a")
	if err != nil {
		return err
	}
	if p.Kind == payment.ChargesNotification {
		acct := c.Account
		if acct == "" {
			r.w.Add(payment.CodeFieldDefaulted, r.path("ChrgsAcct"), 0, "no charges account: :25: NOTPROVIDED")
			acct = "NOTPROVIDED"
		}
		r.line("25", r.fit(r.x(acct), 35, "ChrgsAcct/Id", ":25:"))
		d := p.SettlementDate
		if d.IsZero() {
			return &statement.ParseError{Message: r.no, Field: "Rcrd/ValDt", Reason: "MT" + mtType + " needs the value date of the charges (:32C:/:32D:)"}
		}
		tag := "32C"
		if c.Debit {
			tag = "32D"
		}
		r.line(tag, string(appendYYMMDD(nil, d))+p.Amount.Currency+a)
	} else {
		if !p.SettlementDate.IsZero() {
			r.w.Add(payment.CodeFieldDropped, r.path("Rcrd/ValDt"), 0, "a value date has no place in MT%s (:32B:)", mtType)
		}
		if !c.Debit {
			r.w.Add(payment.CodeFieldDropped, r.path("TtlChrgsPerRcrd/CdtDbtInd"), 0, "MT%s requests payment: a credit has no place", mtType)
		}
		r.line("32B", p.Amount.Currency+a)
	}
	if ag := p.DebtorAgent; ag != nil {
		r.agent("52", ag, "DbtrAgt", "AD")
	}
	if ag := c.AccountWithInstitution; ag != nil {
		if p.Kind == payment.ChargesRequest {
			r.agent("57", ag, "ChrgsAcctAgt", "ABD")
		} else {
			r.w.Add(payment.CodeFieldDropped, r.path("ChrgsAcctAgt"), 0, "MT%s has no :57a:", mtType)
		}
	}
	var l71 []string
	for i, ch := range c.Charges {
		if ch.Amount.Currency == "" {
			continue
		}
		amt, err := r.amount(ch.Amount, "71B")
		if err != nil {
			return err
		}
		l := ch.Amount.Currency + amt
		if ch.Code != "" {
			l = "/" + r.x(ch.Code) + "/" + l
		}
		if ch.Credit {
			l += "/C"
		} else {
			l += "/D"
		}
		if len(l71) == 6 {
			r.w.Add(payment.CodeTruncated, r.path("ChrgsBrkdwn"), 0, "%d charge items cut to 6 lines in :71B:", len(c.Charges))
			break
		}
		l71 = append(l71, r.fit(l, 35, "ChrgsBrkdwn["+itoa(i+1)+"]/Tp", ":71B:"))
	}
	for i, d := range c.Details {
		l71 = append(l71, r.wrap(r.x(d), 35, 6-len(l71), "AddtlInf["+itoa(i+1)+"]", ":71B:")...)
	}
	r.field("71B", l71)
	var items []string
	if c.Requestor != nil && c.Requestor.BIC != "" {
		items = append(items, "/CHRQ/"+c.Requestor.BIC)
	} else if c.Requestor != nil {
		r.w.Add(payment.CodeFieldDropped, r.path("ChrgsRqstr"), 0, "a charges requestor without a BIC has no :72: /CHRQ/")
	}
	for _, in := range c.Instructions {
		if isCoded72(in) {
			items = append(items, in)
		} else {
			items = append(items, "/REC/"+in)
		}
	}
	if len(items) > 0 {
		r.field("72", r.lines72(items))
	}
	return nil
}

// caseTarget names the MT types a kind of the common group is written as.
func caseTarget(k payment.Kind) string {
	for _, s := range caseSuffixes {
		if caseKind("1"+s) == k {
			return "MT1" + s + " or MT2" + s
		}
	}
	return "its MT type"
}

// InvestigationFormats is what this package adds to a conversion engine for
// exceptions and investigations: a parser for every common group type
// (InvestigationTypes), renderers for categories 1 and 2 (MT190 to MT296:
// the ones CBPR+ has an MX for) and the detector, which must be tried
// before the payment and statement detectors (bare block 4 text of these
// types also starts with :20:, and an n92 may copy an MT103's fields).
func InvestigationFormats() engine.FormatSet {
	set := engine.FormatSet{Parsers: paymentParsers(InvestigationTypes, ParsePayments)}
	mx := map[string]string{"90": "camt.105", "91": "camt.106", "92": "camt.056", "95": "camt.026", "96": "camt.029"}
	for _, s := range caseSuffixes {
		for _, n := range []string{"1", "2"} {
			r := paymentRenderer(n+s, []string{"MT1" + s, "MT2" + s, mx[s]}, RenderPayments)
			if s == "95" {
				r.Accepts = r.Accepts[:2]
				r.Refuses = map[string]string{mx[s]: refusedQuery}
			}
			set.Renderers = append(set.Renderers, r)
		}
	}
	set.Detectors = []engine.Detector{DetectInvestigation}
	return set
}

// refusedQuery is why camt.026 is not written as an MTn95 (mx.RefusedQuery
// says the same for the other direction).
const refusedQuery = "camt.026 (UnableToApply) justifies a payment that cannot be applied with codes of missing or incorrect " +
	"information (MS01–MS03, IN01–IN66) or a possible duplicate, which the SWIFT query codes of an MTn95 (:75: /1/ to /49/) " +
	"do not state one to one: no mapping is faithful. Answer it with camt.029, or send the query in its own format"

// caseDropped warns of what the MX side states and the MT type has no
// field for.
func (r *payRenderer) caseDropped(p *payment.Payment, mtType string) {
	c := p.Case
	drop := func(src, format string, args ...any) {
		r.w.Add(payment.CodeFieldDropped, r.path(src), 0, format, args...)
	}
	charges := p.Kind == payment.ChargesNotification || p.Kind == payment.ChargesRequest
	if e := p.EndToEndID; e != "" && e != "NOTPROVIDED" {
		drop("OrgnlEndToEndId", "the original end-to-end id %s has no field in MT%s", clip(e), mtType)
	}
	if id := p.OriginalMessageID; id != "" && id != p.InstructionID && (p.InstructionID != "" || p.Kind == payment.Resolution || charges) {
		drop("OrgnlGrpInf/OrgnlMsgId", "the original message id %s has no field in MT%s beside :21:", clip(id), mtType)
	}
	if p.Kind == payment.Resolution && p.InstructionID != "" {
		drop("OrgnlInstrId", "the original instruction id %s has no field in MT%s (:21: is the case)", clip(p.InstructionID), mtType)
	}
	if p.Kind == payment.Resolution && (p.Amount.Currency != "" || !p.SettlementDate.IsZero()) {
		drop("OrgnlIntrBkSttlmAmt", "the original amount and settlement date have no field in MT%s", mtType)
	}
	if c.Originator != nil {
		drop(map[bool]string{true: "CxlStsRsnInf/Orgtr", false: "CxlRsnInf/Orgtr"}[p.Kind == payment.Resolution], "the originator of the reason (%s) has no field in MT%s", clip(firstNonEmpty(c.Originator.Name, c.Originator.BIC)), mtType)
	}
	if c.Creator != nil || c.CreatorParty != nil {
		drop("Case/Cretr", "the case's creator has no field in MT%s", mtType)
	}
	switch {
	case charges && (c.OriginalMX != "" || c.OriginalMT != ""):
		drop("UndrlygTx/MsgNmId", "the underlying message's type %s has no field in MT%s", clip(firstNonEmpty(c.OriginalMX, "MT"+c.OriginalMT)), mtType)
	case c.OriginalMX != "" && !strings.HasPrefix(c.OriginalMX, "MT") && c.OriginalMT != "":
		r.w.Add(payment.CodeCodeMapped, r.path("OrgnlGrpInf/OrgnlMsgNmId"), 0, "the original message %s is named by its MT equivalent %s in :11a:", clip(c.OriginalMX), c.OriginalMT)
	case c.OriginalMX != "" && c.OriginalMT == "":
		drop("OrgnlGrpInf/OrgnlMsgNmId", "the original message %s has no MT equivalent for :11a:", clip(c.OriginalMX))
	}
	if t := c.OriginalCreatedAt; !t.IsZero() && (t.Hour() != 0 || t.Minute() != 0 || t.Second() != 0) && !charges {
		drop("OrgnlGrpInf/OrgnlCreDtTm", "the original's creation time %s has no place in :11a:, which carries its date", t.Format("15:04:05-07:00"))
	}
}
