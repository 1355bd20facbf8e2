package mt

import (
	"bytes"
	"strconv"
	"strings"

	"github.com/ledgerlane/platform/services/converter/engine"
	"github.com/ledgerlane/platform/services/converter/payment"
	"github.com/ledgerlane/platform/services/converter/statement"
)

// The cash management messages: MT210 (notice to receive), MT920 (request
// message) and MT110, MT111, MT112 (advice of cheques, request for stop
// payment of a cheque, status of that request). They are read and written
// with the payment reader's and writer's machinery (FIN blocks, parties,
// agents, amounts, the X character set) into the payment model with
// Payment.Cash; mx has camt.057, camt.060 and camt.107/108/109.

// CashTypes are the cash management MT types this package reads and writes.
var CashTypes = []string{"MT210", "MT920", "MT110", "MT111", "MT112"}

// cashKinds is the payment kind of each type, without the "MT" prefix.
var cashKinds = map[string]payment.Kind{
	"210": payment.NoticeToReceive, "920": payment.ReportRequest,
	"110": payment.ChequeAdvice, "111": payment.ChequeStopRequest, "112": payment.ChequeStopStatus,
}

// cashMX names each kind's ISO 20022 message, for refusals.
var cashMX = map[payment.Kind]string{
	payment.NoticeToReceive: "camt.057", payment.ReportRequest: "camt.060",
	payment.ChequeAdvice: "camt.107", payment.ChequeStopRequest: "camt.108", payment.ChequeStopStatus: "camt.109",
}

// CashFormats is what this package adds to a conversion engine for the cash
// management messages: the MT210, MT920, MT110, MT111 and MT112 parsers,
// renderers and detector. Its detector must run before the payment and
// statement detectors: bare block 4 text of these types also starts with
// :20: and an MT110 has the :32A:, :50a: and :59a: of an MT103.
func CashFormats() engine.FormatSet {
	set := engine.FormatSet{Parsers: paymentParsers(CashTypes, ParseCash)}
	for _, t := range CashTypes {
		r := paymentRenderer(t[2:], []string{t, cashMX[cashKinds[t[2:]]]}, RenderCash)
		if t == "MT210" {
			r.Refuses = map[string]string{"camt.058": payment.RefusedCamt058}
		}
		set.Renderers = append(set.Renderers, r)
	}
	set.Detectors = []engine.Detector{DetectCash}
	return set
}

// DetectCash recognises MT210, MT920, MT110, MT111 and MT112: from block 2,
// else, for bare block 4 text, from the fields: :12: makes an MT920; a :30:
// (which no payment or statement type has) makes an MT210 when it comes
// before the first :21:, else an MT112 with :76:, an MT111 with :75: or
// without :50a:/:59a:, an MT110 otherwise.
func DetectCash(input []byte) (typ, version string, ok bool) {
	head := input
	if len(head) > detectWindow {
		head = head[:detectWindow]
	}
	s := bytes.TrimLeft(head, " \t\r\n\x01\ufeff")
	if len(s) == 0 || s[0] == '<' {
		return "", "", false
	}
	if i := bytes.Index(s, []byte("{2:")); i >= 0 && len(s) >= i+7 && (s[i+3] == 'I' || s[i+3] == 'O') {
		switch t := string(s[i+4 : i+7]); t {
		case "210", "920", "110", "111", "112":
			return "MT" + t, "", true
		}
		return "", "", false
	}
	if !bytes.HasPrefix(s, []byte("{1:")) && !bytes.HasPrefix(s, []byte("{4:")) && !bytes.HasPrefix(s, []byte(":")) {
		return "", "", false
	}
	f := lineFields(s)
	if f&f12 != 0 && f&f25 != 0 {
		return "MT920", "", true
	}
	// A :30: on a line of its own (not the first), before or after the
	// first :21: so placed.
	if f&f30NL == 0 {
		return "", "", false
	}
	switch {
	case f&f21Before30 == 0:
		return "MT210", "", true
	case f&f76 != 0:
		return "MT112", "", true
	case f&f75 != 0:
		return "MT111", "", true
	case f&(f50A|f50F|f50K|f59F) != 0:
		return "MT110", "", true
	}
	return "MT111", "", true
}

// ParseCash reads every MT210, MT920, MT110, MT111 or MT112 in input. want
// is the type the caller named (one of CashTypes); a message of another
// type is refused.
func ParseCash(input []byte, want string) ([]*payment.Payment, []statement.Warning, error) {
	return parseEach(input, func(p payParser) (*payment.Payment, error) { return p.parseCash(want) })
}

