package mt

import (
	"strings"

	"github.com/ledgerlane/platform/services/converter/payment"
	"github.com/ledgerlane/platform/services/converter/statement"
)

// Returns: an MT103, MT202 or MT205 whose :72: starts with /RETN/ returns
// an earlier payment, in the SWIFT return guidelines' form:
//
//	/RETN/nn           (nn: the field of the original that caused the return, 99: none)
//	/CODE/[info]       (the reason code, ISO ExternalReturnReason1Code)
//	/MREF/ref          (the original message's reference)
//	/TREF/ref          (the original transaction's end-to-end reference)
//	/TEXT/text         (free text)
//
// ParsePayments reads such messages as payment.Return; ParseReturns reads
// nothing else.

// ParseReturns reads every MT103, MT202 or MT205 in input as a return; a
// message whose :72: does not start with /RETN/ is refused.
func ParseReturns(input []byte, want string) ([]*payment.Payment, []statement.Warning, error) {
	return parseEach(input, func(p payParser) (*payment.Payment, error) { return p.parseReturn(want) })
}

// IsReturn reports whether an MT payment message's :72: starts with /RETN/.
func IsReturn(input []byte) bool {
	s := string(input[:min(len(input), detectWindow)])
	i := strings.Index(s, "\n:72:")
	return i >= 0 && strings.HasPrefix(s[i+5:], "/RETN/")
}

// hasReturn reports whether the message's :72: starts with /RETN/.
func (p *payParser) hasReturn() bool { return p.has72("/RETN/") }

// hasReject reports whether the message's :72: starts with /REJT/.
func (p *payParser) hasReject() bool { return p.has72("/REJT/") }

func (p *payParser) has72(prefix string) bool {
	for i := range p.m.fields {
		if f := &p.m.fields[i]; f.tag == "72" {
			return len(f.lines) > 0 && strings.HasPrefix(strings.TrimSpace(f.lines[0]), prefix)
		}
	}
	return false
}

// parseReject reads an MT103, MT202 or MT205 with /REJT/ in :72: (the SWIFT
// reject guidelines: the rejecting bank sends the funds back in the type of
// the rejected message) as a payment status report RJCT, pacs.002's
// meaning. The transfer's fields stay in the model, so that the message can
// be written back as it was; pacs.002 carries the amount and date
// (OrgnlTxRef) and reports the rest as dropped.
func (p *payParser) parseReject(want string) (*payment.Payment, error) {
	pay, err := p.parseTransferBack(want, "REJT")
	if err != nil {
		return nil, err
	}
	pay.Kind = payment.Status
	pay.TransactionStatus = "RJCT"
	pay.StatusReason, pay.StatusInfo = pay.ReturnReason, pay.ReturnInfo
	pay.ReturnReason, pay.ReturnInfo = "", nil
	// /MREF/ is the rejected message's reference: its message and
	// instruction id (an MT message holds one transaction).
	pay.OriginalMessageID, pay.InstructionID = pay.OriginalInstructionID, pay.OriginalInstructionID
	pay.OriginalMessageType = "MT" + p.typ
	return pay, nil
}

func (p *payParser) parseReturn(want string) (*payment.Payment, error) {
	return p.parseTransferBack(want, "RETN")
}

