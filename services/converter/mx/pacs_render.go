package mx

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ledgerlane/platform/services/converter/bankid"
	"github.com/ledgerlane/platform/services/converter/payment"
	"github.com/ledgerlane/platform/services/converter/statement"
)

// Business application header written on every payment message.
const (
	headVersion = "head.001.001.02"
	bizSvc      = "swift.cbprplus.02"
	bizSvcCov   = "swift.cbprplus.cov.02"
	nsEnvelope  = "urn:swift:xsd:envelope"
)

// RenderPayments writes each payment as one message: an Envelope holding
// the head.001.001.02 AppHdr and the pacs Document, as CBPR+ exchanges them.
func RenderPayments(ps []*payment.Payment, typ, version string) ([]string, []statement.Warning, error) {
	if typ == typePacs2 && version != typ+".001.10" || typ != typePacs2 && version != typ+".001.08" || typ != typePacs8 && typ != typePacs9 && typ != typeCamt54 && typ != typePacs2 {
		return nil, nil, fmt.Errorf("unsupported %s version %q", typ, version)
	}
	return renderEach(ps, typ, version, func(p *payment.Payment) string {
		switch {
		case p.Kind == payment.Return:
			return "a payment return (MT" + p.MT + " with /RETN/) is not a " + typ + ": convert it to pacs.004"
		case typ == typePacs2 && p.Kind != payment.Status:
			return fmt.Sprintf("a %s payment is not a status report (pacs.002): convert it to %s", p.Kind, payment.MXType(p.Kind))
		case typ != typePacs2 && p.Kind == payment.Status:
			return "a payment status report (MT199/MT299 /REJT/) is not a " + typ + ": convert it to pacs.002"
		case typ == typeCamt54 && !p.Kind.Confirmation():
			return fmt.Sprintf("a %s transfer is not a camt.054 confirmation: convert it to %s", p.Kind, strings.ToLower(payment.MXType(p.Kind)))
		case typ != typeCamt54 && p.Kind.Confirmation():
			return "a debit or credit confirmation (MT900/MT910) is not a " + typ + ": convert it to camt.054"
		case typ == typePacs8 && p.Kind != payment.Customer:
			return "a financial institution transfer (MT" + p.MT + ") is not a pacs.008: convert it to pacs.009"
		case typ == typePacs9 && p.Kind == payment.Customer:
			return "a customer credit transfer (MT103) is not a pacs.009: convert it to pacs.008"
		}
		return ""
	})
}

// renderEach writes each payment as one message of typ at version, after
// refuse has said nothing against it (else its reason is the 400).
func renderEach(ps []*payment.Payment, typ, version string, refuse func(*payment.Payment) string) ([]string, []statement.Warning, error) {
	r := &pacsRenderer{version: version, typ: typ, warn: &payment.Warner{}}
	out := make([]string, 0, len(ps))
	for i, p := range ps {
		if why := refuse(p); why != "" {
			return nil, nil, &statement.ParseError{Message: i + 1, Reason: why}
		}
		r.no = i + 1
		doc, err := r.message(p)
		if err != nil {
			return nil, nil, err
		}
		out = append(out, doc)
	}
	return out, r.warn.Result(), nil
}

type pacsRenderer struct {
	w       xmlWriter
	version string
	typ     string
	warn    *payment.Warner
	no      int
	num     [64]byte
}

func (r *pacsRenderer) path(rel string) string {
	if r.no > 1 {
		return fmt.Sprintf("message %d, %s", r.no, rel)
	}
	return rel
}

// text fits s into a MaxNText element, reporting a cut with both lengths.
func (r *pacsRenderer) text(s string, max int, rel string) string {
	s = strings.TrimSpace(s)
	if len(s) <= max || utf8.RuneCountInString(s) <= max {
		return s
	}
	n := 0
	for i := range s {
		if n == max {
			r.warn.Add(payment.CodeTruncated, r.path(rel), 0, "%s (%d characters) cut to %d", rel, utf8.RuneCountInString(s), max)
			return strings.TrimSpace(s[:i])
		}
		n++
	}
	return s
}

func (r *pacsRenderer) leaf(name, s string, max int, rel string) {
	if s = r.text(s, max, rel); s != "" {
		r.w.leaf(name, s)
	}
}

