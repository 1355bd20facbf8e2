package mx

import (
	"github.com/ledgerlane/platform/services/converter/bankid"
	"github.com/ledgerlane/platform/services/converter/payment"
)

// camt.054.001.08 (BankToCustomerDebitCreditNotificationV08) as the MX of
// MT900 (confirmation of debit) and MT910 (confirmation of credit): one
// notification with one entry and one transaction per confirmation.

const typeCamt54 = "camt.054"

func (pp *pacsParser) camt054(doc int, hdr payment.Header) ([]*payment.Payment, error) {
	t := pp.t
	root := t.child(doc, "BkToCstmrDbtCdtNtfctn")
	if root < 0 {
		return nil, pp.fail(doc, "expected BkToCstmrDbtCdtNtfctn")
	}
	gh := t.child(root, "GrpHdr")
	if gh < 0 {
		return nil, pp.fail(root, "GrpHdr is missing")
	}
	msgID := t.get(gh, "MsgId")
	createdAt, _ := parseDateTime(t.get(gh, "CreDtTm"))
	var out []*payment.Payment
	for n := t.nodes[root].first; n >= 0; n = t.nodes[n].next {
		if t.name(n) != "Ntfctn" {
			continue
		}
		if id := t.get(n, "Id"); id != "" && id != msgID {
			pp.w.Add(payment.CodeFieldDropped, "Ntfctn/Id", t.line(n), "Ntfctn/Id %q differs from GrpHdr/MsgId and has no MT900/910 field", clip(id))
		}
		t.get(n, "CreDtTm")
		acct := firstOf(t.get(n, "Acct/Id/IBAN"), t.get(n, "Acct/Id/Othr/Id"))
		acctCcy := t.get(n, "Acct/Ccy")
		t.get(n, "Acct/Id/Othr/SchmeNm/Cd")
		for e := t.nodes[n].first; e >= 0; e = t.nodes[e].next {
			if t.name(e) != "Ntry" {
				continue
			}
			p := &payment.Payment{Header: hdr, MessageID: msgID, CreatedAt: createdAt, Account: acct}
			if err := pp.entry(e, p); err != nil {
				return nil, err
			}
			if acctCcy != "" && acctCcy != p.Amount.Currency {
				pp.w.Add(payment.CodeFieldDropped, "Ntfctn/Acct/Ccy", t.line(n), "account currency %s differs from the entry's %s and has no MT field", clip(acctCcy), p.Amount.Currency)
			}
			out = append(out, p)
		}
	}
	return pp.oneMTEach(out, root, "the notification has no Ntfctn/Ntry", "BkToCstmrDbtCdtNtfctn", "entries")
}

func (pp *pacsParser) entry(e int, p *payment.Payment) error {
	t := pp.t
	var err error
	if p.Amount, err = pp.amount(t.child(e, "Amt"), true); err != nil {
		return err
	}
	switch ind := t.get(e, "CdtDbtInd"); ind {
	case "DBIT":
		p.Kind = payment.DebitConfirmation
	case "CRDT":
		p.Kind = payment.CreditConfirmation
	default:
		return pp.fail(e, "CdtDbtInd %q is not CRDT or DBIT", clip(ind))
	}
	if s := firstOf(t.get(e, "Sts/Cd"), t.get(e, "Sts/Prtry")); s != "" && s != "BOOK" {
		pp.w.Add(payment.CodeFieldDropped, "Ntry/Sts", t.line(e), "entry status %s: an MT900/910 confirms a booked entry", clip(s))
	}
	if v := t.get(e, "BookgDt/DtTm"); v != "" {
		if ts, ok := parseDateTime(v); ok {
			p.BookedAt = ts
		}
	}
	d := firstOf(t.get(e, "ValDt/Dt"), t.get(e, "BookgDt/Dt"))
	if d == "" {
		if v := t.get(e, "ValDt/DtTm"); len(v) >= 10 {
			d = v[:10]
		}
	}
	if n := t.at(e, "BkTxCd/Prtry/Cd"); n >= 0 && t.text(n) == "NOTPROVIDED" {
		t.nodes[n].used = true // the writers' placeholder: no information
	}
	ibsd, err := pp.entryDetails(e, p)
	if err != nil {
		return err
	}
	switch {
	case d == "" && ibsd == "":
		return pp.fail(e, "ValDt is missing (and no IntrBkSttlmDt): MT needs the value date (:32A:)")
	case d == "":
		d = ibsd // the settlement date is the value date of the confirmed transfer
	case ibsd != "" && ibsd != d:
		pp.w.Add(payment.CodeFieldDropped, "Ntry/NtryDtls/TxDtls/RltdDts/IntrBkSttlmDt", t.line(e), "settlement date %s differs from the value date %s and has no MT field", clip(ibsd), clip(d))
	}
	var ok bool
	if p.SettlementDate, ok = parseISODate(d); !ok {
		return pp.fail(e, "%q is not a date", clip(d))
	}
	return nil
}

