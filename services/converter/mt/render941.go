package mt

import (
	"github.com/ledgerlane/platform/services/converter/statement"
)

// balanceReport appends the MT941 (balance report) of st to pages: the
// header (:20:, :21:, :25a:, :28:, :13D: when the report time is known),
// :60F:, :90D:/:90C:, :62F:, :64:, :65: and :86:. It lists no entries, so
// one message always holds it. A statement with entries is refused: MT942
// carries them. Interim balances (camt.052 ITBD, ITAV) stand in for the
// booked and available balances a report lacks, with MT_BALANCE_DERIVED.
func (r *renderer) balanceReport(st *statement.Statement, cur string, pages []string) ([]string, error) {
	if n := len(st.Entries); n > 0 {
		target := ":61:"
		if p := st.Origin.Path(); p != "" {
			target = p + "/Ntry[1]"
		}
		return nil, st.Refuse(st.Entries[0].Line, ":61:", target,
			itoa(n)+" entries: MT941 reports balances only; convert to MT942 to keep the entries")
	}
	opening, hasOpen := st.Balance(statement.OpeningBooked)
	closing, ok := r.reportBalance(st, statement.ClosingBooked, statement.InterimBooked, "62F")
	if !ok {
		if !hasOpen {
			return nil, st.Refuse(0, ":62F:", ":62F:", "the report has no booked balance (CLBD, ITBD or OPBD) to write as :62F:, which MT941 requires")
		}
		// Without entries the book balance is the opening one.
		closing = opening
		closing.Date = r.date
		r.warn(CodeBalanceDerived, ":62F:", "no closing booked balance; the opening balance is written, as the report has no entries")
	}
	avail, hasAvail := r.reportBalance(st, statement.ClosingAvailable, statement.InterimAvailable, "64")
	if st.FloorLimitDebit != nil || st.FloorLimitCredit != nil {
		r.warn(CodeDropped, ":34F:", "MT941 has no floor limit")
	}

	num, seq := r.numbers(st)
	if len(seq) > 2 {
		r.warn(CodeTruncated, ":28:", "sequence number longer than 2 digits (5n[/2n]); the last 2 are used")
		seq = seq[len(seq)-2:]
	}
	b := r.finHead(r.buf[:0], st)
	start := len(b)
	b = r.header(b, st, cur, num, seq, false)
	if hasOpen {
		opening.Intermediate = false // MT941 has :60F: only
		b = r.balanceLine(b, "60", opening, cur)
	}
	if st.Summary.Set {
		b = r.summaryLine(b, "90D", st.Summary.DebitCount, st.Summary.DebitTotal, cur)
		b = r.summaryLine(b, "90C", st.Summary.CreditCount, st.Summary.CreditTotal, cur)
	}
	closing.Intermediate = false
	b = r.balanceLine(b, "62", closing, cur)
	if hasAvail {
		b = r.balanceLine(b, "64", avail, cur)
	}
	// :86: (6 x 65) and the trailer keep their room in the 2,000
	// characters; forward balances past that are left out.
	room := MaxPage - 6*67 - len("-")
	fwd := 0
	for _, bal := range st.Balances {
		if bal.Type == statement.ForwardAvailable {
			fwd++
		}
	}
	for _, bal := range st.Balances {
		if bal.Type != statement.ForwardAvailable {
			continue
		}
		if len(b)-start > room {
			r.warn(CodeDropped, ":65:", itoa(fwd)+" balance line(s) do not fit in one message")
			break
		}
		fwd--
		b = r.balanceLine(b, "65", bal, cur)
	}
	if st.Info != "" {
		w := lines86{r: r, b: b}
		w.text(st.Info)
		b = w.done()
	}
	b = append(b, "-}"...)
	r.buf = b
	return append(pages, string(b)), nil
}

// reportBalance is st's balance of type want for MT941 field tag, else its
// interim balance of type interim, said with MT_BALANCE_DERIVED; an interim
// balance beside want has no MT941 field and is dropped.
func (r *renderer) reportBalance(st *statement.Statement, want, interim statement.BalanceType, tag string) (statement.Balance, bool) {
	b, ok := st.Balance(want)
	ib, hasInterim := st.Balance(interim)
	switch {
	case ok && hasInterim:
		r.warn(CodeDropped, ":"+tag+":", "MT941 has no field for the interim balance "+string(interim)+"; "+string(want)+" is written")
	case hasInterim:
		r.warn(CodeBalanceDerived, ":"+tag+":", "no "+string(want)+" balance; the interim balance "+string(interim)+" is written as :"+tag+":")
		return ib, true
	}
	return b, ok
}