// parseEach splits input into FIN messages and reads each with parse, all
// with one warner. parse takes its parser by value, so that a parser that
// does not outlive its message stays off the heap.
func parseEach(input []byte, parse func(payParser) (*payment.Payment, error)) ([]*payment.Payment, []statement.Warning, error) {
	msgs, err := splitFIN(input)
	if err != nil {
		return nil, nil, err
	}
	w := &payment.Warner{}
	out := make([]*payment.Payment, 0, len(msgs))
	for _, m := range msgs {
		pay, err := parse(payParser{w: w, m: m})
		if err != nil {
			return nil, nil, err
		}
		out = append(out, pay)
	}
	return out, w.Result(), nil
}

// ownType starts the payment of a message of one of kinds' types: the
// type from block 2, else (bare block 4 text) the one the caller named,
// else dflt; a type not in kinds (what names them) or other than the one
// named is refused. It reads the header and warns about block 3 :119:.
func (p *payParser) ownType(want, dflt string, kinds map[string]payment.Kind, what string) (*payment.Payment, error) {
	b2 := p.m.block2
	switch {
	case len(b2) >= 4 && (b2[0] == 'I' || b2[0] == 'O'):
		p.typ = b2[1:4]
	case len(want) == 5:
		p.typ = want[2:] // bare block 4: the caller names the type
	default:
		p.typ = dflt
	}
	kind, ok := kinds[p.typ]
	if !ok {
		return nil, p.fail(nil, "MT%s is not %s", clip(p.typ), what)
	}
	if want != "" && !strings.EqualFold(want, "MT"+p.typ) {
		return nil, p.fail(nil, "message is MT%s, not %s", p.typ, want)
	}
	pay := &payment.Payment{MT: p.typ, Kind: kind}
	if err := p.header(pay); err != nil {
		return nil, err
	}
	if f := p.m.block3["119"]; f != "" {
		p.warn(payment.CodeValidationFlag, nil, "block 3 field 119 %s has no MX element", clip(f))
	}
	return pay, nil
}

func (p *payParser) parseCash(want string) (*payment.Payment, error) {
	pay, err := p.ownType(want, "210", cashKinds, "a cash management type this converter reads (MT210, MT920, MT110, MT111, MT112)")
	if err != nil {
		return nil, err
	}
	kind := pay.Kind
	pay.Cash = &payment.Cash{}
	switch kind {
	case payment.NoticeToReceive:
		err = p.cashNotice(pay)
	case payment.ReportRequest:
		err = p.cashRequest(pay)
	default:
		err = p.cashCheques(pay)
	}
	if err != nil {
		return nil, err
	}
	if pay.UETR != "" {
		if kind == payment.NoticeToReceive && len(pay.Cash.Items) == 1 {
			pay.Cash.Items[0].UETR = pay.UETR
		} else {
			p.warn(payment.CodeFieldDropped, nil, "block 3 UETR %s names no single item of %s and is not carried", pay.UETR, cashMX[kind])
		}
		pay.UETR = ""
	}
	return pay, nil
}

// item returns the item the current sequence fills, failing when a
// sequence field comes before the field that starts a sequence.
func (p *payParser) cashItem(pay *payment.Payment, f *finField, starter string) (*payment.CashItem, error) {
	if len(pay.Cash.Items) == 0 {
		return nil, p.fail(f, "T13: field :%s: comes before :%s:, which starts each sequence", f.tag, starter)
	}
	return &pay.Cash.Items[len(pay.Cash.Items)-1], nil
}

// date6 reads a YYMMDD field (:30:).
func (p *payParser) cashDate(f *finField) (statement.Date, error) {
	v := strings.TrimSpace(f.lines[0])
	d, ok := yymmdd(v)
	if !ok {
		return statement.Date{}, p.fail(f, "T50: %q is not a valid date YYMMDD", clip(v))
	}
	return d, nil
}

