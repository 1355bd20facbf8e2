package mt

import (
	"strconv"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/ledgerlane/platform/services/converter/payment"
	"github.com/ledgerlane/platform/services/converter/statement"
)

// RenderPayments writes each payment as one FIN message of type typ
// ("103"; "202", "205" with or without "COV"; "900", "910"). "202" and "205"
// write the COV variant for a cover payment. Texts are written in the
// SWIFT X character set (translitProfile); a value longer than its field is
// cut, marked with '+' as its last kept character, and reported with
// PAY_TRUNCATED naming the source path, the field and both lengths.
func RenderPayments(typ string, ps []*payment.Payment, opts statement.Options) ([]string, []statement.Warning, error) {
	r := newPayRenderer(typ, opts)
	defer r.release()
	pages := make([]string, 0, len(ps))
	for i, p := range ps {
		r.no = i + 1
		page, err := r.message(p)
		if err != nil {
			return nil, nil, err
		}
		pages = append(pages, page)
	}
	return r.result(pages)
}

// newPayRenderer starts a render of MT typ with its own warner. Its buffer
// comes from bufPool; the caller gives it back with release.
func newPayRenderer(typ string, opts statement.Options) *payRenderer {
	pb := getBuf()
	r := &payRenderer{tl: translit{german: opts.TranslitProfile == "german"}, typ: typ, b: (*pb)[:0], pooled: pb}
	r.w = &r.warner
	return r
}

// release gives the buffer back to bufPool: the pages are copies of it.
func (r *payRenderer) release() {
	*r.pooled = r.b
	putBuf(r.pooled)
	r.b, r.pooled = nil, nil
}

// result is what a render returns: its pages, and its warnings with the
// count of transliterated characters.
func (r *payRenderer) result(pages []string) ([]string, []statement.Warning, error) {
	if r.tl.n > 0 {
		r.w.Add(payment.CodeTransliterated, "", 0, "%d character(s) outside the SWIFT X character set were transliterated", r.tl.n)
	}
	return pages, r.w.Result(), nil
}

type payRenderer struct {
	w *payment.Warner
	// warner is w's storage: renderer and warner are one allocation.
	warner payment.Warner
	tl     translit
	typ    string
	no     int
	b      []byte
	// pooled is where b came from in bufPool.
	pooled *[]byte
	// ret are the :72: items of a return (/RETN/…), written first; they
	// and the lines of :72: are kept in retBuf and lines72Buf, which a
	// return's render filled with two or three slices of its own (issue 29).
	ret        []string
	retBuf     [6]string
	lines72Buf [6]string
	// reject makes ret72 write /REJT/ (a reject in an MT103/202/205).
	reject bool
}

// path names where a finding is: the payment (message) and the source
// element.
func (r *payRenderer) path(src string) string {
	if src == "" {
		return "message " + strconv.Itoa(r.no)
	}
	return "message " + strconv.Itoa(r.no) + ", " + src
}

// x transliterates s into the X set; a line may not start with ':' or '-'.
func (r *payRenderer) x(s string) string {
	s = r.tl.apply(s)
	if s != "" && (s[0] == ':' || s[0] == '-') {
		r.tl.n++
		s = "." + s[1:]
	}
	return s
}

// fit cuts s (already in X) to n characters, marking and reporting a cut.
func (r *payRenderer) fit(s string, n int, src, field string) string {
	if len(s) <= n {
		return s
	}
	// Written out rather than formatted: a cut is the commonest finding
	// (a 35-character reference in a 16-character field).
	r.w.AddText(payment.CodeTruncated, r.path(src), 0, src+" ("+strconv.Itoa(len(s))+" characters) cut to "+strconv.Itoa(n)+" in "+field)
	return s[:n-1] + "+"
}

// where names the source element and the MT field of a finding. The hot
// paths pass it rather than the names themselves, which are joined only
// when a finding is reported: most texts fit, and joining every path up
// front was most of what writing a party allocated (issue 30).
type where func() (src, field string)

// fitAt is fit with the names given by at.
func (r *payRenderer) fitAt(s string, n int, at where) string {
	if len(s) <= n {
		return s
	}
	src, field := at()
	return r.fit(s, n, src, field)
}

// wrap breaks s (in X) into lines of width, at most max of them, cutting and
// reporting what does not fit. Lines are cut at full width, which the reader
// joins back without a separator (joinWrapped).
func (r *payRenderer) wrap(s string, width, max int, src, field string) []string {
	return r.wrapAt(nil, s, width, max, func() (string, string) { return src, field })
}

// wrapAt is wrap appending the lines to dst, with the names given by at.
func (r *payRenderer) wrapAt(dst []string, s string, width, max int, at where) []string {
	if max <= 0 {
		if s != "" {
			src, field := at()
			r.w.Add(payment.CodeTruncated, r.path(src), 0, "%s (%d characters) cut to 0 in %s: no line left", src, len(s), field)
		}
		return dst
	}
	base := len(dst)
	for len(s) > 0 && len(dst)-base < max {
		n := min(width, len(s))
		dst = append(dst, s[:n])
		s = s[n:]
	}
	out := dst[base:]
	if len(s) > 0 {
		kept := 0
		for _, l := range out {
			kept += len(l)
		}
		src, field := at()
		r.w.Add(payment.CodeTruncated, r.path(src), 0, "%s (%d characters) cut to %d in %s", src, kept+len(s), kept, field)
		last := out[len(out)-1]
		out[len(out)-1] = last[:len(last)-1] + "+"
	}
	// A wrapped line may start with ':' or '-' only where the text does.
	for i := range out {
		if out[i] != "" && (out[i][0] == ':' || out[i][0] == '-') {
			r.tl.n++
			out[i] = "." + out[i][1:]
		}
	}
	return dst
}

