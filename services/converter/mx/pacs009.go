package mx

import (
	"fmt"
	"strings"

	"github.com/ledgerlane/platform/services/converter/payment"
	"github.com/ledgerlane/platform/services/converter/statement"
)

// pacs.009.001.08 (FinancialInstitutionCreditTransferV08): MT202/MT205
// (CORE) and MT202COV/MT205COV (COV, with UndrlygCstmrCdtTrf).

func (pp *pacsParser) pacs009(doc int, hdr payment.Header) ([]*payment.Payment, error) {
	return pp.creditTransfers(doc, "FICdtTrf", payment.Payment{Kind: payment.Institution, Header: hdr}, pp.fiTransaction)
}

func (pp *pacsParser) fiTransaction(tx int, p *payment.Payment) error {
	t := pp.t
	if err := pp.transactionHead(tx, p); err != nil {
		return err
	}
	pp.routingAgents(tx, p)
	p.DebtorFI = pp.agentAcct(tx, "Dbtr")
	p.CreditorAgent = pp.agentAcct(tx, "CdtrAgt")
	p.CreditorFI = pp.agentAcct(tx, "Cdtr")
	if p.DebtorFI == nil || p.CreditorFI == nil {
		return pp.fail(tx, "Dbtr and Cdtr are mandatory")
	}
	pp.textsAndPurpose(tx, p)
	if u := t.child(tx, "UndrlygCstmrCdtTrf"); u >= 0 {
		p.Kind = payment.Cover
		up := &payment.Payment{Kind: payment.Customer}
		up.Debtor = pp.party(u, "Dbtr")
		up.DebtorAgent = pp.agentAcct(u, "DbtrAgt")
		up.PreviousInstructingAgent = pp.agent(u, "PrvsInstgAgt1")
		up.Intermediary = pp.agentAcct(u, "IntrmyAgt1")
		up.CreditorAgent = pp.agentAcct(u, "CdtrAgt")
		up.Creditor = pp.party(u, "Cdtr")
		if up.Debtor == nil || up.Creditor == nil {
			return pp.fail(u, "UndrlygCstmrCdtTrf needs Dbtr and Cdtr")
		}
		pp.texts(u, up)
		if ia := t.child(u, "InstdAmt"); ia >= 0 {
			var err error
			if up.InstructedAmount, err = pp.amount(ia, false); err != nil {
				return err
			}
		}
		p.Underlying = up
	}
	return nil
}

// fiTransaction writes a CreditTransferTransaction36 in schema order.
func (r *pacsRenderer) fiTransaction(p *payment.Payment, from, to string) error {
	w := &r.w
	w.open("CdtTrfTxInf")
	r.paymentID(p, ":21: related reference")
	r.paymentType(p, "CdtTrfTxInf/PmtTpInf")
	if err := r.amount("IntrBkSttlmAmt", p.Amount, "CdtTrfTxInf/IntrBkSttlmAmt"); err != nil {
		return err
	}
	w.rawLeaf("IntrBkSttlmDt", p.SettlementDate.AppendISO(r.num[:0]))
	r.dropCustomerFields(p, "CdtTrfTxInf")
	r.routingAgents(p, from, to)
	dbtr := r.agentOr("Dbtr", p.DebtorFI, from, "CdtTrfTxInf/Dbtr", "no ordering institution (:52a:): Dbtr is the sender %s")
	r.agentWithAccount("CdtrAgt", p.CreditorAgent, "CdtTrfTxInf/CdtrAgt")
	cdtr := r.agentOr("Cdtr", p.CreditorFI, to, "CdtTrfTxInf/Cdtr", "no beneficiary institution (:58a:): Cdtr is the receiver %s")
	r.instructions(p, "CdtTrfTxInf", "PHOB TELB")
	r.purpose(p)
	if len(p.Regulatory) > 0 {
		r.warn.Add(payment.CodeFieldDropped, r.path("CdtTrfTxInf/RgltryRptg"), 0, "pacs.009 has no regulatory reporting: %d line(s) not carried", len(p.Regulatory))
	}
	r.remittance(p.Remittance, "CdtTrfTxInf/RmtInf")
	if u := p.Underlying; u != nil {
		if err := r.underlying(u, dbtr, cdtr); err != nil {
			return err
		}
	}
	w.close("CdtTrfTxInf")
	return nil
}

// dropCustomerFields reports what a customer transfer model may hold that a
// pacs.009 transaction has no element for.
func (r *pacsRenderer) dropCustomerFields(p *payment.Payment, rel string) {
	if p.ChargeBearer != "" || len(p.SenderCharges) > 0 || p.ReceiverCharges.Currency != "" {
		r.warn.Add(payment.CodeFieldDropped, r.path(rel+"/ChrgBr"), 0, "pacs.009 has no charges information")
	}
	if p.InstructedAmount.Currency != "" || !p.ExchangeRate.IsZero() {
		r.warn.Add(payment.CodeFieldDropped, r.path(rel+"/InstdAmt"), 0, "pacs.009 has no instructed amount or exchange rate outside UndrlygCstmrCdtTrf")
	}
}