// notice reads an MT210: :20:, :25:, :30:, then per item :21:, :32B:,
// :50a:, :52a:, :56a:.
func (p *payParser) cashNotice(pay *payment.Payment) error {
	seen := single{}
	for i := range p.m.fields {
		f := &p.m.fields[i]
		var err error
		var it *payment.CashItem
		switch f.tag {
		case "20", "25", "30":
			p.once(&seen, f)
		case "21":
			pay.Cash.Items = append(pay.Cash.Items, payment.CashItem{})
		case "32B", "50", "50C", "50F", "52A", "52D", "56A", "56D":
			if it, err = p.cashItem(pay, f, "21"); err != nil {
				return err
			}
		}
		switch f.tag {
		case "20":
			pay.MessageID, err = p.reference(f)
		case "25":
			lines := trimLines(f.lines)
			if len(lines) == 0 || len(lines[0]) > 35 {
				return p.fail(f, "T14: the account identification must be 1 to 35 characters")
			}
			pay.Account = lines[0]
		case "30":
			pay.SettlementDate, err = p.cashDate(f)
		case "21":
			pay.Cash.Items[len(pay.Cash.Items)-1].Reference, err = p.reference(f)
		case "32B":
			it.Amount, err = p.currencyAmount(f, f.lines[0])
		case "50", "50C", "50F":
			it.Debtor, err = p.cashParty(f)
		case "52A", "52D":
			it.DebtorFI, err = p.agent(f)
		case "56A", "56D":
			it.Intermediary, err = p.agent(f)
		default:
			p.warn(payment.CodeUnknownField, f, "field :%s: is not defined for MT210", f.tag)
		}
		if err != nil {
			return err
		}
	}
	if err := p.mandatory(present{"20", pay.MessageID != ""}, present{"30", !pay.SettlementDate.IsZero()}, present{"21", len(pay.Cash.Items) > 0}); err != nil {
		return err
	}
	for i := range pay.Cash.Items {
		it := &pay.Cash.Items[i]
		it.Date = pay.SettlementDate
		if it.Amount.Currency == "" {
			return p.fail(nil, "T13: mandatory field :32B: is missing in sequence %d", i+1)
		}
		if (it.Debtor == nil) == (it.DebtorFI == nil) {
			p.warn(payment.CodeRuleC06, nil, "C06: either :50a: or :52a:, but not both, must be present in sequence %d of an MT210", i+1)
		}
		if it.Debtor != nil && it.DebtorFI != nil {
			// Beside an ordering customer :52a: is the customer's agent.
			it.DebtorAgent, it.DebtorFI = it.DebtorFI, nil
		}
	}
	return nil
}

// cashParty reads MT210 :50: (name and address), :50C: (BIC) or :50F:.
func (p *payParser) cashParty(f *finField) (*payment.Party, error) {
	if f.tag != "50C" {
		return p.party(f)
	}
	lines := trimLines(f.lines)
	if len(lines) != 1 || !payment.IsBIC(lines[0]) {
		return nil, p.fail(f, "T27: option C holds one BIC")
	}
	return &payment.Party{BIC: lines[0]}, nil
}

// reportRequest reads an MT920: :20:, then per request :12:, :25:, :34F:.
func (p *payParser) cashRequest(pay *payment.Payment) error {
	seen := single{}
	for i := range p.m.fields {
		f := &p.m.fields[i]
		var err error
		var it *payment.CashItem
		switch f.tag {
		case "20":
			p.once(&seen, f)
			pay.MessageID, err = p.reference(f)
		case "12":
			v := strings.TrimSpace(f.lines[0])
			if len(v) != 3 || !allDigits(v) {
				return p.fail(f, "T18: message requested %q is not 3 digits", clip(v))
			}
			switch v {
			case "940", "941", "942", "950":
			default:
				p.warn(payment.CodeNonstandard, f, "MT%s is not a statement or report an MT920 requests (940, 941, 942, 950)", v)
			}
			pay.Cash.Items = append(pay.Cash.Items, payment.CashItem{RequestedMessage: v})
		case "25":
			if it, err = p.cashItem(pay, f, "12"); err != nil {
				return err
			}
			lines := trimLines(f.lines)
			if len(lines) == 0 || len(lines[0]) > 35 {
				return p.fail(f, "T14: the account identification must be 1 to 35 characters")
			}
			it.Account = lines[0]
		case "34F":
			if it, err = p.cashItem(pay, f, "12"); err != nil {
				return err
			}
			var fl payment.FloorLimit
			if fl, err = p.cashFloorLimit(f); err == nil {
				if len(it.FloorLimits) == 2 {
					p.warn(payment.CodeDuplicateField, f, "a third :34F: in one sequence: the last is used")
					it.FloorLimits = it.FloorLimits[:1]
				}
				it.FloorLimits = append(it.FloorLimits, fl)
			}
		default:
			p.warn(payment.CodeUnknownField, f, "field :%s: is not defined for MT920", f.tag)
		}
		if err != nil {
			return err
		}
	}
	if pay.MessageID == "" {
		return p.fail(nil, "T13: mandatory field :20: is missing")
	}
	if len(pay.Cash.Items) == 0 {
		return p.fail(nil, "T13: mandatory field :12: is missing")
	}
	for i, it := range pay.Cash.Items {
		if it.Account == "" {
			return p.fail(nil, "T13: mandatory field :25: is missing in sequence %d", i+1)
		}
	}
	return nil
}

// floorLimit reads :34F: CCY[D|C]amount.
func (p *payParser) cashFloorLimit(f *finField) (payment.FloorLimit, error) {
	v := strings.TrimSpace(f.lines[0])
	var fl payment.FloorLimit
	if len(v) > 3 && (v[3] == 'D' || v[3] == 'C') {
		fl.Mark = v[3:4]
		v = v[:3] + v[4:]
	}
	a, err := p.currencyAmount(f, v)
	fl.Amount = a
	return fl, err
}