func (r *payRenderer) line(tag, v string) {
	r.b = append(r.b, ':')
	r.b = append(r.b, tag...)
	r.b = append(r.b, ':')
	r.b = append(r.b, v...)
	r.b = append(r.b, "\r\n"...)
}

func (r *payRenderer) field(tag string, lines []string) {
	for i, l := range lines {
		if i == 0 {
			r.line(tag, l)
			continue
		}
		r.b = append(r.b, l...)
		r.b = append(r.b, "\r\n"...)
	}
}

// sameBIC compares BICs with and without the XXX branch.
func sameBIC(a, b string) bool {
	// Compared in place: a BIC8 equals its BIC11 with branch XXX.
	switch {
	case a == "":
		return false
	case len(a) == 8 && len(b) == 11:
		return b[:8] == a && b[8:] == "XXX"
	case len(b) == 8 && len(a) == 11:
		return a[:8] == b && a[8:] == "XXX"
	}
	return a == b
}

func (r *payRenderer) headerBIC(h string, agent *payment.Agent, src string) string {
	if h != "" && looksLikeBIC(h) {
		return h
	}
	if agent != nil && looksLikeBIC(agent.BIC) {
		r.w.Add(payment.CodeHeaderDefaulted, r.path(src), 0, "no AppHdr BIC: block %s takes the agent's BIC %s", map[bool]string{true: "1", false: "2"}[src == "AppHdr/Fr"], agent.BIC)
		return agent.BIC
	}
	r.w.Add(payment.CodeHeaderDefaulted, r.path(src), 0, "no BIC for %s: the placeholder %s is used", src, DefaultBIC)
	return DefaultBIC
}

func (r *payRenderer) message(p *payment.Payment) (string, error) {
	mtType := strings.TrimSuffix(r.typ, "COV")
	if isCaseType(mtType) || p.Kind.Investigative() {
		if !isCaseType(mtType) {
			return "", &statement.ParseError{Message: r.no, Reason: "a " + string(p.Kind) + " (" + payment.MXType(p.Kind) + ") is not an MT" + r.typ + ": convert it to " + caseTarget(p.Kind)}
		}
		return r.caseMessage(p, mtType) // exceptions and investigations: pay_case.go
	}
	switch {
	case p.Kind == payment.Return && mtType != "103" && mtType != "202" && mtType != "205" || p.Kind == payment.Return && r.typ != mtType:
		return "", &statement.ParseError{Message: r.no, Field: "TxInf", Reason: "a payment return (pacs.004) is not an MT" + r.typ + ": convert it to MT103, MT202 or MT205"}
	case p.Kind == payment.Return:
	case p.Kind == payment.Status && (p.MT == r.typ || p.MT == "") && (mtType == "103" || mtType == "202" || mtType == "205"):
		// A reject read from an MT103/202/205 (/REJT/ in :72:) is written
		// back in its own type; a pacs.002 in the type asked for, when it
		// names the rejected transfer (rejectMessage).
	case mtType == "900" && p.Kind != payment.DebitConfirmation, mtType == "910" && p.Kind != payment.CreditConfirmation:
		return "", &statement.ParseError{Message: r.no, Field: "Ntry/CdtDbtInd", Reason: "MT" + mtType + " confirms a " + map[string]string{"900": "debit (DBIT)", "910": "credit (CRDT)"}[mtType] + ", the payment is " + string(p.Kind)}
	case (mtType == "199" || mtType == "299") != (p.Kind == payment.Status):
		if p.Kind == payment.Status {
			return "", &statement.ParseError{Message: r.no, Field: "TxInfAndSts", Reason: "a payment status report (pacs.002) is not an MT" + mtType + ": convert it to MT199 or MT299"}
		}
		return "", &statement.ParseError{Message: r.no, Field: "TxInfAndSts", Reason: "MT" + mtType + " is written from a payment status report (pacs.002) only"}
	case mtType != "900" && mtType != "910" && p.Kind.Confirmation():
		return "", &statement.ParseError{Message: r.no, Field: "Ntry", Reason: "a debit or credit confirmation (camt.054) is not an MT" + mtType + ": convert it to MT900 or MT910"}
	case mtType == "103" && p.Kind != payment.Customer:
		return "", &statement.ParseError{Message: r.no, Field: "CdtTrfTxInf", Reason: "a financial institution transfer (pacs.009) is not an MT103: convert it to MT202 or MT205"}
	case mtType != "103" && p.Kind == payment.Customer:
		return "", &statement.ParseError{Message: r.no, Field: "CdtTrfTxInf", Reason: "a customer credit transfer (pacs.008) is not an MT" + mtType + ": convert it to MT103"}
	case strings.HasSuffix(r.typ, "COV") && p.Kind != payment.Cover:
		return "", &statement.ParseError{Message: r.no, Field: "CdtTrfTxInf/UndrlygCstmrCdtTrf", Reason: "MT" + r.typ + " needs the underlying customer credit transfer of a cover payment"}
	}
	from, to := r.blocks(p, mtType)
	switch {
	case p.Kind == payment.Return:
		if err := r.returnMessage(p, mtType, from, to); err != nil {
			return "", err
		}
	case p.Kind == payment.Status && mtType != "199" && mtType != "299":
		if err := r.rejectMessage(p, mtType, from, to); err != nil {
			return "", err
		}
	case mtType == "103":
		if err := r.customer(p, from, to); err != nil {
			return "", err
		}
	case mtType == "900" || mtType == "910":
		if err := r.confirmation(p, mtType); err != nil {
			return "", err
		}
	case mtType == "199" || mtType == "299":
		if err := r.status(p, mtType); err != nil {
			return "", err
		}
	default:
		if err := r.institution(p, mtType, from, to); err != nil {
			return "", err
		}
	}
	r.b = append(r.b, "-}"...)
	return string(r.b), nil
}

