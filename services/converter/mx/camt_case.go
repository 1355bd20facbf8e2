package mx

import (
	"fmt"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/ledgerlane/platform/services/converter/engine"
	"github.com/ledgerlane/platform/services/converter/payment"
	"github.com/ledgerlane/platform/services/converter/statement"
)

// Exceptions and investigations, the MX side of the MT common group:
// camt.056 (FIToFIPaymentCancellationRequest, MTn92), camt.029
// (ResolutionOfInvestigation, MTn96), camt.105 (ChargesPaymentNotification,
// MTn90) and camt.106 (ChargesPaymentRequest, MTn91), each written in the
// Envelope with the head.001.001.02 AppHdr as the payment messages are.
// camt.026 (UnableToApply) is detected and refused: the MTn95 query codes
// do not map onto its justification codes (docs/conversion-formats.md).

const (
	typeCamt56  = "camt.056"
	typeCamt29  = "camt.029"
	typeCamt105 = "camt.105"
	typeCamt106 = "camt.106"
	typeCamt26  = "camt.026"
	// bizSvcCharges is the CBPR+ service of camt.105 and camt.106 as
	// SWIFT's CBPR+ samples of them name it.
	bizSvcCharges = "swift.cbprplus.01"
)

// caseVersions are the versions written (the first) and checked element by
// element; other .001.NN versions are read with PAY_VERSION_UNTESTED.
var caseVersions = map[string][]string{
	typeCamt56:  {"camt.056.001.08"},
	typeCamt29:  {"camt.029.001.09"},
	typeCamt105: {"camt.105.001.02"},
	typeCamt106: {"camt.106.001.02"},
	typeCamt26:  {"camt.026.001.07"},
}

var caseTypes = []string{typeCamt56, typeCamt29, typeCamt105, typeCamt106, typeCamt26}

// caseKinds is the model kind of each type.
var caseKinds = map[string]payment.Kind{
	typeCamt56:  payment.Cancellation,
	typeCamt29:  payment.Resolution,
	typeCamt105: payment.ChargesNotification,
	typeCamt106: payment.ChargesRequest,
	typeCamt26:  payment.Query,
}

// RefusedQuery is why camt.026 and the MTn95 queries are not converted.
const RefusedQuery = "an MTn95 query carries SWIFT query codes (:75: /1/ to /49/) and narrative, while camt.026 (UnableToApply) " +
	"requires a justification of missing or incorrect information (MS01–MS03, IN01–IN66) or a possible duplicate: " +
	"neither side's codes state the other's, so no mapping is faithful. Send the query in its own format, " +
	"or use camt.056 (MTn92) to cancel and camt.029 (MTn96) to answer"

// caseVersionOf returns the type and version of an investigations namespace.
func caseVersionOf(ns string) (typ, version string, ok bool) {
	return versionIn(ns, caseTypes)
}

// DetectInvestigation recognises camt.056, camt.029, camt.105, camt.106 and
// camt.026 from the Document namespace, else from the AppHdr's MsgDefIdr.
func DetectInvestigation(input []byte) (string, string, bool) {
	return detectDocument(input, caseTypes)
}

// ParseInvestigations reads a camt.056 (every TxInf is one request), a
// camt.029 (every TxInfAndSts one answer), a camt.105 or camt.106 (every
// charges record one advice or request); want names the type. camt.026 is
// refused with the reason.
func ParseInvestigations(input []byte, want string) ([]*payment.Payment, []statement.Warning, error) {
	return parseDocument(input, want, caseVersionOf, caseVersions, func(pp *pacsParser, doc int, hdr payment.Header) ([]*payment.Payment, error) {
		switch pp.typ {
		case typeCamt56:
			return pp.camt056(doc, hdr)
		case typeCamt29:
			return pp.camt029(doc, hdr)
		case typeCamt105, typeCamt106:
			return pp.chargesRecords(doc, hdr)
		}
		return nil, &statement.ParseError{Field: "Document", Reason: "camt.026 is not converted: " + RefusedQuery}
	})
}

// caseRoot finds the message element name below doc and reads its
// assignment.
func (pp *pacsParser) caseRoot(doc int, name string, kind payment.Kind, hdr payment.Header) (int, payment.Payment, error) {
	root := pp.t.child(doc, name)
	if root < 0 {
		return -1, payment.Payment{}, pp.fail(doc, "expected %s", name)
	}
	base, err := pp.assignment(root, kind, hdr)
	return root, base, err
}

