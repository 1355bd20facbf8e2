package mt

import (
	"strings"
	"time"

	"github.com/ledgerlane/platform/services/converter/payment"
)

// confirmation reads an MT900 (confirmation of debit) or MT910
// (confirmation of credit).
func (p *payParser) confirmation(pay *payment.Payment) error {
	seen := single{}
	for i := range p.m.fields {
		f := &p.m.fields[i]
		p.once(&seen, f)
		var err error
		switch f.tag {
		case "20":
			pay.MessageID, err = p.reference(f)
		case "21":
			pay.InstructionID, err = p.reference(f)
		case "25", "25P":
			lines := trimLines(f.lines)
			if len(lines) == 0 || len(lines[0]) > 35 {
				return p.fail(f, "T14: the account identification must be 1 to 35 characters")
			}
			pay.Account = lines[0]
			if f.tag == "25P" && len(lines) > 1 {
				p.warn(payment.CodeFieldDropped, f, "the account owner's BIC %q of :25P: has no camt.054 element here", clip(lines[1]))
			}
		case "13D":
			v := strings.TrimSpace(f.lines[0])
			t, perr := time.Parse("0601021504-0700", v)
			if perr != nil || len(v) != 15 {
				return p.fail(f, "T50: date, time and offset %q are not YYMMDDHHMM±HHMM", clip(v))
			}
			pay.BookedAt = t
		case "32A":
			err = p.valueDateAmount(pay, f)
		case "50A", "50F", "50K":
			if p.typ != "910" {
				p.warn(payment.CodeUnknownField, f, "field :%s: is not defined for MT%s", f.tag, p.typ)
				continue
			}
			pay.Debtor, err = p.party(f)
		case "52A", "52D":
			pay.DebtorFI, err = p.agent(f)
		case "56A", "56D":
			if p.typ != "910" {
				p.warn(payment.CodeUnknownField, f, "field :%s: is not defined for MT%s", f.tag, p.typ)
				continue
			}
			pay.Intermediary, err = p.agent(f)
		case "72":
			// A continuation line's leading space is text (the writer cut there).
			var lines []string
			for _, l := range f.lines {
				if l = strings.TrimRight(l, " "); l != "" {
					lines = append(lines, l)
				}
			}
			pay.AdditionalInfo = joinWrapped(lines, 35)
		default:
			p.warn(payment.CodeUnknownField, f, "field :%s: is not defined for MT%s", f.tag, p.typ)
		}
		if err != nil {
			return err
		}
	}
	if err := p.mandatory(present{"20", seen.has("20") && pay.MessageID != ""}, present{"21", seen.has("21") && pay.InstructionID != ""},
		present{"25a", seen.has("25") && pay.Account != ""}, present{"32A", seen.has("32") && pay.Amount.Currency != ""}); err != nil {
		return err
	}
	if p.typ == "910" && pay.Debtor == nil && pay.DebtorFI == nil {
		p.warn(payment.CodeRuleC06, nil, "C06: either :50a: or :52a: must be present in an MT910")
	}
	return nil
}

// confirmation writes the block 4 of an MT900 or MT910 (camt.054).
func (r *payRenderer) confirmation(p *payment.Payment, mtType string) error {
	ref := firstNonEmpty(p.MessageID, p.Header.BizMsgIdr)
	src := "GrpHdr/MsgId"
	if ref == "" {
		r.w.Add(payment.CodeFieldDefaulted, r.path(":20:"), 0, "no message id: NONREF is used")
		ref = "NONREF"
	}
	r.line("20", r.fit(r.x(ref), 16, src, ":20:"))
	rel, rsrc := p.InstructionID, "TxDtls/Refs/InstrId"
	if rel == "" {
		rel, rsrc = p.EndToEndID, "TxDtls/Refs/EndToEndId"
	} else if p.EndToEndID != "" && p.EndToEndID != "NOTPROVIDED" && p.EndToEndID != p.InstructionID {
		r.w.Add(payment.CodeFieldDropped, r.path("TxDtls/Refs/EndToEndId"), 0, "EndToEndId %q beside InstrId has no MT%s field", clip(p.EndToEndID), mtType)
	}
	if rel == "" || rel == "NOTPROVIDED" {
		r.w.Add(payment.CodeFieldDefaulted, r.path(":21:"), 0, "no related reference: :21: NONREF")
		rel = "NONREF"
	}
	r.line("21", r.fit(r.x(rel), 16, rsrc, ":21:"))
	if p.Account == "" {
		r.w.Add(payment.CodeFieldDefaulted, r.path("Ntfctn/Acct"), 0, "no account: :25: NOTPROVIDED")
	}
	r.line("25", r.fit(r.x(firstNonEmpty(p.Account, "NOTPROVIDED")), 35, "Ntfctn/Acct/Id", ":25:"))
	if !p.BookedAt.IsZero() {
		r.line("13D", p.BookedAt.Format("0601021504-0700"))
	}
	if err := r.field32A(p); err != nil {
		return err
	}
	if p.Debtor != nil {
		if mtType == "910" {
			if err := r.party("50", p.Debtor, "RltdPties/Dbtr/Pty", true); err != nil {
				return err
			}
		} else {
			r.w.Add(payment.CodeFieldDropped, r.path("RltdPties/Dbtr/Pty"), 0, "MT900 has no ordering customer")
		}
	}
	switch {
	case p.DebtorFI != nil:
		r.agent("52", p.DebtorFI, "RltdAgts/DbtrAgt", "AD")
	case mtType == "910" && p.Debtor == nil:
		r.w.Add(payment.CodeFieldDefaulted, r.path("RltdPties/Dbtr"), 0, "MT910 needs :50a: or :52a: (rule C06): :52D:NOTPROVIDED is written")
		r.field("52D", []string{"NOTPROVIDED"})
	}
	if p.Intermediary != nil {
		if mtType == "910" {
			r.agent("56", p.Intermediary, "RltdAgts/IntrmyAgt1", "AD")
		} else {
			r.w.Add(payment.CodeFieldDropped, r.path("RltdAgts/IntrmyAgt1"), 0, "MT900 has no intermediary")
		}
	}
	if p.AdditionalInfo != "" {
		r.field("72", r.wrap(r.x(p.AdditionalInfo), 35, 6, "TxDtls/AddtlTxInf", ":72:"))
	}
	return nil
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