// parseTransferBack reads an MT103, MT202 or MT205 whose :72: starts with
// /code/ (RETN: a return, REJT: a reject; both guidelines share the
// layout) as a return: the transfer's fields, and the original's
// references and the reason from :72:.
func (p *payParser) parseTransferBack(want, code string) (*payment.Payment, error) {
	if p.typ == "" {
		if err := p.kind(want); err != nil {
			return nil, err
		}
	}
	if p.typ != "103" && p.typ != "202" && p.typ != "205" || p.cov {
		return nil, p.fail(nil, "MT%s is not a return type: a return is an MT103, MT202 or MT205 with /%s/ in :72:", clip(p.typ), code)
	}
	var f72 *finField
	rest := make([]finField, 0, len(p.m.fields))
	for i := range p.m.fields {
		f := p.m.fields[i]
		if f.tag == "72" && f72 == nil {
			f72 = &p.m.fields[i]
			continue
		}
		rest = append(rest, f)
	}
	if f72 == nil || len(f72.lines) == 0 || !strings.HasPrefix(strings.TrimSpace(f72.lines[0]), "/"+code+"/") {
		return nil, p.fail(f72, "MT%s carries no %s: :72: does not start with /%s/", p.typ, map[string]string{"RETN": "return", "REJT": "reject"}[code], code)
	}
	pay := &payment.Payment{MT: p.typ, Kind: payment.Customer}
	if p.typ != "103" {
		pay.Kind = payment.Institution
	}
	if err := p.header(pay); err != nil {
		return nil, err
	}
	if f := p.m.block3["119"]; f != "" {
		p.warn(payment.CodeValidationFlag, nil, "block 3 field 119 %s has no MX element", clip(f))
	}
	all := p.m.fields
	p.m.fields = rest
	var err error
	if p.typ == "103" {
		err = p.customer(pay, rest)
	} else {
		err = p.institution(pay)
	}
	p.m.fields = all
	if err != nil {
		return nil, err
	}
	// The message's own reference is the return's; the references of the
	// original come from :72: (and :21: of an MT202/205).
	related := ""
	if p.typ != "103" {
		related = pay.EndToEndID
	}
	pay.Kind = payment.Return
	pay.InstructionID = ""
	pay.EndToEndID = ""
	if err := p.returnLines(pay, f72); err != nil {
		return nil, err
	}
	switch {
	case pay.EndToEndID == "":
		pay.EndToEndID = related
	case related != "" && related != pay.EndToEndID:
		p.warn(payment.CodeFieldDropped, f72, "related reference :21: %s differs from /TREF/ %s; /TREF/ is the original end-to-end id", clip(related), clip(pay.EndToEndID))
	}
	return pay, nil
}

// returnLines reads the :72: of a return.
func (p *payParser) returnLines(pay *payment.Payment, f *finField) error {
	items := codedItems(f.lines, strings.TrimSpace)
	pay.ReturnField = strings.TrimSpace(items[0].text)
	if t := pay.ReturnField; !(len(t) == 2 && allDigits(t)) {
		p.warn(payment.CodeNonstandard, f, "/RETN/%s does not name a field (2 digits, or 99)", clip(t))
	}
	for i, it := range items[1:] {
		switch {
		case it.code == "MREF":
			pay.OriginalInstructionID = strings.TrimSpace(it.text)
		case it.code == "TREF":
			pay.EndToEndID = strings.TrimSpace(it.text)
		case it.code == "TEXT":
			pay.ReturnInfo = append(pay.ReturnInfo, it.text)
		case i == 0 && reasonItem(it, &pay.ReturnReason, &pay.ReturnInfo):
		default:
			p.warn(payment.CodeFieldDropped, f, ":72: line /%s/ is not a return line this converter maps (reason code, /MREF/, /TREF/, /TEXT/)", clip(it.code))
		}
	}
	if pay.ReturnReason == "" {
		p.warn(payment.CodeNonstandard, f, ":72: has no reason code line (/CODE/) after /RETN/")
	}
	return nil
}