// assignment reads CaseAssignment5 (Assgnmt): the message's id, time and
// the assigner and assignee, which stand for the AppHdr's sender and
// receiver when it names none.
func (pp *pacsParser) assignment(root int, kind payment.Kind, hdr payment.Header) (payment.Payment, error) {
	t := pp.t
	asg := t.child(root, "Assgnmt")
	if asg < 0 {
		return payment.Payment{}, pp.fail(root, "Assgnmt is missing")
	}
	p := payment.Payment{Kind: kind, Header: hdr, MessageID: t.get(asg, "Id")}
	p.CreatedAt, _ = parseDateTime(t.get(asg, "CreDtTm"))
	if _, a := pp.party40(asg, "Assgnr"); a != nil {
		p.InstructingAgent = a
	}
	if _, a := pp.party40(asg, "Assgne"); a != nil {
		p.InstructedAgent = a
	}
	return p, nil
}

// readCase reads a Case5 (Case, RslvdCase) into c.
func (pp *pacsParser) readCase(id int, c *payment.Case) {
	if id < 0 {
		return
	}
	t := pp.t
	c.ID = t.get(id, "Id")
	pt, ag := pp.party40(id, "Cretr")
	if ag != nil && ag.BIC == "" && ag.Name == "NOTPROVIDED" {
		ag = nil // CBPR+ translation's placeholder for a creator MT does not name
	}
	c.Creator, c.CreatorParty = ag, pt
}

// original reads OriginalGroupInformation29 (OrgnlGrpInf) below tx.
func (pp *pacsParser) original(tx int, p *payment.Payment) error {
	t := pp.t
	g := t.child(tx, "OrgnlGrpInf")
	if g < 0 {
		return nil
	}
	c := p.Case
	if id := t.get(g, "OrgnlMsgId"); id != "NOTPROVIDED" {
		p.OriginalMessageID = id
	}
	if nm := t.get(g, "OrgnlMsgNmId"); nm != "" && nm != "NOTPROVIDED" {
		c.OriginalMX = nm
		c.OriginalMT = payment.MTOfMX(nm)
		if c.OriginalMT == "" {
			pp.w.Add(payment.CodeNonstandard, t.pathOf(t.child(g, "OrgnlMsgNmId")), t.line(g), "original message name %q is neither an MT type nor a pacs message with an MT equivalent", clip(nm))
		}
	}
	if s := t.get(g, "OrgnlCreDtTm"); s != "" {
		at, ok := parseDateTime(s)
		if !ok {
			return pp.fail(t.child(g, "OrgnlCreDtTm"), "OrgnlCreDtTm %q is not a date and time", clip(s))
		}
		c.OriginalCreatedAt = at
		c.OriginalDate = statement.DateOf(at)
	}
	return nil
}

// originalTx reads the original transaction's references, UETR and
// interbank amount and date below tx.
func (pp *pacsParser) originalTx(tx int, p *payment.Payment) error {
	t := pp.t
	p.InstructionID = t.get(tx, "OrgnlInstrId")
	if e := t.get(tx, "OrgnlEndToEndId"); e != "NOTPROVIDED" {
		p.EndToEndID = e
	}
	var err error
	if p.UETR, err = pp.uetr(tx, "OrgnlUETR"); err != nil {
		return err
	}
	if p.Amount, err = pp.amount(t.child(tx, "OrgnlIntrBkSttlmAmt"), false); err != nil {
		return err
	}
	p.SettlementDate, err = pp.namedDate(tx, "OrgnlIntrBkSttlmDt")
	return err
}

// reason reads the first PaymentCancellationReason5 or
// CancellationStatusReason4 named name below tx.
func (pp *pacsParser) reason(tx int, name string, c *payment.Case) {
	t := pp.t
	r := t.child(tx, name)
	if r < 0 {
		return
	}
	c.Originator = pp.party(r, "Orgtr")
	c.Reason = firstOf(t.get(r, "Rsn/Cd"), t.get(r, "Rsn/Prtry"))
	for a := t.nodes[r].first; a >= 0; a = t.nodes[a].next {
		if t.name(a) == "AddtlInf" && t.text(a) != "" && t.text(a) != "NOTPROVIDED" {
			c.ReasonInfo = append(c.ReasonInfo, t.text(a))
		}
		t.nodes[a].used = t.nodes[a].used || t.name(a) == "AddtlInf"
	}
}