// leafAt is leaf for the element parent/name (parent/name[index] when
// index > 0), whose path is built only when a cut is reported: most values
// fit, and a path per written element was a concatenation or a Sprintf
// each (issue 30).
func (r *pacsRenderer) leafAt(name, s string, max int, parent string, index int) {
	if s = strings.TrimSpace(s); len(s) > max && utf8.RuneCountInString(s) > max {
		rel := parent + "/" + name
		if index > 0 {
			rel += "[" + strconv.Itoa(index) + "]"
		}
		s = r.text(s, max, rel)
	}
	if s != "" {
		r.w.leaf(name, s)
	}
}

// appendOffsetTime appends t as 2006-01-02T15:04:05-07:00. It is written
// field by field: every payment document has two or three of them, and
// time.AppendFormat reads its layout anew each time (a twentieth of an MT103
// → pacs.008 conversion). A year without four digits is left to AppendFormat.
func appendOffsetTime(b []byte, t time.Time) []byte {
	year, month, day := t.Date()
	if year < 1 || year > 9999 {
		return t.Truncate(time.Second).AppendFormat(b, offsetTimeLayout)
	}
	hour, minute, sec := t.Clock()
	b = appendDigits(b, year, 4)
	b = append(b, '-')
	b = appendDigits(b, int(month), 2)
	b = append(b, '-')
	b = appendDigits(b, day, 2)
	b = append(b, 'T')
	b = appendDigits(b, hour, 2)
	b = append(b, ':')
	b = appendDigits(b, minute, 2)
	b = append(b, ':')
	b = appendDigits(b, sec, 2)
	// As AppendFormat's -07:00: whole minutes, the sign of those.
	_, offset := t.Zone()
	zone := offset / 60
	if zone < 0 {
		b = append(b, '-')
		zone = -zone
	} else {
		b = append(b, '+')
	}
	b = appendDigits(b, zone/60, 2)
	b = append(b, ':')
	return appendDigits(b, zone%60, 2)
}

const offsetTimeLayout = "2006-01-02T15:04:05-07:00"

// appendDigits appends n (not negative) with at least width digits.
func appendDigits(b []byte, n, width int) []byte {
	var d [20]byte
	i := len(d)
	for n >= 10 || width > 1 {
		i--
		d[i] = byte('0' + n%10)
		n /= 10
		width--
	}
	i--
	d[i] = byte('0' + n)
	return append(b, d[i:]...)
}

// message writes p as one document. The document is built in a pooled
// staging buffer and copied once into a string of its exact size: a fresh
// 4 KiB buffer per message, and a result grown past 4 KiB, were the largest
// allocations of an MX conversion (issue 30).
func (r *pacsRenderer) message(p *payment.Payment) (string, error) {
	var doc string
	err := r.w.withStaging(func() error {
		var err error
		doc, err = r.document(p)
		return err
	})
	return doc, err
}