// ret72 lists the :72: items of a return.
func (r *payRenderer) ret72(p *payment.Payment) []string {
	field := p.ReturnField
	if len(field) != 2 || !allDigits(field) {
		field = "99"
	}
	code := "RETN"
	if r.reject {
		code = "REJT"
	}
	// The items are written one after the other into one buffer that
	// becomes one string, which they are cut from: a concatenation per item
	// was most of what a return's :72: allocated (issue 29).
	var buf [256]byte
	var endBuf [8]int
	b, ends := buf[:0], endBuf[:0]
	b = append(append(append(append(b, '/'), code...), '/'), field...)
	ends = append(ends, len(b))
	reason := p.ReturnReason
	if reason == "" {
		r.w.Add(payment.CodeFieldDefaulted, r.path("RtrRsnInf/Rsn/Cd"), 0, "no return reason code: /NARR/ is written")
		reason = "NARR"
	}
	info := p.ReturnInfo
	b = append(append(append(b, '/'), r.x(reason)...), '/')
	if len(info) > 0 {
		b = append(b, info[0]...) // wrapped with // continuations by lines72, as /TEXT/ lines are
		info = info[1:]
	}
	ends = append(ends, len(b))
	if m := firstNonEmpty(p.OriginalInstructionID, p.OriginalMessageID); m != "" {
		src := "OrgnlInstrId"
		if p.OriginalInstructionID == "" {
			src = "OrgnlGrpInf/OrgnlMsgId"
		}
		b = append(append(b, "/MREF/"...), r.fit(r.x(m), 16, src, ":72: /MREF/")...)
		ends = append(ends, len(b))
		if p.OriginalInstructionID != "" && p.OriginalMessageID != "" && p.OriginalMessageID != p.OriginalInstructionID {
			r.w.Add(payment.CodeFieldDropped, r.path("OrgnlGrpInf/OrgnlMsgId"), 0, "original message id %s has no MT field beside /MREF/ %s", clip(p.OriginalMessageID), clip(p.OriginalInstructionID))
		}
	}
	if p.OriginalMessageType != "" {
		r.w.AddText(payment.CodeFieldDropped, r.path("OrgnlGrpInf/OrgnlMsgNmId"), 0, "original message name "+clip(p.OriginalMessageType)+" has no MT field")
	}
	if p.EndToEndID != "" {
		b = append(append(b, "/TREF/"...), r.fit(r.x(p.EndToEndID), 16, "OrgnlEndToEndId", ":72: /TREF/")...)
		ends = append(ends, len(b))
	}
	for _, t := range info {
		b = append(append(b, "/TEXT/"...), t...)
		ends = append(ends, len(b))
	}
	all := string(b)
	items, start := r.retBuf[:0], 0
	for _, end := range ends {
		items = append(items, all[start:end])
		start = end
	}
	return items
}

// returnMessage writes the block 4 of an MT103, MT202 or MT205 return: the
// transfer's fields with :72: carrying /RETN/.
func (r *payRenderer) returnMessage(p *payment.Payment, mtType, from, to string) error {
	c := *p
	// The references are cut here so that the evidence names their MX
	// elements in a pacs.004.
	if ref, src := p.MessageID, "GrpHdr/MsgId"; ref != "" || p.Header.BizMsgIdr != "" {
		if ref == "" {
			ref, src = p.Header.BizMsgIdr, "AppHdr/BizMsgIdr"
		}
		c.InstructionID = r.fit(r.x(ref), 16, src, ":20:")
	}
	c.MessageID = c.InstructionID
	if mtType != "103" && p.EndToEndID != "" {
		c.EndToEndID = r.fit(r.x(p.EndToEndID), 16, "OrgnlEndToEndId", ":21:")
	}
	c.PreviousInstructingAgent = nil
	c.ServiceLevels, c.LocalInstrument, c.CategoryPurpose, c.Purpose = nil, "", "", ""
	c.InstructionsForCreditorAgent, c.InstructionsForNextAgent, c.Remittance, c.Regulatory = nil, nil, nil, nil
	r.ret = r.ret72(p)
	defer func() { r.ret = nil }()
	if mtType == "103" {
		c.Debtor, c.Creditor = r.partyOf(p.Debtor, p.DebtorFI, "Dbtr", "50"), r.partyOf(p.Creditor, p.CreditorFI, "Cdtr", "59")
		if c.Debtor == nil || c.Creditor == nil {
			return r.fail("TxInf/RtrChain", "the return chain has no debtor or creditor: an MT103 return needs them for :50a: and :59a:; convert it to MT202")
		}
		c.Kind = payment.Customer
		c.EndToEndID = "" // /TREF/ carries it
		return r.customer(&c, from, to)
	}
	c.Kind = payment.Institution
	if len(p.SenderCharges) > 0 || p.ReceiverCharges.Currency != "" {
		r.w.Add(payment.CodeFieldDropped, r.path("TxInf/ChrgsInf"), 0, "MT%s has no charges field (:71F:/:71G: are MT103's)", mtType)
	}
	if c.DebtorFI == nil && p.Debtor != nil {
		if p.Debtor.BIC != "" {
			c.DebtorFI = &payment.Agent{BIC: p.Debtor.BIC}
		}
		r.w.Add(payment.CodeFieldDropped, r.path("TxInf/RtrChain/Dbtr/Pty"), 0, "the return chain's debtor is a party, which MT%s has no field for (only its BIC, as :52A:)", mtType)
	}
	if c.CreditorFI == nil && p.Creditor != nil {
		if p.Creditor.BIC != "" {
			c.CreditorFI = &payment.Agent{BIC: p.Creditor.BIC}
		}
		r.w.Add(payment.CodeFieldDropped, r.path("TxInf/RtrChain/Cdtr/Pty"), 0, "the return chain's creditor is a party, which MT%s has no field for (only its BIC, as :58A:)", mtType)
	}
	return r.institution(&c, mtType, from, to)
}