func (pp *pacsParser) camt056(doc int, hdr payment.Header) ([]*payment.Payment, error) {
	t := pp.t
	root, base, err := pp.caseRoot(doc, "FIToFIPmtCxlReq", payment.Cancellation, hdr)
	if err != nil {
		return nil, err
	}
	top := t.child(root, "Case")
	var out []*payment.Payment
	for u := t.nodes[root].first; u >= 0; u = t.nodes[u].next {
		if t.name(u) != "Undrlyg" {
			continue
		}
		for tx := t.nodes[u].first; tx >= 0; tx = t.nodes[tx].next {
			if t.name(tx) != "TxInf" {
				continue
			}
			p := base
			p.Case = &payment.Case{}
			cs := t.child(tx, "Case")
			if cs < 0 {
				cs = top
			}
			pp.readCase(cs, p.Case)
			if err := pp.original(tx, &p); err != nil {
				return nil, err
			}
			if err := pp.originalTx(tx, &p); err != nil {
				return nil, err
			}
			pp.reason(tx, "CxlRsnInf", p.Case)
			out = append(out, &p)
		}
	}
	if len(out) == 0 {
		return nil, pp.fail(root, "the request has no Undrlyg/TxInf: a cancellation of a whole group (OrgnlGrpInfAndCxl) has no MTn92 form; request it per transaction")
	}
	if len(out) > 1 {
		pp.w.Add(payment.CodeSplit, "FIToFIPmtCxlReq", 0, "%d transactions: one MT message each", len(out))
	}
	return out, nil
}

func (pp *pacsParser) camt029(doc int, hdr payment.Header) ([]*payment.Payment, error) {
	t := pp.t
	root, base, err := pp.caseRoot(doc, "RsltnOfInvstgtn", payment.Resolution, hdr)
	if err != nil {
		return nil, err
	}
	status := t.get(root, "Sts/Conf")
	top := t.child(root, "RslvdCase")
	var out []*payment.Payment
	add := func(tx int) error {
		p := base
		p.Case = &payment.Case{Status: status}
		cs := t.child(tx, "RslvdCase")
		if cs < 0 {
			cs = top
		}
		pp.readCase(cs, p.Case)
		if tx < 0 {
			out = append(out, &p)
			return nil
		}
		if id := t.get(tx, "CxlStsId"); id != "" {
			p.MessageID = id
		}
		if err := pp.original(tx, &p); err != nil {
			return err
		}
		if err := pp.originalTx(tx, &p); err != nil {
			return err
		}
		if s := t.get(tx, "TxCxlSts"); s != "" && p.Case.Status == "" {
			p.Case.Status = s
		}
		pp.reason(tx, "CxlStsRsnInf", p.Case)
		out = append(out, &p)
		return nil
	}
	for d := t.nodes[root].first; d >= 0; d = t.nodes[d].next {
		if t.name(d) != "CxlDtls" {
			continue
		}
		for tx := t.nodes[d].first; tx >= 0; tx = t.nodes[tx].next {
			if t.name(tx) == "TxInfAndSts" {
				if err := add(tx); err != nil {
					return nil, err
				}
			}
		}
	}
	if len(out) == 0 {
		if err := add(-1); err != nil {
			return nil, err
		}
	}
	if len(out) > 1 {
		pp.w.Add(payment.CodeSplit, "RsltnOfInvstgtn", 0, "%d transactions: one MT message each", len(out))
	}
	return out, nil
}

// chargesRecords reads a camt.105 or camt.106: one payment per charges record
// (PerTx/Rcrd, or Sngl).
func (pp *pacsParser) chargesRecords(doc int, hdr payment.Header) ([]*payment.Payment, error) {
	t := pp.t
	name, kind := "ChrgsPmtNtfctn", payment.ChargesNotification
	if pp.typ == typeCamt106 {
		name, kind = "ChrgsPmtReq", payment.ChargesRequest
	}
	root := t.child(doc, name)
	if root < 0 {
		return nil, pp.fail(doc, "expected %s", name)
	}
	gh := t.child(root, "GrpHdr")
	if gh < 0 {
		return nil, pp.fail(root, "GrpHdr is missing")
	}
	base := payment.Payment{Kind: kind, Header: hdr, MessageID: t.get(gh, "MsgId")}
	base.CreatedAt, _ = parseDateTime(t.get(gh, "CreDtTm"))
	// The group header's requestor, account and account agent hold for
	// every record that does not name its own.
	dflt := payment.Case{Requestor: pp.agent(gh, "ChrgsRqstr"), Account: pp.account(gh, "ChrgsAcct"), AccountWithInstitution: pp.agentAcct(gh, "ChrgsAcctAgt")}
	for _, n := range []string{"TtlChrgs/NbOfChrgsRcrds", "TtlChrgs/TtlChrgsAmt", "TtlChrgs/CdtDbtInd", "TtlChrgs/CtrlSum"} {
		t.get(gh, n) // totals of what the records state
	}
	chrgs := t.child(root, "Chrgs")
	if chrgs < 0 {
		return nil, pp.fail(root, "Chrgs is missing")
	}
	var out []*payment.Payment
	switch {
	case t.child(chrgs, "PerTx") >= 0:
		var err error
		if out, err = pp.chargesPerTx(t.child(chrgs, "PerTx"), &base, &dflt); err != nil {
			return nil, err
		}
	case t.child(chrgs, "Sngl") >= 0:
		s := t.child(chrgs, "Sngl")
		p, err := pp.chargesRecord(s, &base, &dflt, t.get(s, "ChrgsId"), true)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	default:
		return nil, pp.fail(chrgs, "charges grouped per type (PerTp) have no MTn9%c form: send them per transaction (PerTx) or as a single record (Sngl)", map[bool]byte{true: '1', false: '0'}[kind == payment.ChargesRequest])
	}
	if len(out) > 1 {
		pp.w.Add(payment.CodeSplit, name+"/Chrgs", 0, "%d charges records: one MT message each", len(out))
	}
	return out, nil
}