// cheques reads an MT110 (:20:, :53a:, :54a:, :72:, then per cheque :21:,
// :30:, :32a:, :50a:, :52a:, :59a:) or an MT111/MT112 (one cheque, with
// :75: or :76:).
func (p *payParser) cashCheques(pay *payment.Payment) error {
	seen := single{}
	for i := range p.m.fields {
		f := &p.m.fields[i]
		var err error
		var it *payment.CashItem
		switch f.tag {
		case "20", "53A", "53B", "53D", "54A", "54B", "54D", "72":
			p.once(&seen, f)
		case "21":
			if p.typ != "110" && len(pay.Cash.Items) > 0 {
				p.warn(payment.CodeDuplicateField, f, "field :21: occurs again; MT%s advises one cheque, the last is used", p.typ)
				pay.Cash.Items = pay.Cash.Items[:0]
			}
			pay.Cash.Items = append(pay.Cash.Items, payment.CashItem{})
			it = &pay.Cash.Items[len(pay.Cash.Items)-1]
		case "30", "32A", "32B", "50A", "50F", "50K", "52A", "52B", "52D", "59", "59A", "59F", "75", "76":
			if it, err = p.cashItem(pay, f, "21"); err != nil {
				return err
			}
		}
		switch tag := f.tag; {
		case tag == "20":
			pay.MessageID, err = p.reference(f)
		case tag == "53A" || tag == "53B" || tag == "53D":
			pay.SendersCorrespondent, err = p.agent(f)
		case tag == "54A" || tag == "54B" || tag == "54D":
			pay.ReceiversCorrespondent, err = p.agent(f)
		case tag == "72" && p.typ == "110":
			pay.AdditionalInfo = p.cashText(f)
		case tag == "21":
			it.ChequeNumber, err = p.reference(f)
		case tag == "30":
			it.IssueDate, err = p.cashDate(f)
		case tag == "32A":
			var tmp payment.Payment
			err = p.valueDateAmount(&tmp, f)
			it.Amount, it.Date = tmp.Amount, tmp.SettlementDate
		case tag == "32B":
			it.Amount, err = p.currencyAmount(f, f.lines[0])
		case (tag == "50A" || tag == "50F" || tag == "50K") && p.typ == "110":
			it.Debtor, err = p.party(f)
		case tag == "52A" || tag == "52B" || tag == "52D":
			it.DebtorFI, err = p.agent(f)
		case tag == "59" || tag == "59F" || tag == "59A":
			it.Creditor, err = p.cashPayee(f)
		case tag == "75" && p.typ == "111":
			it.Reason, it.Info = cashCode(p.cashText(f), cashStopReasons)
		case tag == "76" && p.typ == "112":
			it.Status, it.Info = cashCode(p.cashText(f), cashStopStatuses)
		default:
			p.warn(payment.CodeUnknownField, f, "field :%s: is not defined for MT%s", f.tag, p.typ)
		}
		if err != nil {
			return err
		}
	}
	if pay.MessageID == "" {
		return p.fail(nil, "T13: mandatory field :20: is missing")
	}
	if len(pay.Cash.Items) == 0 {
		return p.fail(nil, "T13: mandatory field :21: is missing")
	}
	for i, it := range pay.Cash.Items {
		switch {
		case it.IssueDate.IsZero():
			return p.fail(nil, "T13: mandatory field :30: is missing in cheque %d", i+1)
		case it.Amount.Currency == "":
			return p.fail(nil, "T13: mandatory field :32a: is missing in cheque %d", i+1)
		case p.typ == "110" && it.Creditor == nil:
			return p.fail(nil, "T13: mandatory field :59a: is missing in cheque %d", i+1)
		case p.typ == "112" && it.Status == "" && it.Info == "":
			return p.fail(nil, "T13: mandatory field :76: is missing")
		}
	}
	return nil
}

// payee reads :59a:. MT111 and MT112 have only the option without letter
// (4 x 35 free lines); CBPR+ translation writes its lines numbered as in
// option F (1/name, 2/address, 3/CC/town), which is read as option F.
func (p *payParser) cashPayee(f *finField) (*payment.Party, error) {
	lines := trimLines(f.lines)
	if f.tag == "59" && len(lines) > 0 {
		body := lines
		if strings.HasPrefix(body[0], "/") {
			body = body[1:]
		}
		numbered := len(body) > 0
		for _, l := range body {
			numbered = numbered && isNumberedLine(l) && l[0] <= '3'
		}
		if numbered {
			g := *f
			g.tag = "59F"
			w := &payment.Warner{}
			q := &payParser{w: w, m: p.m, typ: p.typ}
			if pt, err := q.party(&g); err == nil {
				p.warn(payment.CodeNonstandard, f, "lines of :59: numbered as in option F were read as name (1/), address (2/) and country and town (3/)")
				for _, w := range w.Result() {
					p.w.Add(w.Code, w.Path, w.Line, "%s", w.Message)
				}
				return pt, nil
			}
		}
	}
	return p.party(f)
}

