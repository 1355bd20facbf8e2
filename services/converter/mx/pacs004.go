package mx

import (
	"fmt"

	"github.com/ledgerlane/platform/services/converter/engine"
	"github.com/ledgerlane/platform/services/converter/payment"
	"github.com/ledgerlane/platform/services/converter/statement"
)

// pacs.004.001.09 (PaymentReturnV09) as the MX of an MT103, MT202 or MT205
// return (/RETN/ in :72:): one TxInf per return. ReturnFormats gives the
// reader, writer and detector to the engine.

const typePacs4 = "pacs.004"

// returnReadVersions are the pacs.004 versions whose elements we read were
// checked against the schemas; .001.10 and .001.13 are read with
// PAY_VERSION_UNTESTED.
var returnReadVersions = []string{"pacs.004.001.09"}

// ReturnVersions are the pacs.004 versions RenderReturns writes.
var ReturnVersions = []string{"pacs.004.001.09"}

// ParseReturns reads a pacs.004 (every TxInf is one return), with or
// without its business application header, bare or in an envelope.
func ParseReturns(input []byte) ([]*payment.Payment, []statement.Warning, error) {
	return readDocument(input, returnTested, func(pp *pacsParser) (int, error) {
		t := pp.t
		for i := range t.nodes {
			if t.name(i) == "Document" {
				_, v, ok := returnVersionOf(t.namespace(i))
				if !ok {
					return -1, pp.fail(i, "document is %s, not pacs.004", clip(t.namespace(i)))
				}
				pp.typ, pp.version = typePacs4, v
				return i, nil
			}
		}
		return -1, &statement.ParseError{Field: "Document", Reason: "no pacs.004 Document element found"}
	}, (*pacsParser).pacs004)
}

// returnTested is returnReadVersions as readDocument takes them.
var returnTested = map[string][]string{typePacs4: returnReadVersions}

func (pp *pacsParser) pacs004(doc int, hdr payment.Header) ([]*payment.Payment, error) {
	t := pp.t
	base := payment.Payment{Kind: payment.Return, Header: hdr}
	root, gh, err := pp.messageRoot(doc, "PmtRtr", &base)
	if err != nil {
		return nil, err
	}
	t.get(gh, "NbOfTxs")
	st := t.child(gh, "SttlmInf")
	base.InstructingAgent, base.InstructedAgent = pp.agent(gh, "InstgAgt"), pp.agent(gh, "InstdAgt")
	return pp.oneMTPerTx(root, "TxInf", &base, func(tx int, p *payment.Payment) error {
		pp.settlement(st, p)
		return pp.returnTx(tx, p)
	}, "the message has no TxInf (a group return alone has no MT form)", "returns")
}

func (pp *pacsParser) returnTx(tx int, p *payment.Payment) error {
	t := pp.t
	if id := t.get(tx, "RtrId"); id != "" {
		if p.MessageID == "" {
			p.MessageID = id
		} else if id != p.MessageID {
			pp.w.Add(payment.CodeFieldDropped, "TxInf/RtrId", t.line(t.child(tx, "RtrId")), "return id %s differs from GrpHdr/MsgId %s and has no MT field (:20: is the message id)", clip(id), clip(p.MessageID))
		}
	}
	p.OriginalInstructionID = t.get(tx, "OrgnlInstrId")
	if err := pp.originalRefs(tx, p); err != nil {
		return err
	}
	amt := t.child(tx, "RtrdIntrBkSttlmAmt")
	if amt < 0 {
		return pp.fail(tx, "RtrdIntrBkSttlmAmt is missing")
	}
	var err error
	if p.Amount, err = pp.amount(amt, true); err != nil {
		return err
	}
	if d := t.child(tx, "IntrBkSttlmDt"); d >= 0 {
		dt, ok := parseISODate(t.get(tx, "IntrBkSttlmDt"))
		if !ok {
			return pp.fail(d, "IntrBkSttlmDt %q is not a date", clip(t.text(d)))
		}
		p.SettlementDate = dt
	} else {
		return pp.fail(tx, "IntrBkSttlmDt is missing (an MT return's :32A: needs the value date)")
	}
	if p.InstructedAmount, err = pp.amount(t.child(tx, "RtrdInstdAmt"), false); err != nil {
		return err
	}
	if x := t.get(tx, "XchgRate"); x != "" {
		r, err := parseDecimal(x)
		if err != nil {
			return pp.fail(t.child(tx, "XchgRate"), "XchgRate %q is not a decimal", clip(x))
		}
		p.ExchangeRate = r
	}
	if err := pp.charges(tx, p); err != nil {
		return err
	}
	pp.overrideAgents(tx, p)
	if ch := t.child(tx, "RtrChain"); ch >= 0 {
		p.Debtor, p.DebtorFI = pp.party40(ch, "Dbtr")
		p.Creditor, p.CreditorFI = pp.party40(ch, "Cdtr")
		p.DebtorAgent = pp.agent(ch, "DbtrAgt")
		p.Intermediary = pp.agent(ch, "IntrmyAgt1")
		p.CreditorAgent = pp.agent(ch, "CdtrAgt")
	}
	p.ReturnReason, p.ReturnInfo = pp.reasons(tx, "RtrRsnInf")
	return nil
}