// chargesPerTx reads the records of Chrgs/PerTx: its account and account
// agent replace the group header's, its ChrgsId is each record's message
// id and its AddtlInf is added to each record's details.
func (pp *pacsParser) chargesPerTx(per int, base *payment.Payment, dflt *payment.Case) ([]*payment.Payment, error) {
	t := pp.t
	id := t.get(per, "ChrgsId")
	for _, n := range []string{"TtlChrgsPerTx/NbOfChrgsRcrds", "TtlChrgsPerTx/TtlChrgsAmt", "TtlChrgsPerTx/CdtDbtInd", "TtlChrgsPerTx/CtrlSum"} {
		t.get(per, n)
	}
	if a := pp.account(per, "ChrgsAcct"); a != "" {
		dflt.Account = a
	}
	if a := pp.agentAcct(per, "ChrgsAcctAgt"); a != nil {
		dflt.AccountWithInstitution = a
	}
	info := t.get(per, "AddtlInf")
	var out []*payment.Payment
	for rc := t.nodes[per].first; rc >= 0; rc = t.nodes[rc].next {
		if t.name(rc) != "Rcrd" {
			continue
		}
		p, err := pp.chargesRecord(rc, base, dflt, id, false)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
		if info != "" {
			p.Case.Details = append(p.Case.Details, info)
		}
	}
	return out, nil
}

// chargesRecord reads one charges record rc as a copy of base with message
// id id (when set): its case names the requestor, account and account
// agent (the record's, else dflt's), the underlying transaction, the
// charges (one, or the breakdown), value date, debtor agent, instructions
// and details.
func (pp *pacsParser) chargesRecord(rc int, base *payment.Payment, dflt *payment.Case, id string, single bool) (*payment.Payment, error) {
	t := pp.t
	p := *base
	if id != "" {
		p.MessageID = id
	}
	c := &payment.Case{Requestor: dflt.Requestor, Account: dflt.Account, AccountWithInstitution: dflt.AccountWithInstitution}
	p.Case = c
	if a := pp.agent(rc, "ChrgsRqstr"); a != nil {
		c.Requestor = a
	}
	if a := pp.account(rc, "ChrgsAcct"); a != "" {
		c.Account = a
	}
	if a := pp.agentAcct(rc, "ChrgsAcctAgt"); a != nil {
		c.AccountWithInstitution = a
	}
	if err := pp.chargesUnderlying(rc, &p); err != nil {
		return nil, err
	}
	if single {
		if err := pp.singleCharge(rc, &p); err != nil {
			return nil, err
		}
	} else if err := pp.chargesBreakdown(rc, &p); err != nil {
		return nil, err
	}
	if s := firstOf(t.get(rc, "ValDt/Dt"), t.get(rc, "ValDt/DtTm")); s != "" {
		d, ok := parseDateOrDateTime(s)
		if !ok {
			return nil, pp.fail(t.child(rc, "ValDt"), "ValDt %q is not a date", clip(s))
		}
		p.SettlementDate = d
	}
	p.DebtorAgent = pp.agentAcct(rc, "DbtrAgt")
	if in := t.get(rc, "InstrForInstdAgt/InstrInf"); in != "" {
		c.Instructions = append(c.Instructions, in)
	}
	if cd := t.get(rc, "InstrForInstdAgt/Cd"); cd != "" {
		c.Instructions = append([]string{"/" + cd + "/"}, c.Instructions...)
	}
	if a := t.get(rc, "AddtlInf"); a != "" {
		c.Details = append(c.Details, a)
	}
	return &p, nil
}

// chargesUnderlying reads the record's UndrlygTx: the original message
// name and id, instruction and end-to-end ids and UETR.
func (pp *pacsParser) chargesUnderlying(rc int, p *payment.Payment) error {
	t := pp.t
	u := t.child(rc, "UndrlygTx")
	if nm := t.get(u, "MsgNmId"); nm != "" {
		p.Case.OriginalMX, p.Case.OriginalMT = nm, payment.MTOfMX(nm)
	}
	p.OriginalMessageID = t.get(u, "MsgId")
	p.InstructionID = t.get(u, "InstrId")
	p.EndToEndID = t.get(u, "EndToEndId")
	var err error
	p.UETR, err = pp.uetr(u, "UETR")
	return err
}