// narrative reads a free text field (:72:, :75:, :76:) as one text.
func (p *payParser) cashText(f *finField) string {
	var lines []string
	for _, l := range f.lines {
		if l = strings.TrimRight(l, " "); l != "" {
			lines = append(lines, l)
		}
	}
	return joinWrapped(lines, 35)
}

// The words CBPR+ translation writes in MT111 :75: and MT112 :76: for the
// ISO codes of a stop reason (ExternalChequeCancellationReason1Code) and a
// stop status (ExternalChequeCancellationStatus1Code).
var (
	cashStopReasons  = map[string]string{"RequestedByCustomer": "CUST"}
	cashStopStatuses = map[string]string{"Accepted": "ACCR", "Rejected": "RJCR", "Pending": "PDCR"}
)

// codeWord splits "/Word/text" into its code (a word of words mapped to its
// code, else the word) and the text; a text without a leading /word/ has
// no code.
func cashCode(s string, words map[string]string) (code, text string) {
	if len(s) > 2 && s[0] == '/' {
		if w, rest, ok := strings.Cut(s[1:], "/"); ok && w != "" && !strings.Contains(w, " ") {
			if c, ok := words[w]; ok {
				return c, strings.TrimSpace(rest)
			}
			return w, strings.TrimSpace(rest)
		}
	}
	return "", strings.TrimSpace(s)
}

// wordOf is the :75:/:76: word of an ISO code.
func cashWord(code string, words map[string]string) string {
	for w, c := range words {
		if c == code {
			return w
		}
	}
	return code
}

// RenderCash writes each cash management payment as FIN messages of type
// typ ("210", "920", "110", "111", "112"). An MT210 holds at most ten items
// of one value date and an MT110 at most ten cheques, so a notice or advice
// with more becomes several messages; an MT111 or MT112 is about one cheque,
// so a camt.108 or camt.109 becomes one message per cheque (PAY_SPLIT).
func RenderCash(typ string, ps []*payment.Payment, opts statement.Options) ([]string, []statement.Warning, error) {
	r := newPayRenderer(typ, opts)
	defer r.release()
	want := cashKinds[typ]
	var pages []string
	for i, p := range ps {
		r.no = i + 1
		if p.Kind != want || p.Cash == nil {
			return nil, nil, &statement.ParseError{Message: r.no, Reason: "MT" + typ + " is written from a " + cashMX[want] + " (" + string(want) + "), not from a " + cashKindName(p)}
		}
		groups := cashGroups(typ, p.Cash.Items)
		if len(groups) > 1 {
			r.w.Add(payment.CodeSplit, r.path(""), 0, "%d items: %d MT%s messages", len(p.Cash.Items), len(groups), typ)
		}
		for _, g := range groups {
			page, err := r.cashMessage(p, g)
			if err != nil {
				return nil, nil, err
			}
			pages = append(pages, page)
		}
	}
	return r.result(pages)
}

func cashKindName(p *payment.Payment) string {
	if mx, ok := cashMX[p.Kind]; ok {
		return mx + " (" + string(p.Kind) + ")"
	}
	return string(p.Kind) + " payment"
}

// groupItems splits items into the messages of type typ.
func cashGroups(typ string, items []payment.CashItem) [][]payment.CashItem {
	var out [][]payment.CashItem
	for i, it := range items {
		n := len(out)
		switch {
		case n == 0 || typ == "111" || typ == "112":
		case typ == "210" && (len(out[n-1]) == 10 || it.Date != items[i-1].Date):
		case typ == "110" && len(out[n-1]) == 10:
		default:
			out[n-1] = append(out[n-1], it)
			continue
		}
		out = append(out, []payment.CashItem{it})
	}
	if len(out) == 0 {
		out = append(out, nil)
	}
	return out
}