// party40 reads a Party40Choice: a party (Pty) or an agent (Agt).
func (pp *pacsParser) party40(parent int, name string) (*payment.Party, *payment.Agent) {
	id := pp.t.child(parent, name)
	if id < 0 {
		return nil, nil
	}
	if pp.t.child(id, "Agt") >= 0 {
		return nil, pp.agent(id, "Agt")
	}
	return pp.party(id, "Pty"), nil
}

// RenderReturns writes each return as one message: an Envelope holding the
// head.001.001.02 AppHdr and the pacs.004 Document.
func RenderReturns(ps []*payment.Payment, version string) ([]string, []statement.Warning, error) {
	if !contains(ReturnVersions, version) {
		return nil, nil, fmt.Errorf("unsupported %s version %q", typePacs4, version)
	}
	return renderEach(ps, typePacs4, version, func(p *payment.Payment) string {
		if p.Kind != payment.Return {
			return fmt.Sprintf("a %s payment is not a return (pacs.004): convert it to %s", p.Kind, payment.MXType(p.Kind))
		}
		return ""
	})
}

// pacs004 writes a PmtRtr with one TxInf.
func (r *pacsRenderer) pacs004(p *payment.Payment, ref string, created string, from, to string) error {
	w := &r.w
	w.open("PmtRtr")
	msgID := firstOf(p.MessageID, ref)
	r.returnGroupHeader(p, msgID, created)
	w.open("TxInf")
	r.leaf("RtrId", msgID, 35, "TxInf/RtrId")
	r.returnOriginal(p)
	if err := r.amounts(p, "RtrdIntrBkSttlmAmt", "TxInf/RtrdIntrBkSttlmAmt", "RtrdInstdAmt", "TxInf/RtrdInstdAmt", "TxInf/XchgRate"); err != nil {
		return err
	}
	if err := r.returnCharges(p, from, to); err != nil {
		return err
	}
	r.instructingAgents(p, from, to, "TxInf/InstgAgt", "TxInf/InstdAgt")
	r.returnChain(p, from, to)
	if p.ReturnReason != "" || len(p.ReturnInfo) > 0 {
		w.open("RtrRsnInf")
		r.reasonInfo(p.ReturnReason, p.ReturnInfo, "TxInf/RtrRsnInf")
		w.close("RtrRsnInf")
	}
	w.close("TxInf")
	w.close("PmtRtr")
	r.returnDropped(p)
	return nil
}

// returnGroupHeader writes GrpHdr: the message id, creation time, one
// transaction and SttlmInf (INDA, or COVE when there is a correspondent,
// unless the method is named) with its account and reimbursement agents.
func (r *pacsRenderer) returnGroupHeader(p *payment.Payment, msgID, created string) {
	w := &r.w
	r.openGroupHeader(msgID, created)
	w.leaf("NbOfTxs", "1")
	r.settlementInfo(p)
	w.close("GrpHdr")
}