// document is message inside the staging buffer.
func (r *pacsRenderer) document(p *payment.Payment) (string, error) {
	w := &r.w
	w.out = strings.Builder{}
	created := p.Header.CreatedAt
	if created.IsZero() {
		created = p.CreatedAt
	}
	if created.IsZero() {
		created = now().UTC()
	}
	from, to := p.Header.From, p.Header.To
	if from == "" && p.InstructingAgent != nil {
		from = p.InstructingAgent.BIC
	}
	if to == "" && p.InstructedAgent != nil {
		to = p.InstructedAgent.BIC
	}
	ref := firstOf(p.Header.BizMsgIdr, firstOf(p.MessageID, p.InstructionID))
	if ref == "" {
		ref = "NONREF"
		r.warn.Add(payment.CodeFieldDefaulted, r.path("AppHdr/BizMsgIdr"), 0, "no message reference: NONREF is used")
	}
	w.b = append(w.b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Envelope xmlns=\""+nsEnvelope+"\">"...)
	w.depth = 1
	w.set(append(appendIndent(w.b, 1), "<AppHdr xmlns=\""+nsPrefix+headVersion+"\">"...))
	w.depth = 2
	r.headerParty("Fr", from, "AppHdr/Fr")
	r.headerParty("To", to, "AppHdr/To")
	r.leaf("BizMsgIdr", ref, 35, "AppHdr/BizMsgIdr")
	w.leaf("MsgDefIdr", r.version)
	switch p.Kind {
	case payment.Cover:
		w.leaf("BizSvc", bizSvcCov)
	case payment.ChargesNotification, payment.ChargesRequest:
		w.leaf("BizSvc", bizSvcCharges)
	default:
		w.leaf("BizSvc", bizSvc)
	}
	w.rawLeaf("CreDt", appendOffsetTime(r.num[:0], created))
	w.close("AppHdr")
	b := append(appendIndent(w.b, 1), "<Document xmlns=\""+nsPrefix...)
	w.set(append(append(b, r.version...), "\">"...))
	w.depth = 2
	if r.typ == typeCamt54 || r.typ == typePacs2 || r.typ == typePacs4 || isCashType(r.typ) || isCaseType(r.typ) || isBatchType(r.typ) {
		var err error
		switch {
		case isBatchType(r.typ):
			err = r.batch(p, ref, string(appendOffsetTime(nil, created)), from, to) // batch.go
		case isCashType(r.typ):
			err = r.cash(p, ref, string(appendOffsetTime(nil, created)), from, to)
		case isCaseType(r.typ):
			err = r.caseDocument(p, ref, string(appendOffsetTime(nil, created)), from, to) // camt_case.go
		case r.typ == typeCamt54:
			err = r.camt054(p, ref, string(appendOffsetTime(nil, created)))
		case r.typ == typePacs4:
			err = r.pacs004(p, ref, string(appendOffsetTime(nil, created)), from, to)
		default:
			err = r.pacs002(p, ref, string(appendOffsetTime(nil, created)), from, to)
		}
		if err != nil {
			return "", err
		}
		return r.endDocument(), nil
	}
	root := "FIToFICstmrCdtTrf"
	if r.typ == typePacs9 {
		root = "FICdtTrf"
	}
	w.open(root)
	if err := r.groupHeader(p, ref, created); err != nil {
		return "", err
	}
	var err error
	if r.typ == typePacs9 {
		err = r.fiTransaction(p, from, to)
	} else {
		err = r.transaction(p, from, to)
	}
	if err != nil {
		return "", err
	}
	w.close(root)
	return r.endDocument(), nil
}

// endDocument closes the Document and the Envelope and returns the message.
func (r *pacsRenderer) endDocument() string {
	w := &r.w
	w.close("Document")
	w.depth = 0
	w.b = append(w.b, "\n</Envelope>\n"...)
	w.out.Grow(len(w.b))
	w.flush()
	return w.out.String()
}

func (r *pacsRenderer) headerParty(name, bic, rel string) {
	w := &r.w
	w.open(name)
	w.open("FIId")
	w.open("FinInstnId")
	if payment.IsBIC(bic) {
		w.leaf("BICFI", bic)
	} else {
		r.warn.Add(payment.CodeHeaderDefaulted, r.path(rel), 0, "no BIC for %s (MT blocks 1/2 or the agents): FinInstnId/Nm NOTPROVIDED", rel)
		w.leaf("Nm", "NOTPROVIDED")
	}
	w.close("FinInstnId")
	w.close("FIId")
	w.close(name)
}

func (r *pacsRenderer) groupHeader(p *payment.Payment, ref string, created time.Time) error {
	w := &r.w
	w.open("GrpHdr")
	r.leaf("MsgId", firstOf(p.MessageID, ref), 35, "GrpHdr/MsgId")
	w.rawLeaf("CreDtTm", appendOffsetTime(r.num[:0], created))
	w.leaf("NbOfTxs", "1")
	r.settlementInfo(p)
	w.close("GrpHdr")
	return nil
}

// openGroupHeader opens GrpHdr and writes its MsgId and CreDtTm.
func (r *pacsRenderer) openGroupHeader(msgID, created string) {
	r.w.open("GrpHdr")
	r.leaf("MsgId", msgID, 35, "GrpHdr/MsgId")
	r.w.rawLeaf("CreDtTm", []byte(created))
}

