package mx

import (
	"fmt"
	"strings"

	"github.com/ledgerlane/platform/services/converter/payment"
	"github.com/ledgerlane/platform/services/converter/statement"
)

// pacs.002.001.10 (FIToFIPaymentStatusReportV10) as the MX of an MT199 or
// MT299 status: a reject (/REJT/ in :79:) or another status in the gpi
// status confirmation form (status time, //CODE[/REASON]); one TxInfAndSts
// per status.

const typePacs2 = "pacs.002"

func (pp *pacsParser) pacs002(doc int, hdr payment.Header) ([]*payment.Payment, error) {
	base := payment.Payment{Kind: payment.Status, Header: hdr}
	root, gh, err := pp.messageRoot(doc, "FIToFIPmtStsRpt", &base)
	if err != nil {
		return nil, err
	}
	base.InstructingAgent, base.InstructedAgent = pp.agent(gh, "InstgAgt"), pp.agent(gh, "InstdAgt")
	return pp.oneMTPerTx(root, "TxInfAndSts", &base, pp.statusTx, "the report has no TxInfAndSts (a group status alone has no MT199 form)", "transaction statuses")
}

// statusTx reads one TxInfAndSts into p.
func (pp *pacsParser) statusTx(tx int, p *payment.Payment) error {
	t := pp.t
	p.InstructionID = t.get(tx, "OrgnlInstrId")
	if err := pp.originalRefs(tx, p); err != nil {
		return err
	}
	p.TransactionStatus = t.get(tx, "TxSts")
	if p.TransactionStatus == "" {
		return pp.fail(tx, "TxSts is missing")
	}
	p.StatusReason, p.StatusInfo = pp.reasons(tx, "StsRsnInf")
	// The rejected transfer's amount and date (an MT103/202/205 reject
	// carries them in :32A:).
	if ref := t.child(tx, "OrgnlTxRef"); ref >= 0 {
		var err error
		if p.Amount, err = pp.amount(t.child(ref, "IntrBkSttlmAmt"), false); err != nil {
			return err
		}
		if p.SettlementDate, err = pp.namedDate(ref, "IntrBkSttlmDt"); err != nil {
			return err
		}
		pp.originalParties(ref, p)
	}
	if s := t.get(tx, "AccptncDtTm"); s != "" {
		at, ok := parseDateTime(s)
		if !ok {
			return pp.fail(t.child(tx, "AccptncDtTm"), "AccptncDtTm %q is not a date and time", clip(s))
		}
		p.StatusTime = at
	}
	pp.overrideAgents(tx, p)
	return nil
}

// pacs002 writes an FIToFIPmtStsRpt with one TxInfAndSts.
func (r *pacsRenderer) pacs002(p *payment.Payment, ref, created, from, to string) error {
	w := &r.w
	if p.Kind != payment.Status {
		return &statement.ParseError{Message: r.no, Reason: fmt.Sprintf("a %s payment is not a status report", p.Kind)}
	}
	w.open("FIToFIPmtStsRpt")
	r.openGroupHeader(firstOf(p.MessageID, ref), created)
	w.close("GrpHdr")
	w.open("TxInfAndSts")
	w.open("OrgnlGrpInf")
	om := firstOf(p.OriginalMessageID, p.InstructionID)
	if om == "" {
		om = "NOTPROVIDED"
		r.warn.Add(payment.CodeFieldDefaulted, r.path("TxInfAndSts/OrgnlGrpInf/OrgnlMsgId"), 0, "no original message reference: NOTPROVIDED")
	} else if p.OriginalMessageID == "" {
		r.warn.Add(payment.CodeFieldDefaulted, r.path("TxInfAndSts/OrgnlGrpInf/OrgnlMsgId"), 0, "no /MREF/: OrgnlMsgId is the related reference :21:")
	}
	r.leaf("OrgnlMsgId", om, 35, "TxInfAndSts/OrgnlGrpInf/OrgnlMsgId")
	nm := p.OriginalMessageType
	if nm == "" {
		nm = "NOTPROVIDED"
		r.warn.Add(payment.CodeFieldDefaulted, r.path("TxInfAndSts/OrgnlGrpInf/OrgnlMsgNmId"), 0, "the original message's type is not stated (/REJT/99, or a gpi status confirmation): NOTPROVIDED")
	}
	r.leaf("OrgnlMsgNmId", nm, 35, "TxInfAndSts/OrgnlGrpInf/OrgnlMsgNmId")
	w.close("OrgnlGrpInf")
	r.originalTxIDs(p, p.InstructionID, "TxInfAndSts/OrgnlInstrId", "TxInfAndSts/OrgnlEndToEndId")
	r.leaf("TxSts", p.TransactionStatus, 4, "TxInfAndSts/TxSts")
	if p.StatusReason != "" || len(p.StatusInfo) > 0 {
		w.open("StsRsnInf")
		r.reasonInfo(p.StatusReason, p.StatusInfo, "TxInfAndSts/StsRsnInf")
		w.close("StsRsnInf")
	}
	if !p.StatusTime.IsZero() {
		w.rawLeaf("AccptncDtTm", appendOffsetTime(r.num[:0], p.StatusTime))
	}
	r.instructingAgents(p, from, to, "TxInfAndSts/InstgAgt", "TxInfAndSts/InstdAgt")
	if p.Amount.Currency != "" || !p.SettlementDate.IsZero() || hasParties(p) {
		w.open("OrgnlTxRef")
		if p.Amount.Currency != "" {
			if err := r.amount("IntrBkSttlmAmt", p.Amount, "TxInfAndSts/OrgnlTxRef/IntrBkSttlmAmt"); err != nil {
				return err
			}
		}
		if !p.SettlementDate.IsZero() {
			w.rawLeaf("IntrBkSttlmDt", p.SettlementDate.AppendISO(r.num[:0]))
		}
		r.originalParties(p)
		w.close("OrgnlTxRef")
	}
	w.close("TxInfAndSts")
	w.close("FIToFIPmtStsRpt")
	r.statusDropped(p)
	return nil
}