// singleCharge reads the one charge of a Sngl record: its amount is the
// payment's, debited unless credited.
func (pp *pacsParser) singleCharge(rc int, p *payment.Payment) error {
	t := pp.t
	c := p.Case
	amt, err := pp.amount(t.child(rc, "Amt"), true)
	if err != nil {
		return err
	}
	ch := payment.Charge{Amount: amt, Credit: t.get(rc, "CdtDbtInd") == "CRDT", Code: firstOf(t.get(rc, "Tp/Cd"), t.get(rc, "Tp/Prtry/Id"))}
	t.get(rc, "Tp/Prtry/Issr")
	c.Charges = append(c.Charges, ch)
	p.Amount, c.Debit = amt, !ch.Credit
	return nil
}

// chargesBreakdown reads the ChrgsBrkdwn items of a PerTx record (at least
// one) and its total, TtlChrgsPerRcrd; without a stated total the amount
// is the breakdown's sum, signed by direction, which needs one currency.
func (pp *pacsParser) chargesBreakdown(rc int, p *payment.Payment) error {
	t := pp.t
	c := p.Case
	for b := t.nodes[rc].first; b >= 0; b = t.nodes[b].next {
		if t.name(b) != "ChrgsBrkdwn" {
			continue
		}
		amt, err := pp.amount(t.child(b, "Amt"), true)
		if err != nil {
			return err
		}
		t.get(b, "Tp/Prtry/Issr")
		c.Charges = append(c.Charges, payment.Charge{Amount: amt, Credit: t.get(b, "CdtDbtInd") == "CRDT", Code: firstOf(t.get(b, "Tp/Cd"), t.get(b, "Tp/Prtry/Id"))})
	}
	if len(c.Charges) == 0 {
		return pp.fail(rc, "the charges record has no ChrgsBrkdwn")
	}
	tot := t.child(rc, "TtlChrgsPerRcrd")
	t.get(tot, "NbOfChrgsBrkdwnItms")
	t.get(tot, "CtrlSum")
	var err error
	if p.Amount, err = pp.amount(t.child(tot, "TtlChrgsAmt"), false); err != nil {
		return err
	}
	c.Debit = t.get(tot, "CdtDbtInd") != "CRDT"
	if p.Amount.Currency == "" {
		var sum decimal.Decimal
		for _, ch := range c.Charges {
			if ch.Amount.Currency != c.Charges[0].Amount.Currency {
				return pp.fail(rc, "the charges are in several currencies and the record states no total (TtlChrgsPerRcrd)")
			}
			if ch.Credit {
				sum = sum.Sub(ch.Amount.Value)
			} else {
				sum = sum.Add(ch.Amount.Value)
			}
		}
		c.Debit = !sum.IsNegative()
		p.Amount = statement.Amount{Value: sum.Abs(), Currency: c.Charges[0].Amount.Currency}
	}
	return nil
}

// RenderInvestigations writes each payment as one message of type typ
// (camt.056, camt.029, camt.105, camt.106) in version: an Envelope holding
// the head.001.001.02 AppHdr and the Document.
func RenderInvestigations(ps []*payment.Payment, typ, version string) ([]string, []statement.Warning, error) {
	vs, ok := caseVersions[typ]
	if !ok || typ == typeCamt26 || version != vs[0] {
		return nil, nil, fmt.Errorf("unsupported %s version %q", typ, version)
	}
	return renderEach(ps, typ, version, func(p *payment.Payment) string {
		if p.Kind != caseKinds[typ] || p.Case == nil {
			return fmt.Sprintf("a %s (%s) is not a %s", p.Kind, payment.MXType(p.Kind), typ)
		}
		return ""
	})
}

// isCaseType reports whether typ is written by caseDocument.
func isCaseType(typ string) bool {
	return typ == typeCamt56 || typ == typeCamt29 || typ == typeCamt105 || typ == typeCamt106
}

// caseDocument writes the Document's message element of an investigations
// type.
func (r *pacsRenderer) caseDocument(p *payment.Payment, ref, created, from, to string) error {
	switch r.typ {
	case typeCamt56:
		return r.camt056(p, ref, created, from, to)
	case typeCamt29:
		return r.camt029(p, ref, created, from, to)
	}
	return r.chargesDocument(p, ref, created)
}

func (r *pacsRenderer) assignment(p *payment.Payment, ref, created, from, to string) {
	w := &r.w
	w.open("Assgnmt")
	r.leaf("Id", firstOf(p.MessageID, ref), 35, "Assgnmt/Id")
	assigner, assignee := p.InstructingAgent, p.InstructedAgent
	if from != "" || assigner == nil {
		assigner = &payment.Agent{BIC: from}
	}
	if to != "" || assignee == nil {
		assignee = &payment.Agent{BIC: to}
	}
	r.party40("Assgnr", nil, assigner, from, "Assgnmt/Assgnr")
	r.party40("Assgne", nil, assignee, to, "Assgnmt/Assgne")
	w.rawLeaf("CreDtTm", []byte(created))
	w.close("Assgnmt")
}