// settlementInfo writes a GrpHdr's SttlmInf: the method (INDA, or COVE
// when there is a correspondent, unless the payment names one), the
// settlement account and the reimbursement agents.
func (r *pacsRenderer) settlementInfo(p *payment.Payment) {
	w := &r.w
	w.open("SttlmInf")
	m := p.SettlementMethod
	if m == "" {
		m = "INDA"
		if p.SendersCorrespondent != nil || p.ReceiversCorrespondent != nil {
			m = "COVE"
		}
	}
	w.leaf("SttlmMtd", m)
	if p.SettlementAccount != "" {
		r.account("SttlmAcct", p.SettlementAccount, "GrpHdr/SttlmInf/SttlmAcct")
	}
	r.agentWithAccount("InstgRmbrsmntAgt", p.SendersCorrespondent, "GrpHdr/SttlmInf/InstgRmbrsmntAgt")
	r.agentWithAccount("InstdRmbrsmntAgt", p.ReceiversCorrespondent, "GrpHdr/SttlmInf/InstdRmbrsmntAgt")
	r.agentWithAccount("ThrdRmbrsmntAgt", p.ThirdReimbursement, "GrpHdr/SttlmInf/ThrdRmbrsmntAgt")
	w.close("SttlmInf")
}

func (r *pacsRenderer) amount(name string, a statement.Amount, rel string) error {
	if !payment.IsCurrency(a.Currency) {
		return &statement.ParseError{Message: r.no, Field: rel, Reason: fmt.Sprintf("currency %q is not an ISO 4217 code", clip(a.Currency))}
	}
	s, rounded := appendAmount(r.num[:0], a.Value)
	if rounded {
		return &statement.ParseError{Message: r.no, Field: rel, Reason: "amount has more than 5 decimals"}
	}
	r.w.amt(name, a.Currency, s)
	return nil
}

// codeOrPrtry writes a choice of Cd (an external code of 1 to 4
// characters) or Prtry (Max35Text).
func (r *pacsRenderer) codeOrPrtry(name, v, rel string) {
	r.codeOrPrtryN(name, v, 4, rel)
}

// originalTxIDs writes what identifies the transaction a status or return
// is about: OrgnlInstrId (instrID, whose path is instrRel), OrgnlEndToEndId
// (e2eRel) and OrgnlUETR.
func (r *pacsRenderer) originalTxIDs(p *payment.Payment, instrID, instrRel, e2eRel string) {
	r.leaf("OrgnlInstrId", instrID, 35, instrRel)
	r.leaf("OrgnlEndToEndId", p.EndToEndID, 35, e2eRel)
	if p.UETR != "" {
		r.w.leaf("OrgnlUETR", p.UETR)
	}
}

// reasonInfo writes the inside of a status, return or cancellation reason
// element whose path is rel: Rsn (code or Prtry) and one AddtlInf each.
func (r *pacsRenderer) reasonInfo(reason string, info []string, rel string) {
	if reason != "" {
		r.codeOrPrtry("Rsn", reason, rel+"/Rsn")
	}
	for i, s := range info {
		r.leafAt("AddtlInf", s, 105, rel, i+1)
	}
}

// codeOrPrtryN writes a choice of Cd (a code of up to maxCd upper-case
// letters and digits) or Prtry (Max35Text).
func (r *pacsRenderer) codeOrPrtryN(name, v string, maxCd int, rel string) {
	w := &r.w
	w.open(name)
	if len(v) <= maxCd && isUpperAlnum(v) {
		w.leaf("Cd", v)
	} else {
		r.leaf("Prtry", v, 35, rel+"/Prtry")
	}
	w.close(name)
}

func isUpperAlnum(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < 'A' || c > 'Z') && (c < '0' || c > '9') {
			return false
		}
	}
	return s != ""
}

// transaction writes one CdtTrfTxInf in the element order of pacs.008:
// ids, payment type, amounts, charges, agents and parties, instructions,
// then purpose, regulatory reporting and remittance.
func (r *pacsRenderer) transaction(p *payment.Payment, from, to string) error {
	w := &r.w
	w.open("CdtTrfTxInf")
	r.paymentID(p, ":70: /ROC/ reference")
	r.paymentType(p, "CdtTrfTxInf/PmtTpInf")
	if err := r.amounts(p, "IntrBkSttlmAmt", "CdtTrfTxInf/IntrBkSttlmAmt", "InstdAmt", "CdtTrfTxInf/InstdAmt", "CdtTrfTxInf/XchgRate"); err != nil {
		return err
	}
	if err := r.txCharges(p, from, to); err != nil {
		return err
	}
	r.txAgents(p, from, to)
	r.txInstructions(p)
	r.purpose(p)
	r.regulatory(p.Regulatory, "CdtTrfTxInf/RgltryRptg")
	r.remittance(p.Remittance, "CdtTrfTxInf/RmtInf")
	w.close("CdtTrfTxInf")
	return nil
}