// blocks starts the message in r.b: blocks 1 to 3 of an input message of
// type mtType and the opening of block 4. It returns the sender's and
// receiver's BICs written (or the placeholder).
func (r *payRenderer) blocks(p *payment.Payment, mtType string) (from, to string) {
	r.b = r.b[:0]
	from = r.headerBIC(p.Header.From, p.InstructingAgent, "AppHdr/Fr")
	to = r.headerBIC(p.Header.To, p.InstructedAgent, "AppHdr/To")
	r.b = append(r.b, "{1:F01"...)
	r.b = appendLTAddress(r.b, from)
	r.b = append(r.b, "0000000000}{2:I"...)
	r.b = append(r.b, mtType...)
	r.b = appendLTAddress(r.b, to)
	r.b = append(r.b, "N}"...)
	cov := p.Kind == payment.Cover
	if p.UETR != "" || p.ValidationFlag != "" || cov {
		r.b = append(r.b, "{3:"...)
		if cov {
			r.b = append(r.b, "{119:COV}"...)
		} else if f := p.ValidationFlag; mtType == "103" && (f == "STP" || f == "REMIT") {
			r.b = append(append(append(r.b, "{119:"...), f...), '}')
		}
		if p.UETR != "" {
			r.b = append(append(append(r.b, "{121:"...), p.UETR...), '}')
		}
		r.b = append(r.b, '}')
	}
	r.b = append(r.b, "{4:\r\n"...)
	return from, to
}

// customer writes the MT103 text block of p, field by field in the order
// the standard fixes; from and to are the sender and receiver BICs.
func (r *payRenderer) customer(p *payment.Payment, from, to string) error {
	r.reference20(p)
	op := p.BankOperationCode
	if op == "" {
		op = "CRED"
	}
	r.line("23B", op)
	var in instructions103
	r.serviceCodes(p, &in)
	r.creditorAgentCodes(p, &in)
	r.nextAgentCodes(p, &in)
	for _, c := range in.e23 {
		r.line("23E", c)
	}
	if p.Purpose != "" {
		if len(p.Purpose) == 3 {
			r.line("26T", r.x(p.Purpose))
		} else {
			r.w.Add(payment.CodeFieldDropped, r.path("Purp"), 0, "purpose %q is not a 3-character :26: transaction type code", clip(p.Purpose))
		}
	}
	if err := r.amounts103(p); err != nil {
		return err
	}
	r.exchangeRate(p.ExchangeRate, "XchgRate")
	if err := r.party("50", p.Debtor, "Dbtr", true); err != nil {
		return err
	}
	r.agents103(p, from, to)
	if err := r.party("59", p.Creditor, "Cdtr", false); err != nil {
		return err
	}
	r.remittance70(p)
	if err := r.charges71(p); err != nil {
		return err
	}
	r.field72(p, &in)
	r.regulatory(p.Regulatory, "RgltryRptg")
	return nil
}

// instructions103 collects what service levels, the category purpose and
// the instructions become in MT103: :23E: codes, and :72: lines.
type instructions103 struct {
	e23          []string // :23E: codes
	sl72         []string // service levels for /SVCLVL/
	catp72       string   // category purpose for /CATPURP/
	acc72, rec72 []string // /ACC/ and /REC/ (or coded) lines
}

// reference20 writes :20:, the instruction id, else the message id, else
// the business message id, else NONREF.
func (r *payRenderer) reference20(p *payment.Payment) {
	ref := p.InstructionID
	src := "PmtId/InstrId"
	if ref == "" {
		ref, src = p.MessageID, "GrpHdr/MsgId"
	}
	if ref == "" {
		ref, src = p.Header.BizMsgIdr, "AppHdr/BizMsgIdr"
	}
	if ref == "" {
		r.w.Add(payment.CodeFieldDefaulted, r.path(":20:"), 0, "no instruction id: NONREF is used")
		ref = "NONREF"
	}
	r.line("20", r.fit(r.x(ref), 16, src, ":20:"))
}

// serviceCodes: service level SDVA and category purposes INTC and CORT are
// :23E: codes; other service levels and category purposes go to :72:.
func (r *payRenderer) serviceCodes(p *payment.Payment, in *instructions103) {
	for _, sl := range p.ServiceLevels {
		if sl == "SDVA" {
			in.e23 = append(in.e23, "SDVA")
		} else {
			in.sl72 = append(in.sl72, sl)
		}
	}
	switch p.CategoryPurpose {
	case "":
	case "INTC", "CORT":
		in.e23 = append(in.e23, p.CategoryPurpose)
	default:
		in.catp72 = p.CategoryPurpose
	}
}