// entryDetails reads the first NtryDtls/TxDtls of the entry (further ones
// are reported as unused elements) and returns its settlement date.
func (pp *pacsParser) entryDetails(e int, p *payment.Payment) (ibsd string, err error) {
	t := pp.t
	txs := 0
	for nd := t.nodes[e].first; nd >= 0; nd = t.nodes[nd].next {
		if t.name(nd) != "NtryDtls" {
			continue
		}
		for tx := t.nodes[nd].first; tx >= 0; tx = t.nodes[tx].next {
			if t.name(tx) != "TxDtls" {
				continue
			}
			txs++
			if txs > 1 {
				continue // reported as unused elements
			}
			if ibsd, err = pp.txDetails(tx, p); err != nil {
				return "", err
			}
		}
	}
	return ibsd, nil
}

// txDetails reads one TxDtls: references and UETR, its amount (which
// should be the entry's), the debtor and its agents, and returns its
// interbank settlement date.
func (pp *pacsParser) txDetails(tx int, p *payment.Payment) (string, error) {
	t := pp.t
	p.InstructionID = t.get(tx, "Refs/InstrId")
	p.EndToEndID = t.get(tx, "Refs/EndToEndId")
	var err error
	if p.UETR, err = pp.uetr(tx, "Refs/UETR"); err != nil {
		return "", err
	}
	if a := t.child(tx, "Amt"); a >= 0 {
		ta, err := pp.amount(a, false)
		if err != nil {
			return "", err
		}
		if !ta.Value.Equal(p.Amount.Value) || ta.Currency != p.Amount.Currency {
			pp.w.Add(payment.CodeFieldDropped, "Ntry/NtryDtls/TxDtls/Amt", t.line(a), "transaction amount %s %s differs from the entry's and has no MT field", ta.Currency, ta.Value)
		}
	}
	t.get(tx, "CdtDbtInd")
	if rp := t.child(tx, "RltdPties"); rp >= 0 {
		if pty := t.at(rp, "Dbtr/Pty"); pty >= 0 {
			p.Debtor = pp.party(t.child(rp, "Dbtr"), "Pty")
			p.Debtor.Account = pp.account(rp, "DbtrAcct")
		}
		if agt := t.at(rp, "Dbtr/Agt"); agt >= 0 {
			p.DebtorFI = pp.agent(t.child(rp, "Dbtr"), "Agt")
		}
	}
	if ra := t.child(tx, "RltdAgts"); ra >= 0 {
		if a := pp.agent(ra, "DbtrAgt"); a != nil {
			p.DebtorFI = a
		}
		p.Intermediary = pp.agent(ra, "IntrmyAgt1")
	}
	ibsd := t.get(tx, "RltdDts/IntrBkSttlmDt")
	p.AdditionalInfo = t.get(tx, "AddtlTxInf")
	return ibsd, nil
}