func (r *payRenderer) cashMessage(p *payment.Payment, items []payment.CashItem) (string, error) {
	if len(items) == 0 {
		return "", &statement.ParseError{Message: r.no, Reason: "the " + cashMX[p.Kind] + " has no item to write"}
	}
	h := *p
	h.UETR = ""
	if r.typ == "210" && len(items) == 1 {
		h.UETR = items[0].UETR
	} else {
		for i, it := range items {
			if it.UETR != "" {
				r.w.Add(payment.CodeFieldDropped, r.path("Itm["+strconv.Itoa(i+1)+"]/UETR"), 0, "the UETR of one of several items has no MT%s field", r.typ)
			}
		}
	}
	r.blocks(&h, r.typ)
	var err error
	switch r.typ {
	case "210":
		err = r.cashNotice(p, items)
	case "920":
		err = r.cashRequest(p, items)
	default:
		err = r.cashCheques(p, items)
	}
	if err != nil {
		return "", err
	}
	r.b = append(r.b, "-}"...)
	return string(r.b), nil
}

// reference20 writes :20: from the message id (else the AppHdr's).
func (r *payRenderer) cash20(p *payment.Payment, id string) {
	ref, src := id, "InstrId"
	if ref == "" {
		ref, src = firstNonEmpty(p.MessageID, p.Header.BizMsgIdr), "GrpHdr/MsgId"
	}
	if ref == "" {
		r.w.Add(payment.CodeFieldDefaulted, r.path(":20:"), 0, "no message id: NONREF is used")
		ref = "NONREF"
	}
	r.line("20", r.fit(r.x(ref), 16, src, ":20:"))
}

func (r *payRenderer) cashNotice(p *payment.Payment, items []payment.CashItem) error {
	r.cash20(p, "")
	if p.Account != "" {
		r.line("25", r.fit(r.x(p.Account), 35, "Ntfctn/Acct/Id", ":25:"))
	}
	d := items[0].Date
	if d.IsZero() {
		d = p.SettlementDate
	}
	if d.IsZero() {
		return &statement.ParseError{Message: r.no, Field: "Ntfctn/Itm/XpctdValDt", Reason: "MT210 needs the expected value date (:30:)"}
	}
	r.line("30", string(appendYYMMDD(nil, d)))
	for i, it := range items {
		src := "Ntfctn/Itm[" + strconv.Itoa(i+1) + "]"
		ref := it.Reference
		if ref == "" {
			r.w.Add(payment.CodeFieldDefaulted, r.path(src+"/Id"), 0, "no item id: :21: NONREF")
			ref = "NONREF"
		}
		r.line("21", r.fit(r.x(ref), 16, src+"/Id", ":21:"))
		if it.EndToEndID != "" && it.EndToEndID != "NOTPROVIDED" {
			r.w.Add(payment.CodeFieldDropped, r.path(src+"/EndToEndId"), 0, "EndToEndId %q has no MT210 field", clip(it.EndToEndID))
		}
		amt, err := r.amount(it.Amount, "32B")
		if err != nil {
			return err
		}
		r.line("32B", it.Amount.Currency+amt)
		switch {
		case it.Debtor != nil:
			if err := r.cashDebtor(it.Debtor, src+"/Dbtr/Pty"); err != nil {
				return err
			}
			if it.DebtorFI != nil || it.DebtorAgent != nil {
				r.w.Add(payment.CodeFieldDropped, r.path(src+"/DbtrAgt"), 0, "MT210 rule C06 allows :50a: or :52a:, not both: the debtor's agent beside the ordering customer is not written")
			}
		case it.DebtorFI != nil || it.DebtorAgent != nil:
			a, asrc := it.DebtorFI, src+"/Dbtr/Agt"
			if a == nil {
				a, asrc = it.DebtorAgent, src+"/DbtrAgt"
			} else if it.DebtorAgent != nil {
				r.w.Add(payment.CodeFieldDropped, r.path(src+"/DbtrAgt"), 0, "MT210 has one ordering institution (:52a:): the debtor agent beside Dbtr/Agt is not written")
			}
			r.agent("52", a, asrc, "AD")
		default:
			r.w.Add(payment.CodeFieldDefaulted, r.path(src+"/Dbtr"), 0, "MT210 needs :50a: or :52a: (rule C06): :52D:NOTPROVIDED is written")
			r.field("52D", []string{"NOTPROVIDED"})
		}
		if it.Intermediary != nil {
			r.agent("56", it.Intermediary, src+"/IntrmyAgt", "AD")
		}
	}
	return nil
}

// noticeDebtor writes MT210 :50a:: option C for a BIC alone, F for a
// structured address, no letter (name and address) otherwise.
func (r *payRenderer) cashDebtor(d *payment.Party, src string) error {
	if d.Account != "" && d.Account != "NOTPROVIDED" {
		r.w.Add(payment.CodeFieldDropped, r.path(src), 0, "the debtor's account has no camt.057 element")
	}
	e := *d
	e.Account = ""
	switch {
	case e.Name == "" && e.BIC != "":
		r.line("50C", e.BIC)
		return nil
	case e.Address.Structured():
		return r.party("50", &e, src, true)
	}
	if e.BIC != "" {
		r.w.Add(payment.CodeFieldDropped, r.path(src+"/Id/OrgId/AnyBIC"), 0, "the BIC beside a name has no place in :50:")
	}
	name := e.Name
	if name == "" {
		r.w.Add(payment.CodeFieldDefaulted, r.path(src+"/Nm"), 0, "no name: NOTPROVIDED is written")
		name = "NOTPROVIDED"
	}
	r.field("50", r.nameAddress(name, e.Address, src, ":50:"))
	return nil
}