// returnOriginal writes what identifies the returned payment: OrgnlGrpInf
// (NOTPROVIDED for a part that is missing), OrgnlInstrId, OrgnlEndToEndId
// and OrgnlUETR.
func (r *pacsRenderer) returnOriginal(p *payment.Payment) {
	w := &r.w
	if p.OriginalMessageID != "" || p.OriginalMessageType != "" {
		w.open("OrgnlGrpInf")
		om, nm := p.OriginalMessageID, p.OriginalMessageType
		if om == "" {
			om = "NOTPROVIDED"
			r.warn.Add(payment.CodeFieldDefaulted, r.path("TxInf/OrgnlGrpInf/OrgnlMsgId"), 0, "no original message id: NOTPROVIDED")
		}
		if nm == "" {
			nm = "NOTPROVIDED"
			r.warn.Add(payment.CodeFieldDefaulted, r.path("TxInf/OrgnlGrpInf/OrgnlMsgNmId"), 0, "no original message name: NOTPROVIDED")
		}
		r.leaf("OrgnlMsgId", om, 35, "TxInf/OrgnlGrpInf/OrgnlMsgId")
		r.leaf("OrgnlMsgNmId", nm, 35, "TxInf/OrgnlGrpInf/OrgnlMsgNmId")
		w.close("OrgnlGrpInf")
	}
	r.originalTxIDs(p, p.OriginalInstructionID, "TxInf/OrgnlInstrId", "TxInf/OrgnlEndToEndId")
}

// returnCharges writes ChrgBr and, as in pacs.008, the returning bank's
// charges (:71F:) and the receiver's (:71G:): ChrgsInf with the sender, or
// the receiver, as agent.
func (r *pacsRenderer) returnCharges(p *payment.Payment, from, to string) error {
	w := &r.w
	if p.ChargeBearer != "" {
		w.leaf("ChrgBr", p.ChargeBearer)
	}
	return r.chargesInf(p, from, to, "TxInf/ChrgsInf")
}

// returnChain writes RtrChain: the debtor and creditor as parties (MT103)
// or agents (MT202/205) with the agents between them.
func (r *pacsRenderer) returnChain(p *payment.Payment, from, to string) {
	w := &r.w
	w.open("RtrChain")
	r.party40("Dbtr", p.Debtor, p.DebtorFI, from, "TxInf/RtrChain/Dbtr")
	if p.DebtorAgent != nil {
		r.agent("DbtrAgt", p.DebtorAgent, "TxInf/RtrChain/DbtrAgt")
	}
	if p.Intermediary != nil {
		r.agent("IntrmyAgt1", p.Intermediary, "TxInf/RtrChain/IntrmyAgt1")
	}
	if p.CreditorAgent != nil {
		r.agent("CdtrAgt", p.CreditorAgent, "TxInf/RtrChain/CdtrAgt")
	}
	r.party40("Cdtr", p.Creditor, p.CreditorFI, to, "TxInf/RtrChain/Cdtr")
	w.close("RtrChain")
	for _, a := range []struct {
		acct, rel string
	}{{partyAccount(p.Debtor), "TxInf/RtrChain/Dbtr/Pty (account)"}, {partyAccount(p.Creditor), "TxInf/RtrChain/Cdtr/Pty (account)"}} {
		if a.acct != "" {
			r.warn.Add(payment.CodeFieldDropped, r.path(a.rel), 0, "account %s has no place in pacs.004 RtrChain", clip(a.acct))
		}
	}
	for _, a := range []struct {
		ag  *payment.Agent
		rel string
	}{{p.DebtorAgent, "TxInf/RtrChain/DbtrAgt"}, {p.CreditorAgent, "TxInf/RtrChain/CdtrAgt"}, {p.Intermediary, "TxInf/RtrChain/IntrmyAgt1"}, {p.DebtorFI, "TxInf/RtrChain/Dbtr/Agt"}, {p.CreditorFI, "TxInf/RtrChain/Cdtr/Agt"}} {
		if a.ag != nil && a.ag.Account != "" {
			r.warn.Add(payment.CodeFieldDropped, r.path(a.rel), 0, "agent account %s has no place in pacs.004 RtrChain", clip(a.ag.Account))
		}
	}
}