// caseElement writes a Case5 (Case, RslvdCase). A creator MT does not name
// is written as CBPR+ translation writes it: Agt with Nm and AdrLine
// NOTPROVIDED.
func (r *pacsRenderer) caseElement(name string, id string, c *payment.Case, rel string) {
	w := &r.w
	w.open(name)
	r.leaf("Id", id, 35, rel+"/Id")
	ag := c.Creator
	if ag == nil && c.CreatorParty == nil {
		r.warn.Add(payment.CodeFieldDefaulted, r.path(rel+"/Cretr"), 0, "the case's creator is not stated: Cretr/Agt NOTPROVIDED")
		ag = &payment.Agent{Name: "NOTPROVIDED", Address: payment.Address{Lines: []string{"NOTPROVIDED"}}}
	}
	r.party40("Cretr", c.CreatorParty, ag, "", rel+"/Cretr")
	w.close(name)
}

// originalGroup writes OrgnlGrpInf from the link to the original message.
func (r *pacsRenderer) originalGroup(p *payment.Payment, rel string) {
	c := p.Case
	nm := c.OriginalMX
	if nm == "" && c.OriginalMT != "" {
		nm = "MT" + c.OriginalMT
	}
	if nm == "" {
		return
	}
	w := &r.w
	w.open("OrgnlGrpInf")
	id := p.OriginalMessageID
	if id == "" {
		id = p.InstructionID
	}
	if id == "" {
		id = "NOTPROVIDED"
		r.warn.Add(payment.CodeFieldDefaulted, r.path(rel+"/OrgnlMsgId"), 0, "the original message's reference is not stated: OrgnlMsgId NOTPROVIDED")
	}
	r.leaf("OrgnlMsgId", id, 35, rel+"/OrgnlMsgId")
	r.leaf("OrgnlMsgNmId", nm, 35, rel+"/OrgnlMsgNmId")
	switch {
	case !c.OriginalCreatedAt.IsZero():
		w.rawLeaf("OrgnlCreDtTm", appendOffsetTime(r.num[:0], c.OriginalCreatedAt))
	case !c.OriginalDate.IsZero():
		d := c.OriginalDate
		w.rawLeaf("OrgnlCreDtTm", appendOffsetTime(r.num[:0], time.Date(d.Year, d.Month, d.Day, 0, 0, 0, 0, time.UTC)))
	}
	w.close("OrgnlGrpInf")
	if c.OriginalSession != "" {
		r.warn.Add(payment.CodeFieldDropped, r.path(rel), 0, "the original's FIN session %s and input sequence number %s (:11a: line 3) have no MX element", c.OriginalSession, c.OriginalISN)
	}
}

// reasonElement writes a PaymentCancellationReason5 or
// CancellationStatusReason4 (name).
func (r *pacsRenderer) reasonElement(name string, c *payment.Case, rel string) {
	if c.Reason == "" && len(c.ReasonInfo) == 0 && c.Originator == nil {
		return
	}
	w := &r.w
	w.open(name)
	if c.Originator != nil {
		o := *c.Originator
		o.Account = ""
		r.party("Orgtr", &o, rel+"/Orgtr")
	}
	r.reasonInfo(c.Reason, c.ReasonInfo, rel)
	w.close(name)
}

func (r *pacsRenderer) camt056(p *payment.Payment, ref, created, from, to string) error {
	w := &r.w
	c := p.Case
	w.open("FIToFIPmtCxlReq")
	r.assignment(p, ref, created, from, to)
	w.open("Undrlyg")
	w.open("TxInf")
	const rel = "Undrlyg/TxInf"
	r.caseElement("Case", firstOf(c.ID, firstOf(p.MessageID, ref)), c, rel+"/Case")
	r.originalGroup(p, rel+"/OrgnlGrpInf")
	r.leaf("OrgnlInstrId", p.InstructionID, 35, rel+"/OrgnlInstrId")
	e2e := p.EndToEndID
	if e2e == "" {
		e2e = "NOTPROVIDED"
		r.warn.Add(payment.CodeFieldDefaulted, r.path(rel+"/OrgnlEndToEndId"), 0, "an MT%s does not state the original end-to-end id: OrgnlEndToEndId NOTPROVIDED", firstOf(p.MT, "n92"))
	}
	r.leaf("OrgnlEndToEndId", e2e, 35, rel+"/OrgnlEndToEndId")
	if p.UETR != "" {
		w.leaf("OrgnlUETR", p.UETR)
	}
	if err := r.originalAmount(p, rel); err != nil {
		return err
	}
	r.reasonElement("CxlRsnInf", c, rel+"/CxlRsnInf")
	w.close("TxInf")
	w.close("Undrlyg")
	w.close("FIToFIPmtCxlReq")
	if len(c.Text) > 0 {
		r.warn.Add(payment.CodeFieldDropped, r.path(rel), 0, "the narrative :79: has no element in camt.056")
	}
	return nil
}