// mt920Message is the :12: of a requested message name.
func cashMT920Message(name string, it payment.CashItem) (string, bool) {
	n := strings.TrimPrefix(strings.ToUpper(name), "MT")
	if len(n) == 3 && allDigits(n) {
		return n, true
	}
	switch {
	case strings.HasPrefix(name, "camt.053"):
		return "940", true
	case strings.HasPrefix(name, "camt.052") && len(it.FloorLimits) > 0:
		return "942", true
	case strings.HasPrefix(name, "camt.052"):
		return "941", true
	}
	return "", false
}

func (r *payRenderer) cashRequest(p *payment.Payment, items []payment.CashItem) error {
	r.cash20(p, "")
	for i, it := range items {
		src := "RptgReq[" + strconv.Itoa(i+1) + "]"
		if it.Reference != "" && it.Reference != p.MessageID {
			r.w.Add(payment.CodeFieldDropped, r.path(src+"/Id"), 0, "RptgReq/Id %q beside the message id has no MT920 field", clip(it.Reference))
		}
		msg, ok := cashMT920Message(it.RequestedMessage, it)
		if !ok {
			return &statement.ParseError{Message: r.no, Field: src + "/ReqdMsgNmId", Reason: "requested message " + strconv.Quote(clip(it.RequestedMessage)) + " is no statement or report an MT920 can request (940, 941, 942, 950, camt.052, camt.053)"}
		}
		r.line("12", msg)
		acct := it.Account
		if acct == "" {
			r.w.Add(payment.CodeFieldDefaulted, r.path(src+"/Acct"), 0, "no account: :25: NOTPROVIDED")
			acct = "NOTPROVIDED"
		}
		r.line("25", r.fit(r.x(acct), 35, src+"/Acct/Id", ":25:"))
		// At most two: the debit (or both) limit first, then the credit one.
		var debit, credit *payment.FloorLimit
		for j := range it.FloorLimits {
			fl := &it.FloorLimits[j]
			switch {
			case fl.Mark == "C" && credit == nil:
				credit = fl
			case fl.Mark != "C" && debit == nil:
				debit = fl
			default:
				r.w.Add(payment.CodeFieldDropped, r.path(src+"/ReqdTxTp/FlrLmt["+strconv.Itoa(j+1)+"]"), 0, "MT920 carries one debit and one credit floor limit")
			}
		}
		if debit == nil && credit != nil && msg == "942" {
			r.w.Add(payment.CodeNonstandard, r.path(src+"/ReqdTxTp/FlrLmt"), 0, "an MT920 requesting an MT942 needs a debit floor limit (rule C1)")
		}
		for _, fl := range []*payment.FloorLimit{debit, credit} {
			if fl == nil {
				continue
			}
			a, err := r.amount(fl.Amount, "34F")
			if err != nil {
				return err
			}
			mark := fl.Mark
			if debit != nil && credit != nil && mark == "" {
				mark = "D" // with a credit limit beside it, the first is the debit limit
			}
			r.line("34F", fl.Amount.Currency+mark+a)
		}
	}
	return nil
}