func partyAccount(p *payment.Party) string {
	if p == nil {
		return ""
	}
	return p.Account
}

func (r *pacsRenderer) party40(name string, pt *payment.Party, ag *payment.Agent, dflt, rel string) {
	w := &r.w
	w.open(name)
	switch {
	case pt != nil:
		// Party40Choice has no account beside Pty (returnChain reports it
		// dropped): party would write one as PtyAcct, which the schema refuses.
		c := *pt
		c.Account = ""
		r.party("Pty", &c, rel+"/Pty")
	case ag != nil:
		r.agent("Agt", ag, rel+"/Agt")
	default:
		r.warn.Add(payment.CodeAgentDefaulted, r.path(rel), 0, "no %s in the return: the %s agent %s", name, map[string]string{"Dbtr": "instructing", "Cdtr": "instructed"}[name], dflt)
		r.agent("Agt", &payment.Agent{BIC: dflt}, rel+"/Agt")
	}
	w.close(name)
}

// returnDropped warns of what a return's pacs.004 has no place for.
func (r *pacsRenderer) returnDropped(p *payment.Payment) {
	drop := func(rel, what string) {
		r.warn.Add(payment.CodeFieldDropped, r.path(rel), 0, "%s has no place in pacs.004", what)
	}
	if p.ReturnField != "" && p.ReturnField != "99" {
		drop(":72: /RETN/", "the original field /RETN/"+clip(p.ReturnField))
	}
	if len(p.Remittance) > 0 {
		drop(":70:", "remittance information")
	}
	if len(p.Regulatory) > 0 {
		drop(":77B:", "regulatory reporting")
	}
	if len(p.ServiceLevels) > 0 || p.LocalInstrument != "" || p.CategoryPurpose != "" || p.Purpose != "" {
		drop(":23E:/:26T:/:72:", "payment type information and purpose")
	}
	if len(p.InstructionsForCreditorAgent) > 0 || len(p.InstructionsForNextAgent) > 0 || p.PreviousInstructingAgent != nil {
		drop(":23E:/:72:", "instructions for agents")
	}
	if p.BankOperationCode != "" && p.BankOperationCode != "CRED" {
		drop(":23B:", "bank operation code "+p.BankOperationCode)
	}
}

// ReturnFormats is what this package adds to a conversion engine for
// returns: the pacs.004 parser and renderer (an Envelope with the
// head.001.001.02 AppHdr and the Document) and the pacs.004 detector. The
// MT side (MT103, MT202, MT205 with /RETN/) is in mt.PaymentFormats.
func ReturnFormats() engine.FormatSet {
	return engine.FormatSet{
		Parsers: []engine.Parser{{
			Type:     typePacs4,
			Versions: returnReadVersions,
			ParsePayments: func(input []byte, _ string, _ statement.Options) ([]*payment.Payment, []statement.Warning, error) {
				return ParseReturns(input)
			},
		}},
		Renderers: []engine.Renderer{paymentRenderer(typePacs4, ReturnVersions, []string{"MT103", "MT202", "MT205", typePacs4},
			func(ps []*payment.Payment, _, version string) ([]string, []statement.Warning, error) {
				return RenderReturns(ps, version)
			})},
		Detectors:     []engine.Detector{DetectReturn},
		HeadDetectors: []engine.HeadDetector{detectReturnHead},
	}
}

// DetectReturn recognises pacs.004 from the Document namespace, else from
// the AppHdr's MsgDefIdr.
func DetectReturn(input []byte) (string, string, bool) {
	return detectNamespace(input, returnPrefix, returnTypes)
}

// returnVersionOf returns the type and version of a pacs.004 namespace.
func returnVersionOf(ns string) (typ, version string, ok bool) {
	return versionIn(ns, returnTypes)
}

var returnTypes = []string{typePacs4}