// paymentID writes the PmtId of a CdtTrfTxInf: InstrId, EndToEndId
// (NOTPROVIDED when there is none, saying the MT had no e2eSource) and UETR
// (generated when there is none).
func (r *pacsRenderer) paymentID(p *payment.Payment, e2eSource string) {
	w := &r.w
	w.open("PmtId")
	r.leaf("InstrId", p.InstructionID, 35, "CdtTrfTxInf/PmtId/InstrId")
	r.endToEnd(p.EndToEndID, e2eSource, "CdtTrfTxInf/PmtId/EndToEndId")
	r.uetr(p.UETR, "CdtTrfTxInf/PmtId/UETR")
	w.close("PmtId")
}

// amounts writes the settlement amount (element sttlm), IntrBkSttlmDt, the
// instructed amount (element instd) and XchgRate, cut to what BaseOneRate
// holds (11 digits, 10 decimals); each *Rel is its element's path.
func (r *pacsRenderer) amounts(p *payment.Payment, sttlm, sttlmRel, instd, instdRel, rateRel string) error {
	w := &r.w
	if err := r.amount(sttlm, p.Amount, sttlmRel); err != nil {
		return err
	}
	w.rawLeaf("IntrBkSttlmDt", p.SettlementDate.AppendISO(r.num[:0]))
	if p.InstructedAmount.Currency != "" {
		if err := r.amount(instd, p.InstructedAmount, instdRel); err != nil {
			return err
		}
	}
	if !p.ExchangeRate.IsZero() {
		rate := p.ExchangeRate
		if rate.NumDigits() > 11 || rate.Exponent() < -10 {
			rate = rate.Truncate(10)
			r.warn.Add(payment.CodeTruncated, r.path(rateRel), 0, "exchange rate %s cut to %s (BaseOneRate: 11 digits, 10 decimals)", p.ExchangeRate, rate)
		}
		w.leaf("XchgRate", rate.String())
	}
	return nil
}

// txCharges writes ChrgBr (SHAR when there is none) and one ChrgsInf per
// charge: the sender's taken by from, the receiver's by to.
func (r *pacsRenderer) txCharges(p *payment.Payment, from, to string) error {
	cb := p.ChargeBearer
	if cb == "" {
		cb = "SHAR"
		r.warn.Add(payment.CodeFieldDefaulted, r.path("CdtTrfTxInf/ChrgBr"), 0, "no charge bearer: SHAR")
	}
	r.w.leaf("ChrgBr", cb)
	return r.chargesInf(p, from, to, "CdtTrfTxInf/ChrgsInf")
}

// chargesInf writes one ChrgsInf (whose path is rel) per charge: the
// sender's (:71F:) taken by from, the receiver's (:71G:) by to.
func (r *pacsRenderer) chargesInf(p *payment.Payment, from, to, rel string) error {
	w := &r.w
	for i, c := range p.SenderCharges {
		w.open("ChrgsInf")
		if err := r.amount("Amt", c, rel+"["+strconv.Itoa(i+1)+"]/Amt"); err != nil {
			return err
		}
		r.agentBIC("Agt", from)
		w.close("ChrgsInf")
	}
	if p.ReceiverCharges.Currency != "" {
		w.open("ChrgsInf")
		if err := r.amount("Amt", p.ReceiverCharges, rel+"/Amt"); err != nil {
			return err
		}
		r.agentBIC("Agt", to)
		w.close("ChrgsInf")
	}
	return nil
}

// txAgents writes the agents and parties: the instructing and instructed
// agents (the sender and receiver when not named), the intermediary, the
// debtor with its agent (the sender when there is none) and the creditor
// with its agent (the receiver when there is none).
func (r *pacsRenderer) txAgents(p *payment.Payment, from, to string) {
	r.routingAgents(p, from, to)
	r.party("Dbtr", p.Debtor, "CdtTrfTxInf/Dbtr")
	r.agentOr("DbtrAgt", p.DebtorAgent, from, "CdtTrfTxInf/DbtrAgt", "no ordering institution (:52a:): DbtrAgt is the sender %s")
	r.agentOr("CdtrAgt", p.CreditorAgent, to, "CdtTrfTxInf/CdtrAgt", "no account with institution (:57a:): CdtrAgt is the receiver %s")
	r.party("Cdtr", p.Creditor, "CdtTrfTxInf/Cdtr")
}