// statusDropped warns of what a status report read from an MT103/202/205
// reject (/REJT/ in :72:) carries beyond what OrgnlTxRef holds (amount,
// date, debtor, creditor and their agents): intermediary, settlement,
// charges and texts, which pacs.002 has no place for.
func (r *pacsRenderer) statusDropped(p *payment.Payment) {
	var what []string
	add := func(ok bool, s string) {
		if ok {
			what = append(what, s)
		}
	}
	add(p.Intermediary != nil, "intermediary (:56a:)")
	add(p.SendersCorrespondent != nil || p.ReceiversCorrespondent != nil || p.SettlementAccount != "", "settlement (:53a:, :54a:)")
	add(p.InstructedAmount.Currency != "" && !p.InstructedAmount.Value.Equal(p.Amount.Value), "instructed amount (:33B:)")
	add(len(p.SenderCharges) > 0 || p.ReceiverCharges.Currency != "" || p.ChargeBearer != "", "charges (:71A:, :71F:, :71G:)")
	add(len(p.Remittance) > 0 || len(p.Regulatory) > 0, "remittance and regulatory texts (:70:, :77B:)")
	add(p.ReturnField != "" && p.ReturnField != "99", "the rejected field /REJT/"+clip(p.ReturnField))
	if len(what) > 0 {
		r.warn.Add(payment.CodeFieldDropped, r.path("TxInfAndSts"), 0, "the rejected transfer's %s have no place in pacs.002", strings.Join(what, ", "))
	}
}

// hasParties reports whether a status carries the rejected transfer's
// parties (an MT103/202/205 reject, or a pacs.002 OrgnlTxRef).
func hasParties(p *payment.Payment) bool {
	return p.Debtor != nil || p.DebtorFI != nil || p.Creditor != nil || p.CreditorFI != nil || p.DebtorAgent != nil || p.CreditorAgent != nil
}

// originalParties writes the rejected transfer's debtor, creditor and their
// agents in OrgnlTxRef (OriginalTransactionReference28, in its order): a
// party (MT103 :50a:/:59a:) as Pty, an institution (MT202/205 :52a:/:58a:)
// as Agt, each account in the element beside it.
func (r *pacsRenderer) originalParties(p *payment.Payment) {
	const rel = "TxInfAndSts/OrgnlTxRef/"
	r.party40Acct("Dbtr", p.Debtor, p.DebtorFI, rel+"Dbtr")
	r.agentWithAccount("DbtrAgt", p.DebtorAgent, rel+"DbtrAgt")
	r.agentWithAccount("CdtrAgt", p.CreditorAgent, rel+"CdtrAgt")
	r.party40Acct("Cdtr", p.Creditor, p.CreditorFI, rel+"Cdtr")
}

// party40Acct writes a Party40Choice (Pty or Agt) and its account as
// name+"Acct"; nothing when there is neither.
func (r *pacsRenderer) party40Acct(name string, pt *payment.Party, ag *payment.Agent, rel string) {
	w := &r.w
	var acct string
	switch {
	case pt != nil:
		c := *pt
		acct, c.Account = c.Account, ""
		w.open(name)
		r.party("Pty", &c, rel+"/Pty")
		w.close(name)
	case ag != nil:
		c := *ag
		acct, c.Account = c.Account, ""
		w.open(name)
		r.agent("Agt", &c, rel+"/Agt")
		w.close(name)
	default:
		return
	}
	if acct != "" && acct != "NOTPROVIDED" {
		r.ownerAccount(name, acct, rel)
	}
}

// originalParties reads OrgnlTxRef's debtor, creditor, their accounts and
// agents into the status: the rejected transfer's chain.
func (pp *pacsParser) originalParties(ref int, p *payment.Payment) {
	p.Debtor, p.DebtorFI = pp.party40(ref, "Dbtr")
	p.Creditor, p.CreditorFI = pp.party40(ref, "Cdtr")
	for _, a := range []struct {
		name string
		pt   *payment.Party
		ag   *payment.Agent
	}{{"DbtrAcct", p.Debtor, p.DebtorFI}, {"CdtrAcct", p.Creditor, p.CreditorFI}} {
		acct := pp.account(ref, a.name)
		switch {
		case acct == "":
		case a.pt != nil:
			a.pt.Account = acct
		case a.ag != nil:
			a.ag.Account = acct
		}
	}
	p.DebtorAgent = pp.agentAcct(ref, "DbtrAgt")
	p.CreditorAgent = pp.agentAcct(ref, "CdtrAgt")
}