// creditorAgentCodes: instructions for the creditor agent CHQB, HOLD, PHOB
// and TELB are :23E: codes; other texts go to :72: as /ACC/, other codes
// are dropped.
func (r *payRenderer) creditorAgentCodes(p *payment.Payment, in *instructions103) {
	for _, ins := range p.InstructionsForCreditorAgent {
		switch ins.Code {
		case "CHQB", "HOLD", "PHOB", "TELB":
			in.e23 = append(in.e23, r.code23E(ins, "InstrForCdtrAgt"))
		default:
			if ins.Code != "" && ins.Text != "" {
				r.w.Add(payment.CodeFieldDropped, r.path("InstrForCdtrAgt/Cd"), 0, "instruction code %s has no MT103 code; its text is kept", clip(ins.Code))
			}
			if ins.Text != "" {
				in.acc72 = append(in.acc72, "/ACC/"+ins.Text)
			} else if ins.Code != "" {
				r.w.Add(payment.CodeFieldDropped, r.path("InstrForCdtrAgt/Cd"), 0, "instruction code %s has no MT103 code", clip(ins.Code))
			}
		}
	}
}

// nextAgentCodes: instructions for the next agent PHON, TELE, PHOI and
// TELI (pacs.008 carries them as "/CODE/info") are :23E: codes; other
// texts go to :72: as they are when coded, else as /REC/; other codes are
// dropped.
func (r *payRenderer) nextAgentCodes(p *payment.Payment, in *instructions103) {
	for _, ins := range p.InstructionsForNextAgent {
		if ins.Code == "" && len(ins.Text) >= 6 && ins.Text[0] == '/' && ins.Text[5] == '/' {
			switch c := ins.Text[1:5]; c {
			case "PHON", "TELE", "PHOI", "TELI":
				ins = payment.Instruction{Code: c, Text: ins.Text[6:]}
			}
		}
		switch ins.Code {
		case "PHON", "TELE", "PHOI", "TELI":
			in.e23 = append(in.e23, r.code23E(ins, "InstrForNxtAgt"))
		default:
			if ins.Code != "" && ins.Text != "" {
				r.w.Add(payment.CodeFieldDropped, r.path("InstrForNxtAgt/Cd"), 0, "instruction code %s has no MT103 code; its text is kept", clip(ins.Code))
			}
			switch {
			case ins.Text == "":
				if ins.Code != "" {
					r.w.Add(payment.CodeFieldDropped, r.path("InstrForNxtAgt/Cd"), 0, "instruction code %s has no MT103 code", clip(ins.Code))
				}
			case isCoded72(ins.Text):
				in.rec72 = append(in.rec72, ins.Text)
			default:
				in.rec72 = append(in.rec72, "/REC/"+ins.Text)
			}
		}
	}
}

// field32A writes :32A:: the settlement date, the currency and the amount.
func (r *payRenderer) field32A(p *payment.Payment) error {
	amt, err := r.amount(p.Amount, "32A")
	if err != nil {
		return err
	}
	r.line("32A", string(appendYYMMDD(nil, p.SettlementDate))+p.Amount.Currency+amt)
	return nil
}

// amounts103 writes :32A: (settlement date, currency, amount) and :33B:,
// the instructed amount; without InstdAmt the customer instructed the
// settlement amount, and CBPR+ translation writes it, as several MT103
// communities require 33B.
func (r *payRenderer) amounts103(p *payment.Payment) error {
	if err := r.field32A(p); err != nil {
		return err
	}
	instructed := p.InstructedAmount
	if instructed.Currency == "" {
		instructed = p.Amount
	}
	a33, err := r.amount(instructed, "33B")
	if err != nil {
		return err
	}
	r.line("33B", instructed.Currency+a33)
	return nil
}

// agentUnlessSender writes the agent a (options A or D) unless it is only
// the sender, whom the header names already.
func (r *payRenderer) agentUnlessSender(tag string, a *payment.Agent, from, src string) {
	if a != nil && !(a.Name == "" && a.Account == "" && a.ClearingMember == "" && sameBIC(a.BIC, from)) {
		r.agent(tag, a, src, "AD")
	}
}

// field53 writes :53B: with the settlement account, else :53a: with the
// sender's correspondent.
func (r *payRenderer) field53(p *payment.Payment) {
	if p.SettlementAccount != "" {
		r.field("53B", []string{"/" + r.fit(r.x(p.SettlementAccount), 34, "SttlmInf/SttlmAcct", ":53B:")})
	} else if p.SendersCorrespondent != nil {
		r.agent("53", p.SendersCorrespondent, "SttlmInf/InstgRmbrsmntAgt", "ABD")
	}
}

// agents103 writes :52a: to :57a:: the debtor agent unless it is only the
// sender, the settlement account or sender's correspondent, the receiver's
// correspondent, the third reimbursement agent, the intermediary, and the
// creditor agent unless it is only the receiver with no intermediary.
func (r *payRenderer) agents103(p *payment.Payment, from, to string) {
	r.agentUnlessSender("52", p.DebtorAgent, from, "DbtrAgt")
	r.field53(p)
	if p.ReceiversCorrespondent != nil {
		r.agent("54", p.ReceiversCorrespondent, "SttlmInf/InstdRmbrsmntAgt", "ABD")
	}
	if p.ThirdReimbursement != nil {
		r.agent("55", p.ThirdReimbursement, "SttlmInf/ThrdRmbrsmntAgt", "ABD")
	}
	if p.Intermediary != nil {
		r.agent("56", p.Intermediary, "IntrmyAgt1", "ACD")
	}
	if a := p.CreditorAgent; a != nil && !(a.Name == "" && a.Account == "" && a.ClearingMember == "" && sameBIC(a.BIC, to) && p.Intermediary == nil) {
		r.agent("57", a, "CdtrAgt", "ABCD")
	}
}