// rejectMessage writes the block 4 of an MT103, MT202 or MT205 reject
// (/REJT/ in :72:) read from one: the transfer's fields with the status
// report's reason and references in the return guidelines' layout.
func (r *payRenderer) rejectMessage(p *payment.Payment, mtType, from, to string) error {
	// A pacs.002 names the rejected funds and parties in OrgnlTxRef, when
	// it does; the reject moves them back, so they are required.
	if p.TransactionStatus != "RJCT" {
		return r.fail("TxInfAndSts/TxSts", "only a rejection (RJCT) is an MT"+mtType+" (/REJT/ in :72:); the status is "+clip(p.TransactionStatus)+": convert it to MT199 or MT299")
	}
	if p.Amount.Currency == "" || p.SettlementDate.IsZero() {
		return r.fail("TxInfAndSts/OrgnlTxRef/IntrBkSttlmAmt", "the status report does not name the rejected funds (OrgnlTxRef/IntrBkSttlmAmt and IntrBkSttlmDt), which an MT"+mtType+" reject sends back in :32A:: convert it to MT199 or MT299")
	}
	switch {
	case mtType == "103" && (p.Debtor == nil && p.DebtorFI == nil || p.Creditor == nil && p.CreditorFI == nil):
		return r.fail("TxInfAndSts/OrgnlTxRef", "the status report does not name the rejected transfer's debtor and creditor (OrgnlTxRef/Dbtr, Cdtr), which an MT103 reject needs for :50a: and :59a:: convert it to MT199")
	case mtType != "103" && p.Creditor == nil && p.CreditorFI == nil:
		return r.fail("TxInfAndSts/OrgnlTxRef/Cdtr", "the status report does not name the rejected transfer's creditor (OrgnlTxRef/Cdtr), which an MT"+mtType+" reject needs for :58a:: convert it to MT299")
	}
	c := *p
	c.Kind = payment.Return
	c.ReturnReason, c.ReturnInfo = p.StatusReason, p.StatusInfo
	c.OriginalInstructionID, c.OriginalMessageID = firstNonEmpty(p.OriginalMessageID, p.InstructionID), ""
	if p.OriginalMessageType != "" && p.OriginalMessageType != "MT"+mtType {
		r.w.Add(payment.CodeFieldDropped, r.path("OrgnlGrpInf/OrgnlMsgNmId"), 0, "the rejected message's type %s is not MT%s", clip(p.OriginalMessageType), mtType)
	}
	c.OriginalMessageType = ""
	r.reject = true
	defer func() { r.reject = false }()
	return r.returnMessage(&c, mtType, from, to)
}

// RenderReturns writes each return as an MT103, MT202 or MT205 with /RETN/
// in :72:.
func RenderReturns(typ string, ps []*payment.Payment, opts statement.Options) ([]string, []statement.Warning, error) {
	for i, p := range ps {
		if p.Kind != payment.Return {
			return nil, nil, &statement.ParseError{Message: i + 1, Reason: "a " + string(p.Kind) + " payment is not a return: convert it to " + payment.MXType(p.Kind)}
		}
	}
	return RenderPayments(typ, ps, opts)
}

// partyOf is the MT103 party of a return chain's debtor or creditor: the
// party, or an agent written with option A (its BIC) or its name.
func (r *payRenderer) partyOf(pt *payment.Party, ag *payment.Agent, name, tag string) *payment.Party {
	if pt != nil || ag == nil {
		return pt
	}
	r.w.Add(payment.CodeCodeMapped, r.path("TxInf/RtrChain/"+name+"/Agt"), 0, "the return chain's %s is an agent: written as the party :%sa: with its BIC and name", name, tag)
	return &payment.Party{BIC: ag.BIC, Name: ag.Name, Address: ag.Address}
}