func (r *payRenderer) cashCheques(p *payment.Payment, items []payment.CashItem) error {
	first := items[0]
	if r.typ == "110" {
		r.cash20(p, "")
	} else {
		r.cash20(p, first.Reference)
	}
	if r.typ == "110" {
		if a := p.SendersCorrespondent; a != nil {
			r.agent("53", a, "SendersCorrespondent", "ABD")
		}
		if a := p.ReceiversCorrespondent; a != nil {
			r.agent("54", a, "ReceiversCorrespondent", "ABD")
		}
		var texts []string
		if p.AdditionalInfo != "" {
			texts = append(texts, p.AdditionalInfo)
		}
		for _, it := range items {
			for _, in := range it.Instructions {
				t := in.Text
				if in.Code != "" {
					t = "/" + in.Code + "/" + t
				}
				if t != "" {
					texts = append(texts, t)
				}
			}
		}
		if len(texts) > 0 {
			r.field("72", r.wrap(r.x(strings.Join(texts, " ")), 35, 6, "Chq/InstrForChqAgt", ":72:"))
		}
	} else if p.SendersCorrespondent != nil || p.ReceiversCorrespondent != nil || p.AdditionalInfo != "" {
		r.w.Add(payment.CodeFieldDropped, r.path(""), 0, "correspondents and :72: of an MT110 have no MT%s field", r.typ)
	}
	for i, it := range items {
		src := "Chq[" + strconv.Itoa(i+1) + "]"
		if r.typ == "110" && it.Reference != "" && it.Reference != p.MessageID {
			r.w.Add(payment.CodeFieldDropped, r.path(src+"/InstrId"), 0, "InstrId %q of one of the cheques has no MT110 field", clip(it.Reference))
		}
		if it.OriginalInstructionID != "" && it.OriginalInstructionID != "NOTPROVIDED" {
			r.w.Add(payment.CodeFieldDropped, r.path(src+"/OrgnlInstrId"), 0, "OrgnlInstrId %q has no MT%s field", clip(it.OriginalInstructionID), r.typ)
		}
		if r.typ != "110" && len(it.Instructions) > 0 {
			r.w.Add(payment.CodeFieldDropped, r.path(src+"/InstrForChqAgt"), 0, "instructions for the cheque agent have no MT%s field", r.typ)
		}
		num := it.ChequeNumber
		if num == "" {
			return &statement.ParseError{Message: r.no, Field: src + "/ChqNb", Reason: "MT" + r.typ + " needs the cheque number (:21:)"}
		}
		r.line("21", r.fit(r.x(num), 16, src+"/ChqNb", ":21:"))
		if it.IssueDate.IsZero() {
			return &statement.ParseError{Message: r.no, Field: src + "/IsseDt", Reason: "MT" + r.typ + " needs the date of issue (:30:)"}
		}
		r.line("30", string(appendYYMMDD(nil, it.IssueDate)))
		amt, err := r.amount(it.Amount, "32a")
		if err != nil {
			return err
		}
		if !it.Date.IsZero() {
			r.line("32A", string(appendYYMMDD(nil, it.Date))+it.Amount.Currency+amt)
		} else {
			r.line("32B", it.Amount.Currency+amt)
		}
		if it.Debtor != nil {
			if r.typ == "110" {
				if err := r.party("50", it.Debtor, src+"/Pyer", true); err != nil {
					return err
				}
			} else {
				r.w.Add(payment.CodeFieldDropped, r.path(src+"/Pyer"), 0, "MT%s has no payer", r.typ)
			}
		}
		if it.DebtorFI != nil {
			r.agent("52", it.DebtorFI, src+"/DrwrAgt", "ABD")
		}
		if it.Creditor != nil {
			if err := r.cashPayee(it.Creditor, src+"/Pyee"); err != nil {
				return err
			}
		} else if r.typ == "110" {
			return &statement.ParseError{Message: r.no, Field: src + "/Pyee", Reason: "MT110 needs the payee (:59a:)"}
		}
		switch r.typ {
		case "111":
			if it.Reason != "" || it.Info != "" {
				r.field("75", r.wrap(r.x(cashCoded(cashWord(it.Reason, cashStopReasons), it.Info)), 35, 6, src+"/ChqCxlOrStopRsn", ":75:"))
			}
		case "112":
			r.field("76", r.wrap(r.x(cashCoded(cashWord(it.Status, cashStopStatuses), it.Info)), 35, 6, src+"/ChqCxlOrStopSts", ":76:"))
		}
	}
	return nil
}

// coded is "/word/info", or info alone without a word (NARR: narrative).
func cashCoded(word, info string) string {
	if word == "" || word == "NARR" {
		return info
	}
	return "/" + word + "/" + info
}

// payee writes :59a:: MT110 takes option F for a structured address; MT111
// and MT112 have only the option without letter ([/account] and 4 x 35).
func (r *payRenderer) cashPayee(p *payment.Party, src string) error {
	if r.typ == "110" {
		return r.party("59", p, src, false)
	}
	var lines []string
	if p.Account != "" && p.Account != "NOTPROVIDED" {
		lines = append(lines, "/"+r.fit(r.x(p.Account), 34, src+"Acct/Id", ":59: account"))
	}
	if p.BIC != "" || len(p.IDs) > 0 {
		r.w.Add(payment.CodeFieldDropped, r.path(src+"/Id"), 0, "identifications of the payee have no place in :59:")
	}
	name := p.Name
	if name == "" {
		name = firstNonEmpty(p.BIC, "NOTPROVIDED")
		r.w.Add(payment.CodeFieldDefaulted, r.path(src+"/Nm"), 0, "no name: %s is written", name)
	}
	r.field("59", append(lines, r.nameAddress(name, p.Address, src, ":59:")...))
	return nil
}
