package mx

import (
	"fmt"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/ledgerlane/platform/services/converter/bankid"
	"github.com/ledgerlane/platform/services/converter/payment"
	"github.com/ledgerlane/platform/services/converter/statement"
)

// Payment message types and the versions we checked element by element.
const (
	typePacs8 = "pacs.008"
	typePacs9 = "pacs.009"
)

var pacsReadVersions = map[string][]string{
	typePacs8:  {"pacs.008.001.08"},
	typePacs9:  {"pacs.009.001.08"},
	typeCamt54: {"camt.054.001.08"},
	typePacs2:  {"pacs.002.001.10"},
}

// pacsTypes are the types ParsePayments reads.
var pacsTypes = []string{typePacs8, typePacs9, typeCamt54, typePacs2}

// pacsVersionOf returns the type and version of a pacs namespace.
func pacsVersionOf(ns string) (typ, version string, ok bool) {
	return versionIn(ns, pacsTypes)
}

// versionIn returns the type of types whose .001.NN namespace ns is, and
// its version.
func versionIn(ns string, types []string) (typ, version string, ok bool) {
	v, found := strings.CutPrefix(ns, nsPrefix)
	if !found {
		return "", "", false
	}
	for _, t := range types {
		if strings.HasPrefix(v, t+".001.") && len(v) == len(t)+7 && isDigits(v[len(t)+5:]) {
			return t, v, true
		}
	}
	return "", "", false
}