// routingAgents writes the agents a CdtTrfTxInf names before its debtor:
// the previous instructing agent, the instructing and instructed agents
// (the sender and receiver when not named) and the intermediary.
func (r *pacsRenderer) routingAgents(p *payment.Payment, from, to string) {
	r.agentWithAccount("PrvsInstgAgt1", p.PreviousInstructingAgent, "CdtTrfTxInf/PrvsInstgAgt1")
	r.instructingAgents(p, from, to, "CdtTrfTxInf/InstgAgt", "CdtTrfTxInf/InstdAgt")
	r.agentWithAccount("IntrmyAgt1", p.Intermediary, "CdtTrfTxInf/IntrmyAgt1")
}

// instructingAgents writes InstgAgt and InstdAgt (paths instgRel and
// instdRel): the payment's, else the sender and the receiver.
func (r *pacsRenderer) instructingAgents(p *payment.Payment, from, to, instgRel, instdRel string) {
	instg, instd := p.InstructingAgent, p.InstructedAgent
	if instg == nil {
		instg = &payment.Agent{BIC: from}
	}
	if instd == nil {
		instd = &payment.Agent{BIC: to}
	}
	r.agent("InstgAgt", instg, instgRel)
	r.agent("InstdAgt", instd, instdRel)
}

// agentOr writes the agent a with its account, or when there is none the
// agent with BIC dflt, reporting why (a format of dflt); it returns the BIC
// of the agent written.
func (r *pacsRenderer) agentOr(name string, a *payment.Agent, dflt, rel, why string) string {
	if a == nil {
		a = &payment.Agent{BIC: dflt}
		r.warn.Add(payment.CodeAgentDefaulted, r.path(rel), 0, why, dflt)
	}
	r.agentWithAccount(name, a, rel)
	return a.BIC
}

// purpose writes a CdtTrfTxInf's Purp/Prtry.
func (r *pacsRenderer) purpose(p *payment.Payment) {
	if p.Purpose != "" {
		r.w.open("Purp")
		r.leaf("Prtry", p.Purpose, 35, "CdtTrfTxInf/Purp/Prtry")
		r.w.close("Purp")
	}
}

// txInstructions writes InstrForCdtrAgt (codes other than Instruction3Code
// are dropped) and InstrForNxtAgt; PHON, TELE, PHOI, TELI (MT :23E:) are
// not Instruction4Code values: the code leads the text, as :72: would
// carry it.
func (r *pacsRenderer) txInstructions(p *payment.Payment) {
	w := &r.w
	for i, in := range p.InstructionsForCreditorAgent {
		w.open("InstrForCdtrAgt")
		switch in.Code {
		case "":
		case "CHQB", "HOLD", "PHOB", "TELB":
			w.leaf("Cd", in.Code)
		default:
			r.warn.Add(payment.CodeFieldDropped, r.path(fmt.Sprintf("CdtTrfTxInf/InstrForCdtrAgt[%d]/Cd", i+1)), 0, "code %q is not an Instruction3Code", clip(in.Code))
		}
		r.leaf("InstrInf", in.Text, 140, fmt.Sprintf("CdtTrfTxInf/InstrForCdtrAgt[%d]/InstrInf", i+1))
		w.close("InstrForCdtrAgt")
	}
	for i, in := range p.InstructionsForNextAgent {
		w.open("InstrForNxtAgt")
		switch in.Code {
		case "":
		case "PHOA", "TELA":
			w.leaf("Cd", in.Code)
		default:
			in.Text = strings.TrimSpace("/" + in.Code + "/" + in.Text)
		}
		r.leaf("InstrInf", in.Text, 140, fmt.Sprintf("CdtTrfTxInf/InstrForNxtAgt[%d]/InstrInf", i+1))
		w.close("InstrForNxtAgt")
	}
}

// regulatory writes RgltryRptg with one Dtls/Inf per line (MT :77B:).
func (r *pacsRenderer) regulatory(lines []string, rel string) {
	if len(lines) == 0 {
		return
	}
	w := &r.w
	w.open("RgltryRptg")
	w.open("Dtls")
	for i, l := range lines {
		r.leaf("Inf", l, 35, fmt.Sprintf("%s/Dtls/Inf[%d]", rel, i+1))
	}
	w.close("Dtls")
	w.close("RgltryRptg")
}

