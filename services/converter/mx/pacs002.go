package mx

import (
	"fmt"

	"github.com/ledgerlane/platform/services/converter/payment"
	"github.com/ledgerlane/platform/services/converter/statement"
)

// pacs.002.001.10 (FIToFIPaymentStatusReportV10) as the MX of an MT199 or
// MT299 reject (/REJT/ in :79:): one TxInfAndSts per status.

const typePacs2 = "pacs.002"

func (pp *pacsParser) pacs002(doc int, hdr payment.Header) ([]*payment.Payment, error) {
	t := pp.t
	root := t.child(doc, "FIToFIPmtStsRpt")
	if root < 0 {
		return nil, pp.fail(doc, "expected FIToFIPmtStsRpt")
	}
	gh := t.child(root, "GrpHdr")
	if gh < 0 {
		return nil, pp.fail(root, "GrpHdr is missing")
	}
	msgID := t.get(gh, "MsgId")
	createdAt, _ := parseDateTime(t.get(gh, "CreDtTm"))
	instg, instd := pp.agent(gh, "InstgAgt"), pp.agent(gh, "InstdAgt")
	var out []*payment.Payment
	for tx := t.nodes[root].first; tx >= 0; tx = t.nodes[tx].next {
		if t.nodes[tx].name != "TxInfAndSts" {
			continue
		}
		p := &payment.Payment{Kind: payment.Status, Header: hdr, MessageID: msgID, CreatedAt: createdAt,
			InstructingAgent: instg, InstructedAgent: instd}
		p.OriginalMessageID = t.get(tx, "OrgnlGrpInf/OrgnlMsgId")
		p.OriginalMessageType = t.get(tx, "OrgnlGrpInf/OrgnlMsgNmId")
		p.InstructionID = t.get(tx, "OrgnlInstrId")
		p.EndToEndID = t.get(tx, "OrgnlEndToEndId")
		p.UETR = t.get(tx, "OrgnlUETR")
		if p.UETR != "" && !payment.IsUETR(p.UETR) {
			return nil, pp.fail(t.child(tx, "OrgnlUETR"), "UETR %q is not a UUID v4 in lower case", clip(p.UETR))
		}
		p.TransactionStatus = t.get(tx, "TxSts")
		if p.TransactionStatus == "" {
			return nil, pp.fail(tx, "TxSts is missing")
		}
		for c := t.nodes[tx].first; c >= 0; c = t.nodes[c].next {
			if t.nodes[c].name != "StsRsnInf" {
				continue
			}
			if r := firstOf(t.get(c, "Rsn/Cd"), t.get(c, "Rsn/Prtry")); r != "" {
				if p.StatusReason == "" {
					p.StatusReason = r
				} else {
					p.StatusInfo = append(p.StatusInfo, r)
				}
			}
			for a := t.nodes[c].first; a >= 0; a = t.nodes[a].next {
				if t.nodes[a].name == "AddtlInf" && t.nodes[a].text != "" {
					t.nodes[a].used = true
					p.StatusInfo = append(p.StatusInfo, t.nodes[a].text)
				}
			}
		}
		if a := pp.agent(tx, "InstgAgt"); a != nil {
			p.InstructingAgent = a
		}
		if a := pp.agent(tx, "InstdAgt"); a != nil {
			p.InstructedAgent = a
		}
		out = append(out, p)
	}
	if len(out) == 0 {
		return nil, pp.fail(root, "the report has no TxInfAndSts (a group status alone has no MT199 form)")
	}
	if len(out) > 1 {
		pp.w.Add(payment.CodeSplit, "FIToFIPmtStsRpt", 0, "%d transaction statuses: one MT message each", len(out))
	}
	return out, nil
}

// pacs002 writes an FIToFIPmtStsRpt with one TxInfAndSts.
func (r *pacsRenderer) pacs002(p *payment.Payment, ref, created, from, to string) error {
	w := &r.w
	if p.Kind != payment.Status {
		return &statement.ParseError{Message: r.no, Reason: fmt.Sprintf("a %s payment is not a status report", p.Kind)}
	}
	w.open("FIToFIPmtStsRpt")
	w.open("GrpHdr")
	r.leaf("MsgId", firstOf(p.MessageID, ref), 35, "GrpHdr/MsgId")
	w.rawLeaf("CreDtTm", []byte(created))
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
		r.warn.Add(payment.CodeFieldDefaulted, r.path("TxInfAndSts/OrgnlGrpInf/OrgnlMsgNmId"), 0, "the rejected message's type is unknown (/REJT/99): NOTPROVIDED")
	}
	r.leaf("OrgnlMsgNmId", nm, 35, "TxInfAndSts/OrgnlGrpInf/OrgnlMsgNmId")
	w.close("OrgnlGrpInf")
	r.leaf("OrgnlInstrId", p.InstructionID, 35, "TxInfAndSts/OrgnlInstrId")
	r.leaf("OrgnlEndToEndId", p.EndToEndID, 35, "TxInfAndSts/OrgnlEndToEndId")
	if p.UETR != "" {
		w.leaf("OrgnlUETR", p.UETR)
	}
	r.leaf("TxSts", p.TransactionStatus, 4, "TxInfAndSts/TxSts")
	if p.StatusReason != "" || len(p.StatusInfo) > 0 {
		w.open("StsRsnInf")
		if p.StatusReason != "" {
			r.codeOrPrtry("Rsn", p.StatusReason, "TxInfAndSts/StsRsnInf/Rsn")
		}
		for i, s := range p.StatusInfo {
			r.leaf("AddtlInf", s, 105, fmt.Sprintf("TxInfAndSts/StsRsnInf/AddtlInf[%d]", i+1))
		}
		w.close("StsRsnInf")
	}
	instg, instd := p.InstructingAgent, p.InstructedAgent
	if instg == nil {
		instg = &payment.Agent{BIC: from}
	}
	if instd == nil {
		instd = &payment.Agent{BIC: to}
	}
	r.agent("InstgAgt", instg, "TxInfAndSts/InstgAgt")
	r.agent("InstdAgt", instd, "TxInfAndSts/InstdAgt")
	w.close("TxInfAndSts")
	w.close("FIToFIPmtStsRpt")
	return nil
}