// typeIn is versionIn over the bytes of a namespace: the type of types
// whose .001.NN namespace ns is. It makes no string of ns, so that a
// detector that does not recognise a message allocates nothing.
func typeIn(ns []byte, types []string) (string, bool) {
	if len(ns) < len(nsPrefix) || string(ns[:len(nsPrefix)]) != nsPrefix {
		return "", false
	}
	v := ns[len(nsPrefix):]
	for _, t := range types {
		if len(v) == len(t)+7 && string(v[:len(t)]) == t && string(v[len(t):len(t)+5]) == ".001." &&
			isDigit(v[len(t)+5]) && isDigit(v[len(t)+6]) {
			return t, true
		}
	}
	return "", false
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// DetectPayment recognises pacs.008, pacs.009 and camt.054 from the
// Document namespace, else from the AppHdr's MsgDefIdr.
func DetectPayment(input []byte) (string, string, bool) {
	return detectDocument(input, pacsTypes)
}

// detectDocument finds the first namespace of input of one of types, else
// the AppHdr's MsgDefIdr of one of them.
func detectDocument(input []byte, types []string) (string, string, bool) {
	return detectNamespace(input, nsPrefixBytes, types)
}

// ParsePayments reads a pacs.008 or pacs.009 document (every CdtTrfTxInf
// is one payment) or a camt.054 (every Ntry is one confirmation), with or
// without its business application header, bare or in an envelope; want
// names the type.
func ParsePayments(input []byte, want, version string) ([]*payment.Payment, []statement.Warning, error) {
	return parseDocument(input, want, pacsVersionOf, pacsReadVersions, func(pp *pacsParser, doc int, hdr payment.Header) ([]*payment.Payment, error) {
		switch pp.typ {
		case typePacs9:
			return pp.pacs009(doc, hdr)
		case typeCamt54:
			return pp.camt054(doc, hdr)
		case typePacs2:
			return pp.pacs002(doc, hdr)
		}
		return pp.pacs008(doc, hdr)
	})
}

// parseDocument reads the first Document of input whose namespace
// versionOf recognises (of type want, when named) with read, with the
// AppHdr beside it; a version not in tested[typ] is read with
// PAY_VERSION_UNTESTED, and every leaf the mapping did not read is
// PAY_FIELD_DROPPED.
func parseDocument(input []byte, want string, versionOf func(ns string) (typ, version string, ok bool), tested map[string][]string,
	read func(pp *pacsParser, doc int, hdr payment.Header) ([]*payment.Payment, error)) ([]*payment.Payment, []statement.Warning, error) {
	return readDocument(input, tested, func(pp *pacsParser) (int, error) {
		t := pp.t
		for i := range t.nodes {
			if t.name(i) == "Document" {
				if typ, v, ok := versionOf(t.namespace(i)); ok {
					if want != "" && !strings.EqualFold(want, typ) {
						return -1, pp.fail(i, "document is %s, not %s", v, want)
					}
					pp.typ, pp.version = typ, v
					return i, nil
				}
			}
		}
		return -1, &statement.ParseError{Field: "Document", Reason: "no " + want + " Document element found"}
	}, read)
}

// readDocument reads the Document that find returns (setting the parser's
// type and version) with read, with the AppHdr beside it; a version not in
// tested[typ] is read with PAY_VERSION_UNTESTED, and every leaf the mapping
// did not read is PAY_FIELD_DROPPED.
func readDocument(input []byte, tested map[string][]string, find func(pp *pacsParser) (int, error),
	read func(pp *pacsParser, doc int, hdr payment.Header) ([]*payment.Payment, error)) ([]*payment.Payment, []statement.Warning, error) {
	t, err := parseTree(input)
	if err != nil {
		return nil, nil, err
	}
	defer t.release() // the payments keep strings of the input, never nodes
	pp := newPacsParser(t)
	doc, err := find(pp)
	if err != nil {
		return nil, nil, err
	}
	if !contains(tested[pp.typ], pp.version) {
		pp.w.AddText(payment.CodeVersionUntested, "Document", 0, pp.version+" read with the element paths of "+tested[pp.typ][0])
	}
	var hdr payment.Header
	if ah := t.find(-1, "AppHdr"); ah >= 0 {
		hdr = pp.appHdr(ah)
	}
	pays, err := read(pp, doc, hdr)
	if err != nil {
		return nil, nil, err
	}
	for _, id := range t.unused(doc) {
		path := t.pathOf(id)
		pp.w.AddText(payment.CodeFieldDropped, path, t.line(id), path+" has no place in the payment model and was not carried")
	}
	return pays, pp.w.Result(), nil
}

func (t *tree) line(id int) int {
	return 1 + strings.Count(t.src[:t.nodes[id].pos], "\n")
}

type pacsParser struct {
	t            *tree
	w            *payment.Warner
	typ, version string
	// warner is w's storage: parser and warner are one allocation.
	warner payment.Warner
	// agents is where agent takes its Agents from, a few at a time: a
	// pacs.004 names six or more agents, each an allocation of its own
	// before (issue 29).
	agents []payment.Agent
}

func newPacsParser(t *tree) *pacsParser {
	pp := &pacsParser{t: t}
	pp.w = &pp.warner
	return pp
}

// agentSlab is how many Agents agent allocates at once.
const agentSlab = 4

func (pp *pacsParser) fail(id int, format string, args ...any) error {
	return &statement.ParseError{Line: pp.t.line(id), Field: pp.t.pathOf(id), Reason: fmt.Sprintf(format, args...)}
}

// appHdr reads head.001 (any version: the elements we read are the same).
func (pp *pacsParser) appHdr(ah int) payment.Header {
	t := pp.t
	h := payment.Header{
		From:      t.get(ah, "Fr/FIId/FinInstnId/BICFI"),
		To:        t.get(ah, "To/FIId/FinInstnId/BICFI"),
		BizMsgIdr: t.get(ah, "BizMsgIdr"),
		MsgDefIdr: t.get(ah, "MsgDefIdr"),
		BizSvc:    t.get(ah, "BizSvc"),
	}
	if ts, ok := parseDateTime(t.get(ah, "CreDt")); ok {
		h.CreatedAt = ts
	}
	return h
}

func (pp *pacsParser) pacs008(doc int, hdr payment.Header) ([]*payment.Payment, error) {
	return pp.creditTransfers(doc, "FIToFICstmrCdtTrf", payment.Payment{Kind: payment.Customer, Header: hdr}, pp.transaction)
}

// creditTransfers reads the group header and every CdtTrfTxInf of the
// message element name under doc (pacs.008 and pacs.009 share the shape):
// one payment each, starting from base, its transaction read by tx.
func (pp *pacsParser) creditTransfers(doc int, name string, base payment.Payment, tx func(int, *payment.Payment) error) ([]*payment.Payment, error) {
	t := pp.t
	root, gh, err := pp.messageRoot(doc, name, &base)
	if err != nil {
		return nil, err
	}
	t.get(gh, "NbOfTxs") // read, so it is not reported as dropped
	st := t.child(gh, "SttlmInf")
	return pp.oneMTPerTx(root, "CdtTrfTxInf", &base, func(id int, p *payment.Payment) error {
		pp.settlement(st, p)
		return tx(id, p)
	}, "the message has no CdtTrfTxInf", "transactions")
}

// settlement reads GrpHdr/SttlmInf (st < 0: absent).
func (pp *pacsParser) settlement(st int, p *payment.Payment) {
	if st < 0 {
		return
	}
	t := pp.t
	p.SettlementMethod = t.get(st, "SttlmMtd")
	p.SettlementAccount = pp.account(st, "SttlmAcct")
	p.SendersCorrespondent = pp.agent(st, "InstgRmbrsmntAgt")
	p.ReceiversCorrespondent = pp.agent(st, "InstdRmbrsmntAgt")
	p.ThirdReimbursement = pp.agent(st, "ThrdRmbrsmntAgt")
	if p.SendersCorrespondent != nil && p.SettlementAccount == "" {
		p.SendersCorrespondent.Account = pp.account(st, "InstgRmbrsmntAgtAcct")
	}
	if p.ReceiversCorrespondent != nil {
		p.ReceiversCorrespondent.Account = pp.account(st, "InstdRmbrsmntAgtAcct")
	}
	if p.ThirdReimbursement != nil {
		p.ThirdReimbursement.Account = pp.account(st, "ThrdRmbrsmntAgtAcct")
	}
}

// paymentID reads PmtId below tx: InstrId, EndToEndId and the UETR.
func (pp *pacsParser) paymentID(tx int, p *payment.Payment) error {
	t := pp.t
	p.InstructionID = t.get(tx, "PmtId/InstrId")
	p.EndToEndID = t.get(tx, "PmtId/EndToEndId")
	var err error
	p.UETR, err = pp.uetr(tx, "PmtId/UETR")
	return err
}

// uetr reads the UETR at path below id, which must be a UUID v4 in lower
// case.
func (pp *pacsParser) uetr(id int, path string) (string, error) {
	u := pp.t.get(id, path)
	if u != "" && !payment.IsUETR(u) {
		return "", pp.fail(pp.t.at(id, path), "UETR %q is not a UUID v4 in lower case", clip(u))
	}
	return u, nil
}

// namedDate reads the ISO date of the element name below id: zero when
// absent, an error naming the element when it is not a date.
func (pp *pacsParser) namedDate(id int, name string) (statement.Date, error) {
	s := pp.t.get(id, name)
	if s == "" {
		return statement.Date{}, nil
	}
	d, ok := parseISODate(s)
	if !ok {
		return statement.Date{}, pp.fail(pp.t.child(id, name), "%s %q is not a date", name, clip(s))
	}
	return d, nil
}

// oneMTPerTx reads every element name below root as one payment, a copy
// of base that read completes; oneMTEach (at root's element) then says
// what one or several of them become.
func (pp *pacsParser) oneMTPerTx(root int, name string, base *payment.Payment, read func(tx int, p *payment.Payment) error, none, noun string) ([]*payment.Payment, error) {
	t := pp.t
	var out []*payment.Payment
	for tx := t.nodes[root].first; tx >= 0; tx = t.nodes[tx].next {
		if t.name(tx) != name {
			continue
		}
		p := new(payment.Payment)
		*p = *base
		if err := read(tx, p); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return pp.oneMTEach(out, root, none, t.name(root), noun)
}

// oneMTEach returns the payments read from root, failing with none when
// there is not one, and saying that each of several (noun) becomes one MT
// message.
func (pp *pacsParser) oneMTEach(out []*payment.Payment, root int, none, at, noun string) ([]*payment.Payment, error) {
	if len(out) == 0 {
		return nil, pp.fail(root, "%s", none)
	}
	if len(out) > 1 {
		pp.w.Add(payment.CodeSplit, at, 0, "%d %s: one MT message each", len(out), noun)
	}
	return out, nil
}

func (pp *pacsParser) transaction(tx int, p *payment.Payment) error {
	t := pp.t
	if err := pp.transactionHead(tx, p); err != nil {
		return err
	}
	var err error
	if id := t.child(tx, "InstdAmt"); id >= 0 {
		if p.InstructedAmount, err = pp.amount(id, false); err != nil {
			return err
		}
	}
	if p.ExchangeRate, err = pp.exchangeRate(tx); err != nil {
		return err
	}
	if err := pp.charges(tx, p); err != nil {
		return err
	}
	pp.routingAgents(tx, p)
	p.Debtor = pp.party(tx, "Dbtr")
	p.DebtorAgent = pp.agentAcct(tx, "DbtrAgt")
	p.CreditorAgent = pp.agentAcct(tx, "CdtrAgt")
	p.Creditor = pp.party(tx, "Cdtr")
	if p.Debtor == nil || p.Creditor == nil {
		return pp.fail(tx, "Dbtr and Cdtr are mandatory")
	}
	pp.textsAndPurpose(tx, p)
	return nil
}

// transactionHead reads what a CdtTrfTxInf (pacs.008, pacs.009) starts
// with: PmtId, PmtTpInf, IntrBkSttlmAmt and IntrBkSttlmDt, the last two of
// which an MT needs (:32A:).
func (pp *pacsParser) transactionHead(tx int, p *payment.Payment) error {
	t := pp.t
	err := pp.paymentID(tx, p)
	if err != nil {
		return err
	}
	pp.paymentType(tx, p)
	if p.Amount, err = pp.amount(t.child(tx, "IntrBkSttlmAmt"), true); err != nil {
		return err
	}
	d := t.get(tx, "IntrBkSttlmDt")
	if d == "" {
		return pp.fail(tx, "IntrBkSttlmDt is missing: MT needs the value date (:32A:)")
	}
	var ok bool
	if p.SettlementDate, ok = parseISODate(d); !ok {
		return pp.fail(t.child(tx, "IntrBkSttlmDt"), "%q is not a date", clip(d))
	}
	return nil
}

// routingAgents reads the agents a CdtTrfTxInf names before its debtor:
// the previous instructing agent, the instructing and instructed agents
// and the intermediary.
func (pp *pacsParser) routingAgents(tx int, p *payment.Payment) {
	p.PreviousInstructingAgent = pp.agent(tx, "PrvsInstgAgt1")
	p.InstructingAgent = pp.agent(tx, "InstgAgt")
	p.InstructedAgent = pp.agent(tx, "InstdAgt")
	p.Intermediary = pp.agentAcct(tx, "IntrmyAgt1")
}

// textsAndPurpose reads a CdtTrfTxInf's instructions, regulatory and
// remittance texts (texts) and its Purp.
func (pp *pacsParser) textsAndPurpose(tx int, p *payment.Payment) {
	pp.texts(tx, p)
	p.Purpose = firstOf(pp.t.get(tx, "Purp/Prtry"), pp.t.get(tx, "Purp/Cd"))
}

// overrideAgents reads the InstgAgt and InstdAgt of a transaction below
// tx, which replace the group header's when present.
func (pp *pacsParser) overrideAgents(tx int, p *payment.Payment) {
	if a := pp.agent(tx, "InstgAgt"); a != nil {
		p.InstructingAgent = a
	}
	if a := pp.agent(tx, "InstdAgt"); a != nil {
		p.InstructedAgent = a
	}
}

// reasons reads every element name (StsRsnInf, RtrRsnInf) below tx: the
// first Rsn code is the reason, later codes and every AddtlInf the info.
func (pp *pacsParser) reasons(tx int, name string) (reason string, info []string) {
	t := pp.t
	for c := t.nodes[tx].first; c >= 0; c = t.nodes[c].next {
		if t.name(c) != name {
			continue
		}
		if r := firstOf(t.get(c, "Rsn/Cd"), t.get(c, "Rsn/Prtry")); r != "" {
			if reason == "" {
				reason = r
			} else {
				info = append(info, r)
			}
		}
		for a := t.nodes[c].first; a >= 0; a = t.nodes[a].next {
			if t.name(a) == "AddtlInf" && t.text(a) != "" {
				t.nodes[a].used = true
				info = append(info, t.text(a))
			}
		}
	}
	return reason, info
}

// originalRefs reads what identifies the original message and transaction
// of a status or return: OrgnlGrpInf, OrgnlEndToEndId and OrgnlUETR
// (OrgnlInstrId the caller reads: where it goes differs).
func (pp *pacsParser) originalRefs(tx int, p *payment.Payment) error {
	t := pp.t
	p.OriginalMessageID = t.get(tx, "OrgnlGrpInf/OrgnlMsgId")
	p.OriginalMessageType = t.get(tx, "OrgnlGrpInf/OrgnlMsgNmId")
	p.EndToEndID = t.get(tx, "OrgnlEndToEndId")
	var err error
	p.UETR, err = pp.uetr(tx, "OrgnlUETR")
	return err
}

// exchangeRate reads the XchgRate below id, which must be a positive
// decimal; zero when there is none.
func (pp *pacsParser) exchangeRate(id int) (decimal.Decimal, error) {
	r := pp.t.get(id, "XchgRate")
	if r == "" {
		return decimal.Decimal{}, nil
	}
	v, err := parseDecimal(r)
	if err != nil || !v.IsPositive() {
		return decimal.Decimal{}, pp.fail(pp.t.child(id, "XchgRate"), "exchange rate %q is not a positive decimal", clip(r))
	}
	return v, nil
}

// charges reads the ChrgBr and ChrgsInf of a transaction (pacs.008, pacs.004): the
// receiver's charges (:71G:) are the one entry whose agent is the
// instructed agent when the debtor bears all charges (DEBT, :71A: OUR, the
// only bearer with which :71G: is allowed); every other entry is charges
// deducted on the way (:71F:).
func (pp *pacsParser) charges(tx int, p *payment.Payment) error {
	t := pp.t
	p.ChargeBearer = t.get(tx, "ChrgBr")
	instd := t.get(tx, "InstdAgt/FinInstnId/BICFI")
	for c := t.nodes[tx].first; c >= 0; c = t.nodes[c].next {
		if t.name(c) != "ChrgsInf" {
			continue
		}
		a, err := pp.amount(t.child(c, "Amt"), false)
		if err != nil {
			return err
		}
		agt := pp.agent(c, "Agt")
		if agt != nil && instd != "" && strings.HasPrefix(agt.BIC, instd[:min(8, len(instd))]) && p.ChargeBearer == "DEBT" && p.ReceiverCharges.Currency == "" {
			p.ReceiverCharges = a
		} else {
			p.SenderCharges = append(p.SenderCharges, a)
		}
	}
	return nil
}

func firstOf(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// amount reads an amount element with its Ccy attribute; it must exist when
// required.
func (pp *pacsParser) amount(id int, required bool) (statement.Amount, error) {
	if id < 0 {
		if required {
			return statement.Amount{}, &statement.ParseError{Field: "IntrBkSttlmAmt", Reason: "IntrBkSttlmAmt is missing"}
		}
		return statement.Amount{}, nil
	}
	t := pp.t
	t.nodes[id].used = true
	ccy := t.attr(id, "Ccy")
	if !payment.IsCurrency(ccy) {
		return statement.Amount{}, pp.fail(id, "currency %q is not an ISO 4217 code", clip(ccy))
	}
	v, err := parseDecimal(t.text(id))
	if err != nil || v.IsNegative() {
		return statement.Amount{}, pp.fail(id, "amount %q is not a non-negative decimal", clip(t.text(id)))
	}
	if -v.Exponent() > int32(payment.MinorUnits(ccy)) && !v.Equal(v.Truncate(int32(payment.MinorUnits(ccy)))) {
		return statement.Amount{}, pp.fail(id, "amount %s has more decimals than %s allows (%d)", v.String(), ccy, payment.MinorUnits(ccy))
	}
	return statement.Amount{Value: v, Currency: ccy}, nil
}

// account reads a CashAccount38 (IBAN or other id).
func (pp *pacsParser) account(id int, name string) string {
	a := pp.t.child(id, name)
	if a < 0 {
		return ""
	}
	return firstOf(pp.t.get(a, "Id/IBAN"), pp.t.get(a, "Id/Othr/Id"))
}

// agent reads a BranchAndFinancialInstitutionIdentification6.
func (pp *pacsParser) agent(parent int, name string) *payment.Agent {
	t := pp.t
	id := t.child(parent, name)
	if id < 0 {
		return nil
	}
	fi := t.child(id, "FinInstnId")
	if len(pp.agents) == cap(pp.agents) {
		pp.agents = make([]payment.Agent, 0, agentSlab)
	}
	pp.agents = append(pp.agents, payment.Agent{
		BIC:            t.get(fi, "BICFI"),
		ClearingSystem: firstOf(t.get(fi, "ClrSysMmbId/ClrSysId/Cd"), t.get(fi, "ClrSysMmbId/ClrSysId/Prtry")),
		ClearingMember: t.get(fi, "ClrSysMmbId/MmbId"),
		Name:           t.get(fi, "Nm"),
		Address:        pp.address(t.child(fi, "PstlAdr")),
	})
	return &pp.agents[len(pp.agents)-1]
}

// agentAcct reads an agent and its account (name + "Acct").
func (pp *pacsParser) agentAcct(parent int, name string) *payment.Agent {
	a := pp.agent(parent, name)
	if a != nil {
		a.Account = pp.account(parent, name+"Acct")
	}
	return a
}

func (pp *pacsParser) address(id int) payment.Address {
	var a payment.Address
	if id < 0 {
		return a
	}
	t := pp.t
	a.Street = t.get(id, "StrtNm")
	a.Building = t.get(id, "BldgNb")
	a.PostCode = t.get(id, "PstCd")
	a.Town = t.get(id, "TwnNm")
	a.District = t.get(id, "CtrySubDvsn")
	a.Country = t.get(id, "Ctry")
	for c := t.nodes[id].first; c >= 0; c = t.nodes[c].next {
		if t.name(c) == "AdrLine" && t.text(c) != "" {
			t.nodes[c].used = true
			a.Lines = append(a.Lines, t.text(c))
		}
	}
	return a
}

// party reads a PartyIdentification135 and its account (name + "Acct").
func (pp *pacsParser) party(parent int, name string) *payment.Party {
	t := pp.t
	id := t.child(parent, name)
	if id < 0 {
		return nil
	}
	p := &payment.Party{Name: t.get(id, "Nm"), Address: pp.address(t.child(id, "PstlAdr"))}
	p.Account = pp.account(parent, name+"Acct")
	if org := t.at(id, "Id/OrgId"); org >= 0 {
		p.BIC = t.get(org, "AnyBIC")
		for o := t.nodes[org].first; o >= 0; o = t.nodes[o].next {
			if t.name(o) == "Othr" {
				p.IDs = append(p.IDs, payment.PartyID{OrgForm: true, Value: t.get(o, "Id"),
					Scheme: firstOf(t.get(o, "SchmeNm/Cd"), t.get(o, "SchmeNm/Prtry")), Issuer: t.get(o, "Issr")})
			}
		}
	}
	if prv := t.at(id, "Id/PrvtId"); prv >= 0 {
		if b := t.child(prv, "DtAndPlcOfBirth"); b >= 0 {
			if d, ok := parseISODate(t.get(b, "BirthDt")); ok {
				p.BirthDate = d
			}
			p.BirthCity, p.BirthCountry = t.get(b, "CityOfBirth"), t.get(b, "CtryOfBirth")
		}
		for o := t.nodes[prv].first; o >= 0; o = t.nodes[o].next {
			if t.name(o) == "Othr" {
				p.IDs = append(p.IDs, payment.PartyID{Value: t.get(o, "Id"),
					Scheme: firstOf(t.get(o, "SchmeNm/Cd"), t.get(o, "SchmeNm/Prtry")), Issuer: t.get(o, "Issr")})
			}
		}
	}
	if !bankid.ValidIBAN(p.Account) && len(p.Account) > 4 && payment.IsCountry(p.Account[:2]) && isDigits(p.Account[2:4]) && t.at(parent, name+"Acct/Id/IBAN") >= 0 {
		pp.w.Add(payment.CodeNonstandard, name+"Acct/Id/IBAN", 0, "IBAN %q has invalid check digits", clip(p.Account))
	}
	return p
}

// paymentType reads PmtTpInf below tx.
func (pp *pacsParser) paymentType(tx int, p *payment.Payment) {
	t := pp.t
	if pti := t.child(tx, "PmtTpInf"); pti >= 0 {
		for c := t.nodes[pti].first; c >= 0; c = t.nodes[c].next {
			if t.name(c) != "SvcLvl" {
				continue
			}
			if v := t.get(c, "Cd"); v != "" {
				p.ServiceLevels = append(p.ServiceLevels, v)
			} else if v := t.get(c, "Prtry"); v != "" {
				p.ServiceLevels = append(p.ServiceLevels, v)
			}
		}
		p.LocalInstrument = firstOf(t.get(pti, "LclInstrm/Cd"), t.get(pti, "LclInstrm/Prtry"))
		p.CategoryPurpose = firstOf(t.get(pti, "CtgyPurp/Cd"), t.get(pti, "CtgyPurp/Prtry"))
	}
}

// texts reads the instructions, regulatory lines and unstructured
// remittance of a transaction (tx) or an underlying customer transfer.
func (pp *pacsParser) texts(tx int, p *payment.Payment) {
	t := pp.t
	for c := t.nodes[tx].first; c >= 0; c = t.nodes[c].next {
		switch t.name(c) {
		case "InstrForCdtrAgt":
			p.InstructionsForCreditorAgent = append(p.InstructionsForCreditorAgent, payment.Instruction{Code: t.get(c, "Cd"), Text: t.get(c, "InstrInf")})
		case "InstrForNxtAgt":
			p.InstructionsForNextAgent = append(p.InstructionsForNextAgent, payment.Instruction{Code: t.get(c, "Cd"), Text: t.get(c, "InstrInf")})
		case "RgltryRptg":
			for d := t.nodes[c].first; d >= 0; d = t.nodes[d].next {
				if t.name(d) != "Dtls" {
					continue
				}
				for inf := t.nodes[d].first; inf >= 0; inf = t.nodes[inf].next {
					if t.name(inf) == "Inf" && t.text(inf) != "" {
						t.nodes[inf].used = true
						p.Regulatory = append(p.Regulatory, t.text(inf))
					}
				}
			}
		case "RmtInf":
			for u := t.nodes[c].first; u >= 0; u = t.nodes[u].next {
				if t.name(u) == "Ustrd" && t.text(u) != "" {
					t.nodes[u].used = true
					p.Remittance = append(p.Remittance, t.text(u))
				}
			}
		}
	}
}