func (r *pacsRenderer) agentBIC(name, bic string) {
	r.agent(name, &payment.Agent{BIC: bic}, name)
}

// agent writes a BranchAndFinancialInstitutionIdentification6.
func (r *pacsRenderer) agent(name string, a *payment.Agent, rel string) {
	w := &r.w
	w.open(name)
	w.open("FinInstnId")
	wrote := false
	if a.BIC != "" {
		if payment.IsBIC(a.BIC) {
			w.leaf("BICFI", a.BIC)
			wrote = true
		} else {
			r.warn.Add(payment.CodeFieldDropped, r.path(rel+"/FinInstnId/BICFI"), 0, "%q is not a BIC", clip(a.BIC))
		}
	}
	if a.ClearingMember != "" {
		w.open("ClrSysMmbId")
		if a.ClearingSystem != "" {
			r.codeOrPrtryN("ClrSysId", a.ClearingSystem, 5, rel+"/FinInstnId/ClrSysMmbId/ClrSysId")
		}
		r.leaf("MmbId", a.ClearingMember, 35, rel+"/FinInstnId/ClrSysMmbId/MmbId")
		w.close("ClrSysMmbId")
		wrote = true
	}
	if a.Name != "" {
		r.leaf("Nm", a.Name, 140, rel+"/FinInstnId/Nm")
		wrote = true
	}
	if !a.Address.IsZero() {
		r.address(a.Address, rel+"/FinInstnId/PstlAdr")
	}
	if !wrote && a.Address.IsZero() {
		r.warn.Add(payment.CodeAgentDefaulted, r.path(rel), 0, "%s has no BIC, clearing code or name: FinInstnId/Nm NOTPROVIDED", rel)
		w.leaf("Nm", "NOTPROVIDED")
	}
	w.close("FinInstnId")
	w.close(name)
}

// agentWithAccount writes an agent and its account element (name+"Acct").
func (r *pacsRenderer) agentWithAccount(name string, a *payment.Agent, rel string) {
	if a == nil {
		return
	}
	onlyAccount := a.BIC == "" && a.Name == "" && a.ClearingMember == "" && a.Address.IsZero()
	if onlyAccount {
		// Option C/B with an account only: the agent is not named, its
		// account is.
		r.warn.Add(payment.CodeAgentDefaulted, r.path(rel), 0, "%s is known by its account only", rel)
	}
	r.agent(name, a, rel)
	if a.Account != "" {
		r.ownerAccount(name, a.Account, rel)
	}
}

// account writes a CashAccount38: IBAN when it is a valid one, else Othr/Id.
func (r *pacsRenderer) account(name, acct, rel string) {
	r.accountAt(name, acct, rel, "")
}

// ownerAccount writes owner's account element (owner+"Acct", at rel+"Acct").
// The names of the parties and agents payments have are constants; the
// path is joined only when a cut is reported.
func (r *pacsRenderer) ownerAccount(owner, acct, rel string) {
	name, ok := accountNames[owner]
	if !ok {
		name = owner + "Acct"
	}
	r.accountAt(name, acct, rel, "Acct")
}

var accountNames = map[string]string{
	"Dbtr": "DbtrAcct", "Cdtr": "CdtrAcct", "DbtrAgt": "DbtrAgtAcct", "CdtrAgt": "CdtrAgtAcct",
	"IntrmyAgt1": "IntrmyAgt1Acct", "IntrmyAgt2": "IntrmyAgt2Acct", "IntrmyAgt3": "IntrmyAgt3Acct",
	"PrvsInstgAgt1": "PrvsInstgAgt1Acct", "PrvsInstgAgt2": "PrvsInstgAgt2Acct", "PrvsInstgAgt3": "PrvsInstgAgt3Acct",
	"UltmtDbtr": "UltmtDbtrAcct", "UltmtCdtr": "UltmtCdtrAcct", "InitgPty": "InitgPtyAcct",
}

// accountAt is account with the element's path rel+relTail.
func (r *pacsRenderer) accountAt(name, acct, rel, relTail string) {
	w := &r.w
	w.open(name)
	w.open("Id")
	if bankid.ValidIBAN(acct) {
		w.leaf("IBAN", acct)
	} else {
		w.open("Othr")
		if s := strings.TrimSpace(acct); len(s) > 34 && utf8.RuneCountInString(s) > 34 {
			r.leaf("Id", acct, 34, rel+relTail+"/Id/Othr/Id")
		} else if s != "" {
			w.leaf("Id", s)
		}
		w.close("Othr")
	}
	w.close("Id")
	w.close(name)
}