// camt054 writes a BkToCstmrDbtCdtNtfctn with one notification, entry and
// transaction.
func (r *pacsRenderer) camt054(p *payment.Payment, ref string, created string) error {
	w := &r.w
	w.open("BkToCstmrDbtCdtNtfctn")
	r.openGroupHeader(firstOf(p.MessageID, ref), created)
	w.close("GrpHdr")
	w.open("Ntfctn")
	r.leaf("Id", firstOf(p.MessageID, ref), 35, "Ntfctn/Id")
	r.notificationAccount(p)
	w.open("Ntry")
	if err := r.amount("Amt", p.Amount, "Ntry/Amt"); err != nil {
		return err
	}
	ind := "CRDT"
	if p.Kind == payment.DebitConfirmation {
		ind = "DBIT"
	}
	w.leaf("CdtDbtInd", ind)
	w.open("Sts")
	w.leaf("Cd", "BOOK")
	w.close("Sts")
	if !p.BookedAt.IsZero() {
		w.open("BookgDt")
		w.rawLeaf("DtTm", appendOffsetTime(r.num[:0], p.BookedAt))
		w.close("BookgDt")
	}
	w.open("ValDt")
	w.rawLeaf("Dt", p.SettlementDate.AppendISO(r.num[:0]))
	w.close("ValDt")
	// BkTxCd is mandatory and MT900/910 have no transaction code.
	w.open("BkTxCd")
	w.open("Prtry")
	w.leaf("Cd", "NOTPROVIDED")
	w.close("Prtry")
	w.close("BkTxCd")
	w.open("NtryDtls")
	w.open("TxDtls")
	if err := r.notificationTx(p, ind); err != nil {
		return err
	}
	w.open("RltdDts")
	w.rawLeaf("IntrBkSttlmDt", p.SettlementDate.AppendISO(r.num[:0]))
	w.close("RltdDts")
	r.leaf("AddtlTxInf", p.AdditionalInfo, 500, "TxDtls/AddtlTxInf")
	w.close("TxDtls")
	w.close("NtryDtls")
	w.close("Ntry")
	w.close("Ntfctn")
	w.close("BkToCstmrDbtCdtNtfctn")
	return nil
}

// notificationAccount writes Ntfctn/Acct: the :25: account as an IBAN when
// it is one, else as Othr/Id (NOTPROVIDED when there is none), and the
// currency.
func (r *pacsRenderer) notificationAccount(p *payment.Payment) {
	w := &r.w
	w.open("Acct")
	acct := p.Account
	if acct == "" {
		acct = "NOTPROVIDED"
		r.warn.Add(payment.CodeFieldDefaulted, r.path("Ntfctn/Acct"), 0, "no account (:25:): NOTPROVIDED")
	}
	w.open("Id")
	if bankid.ValidIBAN(acct) {
		w.leaf("IBAN", acct)
	} else {
		w.open("Othr")
		r.leaf("Id", acct, 34, "Ntfctn/Acct/Id/Othr/Id")
		w.close("Othr")
	}
	w.close("Id")
	w.leaf("Ccy", p.Amount.Currency)
	w.close("Acct")
}

// notificationTx writes the references and amount of the TxDtls, then its
// related parties and agents.
func (r *pacsRenderer) notificationTx(p *payment.Payment, ind string) error {
	w := &r.w
	if p.InstructionID != "" || p.EndToEndID != "" || p.UETR != "" {
		w.open("Refs")
		r.leaf("InstrId", p.InstructionID, 35, "TxDtls/Refs/InstrId")
		r.leaf("EndToEndId", p.EndToEndID, 35, "TxDtls/Refs/EndToEndId")
		if p.UETR != "" {
			w.leaf("UETR", p.UETR)
		}
		w.close("Refs")
	}
	if err := r.amount("Amt", p.Amount, "TxDtls/Amt"); err != nil {
		return err
	}
	w.leaf("CdtDbtInd", ind)
	r.notificationParties(p)
	return nil
}

// notificationParties writes RltdPties (the debtor, or its agent when
// only that is known, with DbtrAcct) and RltdAgts (the debtor agent and
// the intermediary).
func (r *pacsRenderer) notificationParties(p *payment.Payment) {
	w := &r.w
	agentAsDbtr := p.Debtor == nil && p.DebtorFI != nil
	if p.Debtor != nil || agentAsDbtr {
		w.open("RltdPties")
		w.open("Dbtr")
		if p.Debtor != nil {
			d := *p.Debtor
			d.Account = "" // written as RltdPties/DbtrAcct
			r.party("Pty", &d, "TxDtls/RltdPties/Dbtr/Pty")
		} else {
			r.agent("Agt", p.DebtorFI, "TxDtls/RltdPties/Dbtr/Agt")
		}
		w.close("Dbtr")
		if p.Debtor != nil && p.Debtor.Account != "" {
			r.account("DbtrAcct", p.Debtor.Account, "TxDtls/RltdPties/DbtrAcct")
		}
		w.close("RltdPties")
	}
	if !agentAsDbtr && p.DebtorFI != nil || p.Intermediary != nil {
		w.open("RltdAgts")
		if !agentAsDbtr && p.DebtorFI != nil {
			r.agent("DbtrAgt", p.DebtorFI, "TxDtls/RltdAgts/DbtrAgt")
		}
		if p.Intermediary != nil {
			r.agent("IntrmyAgt1", p.Intermediary, "TxDtls/RltdAgts/IntrmyAgt1")
		}
		w.close("RltdAgts")
	}
}