// underlying writes UndrlygCstmrCdtTrf (CreditTransferTransaction37).
func (r *pacsRenderer) underlying(u *payment.Payment, coverDbtr, coverCdtr string) error {
	const rel = "CdtTrfTxInf/UndrlygCstmrCdtTrf"
	w := &r.w
	w.open("UndrlygCstmrCdtTrf")
	if u.Debtor == nil || u.Creditor == nil {
		return &statement.ParseError{Message: r.no, Field: rel, Reason: "the underlying customer credit transfer needs a debtor and a creditor"}
	}
	r.party("Dbtr", u.Debtor, rel+"/Dbtr")
	r.agentOr("DbtrAgt", u.DebtorAgent, coverDbtr, rel+"/DbtrAgt", "no ordering institution in sequence B (:52a:): DbtrAgt is the cover's Dbtr %s")
	r.agentWithAccount("PrvsInstgAgt1", u.PreviousInstructingAgent, rel+"/PrvsInstgAgt1")
	r.agentWithAccount("IntrmyAgt1", u.Intermediary, rel+"/IntrmyAgt1")
	r.agentOr("CdtrAgt", u.CreditorAgent, coverCdtr, rel+"/CdtrAgt", "no account with institution in sequence B (:57a:): CdtrAgt is the cover's Cdtr %s")
	r.party("Cdtr", u.Creditor, rel+"/Cdtr")
	r.instructions(u, rel, "CHQB HOLD PHOB TELB")
	if len(u.Regulatory) > 0 {
		r.warn.Add(payment.CodeFieldDropped, r.path(rel+"/RgltryRptg"), 0, "UndrlygCstmrCdtTrf has no regulatory reporting: %d line(s) not carried", len(u.Regulatory))
	}
	r.remittance(u.Remittance, rel+"/RmtInf")
	if u.InstructedAmount.Currency != "" {
		if err := r.amount("InstdAmt", u.InstructedAmount, rel+"/InstdAmt"); err != nil {
			return err
		}
	}
	w.close("UndrlygCstmrCdtTrf")
	return nil
}

// paymentType writes PmtTpInf when the payment has any of it.
func (r *pacsRenderer) paymentType(p *payment.Payment, rel string) {
	if len(p.ServiceLevels) == 0 && p.LocalInstrument == "" && p.CategoryPurpose == "" {
		return
	}
	w := &r.w
	w.open("PmtTpInf")
	for _, sl := range p.ServiceLevels {
		r.codeOrPrtry("SvcLvl", sl, rel+"/SvcLvl")
	}
	if p.LocalInstrument != "" {
		r.codeOrPrtryN("LclInstrm", p.LocalInstrument, 35, rel+"/LclInstrm")
	}
	if p.CategoryPurpose != "" {
		r.codeOrPrtry("CtgyPurp", p.CategoryPurpose, rel+"/CtgyPurp")
	}
	w.close("PmtTpInf")
}

// instructions writes InstrForCdtrAgt (codes: the ones its type allows)
// and InstrForNxtAgt.
func (r *pacsRenderer) instructions(p *payment.Payment, rel, cdtrCodes string) {
	w := &r.w
	for i, in := range p.InstructionsForCreditorAgent {
		if in.Code == "" && in.Text == "" {
			continue
		}
		w.open("InstrForCdtrAgt")
		switch {
		case in.Code == "":
		case strings.Contains(cdtrCodes, in.Code) && len(in.Code) == 4:
			w.leaf("Cd", in.Code)
		default:
			r.warn.Add(payment.CodeFieldDropped, r.path(fmt.Sprintf("%s/InstrForCdtrAgt[%d]/Cd", rel, i+1)), 0, "code %q is not one of %s", clip(in.Code), cdtrCodes)
		}
		r.leaf("InstrInf", in.Text, 140, fmt.Sprintf("%s/InstrForCdtrAgt[%d]/InstrInf", rel, i+1))
		w.close("InstrForCdtrAgt")
	}
	for i, in := range p.InstructionsForNextAgent {
		switch in.Code {
		case "", "PHOA", "TELA":
		default:
			in.Text = strings.TrimSpace("/" + in.Code + "/" + in.Text)
			in.Code = ""
		}
		if in.Code == "" && in.Text == "" {
			continue
		}
		w.open("InstrForNxtAgt")
		if in.Code != "" {
			w.leaf("Cd", in.Code)
		}
		r.leaf("InstrInf", in.Text, 140, fmt.Sprintf("%s/InstrForNxtAgt[%d]/InstrInf", rel, i+1))
		w.close("InstrForNxtAgt")
	}
}

// remittance writes RmtInf with its Ustrd lines.
func (r *pacsRenderer) remittance(lines []string, rel string) {
	if len(lines) == 0 {
		return
	}
	w := &r.w
	w.open("RmtInf")
	for i, u := range lines {
		r.leafAt("Ustrd", u, 140, rel, i+1)
	}
	w.close("RmtInf")
}