// remittance70 writes :70:: the end-to-end id as /ROC/ unless
// NOTPROVIDED, then the unstructured remittance, in at most four lines.
func (r *payRenderer) remittance70(p *payment.Payment) {
	var l70 []string
	if e := p.EndToEndID; e != "" && e != "NOTPROVIDED" {
		l70 = append(l70, "/ROC/"+r.fit(r.x(e), 30, "PmtId/EndToEndId", ":70: /ROC/"))
	}
	if rem := strings.Join(p.Remittance, " "); rem != "" {
		l70 = append(l70, r.wrap(r.x(rem), 35, 4-len(l70), "RmtInf/Ustrd", ":70:")...)
	}
	if len(l70) > 0 {
		r.field("70", l70)
	}
}

// charges71 writes :71A:, the sender's charges :71F: (BEN needs one, rule
// E15: a zero one is written) and the receiver's charges :71G:.
func (r *payRenderer) charges71(p *payment.Payment) error {
	r.chargeBearer(p.ChargeBearer, "ChrgBr")
	for _, c := range p.SenderCharges {
		a, err := r.amount(c, "71F")
		if err != nil {
			return err
		}
		r.line("71F", c.Currency+a)
	}
	if p.ChargeBearer == "CRED" && len(p.SenderCharges) == 0 {
		r.w.Add(payment.CodeFieldDefaulted, r.path("ChrgsInf"), 0, "BEN needs :71F: (rule E15): %s0, is written", p.Amount.Currency)
		r.line("71F", p.Amount.Currency+"0,")
	}
	if p.ReceiverCharges.Currency != "" {
		a, err := r.amount(p.ReceiverCharges, "71G")
		if err != nil {
			return err
		}
		r.line("71G", p.ReceiverCharges.Currency+a)
	}
	return nil
}

// field72 writes :72: in the order of the MX elements: /INS/, /SVCLVL/,
// /LOCINS/, /CATPURP/, /ACC/, /REC/, after the return lines r.ret.
func (r *payRenderer) field72(p *payment.Payment, in *instructions103) {
	var items []string
	if a := p.PreviousInstructingAgent; a != nil {
		if a.BIC != "" {
			items = append(items, "/INS/"+a.BIC)
		} else {
			r.w.Add(payment.CodeFieldDropped, r.path("PrvsInstgAgt1"), 0, "a previous instructing agent without a BIC has no MT103 field")
		}
	}
	for _, sl := range in.sl72 {
		items = append(items, "/SVCLVL/"+sl)
	}
	if p.LocalInstrument != "" {
		items = append(items, "/LOCINS/"+p.LocalInstrument)
	}
	if in.catp72 != "" {
		items = append(items, "/CATPURP/"+in.catp72)
	}
	items = append(items, in.acc72...)
	items = append(items, in.rec72...)
	items = append(r.ret, items...)
	if len(items) > 0 {
		r.field("72", r.lines72(items))
	}
}

// chargeBearer writes :71A: for ChrgBr (src its MX path): SLEV and none
// are SHA, with the warning that says so.
func (r *payRenderer) chargeBearer(cb, src string) {
	switch cb {
	case "DEBT":
		r.line("71A", "OUR")
	case "CRED":
		r.line("71A", "BEN")
	case "SHAR":
		r.line("71A", "SHA")
	case "SLEV":
		r.w.Add(payment.CodeCodeMapped, r.path(src), 0, "ChrgBr SLEV (following the service level) has no MT code: :71A: SHA")
		r.line("71A", "SHA")
	default:
		r.w.Add(payment.CodeFieldDefaulted, r.path(src), 0, "no charge bearer: :71A: SHA")
		r.line("71A", "SHA")
	}
}

// regulatory writes :77B: (3 x 35) from RgltryRptg/Dtls/Inf lines (src
// their MX path).
func (r *payRenderer) regulatory(lines []string, src string) {
	if len(lines) == 0 {
		return
	}
	var l77 []string
	for i, l := range lines {
		l77 = append(l77, r.wrap(r.x(l), 35, 3-len(l77), src+"/Dtls/Inf["+strconv.Itoa(i+1)+"]", ":77B:")...)
		if len(l77) >= 3 && i < len(lines)-1 {
			r.w.Add(payment.CodeTruncated, r.path(src), 0, "%s (%d lines) cut to 3 lines in :77B:", src, len(lines))
			break
		}
	}
	r.field("77B", l77)
}

// exchangeRate writes :36: (12 characters with the comma), cutting decimals
// that do not fit.
func (r *payRenderer) exchangeRate(v decimal.Decimal, src string) {
	if v.IsZero() {
		return
	}
	rate := string(appendDecimal(nil, v))
	if len(rate) > 12 {
		rate = string(appendDecimal(nil, v.Truncate(int32(max(0, 11-strings.IndexByte(rate, ','))))))
		r.w.Add(payment.CodeTruncated, r.path(src), 0, "XchgRate %s cut to %s in :36: (12 characters)", v.String(), rate)
	}
	r.line("36", rate)
}