func (r *pacsRenderer) originalAmount(p *payment.Payment, rel string) error {
	if p.Amount.Currency != "" {
		if err := r.amount("OrgnlIntrBkSttlmAmt", p.Amount, rel+"/OrgnlIntrBkSttlmAmt"); err != nil {
			return err
		}
	}
	if !p.SettlementDate.IsZero() {
		r.w.rawLeaf("OrgnlIntrBkSttlmDt", p.SettlementDate.AppendISO(r.num[:0]))
	}
	return nil
}

func (r *pacsRenderer) camt029(p *payment.Payment, ref, created, from, to string) error {
	w := &r.w
	c := p.Case
	if c.Status == "" {
		return &statement.ParseError{Message: r.no, Field: ":76:", Reason: "the answer has no status code (/CNCL/, /PDCR/, /RJCR/, …) for camt.029 Sts/Conf: a free-text answer has no camt.029 form"}
	}
	w.open("RsltnOfInvstgtn")
	r.assignment(p, ref, created, from, to)
	w.open("Sts")
	r.leaf("Conf", c.Status, 4, "Sts/Conf")
	w.close("Sts")
	w.open("CxlDtls")
	w.open("TxInfAndSts")
	const rel = "CxlDtls/TxInfAndSts"
	r.leaf("CxlStsId", firstOf(p.MessageID, ref), 35, rel+"/CxlStsId")
	if c.ID != "" {
		r.caseElement("RslvdCase", c.ID, c, rel+"/RslvdCase")
	}
	r.originalGroup(p, rel+"/OrgnlGrpInf")
	r.leaf("OrgnlInstrId", p.InstructionID, 35, rel+"/OrgnlInstrId")
	r.leaf("OrgnlEndToEndId", p.EndToEndID, 35, rel+"/OrgnlEndToEndId")
	if p.UETR != "" {
		w.leaf("OrgnlUETR", p.UETR)
	}
	r.reasonElement("CxlStsRsnInf", c, rel+"/CxlStsRsnInf")
	if err := r.originalAmount(p, rel); err != nil {
		return err
	}
	w.close("TxInfAndSts")
	w.close("CxlDtls")
	w.close("RsltnOfInvstgtn")
	if len(c.Text) > 0 {
		r.warn.Add(payment.CodeFieldDropped, r.path(rel), 0, "the narrative :79: (a description of the original) has no element in camt.029")
	}
	return nil
}

