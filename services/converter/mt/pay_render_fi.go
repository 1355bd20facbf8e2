package mt

import (
	"strings"

	"github.com/ledgerlane/platform/services/converter/payment"
)

// institution writes the block 4 of an MT202/MT205 (COV) from a financial
// institution transfer (pacs.009): sequence A, then for a cover payment
// sequence B, the underlying customer credit transfer.
func (r *payRenderer) institution(p *payment.Payment, mtType, from, to string) error {
	r.reference20(p)
	e2e := p.EndToEndID
	if e2e == "" || e2e == "NOTPROVIDED" {
		r.w.Add(payment.CodeFieldDefaulted, r.path(":21:"), 0, "no end-to-end id: :21: NONREF")
		e2e = "NONREF"
	}
	r.line("21", r.fit(r.x(e2e), 16, "PmtId/EndToEndId", ":21:"))
	if err := r.field32A(p); err != nil {
		return err
	}
	r.agentUnlessSender("52", p.DebtorFI, from, "Dbtr")
	r.field53(p)
	if p.ReceiversCorrespondent != nil {
		if mtType == "205" {
			r.w.Add(payment.CodeFieldDropped, r.path("SttlmInf/InstdRmbrsmntAgt"), 0, "MT205 has no :54a: for the instructed reimbursement agent")
		} else {
			r.agent("54", p.ReceiversCorrespondent, "SttlmInf/InstdRmbrsmntAgt", "ABD")
		}
	}
	if p.ThirdReimbursement != nil {
		r.w.Add(payment.CodeFieldDropped, r.path("SttlmInf/ThrdRmbrsmntAgt"), 0, "MT%s has no :55a: for the third reimbursement agent", mtType)
	}
	if p.Intermediary != nil {
		r.agent("56", p.Intermediary, "IntrmyAgt1", "AD")
	}
	if p.CreditorAgent != nil {
		// pacs.009's CdtrAgt is optional: written whenever it is stated.
		r.agent("57", p.CreditorAgent, "CdtrAgt", "ABD")
	}
	cdtr := p.CreditorFI
	if cdtr == nil {
		r.w.Add(payment.CodeFieldDefaulted, r.path("Cdtr"), 0, "no creditor institution: :58A: is the receiver %s", to)
		cdtr = &payment.Agent{BIC: to}
	}
	r.agent("58", cdtr, "Cdtr", "AD")
	items := append(r.ret, r.items72(p, true)...)
	if len(items) > 0 {
		r.field("72", r.lines72(items))
	}
	if u := p.Underlying; u != nil {
		return r.sequenceB(u)
	}
	return nil
}

// items72 lists the :72: items of an institution transfer (or of sequence B
// when fi is false) in the order of the MX elements.
func (r *payRenderer) items72(p *payment.Payment, fi bool) []string {
	var items []string
	pre := ""
	if !fi {
		pre = "UndrlygCstmrCdtTrf/"
	}
	if a := p.PreviousInstructingAgent; a != nil {
		if a.BIC != "" {
			items = append(items, "/INS/"+a.BIC)
		} else {
			r.w.Add(payment.CodeFieldDropped, r.path(pre+"PrvsInstgAgt1"), 0, "a previous instructing agent without a BIC has no MT field")
		}
	}
	for _, sl := range p.ServiceLevels {
		items = append(items, "/SVCLVL/"+sl)
	}
	if p.LocalInstrument != "" {
		items = append(items, "/LOCINS/"+p.LocalInstrument)
	}
	if p.CategoryPurpose != "" {
		items = append(items, "/CATPURP/"+p.CategoryPurpose)
	}
	if p.Purpose != "" {
		r.w.Add(payment.CodeFieldDropped, r.path(pre+"Purp"), 0, "purpose %q has no MT%s field", clip(p.Purpose), "202/205")
	}
	for _, in := range p.InstructionsForCreditorAgent {
		switch {
		case fi && in.Code == "PHOB":
			items = append(items, "/PHONBEN/"+in.Text)
		case fi && in.Code == "TELB":
			items = append(items, "/TELEBEN/"+in.Text)
		default:
			if in.Code != "" {
				r.w.Add(payment.CodeFieldDropped, r.path(pre+"InstrForCdtrAgt/Cd"), 0, "instruction code %s has no MT202/205 code; its text is kept", clip(in.Code))
			}
			if in.Text != "" {
				items = append(items, "/ACC/"+in.Text)
			}
		}
	}
	for _, in := range p.InstructionsForNextAgent {
		if in.Code != "" {
			r.w.Add(payment.CodeFieldDropped, r.path(pre+"InstrForNxtAgt/Cd"), 0, "instruction code %s has no MT202/205 code; its text is kept", clip(in.Code))
		}
		switch {
		case in.Text == "":
		case isCoded72(in.Text):
			items = append(items, in.Text)
		default:
			items = append(items, "/REC/"+in.Text)
		}
	}
	if fi {
		for _, u := range p.Remittance {
			if u != "" {
				items = append(items, "/BNF/"+u)
			}
		}
	}
	return items
}

// sequenceB writes the underlying customer credit transfer of a COV.
func (r *payRenderer) sequenceB(u *payment.Payment) error {
	const pre = "UndrlygCstmrCdtTrf/"
	if err := r.party("50", u.Debtor, pre+"Dbtr", true); err != nil {
		return err
	}
	if u.DebtorAgent != nil {
		r.agent("52", u.DebtorAgent, pre+"DbtrAgt", "AD")
	}
	if u.Intermediary != nil {
		r.agent("56", u.Intermediary, pre+"IntrmyAgt1", "ACD")
	}
	if u.CreditorAgent != nil {
		r.agent("57", u.CreditorAgent, pre+"CdtrAgt", "ABCD")
	}
	if err := r.party("59", u.Creditor, pre+"Cdtr", false); err != nil {
		return err
	}
	if rem := strings.Join(u.Remittance, " "); rem != "" {
		r.field("70", r.wrap(r.x(rem), 35, 4, pre+"RmtInf/Ustrd", ":70:"))
	}
	if items := r.items72(u, false); len(items) > 0 {
		r.field("72", r.lines72(items))
	}
	if len(u.Regulatory) > 0 {
		r.w.Add(payment.CodeFieldDropped, r.path(pre+"RgltryRptg"), 0, "%d regulatory line(s) have no place in MT202COV sequence B", len(u.Regulatory))
	}
	if u.InstructedAmount.Currency != "" {
		a, err := r.amount(u.InstructedAmount, "33B")
		if err != nil {
			return err
		}
		r.line("33B", u.InstructedAmount.Currency+a)
	}
	return nil
}