// isCoded72 reports whether an instruction text already is a :72: item
// "/CODE/…" (an MT source's unknown code kept verbatim).
func isCoded72(s string) bool {
	if len(s) < 3 || s[0] != '/' {
		return false
	}
	i := strings.IndexByte(s[1:], '/')
	if i < 1 || i > 8 {
		return false
	}
	for _, c := range s[1 : i+1] {
		if (c < 'A' || c > 'Z') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

func (r *payRenderer) code23E(in payment.Instruction, src string) string {
	if in.Text == "" {
		return in.Code
	}
	return in.Code + "/" + r.fit(r.x(in.Text), 30, src+"/InstrInf", ":23E: "+in.Code)
}

// continuedLine cuts the next line of a text written as lines of width
// characters continued with "//" (so two fewer after the first line), and
// returns it with the rest. Readers drop a line's trailing spaces, so the
// next line starts with them.
func continuedLine(s string, width int, first bool) (line, rest string) {
	prefix := ""
	if !first {
		width, prefix = width-2, "//"
	}
	n := min(width, len(s))
	for n > 1 && n < len(s) && s[n-1] == ' ' {
		n--
	}
	return prefix + s[:n], s[n:]
}

// lines72 writes items as /CODE/text lines with //continuations, at most 6
// lines of 35.
func (r *payRenderer) lines72(items []string) []string {
	// A :72: that starts /RETN/ or /REJT/ makes an MT103, MT202 or MT205 a
	// return or a reject. A transfer's own narrative may start so (an MT200
	// carries any codes in :72:): it is dropped rather than written as the
	// return it would read back as.
	for r.ret == nil && len(items) > 0 && (strings.HasPrefix(items[0], "/RETN/") || strings.HasPrefix(items[0], "/REJT/")) {
		r.w.Add(payment.CodeFieldDropped, r.path("InstrForNxtAgt"), 0, ":72: item %s of a transfer would read as a return or a reject and was dropped", clip(items[0]))
		items = items[1:]
	}
	// out is written out by the caller before lines72 is called again.
	out := r.lines72Buf[:0]
	for i, it := range items {
		it = r.x(it)
		first := true
		for len(it) > 0 {
			if len(out) == 6 {
				src := "InstrForNxtAgt"
				if r.ret != nil {
					src = "RtrRsnInf"
				}
				r.w.Add(payment.CodeTruncated, r.path(src), 0, ":72: item %d of %d and what follows does not fit in 6 lines and was cut", i+1, len(items))
				last := out[5]
				if len(last) == 35 {
					last = last[:34]
				}
				out[5] = last + "+"
				return out
			}
			var line string
			line, it = continuedLine(it, 35, first)
			out = append(out, line)
			first = false
		}
	}
	return out
}

func (r *payRenderer) amount(a statement.Amount, tag string) (string, error) {
	if !payment.IsCurrency(a.Currency) {
		return "", &statement.ParseError{Message: r.no, Field: ":" + tag + ":", Reason: "currency " + clip(a.Currency) + " is not an ISO 4217 code"}
	}
	if a.Value.IsNegative() {
		return "", &statement.ParseError{Message: r.no, Field: ":" + tag + ":", Reason: "amount is negative"}
	}
	if -a.Value.Exponent() > int32(payment.MinorUnits(a.Currency)) && !a.Value.Equal(a.Value.Truncate(int32(payment.MinorUnits(a.Currency)))) {
		// Money is never rounded: an amount the currency cannot hold fails.
		return "", &statement.ParseError{Message: r.no, Field: ":" + tag + ":", Reason: "amount " + a.Value.String() + " has more decimals than " + a.Currency + " allows (" + strconv.Itoa(payment.MinorUnits(a.Currency)) + ")"}
	}
	s := string(appendDecimal(nil, a.Value))
	if len(s) > 15 {
		return "", &statement.ParseError{Message: r.no, Field: ":" + tag + ":", Reason: "amount " + a.Value.String() + " does not fit in 15 characters (15d)"}
	}
	return s, nil
}

// identifierLine is an agent's party identifier: "/account" or "//XX…".
func (r *payRenderer) identifierLine(a *payment.Agent, src string) string {
	if a.ClearingMember != "" {
		if code := clearingPrefix(a.ClearingSystem); code != "" {
			return "//" + code + r.fit(r.x(a.ClearingMember), 31, src+"/FinInstnId/ClrSysMmbId/MmbId", "party identifier")
		}
		if len(a.ClearingSystem) == 2 {
			return "//" + a.ClearingSystem + r.fit(r.x(a.ClearingMember), 31, src+"/FinInstnId/ClrSysMmbId/MmbId", "party identifier")
		}
		r.w.Add(payment.CodeFieldDropped, r.path(src+"/FinInstnId/ClrSysMmbId"), 0, "clearing system %q has no MT code", clip(a.ClearingSystem))
	}
	if a.Account != "" {
		return "/" + r.fit(r.x(a.Account), 34, src+"Acct/Id", "party identifier")
	}
	return ""
}

// agent writes an institution with the first option of opts that carries it.
func (r *payRenderer) agent(tag string, a *payment.Agent, src, opts string) {
	id := r.identifierLine(a, src)
	var lines []string
	if id != "" {
		lines = append(lines, id)
	}
	switch {
	case a.BIC != "" && strings.ContainsRune(opts, 'A'):
		if a.Name != "" || !a.Address.IsZero() {
			r.w.Add(payment.CodeFieldDropped, r.path(src+"/FinInstnId/Nm"), 0, "name and address beside the BIC have no place in :%sA:", tag)
		}
		// Written as field would write append(lines, a.BIC), without that slice.
		if id != "" {
			r.line(tag+"A", id)
			r.b = append(r.b, a.BIC...)
			r.b = append(r.b, "\r\n"...)
		} else {
			r.line(tag+"A", a.BIC)
		}
	case a.Name == "" && a.Address.IsZero() && id != "" && strings.ContainsRune(opts, 'C'):
		r.field(tag+"C", lines)
	case a.Name == "" && a.Address.IsZero() && id != "" && strings.ContainsRune(opts, 'B'):
		r.field(tag+"B", lines)
	default:
		name := a.Name
		if name == "" {
			r.w.Add(payment.CodeFieldDefaulted, r.path(src+"/FinInstnId/Nm"), 0, "option D needs a name: NOTPROVIDED is written")
			name = "NOTPROVIDED"
		}
		r.field(tag+"D", append(lines, r.nameAddress(name, a.Address, src+"/FinInstnId", ":"+tag+"D:")...))
	}
}

// nameAddress is the 4 x 35 name and address of options D and K.
func (r *payRenderer) nameAddress(name string, a payment.Address, src, field string) []string {
	name = r.x(name)
	if t := strings.TrimSpace(name); strings.HasPrefix(t, "/") {
		// A first line starting with '/' is read as an account, also
		// after spaces (a reader trims them).
		r.tl.n++
		name = "." + t[1:]
	}
	out := r.wrap(name, 35, 1, src+"/Nm", field)
	var lines []string
	flat := flatStreet(a)
	if flat != "" {
		lines = append(lines, flat)
	}
	lines = append(lines, a.Lines...)
	if a.Town != "" || a.Country != "" {
		if a.Country != "" && a.Town != "" {
			lines = append(lines, a.Country+"/"+a.Town)
		} else {
			lines = append(lines, strings.TrimSpace(a.Country+" "+a.Town))
		}
	}
	if flat != "" || a.PostCode != "" || a.District != "" {
		r.w.Add(payment.CodeAddressFlattened, r.path(src+"/PstlAdr"), 0, "structured address elements written as address lines of %s", field)
	}
	for i, l := range lines {
		if len(out) == 4 {
			r.w.Add(payment.CodeTruncated, r.path(src+"/PstlAdr"), 0, "PstlAdr (%d lines) cut to %d lines in %s", len(lines), i, field)
			break
		}
		wl := r.wrap(r.x(l), 35, 4-len(out), src+"/PstlAdr/AdrLine["+strconv.Itoa(i+1)+"]", field)
		if len(wl) > 1 {
			r.w.Add(payment.CodeAddressFlattened, r.path(src+"/PstlAdr/AdrLine["+strconv.Itoa(i+1)+"]"), 0, "an address line longer than 35 characters was split over %d lines of %s", len(wl), field)
		}
		out = append(out, wl...)
	}
	return out
}

// flatStreet writes the structured street elements MT has no subfield
// for: street, building, post code and subdivision.
func flatStreet(a payment.Address) string {
	var parts []string
	for _, s := range []string{a.Street, a.Building, a.PostCode, a.District} {
		if s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, " ")
}

// party writes :50a: (debtor) or :59a: (creditor).
func (r *payRenderer) party(tag string, p *payment.Party, src string, debtor bool) error {
	if p == nil {
		return &statement.ParseError{Message: r.no, Field: src, Reason: "the payment has no " + map[bool]string{true: "debtor", false: "creditor"}[debtor]}
	}
	acct := ""
	if p.Account != "" && p.Account != "NOTPROVIDED" {
		acct = r.fitAt(r.x(p.Account), 34, func() (string, string) { return src + "Acct/Id", ":" + tag + "a: account" })
	}
	switch {
	case p.Name == "" && p.BIC != "":
		r.open(tag, "A")
		if acct != "" {
			r.b = append(r.b, '/')
			r.text(acct)
		}
		r.text(p.BIC)
		return nil
	case p.Address.Structured():
		if p.BIC != "" {
			r.w.Add(payment.CodeFieldDropped, r.path(src+"/Id/OrgId/AnyBIC"), 0, "the BIC beside a name has no place in :%sF:", tag)
		}
		// The lines are written as they are made: the party identifier,
		// then numberedF's.
		r.open(tag, "F")
		ids := p.IDs
		switch {
		case acct != "":
			r.b = append(r.b, '/')
			r.text(acct)
		case debtor && len(ids) > 0:
			id := ids[0]
			ids = ids[1:]
			r.text(r.fit(r.x(id.Scheme+"/"+id.Issuer+"/"+id.Value), 35, src+"/Id/PrvtId/Othr", ":50F: party identifier"))
		case debtor:
			r.w.Add(payment.CodeFieldDefaulted, r.path(src+"Acct"), 0, ":50F: needs a party identifier: /NOTPROVIDED is written")
			r.text("/NOTPROVIDED")
		}
		r.numberedF(tag, p, ids, src, debtor)
		return nil
	}
	if p.BIC != "" {
		r.w.Add(payment.CodeFieldDropped, r.path(src+"/Id/OrgId/AnyBIC"), 0, "the BIC beside a name has no place in :%s:", tag)
	}
	if len(p.IDs) > 0 || !p.BirthDate.IsZero() {
		r.w.Add(payment.CodeFieldDropped, r.path(src+"/Id"), 0, "identifications of a party without a structured address have no place in :%s:", tag)
	}
	var lines []string
	if acct != "" {
		lines = append(lines, "/"+acct)
	}
	name := p.Name
	if name == "" {
		r.w.Add(payment.CodeFieldDefaulted, r.path(src+"/Nm"), 0, "no name: NOTPROVIDED is written")
		name = "NOTPROVIDED"
	}
	t := tag + "K"
	if !debtor {
		t = "59"
	}
	r.field(t, append(lines, r.nameAddress(name, p.Address, src, ":"+t+":")...))
	return nil
}

// open starts field :tag+option: in r.b; its lines follow, each written
// with text.
func (r *payRenderer) open(tag, option string) {
	r.b = append(r.b, ':')
	r.b = append(r.b, tag...)
	r.b = append(r.b, option...)
	r.b = append(r.b, ':')
}

// text ends a line of the field being written with v.
func (r *payRenderer) text(v string) {
	r.b = append(r.b, v...)
	r.b = append(r.b, "\r\n"...)
}

// numbered writes one numbered line of option F (n is "1/" to "7/").
func (r *payRenderer) numbered(n, v string) {
	r.b = append(r.b, n...)
	r.text(v)
}

// fieldF is ":50F:" or ":59F:" (tag "50" or "59") without joining them.
func fieldF(tag string) string {
	switch tag {
	case "50":
		return ":50F:"
	case "59":
		return ":59F:"
	}
	return ":" + tag + "F:"
}

// numberedF writes option F's lines: 1/ name, 2/ address, 3/ country and
// town, and for the debtor 4/ to 7/ (birth, identifiers); 4 lines at most.
// The names and address lines are kept in arrays on the stack and written
// with their numbers, not joined to them.
func (r *payRenderer) numberedF(tag string, p *payment.Party, ids []payment.PartyID, src string, debtor bool) {
	field := fieldF(tag)
	nm := p.Name
	if strings.TrimSpace(nm) == "" {
		r.w.Add(payment.CodeFieldDefaulted, r.path(src+"/Nm"), 0, "%s needs a name (1/): NOTPROVIDED is written", field)
		nm = "NOTPROVIDED"
	}
	var nameBuf [2]string
	name := r.wrapAt(nameBuf[:0], r.x(nm), 33, 2, func() (string, string) { return src + "/Nm", field })
	line3 := r.fitAt(r.x(p.Address.Country+"/"+p.Address.Town), 33, func() (string, string) { return src + "/PstlAdr/TwnNm", field + " 3/" })
	var addrBuf [4]string
	addr := addrBuf[:0]
	if flat := flatStreet(p.Address); flat != "" {
		addr = append(addr, flat)
		r.w.AddText(payment.CodeAddressFlattened, r.path(src+"/PstlAdr"), 0, "StrtNm, BldgNb, PstCd and CtrySubDvsn written as line 2/ of "+field)
	}
	addr = append(addr, p.Address.Lines...)
	var extra []string
	if debtor {
		if !p.BirthDate.IsZero() {
			extra = append(extra, "4/"+strings.ReplaceAll(p.BirthDate.String(), "-", ""))
			extra = append(extra, "5/"+r.fit(r.x(p.BirthCountry+"/"+p.BirthCity), 33, src+"/Id/PrvtId/DtAndPlcOfBirth", field+" 5/"))
		}
		for _, id := range ids {
			switch id.Scheme {
			case "NIDN":
				extra = append(extra, "7/"+r.fit(r.x(id.Issuer+"/"+id.Value), 33, src+"/Id/PrvtId/Othr/Id", field+" 7/"))
			case "CUST":
				extra = append(extra, "6/"+r.fit(r.x(id.Issuer+"/"+id.Value), 33, src+"/Id/PrvtId/Othr/Id", field+" 6/"))
			default:
				r.w.Add(payment.CodeFieldDropped, r.path(src+"/Id"), 0, "identification %s beside the party identifier has no :50F: line", clip(id.Scheme))
			}
		}
	} else if len(ids) > 0 || !p.BirthDate.IsZero() {
		r.w.Add(payment.CodeFieldDropped, r.path(src+"/Id"), 0, "identifications of the creditor have no :59F: line")
	}
	room := 4 - len(name) - 1 - len(extra)
	if room < 0 {
		r.w.Add(payment.CodeFieldDropped, r.path(src+"/Id"), 0, "birth and identification lines do not fit in %s beside the name and town", field)
		extra, room = nil, 4-len(name)-1
	}
	var a2Buf [4]string
	a2 := a2Buf[:0]
	for i, l := range addr {
		at := func() (string, string) { return src + "/PstlAdr/AdrLine[" + strconv.Itoa(i+1) + "]", field + " 2/" }
		n := len(a2)
		a2 = r.wrapAt(a2, r.x(l), 33, room-n, at)
		if len(a2)-n > 1 {
			src, _ := at()
			r.w.Add(payment.CodeAddressFlattened, r.path(src), 0, "an address line longer than 33 characters was split over %d lines 2/ of %s", len(a2)-n, field)
		}
		if len(a2) >= room && i < len(addr)-1 {
			r.w.Add(payment.CodeTruncated, r.path(src+"/PstlAdr"), 0, "PstlAdr (%d lines) cut to %d lines 2/ in %s", len(addr), len(a2), field)
			break
		}
	}
	for _, n := range name {
		r.numbered("1/", n)
	}
	for _, a := range a2 {
		r.numbered("2/", a)
	}
	r.numbered("3/", line3)
	for _, e := range extra {
		r.text(e)
	}
}