// chargesDocument writes a ChrgsPmtNtfctn (camt.105) or ChrgsPmtReq (camt.106)
// with one charges record per transaction (PerTx).
func (r *pacsRenderer) chargesDocument(p *payment.Payment, ref, created string) error {
	w := &r.w
	c := p.Case
	root := "ChrgsPmtNtfctn"
	if r.typ == typeCamt106 {
		root = "ChrgsPmtReq"
	}
	w.open(root)
	r.openGroupHeader(firstOf(p.MessageID, ref), created)
	if c.Requestor != nil {
		r.agent("ChrgsRqstr", c.Requestor, "GrpHdr/ChrgsRqstr")
	}
	if c.Account != "" && r.typ == typeCamt105 {
		r.account("ChrgsAcct", c.Account, "GrpHdr/ChrgsAcct")
	}
	w.close("GrpHdr")
	w.open("Chrgs")
	w.open("PerTx")
	r.leaf("ChrgsId", firstOf(p.MessageID, ref), 35, "Chrgs/PerTx/ChrgsId")
	w.open("Rcrd")
	const rel = "Chrgs/PerTx/Rcrd"
	w.open("UndrlygTx")
	r.leaf("MsgId", p.OriginalMessageID, 35, rel+"/UndrlygTx/MsgId")
	nm := c.OriginalMX
	if nm == "" && c.OriginalMT != "" {
		nm = "MT" + c.OriginalMT
	}
	r.leaf("MsgNmId", nm, 35, rel+"/UndrlygTx/MsgNmId")
	r.leaf("InstrId", p.InstructionID, 35, rel+"/UndrlygTx/InstrId")
	r.leaf("EndToEndId", p.EndToEndID, 35, rel+"/UndrlygTx/EndToEndId")
	if p.UETR != "" {
		w.leaf("UETR", p.UETR)
	}
	w.close("UndrlygTx")
	dir := func(credit bool) string {
		if credit {
			return "CRDT"
		}
		return "DBIT"
	}
	w.open("TtlChrgsPerRcrd")
	w.leaf("NbOfChrgsBrkdwnItms", fmt.Sprint(len(c.Charges)))
	if err := r.amount("TtlChrgsAmt", p.Amount, rel+"/TtlChrgsPerRcrd/TtlChrgsAmt"); err != nil {
		return err
	}
	w.leaf("CdtDbtInd", dir(!c.Debit))
	w.close("TtlChrgsPerRcrd")
	for i, ch := range c.Charges {
		w.open("ChrgsBrkdwn")
		brel := fmt.Sprintf("%s/ChrgsBrkdwn[%d]", rel, i+1)
		if err := r.amount("Amt", ch.Amount, brel+"/Amt"); err != nil {
			return err
		}
		w.leaf("CdtDbtInd", dir(ch.Credit))
		if ch.Code != "" {
			w.open("Tp")
			if len(ch.Code) <= 4 && isUpperAlnum(ch.Code) {
				w.leaf("Cd", ch.Code)
			} else {
				w.open("Prtry")
				r.leaf("Id", ch.Code, 35, brel+"/Tp/Prtry/Id")
				w.close("Prtry")
			}
			w.close("Tp")
		}
		w.close("ChrgsBrkdwn")
	}
	if !p.SettlementDate.IsZero() {
		w.open("ValDt")
		w.rawLeaf("Dt", p.SettlementDate.AppendISO(r.num[:0]))
		w.close("ValDt")
	}
	if p.DebtorAgent != nil {
		r.agentWithAccount("DbtrAgt", p.DebtorAgent, rel+"/DbtrAgt")
	}
	if a := c.AccountWithInstitution; a != nil {
		if r.typ == typeCamt106 {
			r.agentWithAccount("ChrgsAcctAgt", a, rel+"/ChrgsAcctAgt")
		} else {
			r.warn.Add(payment.CodeFieldDropped, r.path(rel+"/ChrgsAcctAgt"), 0, "camt.105 has no account with institution for the charges")
		}
	}
	if len(c.Instructions) > 0 {
		w.open("InstrForInstdAgt")
		r.leaf("InstrInf", strings.Join(c.Instructions, " "), 140, rel+"/InstrForInstdAgt/InstrInf")
		w.close("InstrForInstdAgt")
	}
	r.leaf("AddtlInf", strings.Join(c.Details, " "), 140, rel+"/AddtlInf")
	w.close("Rcrd")
	w.close("PerTx")
	w.close("Chrgs")
	w.close(root)
	if c.Account != "" && r.typ == typeCamt106 {
		r.warn.Add(payment.CodeFieldDropped, r.path("GrpHdr"), 0, "camt.106 has no charges account (:25:)")
	}
	return nil
}

// InvestigationFormats is what this package adds to a conversion engine for
// exceptions and investigations: the camt.056, camt.029, camt.105 and
// camt.106 parsers and renderers, the camt.026 parser (which refuses) and
// renderer (which converts nothing and names why), and their detector.
func InvestigationFormats() engine.FormatSet {
	var set engine.FormatSet
	for _, typ := range caseTypes {
		set.Parsers = append(set.Parsers, engine.Parser{
			Type:     typ,
			Versions: caseVersions[typ],
			ParsePayments: func(input []byte, _ string, _ statement.Options) ([]*payment.Payment, []statement.Warning, error) {
				return ParseInvestigations(input, typ)
			},
		})
	}
	accepts := map[string][]string{
		typeCamt56:  {"MT192", "MT292", typeCamt56},
		typeCamt29:  {"MT196", "MT296", typeCamt29},
		typeCamt105: {"MT190", "MT290", typeCamt105},
		typeCamt106: {"MT191", "MT291", typeCamt106},
	}
	for _, typ := range caseTypes {
		r := paymentRenderer(typ, caseVersions[typ][:1], accepts[typ], RenderInvestigations)
		r.Refuses = map[string]string{}
		suffix := map[string]string{typeCamt56: "92", typeCamt29: "96", typeCamt105: "90", typeCamt106: "91", typeCamt26: "95"}[typ]
		for n := '3'; n <= '9'; n++ {
			r.Refuses["MT"+string(n)+suffix] = fmt.Sprintf("MT%c%s belongs to category %c (not a payment); CBPR+ defines %s for categories 1 and 2 (MT1%s, MT2%s) only", n, suffix, n, typ, suffix, suffix)
		}
		if typ == typeCamt26 {
			r.Refuses["MT195"], r.Refuses["MT295"] = RefusedQuery, RefusedQuery
		}
		set.Renderers = append(set.Renderers, r)
	}
	set.Detectors = []engine.Detector{DetectInvestigation}
	set.HeadDetectors = []engine.HeadDetector{detectInvestigationHead}
	return set
}