// address writes a PostalAddress24 in schema order.
func (r *pacsRenderer) address(a payment.Address, rel string) {
	if a.IsZero() {
		return
	}
	w := &r.w
	w.open("PstlAdr")
	r.leafAt("StrtNm", a.Street, 70, rel, 0)
	r.leafAt("BldgNb", a.Building, 16, rel, 0)
	r.leafAt("PstCd", a.PostCode, 16, rel, 0)
	r.leafAt("TwnNm", a.Town, 35, rel, 0)
	r.leafAt("CtrySubDvsn", a.District, 35, rel, 0)
	if a.Country != "" {
		if payment.IsCountry(a.Country) {
			w.leaf("Ctry", a.Country)
		} else {
			r.warn.Add(payment.CodeFieldDropped, r.path(rel+"/Ctry"), 0, "%q is not an ISO country code", clip(a.Country))
		}
	}
	for i, l := range a.Lines {
		if i == 7 {
			r.warn.Add(payment.CodeTruncated, r.path(rel+"/AdrLine"), 0, "%d address lines cut to 7", len(a.Lines))
			break
		}
		r.leafAt("AdrLine", l, 70, rel, i+1)
	}
	w.close("PstlAdr")
}

// party writes a PartyIdentification135 and its account.
func (r *pacsRenderer) party(name string, p *payment.Party, rel string) {
	w := &r.w
	w.open(name)
	r.leafAt("Nm", p.Name, 140, rel, 0)
	if !p.Address.IsZero() {
		r.address(p.Address, rel+"/PstlAdr")
	}
	var org, prv []payment.PartyID
	for _, id := range p.IDs {
		if id.OrgForm {
			org = append(org, id)
		} else {
			prv = append(prv, id)
		}
	}
	birth := !p.BirthDate.IsZero() && p.BirthCity != "" && payment.IsCountry(p.BirthCountry)
	if !p.BirthDate.IsZero() && !birth {
		r.warn.Add(payment.CodeFieldDropped, r.path(rel+"/Id/PrvtId/DtAndPlcOfBirth"), 0, "a birth date without city and country of birth has no place in DtAndPlcOfBirth")
	}
	switch {
	case p.BIC != "" && payment.IsBIC(p.BIC) || len(org) > 0:
		w.open("Id")
		w.open("OrgId")
		if payment.IsBIC(p.BIC) {
			w.leaf("AnyBIC", p.BIC)
		}
		for _, id := range org {
			r.otherID(id, rel+"/Id/OrgId/Othr")
		}
		w.close("OrgId")
		w.close("Id")
		if len(prv) > 0 || birth {
			r.warn.Add(payment.CodeFieldDropped, r.path(rel+"/Id/PrvtId"), 0, "a party identified as an organisation cannot carry a private identification too")
		}
	case len(prv) > 0 || birth:
		w.open("Id")
		w.open("PrvtId")
		if birth {
			w.open("DtAndPlcOfBirth")
			w.rawLeaf("BirthDt", p.BirthDate.AppendISO(r.num[:0]))
			r.leaf("CityOfBirth", p.BirthCity, 35, rel+"/Id/PrvtId/DtAndPlcOfBirth/CityOfBirth")
			w.leaf("CtryOfBirth", p.BirthCountry)
			w.close("DtAndPlcOfBirth")
		}
		for _, id := range prv {
			r.otherID(id, rel+"/Id/PrvtId/Othr")
		}
		w.close("PrvtId")
		w.close("Id")
	}
	w.close(name)
	if p.Account != "" && p.Account != "NOTPROVIDED" {
		r.ownerAccount(name, p.Account, rel)
	}
}

func (r *pacsRenderer) otherID(id payment.PartyID, rel string) {
	w := &r.w
	w.open("Othr")
	v := id.Value
	if v == "" {
		v = "NOTPROVIDED"
	}
	r.leafAt("Id", v, 35, rel, 0)
	if id.Scheme != "" {
		r.codeOrPrtry("SchmeNm", id.Scheme, rel+"/SchmeNm")
	}
	r.leafAt("Issr", id.Issuer, 35, rel, 0)
	w.close("Othr")
}
