package mt

import (
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/ledgerlane/platform/services/converter/statement"
)

// DefaultBIC stands in for a sender or receiver the statement does not name.
// "NOTPROVIDED" is the placeholder the SWIFT/ISO 20022 translation rules use
// for unknown identifiers; it is syntactically a BIC11 (LT address
// NOTPROVIXDED) so any FIN reader accepts it, and it is never a real bank.
// The sender is the account servicer when the model has its BIC (MT input
// keeps it from block 1/2; camt from Acct/Svcr); the receiver is known only
// when the source had a header (statement.Header.To).
const DefaultBIC = "NOTPROVIDED"

// MaxPage is the largest block 4 (from after "{4:" to the closing "-"
// inclusive) one message may have.
const MaxPage = 2000

// Render writes statements as MT940, MT941, MT942 or MT950 (typ "940",
// "941", "942", "950"). Each page is one full FIN message; a statement
// longer than MaxPage is split into pages. An MT941 (balance report) has no
// entries: a statement with entries is refused (balanceReport).
func Render(typ string, stmts []*statement.Statement, opts statement.Options) ([]string, []statement.Warning, error) {
	w := &warner{}
	r := &renderer{typ: typ, w: w, german: opts.Field86Profile == "german", tl: translit{german: opts.TranslitProfile == "german"}}
	// The page, header, trailer and entry buffers start in one array from
	// bufPool, each capped at its share so that a longer one moves out
	// rather than over its neighbour: a page is at most 2,000 characters of
	// text, and growing four buffers from nothing was a fifth of rendering
	// a statement. The pages are copies: the array goes back at the end.
	pb := getBuf()
	defer putBuf(pb)
	mem := (*pb)[:4096]
	r.buf, r.hbuf, r.tbuf, r.ebuf = mem[0:0:2304], mem[2304:2304:2688], mem[2688:2688:3072], mem[3072:3072:4096]
	var pages []string
	for i, st := range stmts {
		if st == nil {
			continue
		}
		r.stmtNo = i + 1
		var err error
		pages, err = r.statement(st, pages)
		if err == nil {
			err = r.err
		}
		if err != nil {
			return nil, nil, err
		}
	}
	if r.tl.n > 0 {
		w.addN(CodeTransliterated, r.tl.n, "", itoa(r.tl.n)+" character(s) outside the SWIFT X character set were transliterated")
	}
	if r.paged > 0 {
		w.add(CodePaged, 0, 0, ":28C:", itoa(r.paged)+" statement(s) split into "+itoa(len(pages))+" messages of at most 2,000 characters")
	}
	return pages, w.result(), nil
}

type renderer struct {
	typ    string
	w      *warner
	german bool
	tl     translit
	stmtNo int
	// entryNo is the 1-based entry being written, for warning paths.
	entryNo int
	paged   int
	date    statement.Date // the statement's date, for values the source lacks
	err     error          // first amount that could not be written
	// st is the statement being written; srcLine and srcField name the
	// source line and field of the balance or entry being written (0 and
	// "" for the statement's own fields), for refusals.
	st       *statement.Statement
	srcLine  int
	srcField string
	buf      []byte // page under construction, reused
	ebuf     []byte // rendered entries of the current statement, reused
	tbuf     []byte // trailer of the current statement, reused
	hbuf     []byte // header measured for paging, reused
	ends     []int  // where each rendered entry stops in ebuf, reused
}

func (r *renderer) warn(code, field, text string) {
	r.w.add(code, r.stmtNo, 0, field, text)
}

func (r *renderer) x(s string) string { return r.tl.apply(s) }

// fit transliterates s and cuts it to n characters, warning when it cuts.
func (r *renderer) fit(s string, n int, field string) string {
	s = r.x(s)
	if len(s) > n {
		r.warn(CodeTruncated, field, "value cut to "+itoa(n)+" characters")
		s = s[:n]
	}
	// Readers drop trailing spaces; a value that ends a line has none.
	if t := strings.TrimRight(s, " "); t != "" {
		s = t
	}
	return s
}

// statement appends the statement's pages to pages: the entries are
// rendered first, the balances completed, the trailer written, and the
// entries cut into pages that each fit MaxPage.
func (r *renderer) statement(st *statement.Statement, pages []string) ([]string, error) {
	cur := statementCurrency(st)
	r.st = st
	if len(cur) != 3 {
		return nil, st.Refuse(0, currencyField(st), "currency", "the statement has no currency to write")
	}
	if err := oneCurrency(st, cur); err != nil {
		return nil, err
	}
	report := r.typ == "942"
	r.date = statementDate(st)
	if r.date.IsZero() {
		return nil, st.Refuse(0, ":60a:", "date", "the statement has no date (no balance, entry or creation time)")
	}
	if r.typ == "941" {
		return r.balanceReport(st, cur, pages)
	}
	r.renderEntries(st)

	var opening, closing statement.Balance
	var extra []statement.Balance // :64:, :65:
	if !report {
		var err error
		if opening, closing, extra, err = r.balances(st, cur); err != nil {
			return nil, err
		}
	} else if len(st.Balances) > 0 {
		r.warn(CodeDropped, ":62a:", "MT942 has no balance fields")
	}
	tail := r.trailer(st, cur, closing, extra, report)

	// The header is measured with a 5-digit page number so a page never
	// overflows whatever numbers end up in it.
	num, seq := r.numbers(st)
	head := r.header(r.hbuf[:0], st, cur, num, "99999", report)
	r.hbuf = head
	cuts := r.pageCuts(len(head), len(tail), report)
	if len(cuts) > 0 {
		r.paged++
		seq = firstSeq(seq)
	}
	pages = r.writePages(pages, st, cur, num, seq, opening, cuts, tail, report)
	r.tbuf = tail
	return pages, nil
}

// statementCurrency is the currency the statement is written in: the
// account's, else the first balance's that has one, else the first entry's,
// else the debit floor limit's.
func statementCurrency(st *statement.Statement) string {
	cur := st.Account.Currency
	if cur == "" {
		for _, b := range st.Balances {
			if b.Currency != "" {
				cur = b.Currency
				break
			}
		}
	}
	if cur == "" && len(st.Entries) > 0 {
		cur = st.Entries[0].Currency
	}
	if cur == "" && st.FloorLimitDebit != nil {
		cur = st.FloorLimitDebit.Currency
	}
	return cur
}

// renderEntries renders each entry as one chunk of :61: (+ :86:) lines in
// the shared buffer r.ebuf; r.ends[i] is where entry i stops. What the
// entries lost is warned about once, by name.
func (r *renderer) renderEntries(st *statement.Statement) {
	ebuf := r.ebuf[:0]
	ends := slices.Grow(r.ends[:0], len(st.Entries))[:len(st.Entries)]
	r.ends = ends
	var dropped lostSet
	for i := range st.Entries {
		e := &st.Entries[i] // in cur: oneCurrency refused any other
		r.entryNo = i + 1
		ebuf = r.entry(ebuf, e, &dropped)
		ends[i] = len(ebuf)
	}
	r.entryNo = 0
	r.ebuf = ebuf
	if dropped != 0 {
		var names []string
		for i, n := range lostNames {
			if dropped&(1<<i) != 0 {
				names = append(names, n)
			}
		}
		r.warn(CodeDropped, ":86:", "not carried in MT"+r.typ+": "+strings.Join(names, ", "))
	}
}

// entryLen is the rendered length of entry i.
func (r *renderer) entryLen(i int) int {
	if i == 0 {
		return r.ends[0]
	}
	return r.ends[i] - r.ends[i-1]
}

// entryText is the rendered text of entries from up to (not including) to.
func (r *renderer) entryText(from, to int) []byte {
	if from == to {
		return nil
	}
	start := 0
	if from > 0 {
		start = r.ends[from-1]
	}
	return r.ebuf[start:r.ends[to-1]]
}

// balances returns the opening and closing booked balances, deriving a
// missing one from the other and the entries (or both from zero), and the
// :64:/:65: balances MT r.typ carries; interim balances have no field.
func (r *renderer) balances(st *statement.Statement, cur string) (opening, closing statement.Balance, extra []statement.Balance, err error) {
	opening, hasOpen := st.Balance(statement.OpeningBooked)
	closing, hasClose := st.Balance(statement.ClosingBooked)
	acc := sum{}
	for i := range st.Entries {
		acc.add(st.Entries[i].Mark, st.Entries[i].Value)
	}
	sum := acc.value()
	date := statementDate(st)
	switch {
	case !hasOpen && hasClose:
		opening = balanceOf(signed(closing.Mark, closing.Value).Sub(sum), firstDate(st, closing.Date), cur)
		r.warn(CodeBalanceDerived, ":60F:", "opening balance computed from the closing balance and the entries")
	case hasOpen && !hasClose:
		closing = balanceOf(signed(opening.Mark, opening.Value).Add(sum), date, cur)
		r.warn(CodeBalanceDerived, ":62F:", "closing balance computed from the opening balance and the entries")
	case !hasOpen && !hasClose:
		if date.IsZero() {
			return opening, closing, nil, st.Refuse(0, ":60a:", ":60F:", "the statement has no balance and no date to write one")
		}
		opening = balanceOf(decimal.Zero, firstDate(st, date), cur)
		closing = balanceOf(sum, date, cur)
		r.warn(CodeBalanceDerived, ":60F:", "no balances in the source; opening set to zero")
	}
	for _, b := range st.Balances {
		switch b.Type {
		case statement.ClosingAvailable:
			extra = append(extra, b)
		case statement.ForwardAvailable:
			if r.typ == "950" {
				r.warn(CodeDropped, ":65:", "MT950 has no forward available balance")
				continue
			}
			extra = append(extra, b)
		case statement.InterimBooked, statement.InterimAvailable:
			r.warn(CodeDropped, ":62a:", "interim balances have no MT"+r.typ+" field")
		}
	}
	return opening, closing, extra, nil
}

// trailer renders the trailer of the last page into r.tbuf's storage:
// :62F: and the :64:/:65: lines (those beyond what one page can hold, a
// pathological number of forward balances, are left out), or MT942's
// :90D:/:90C:, then the statement's :86:.
func (r *renderer) trailer(st *statement.Statement, cur string, closing statement.Balance, extra []statement.Balance, report bool) []byte {
	tail := r.tbuf[:0]
	if !report {
		tail = r.balanceLine(tail, "62", closing, cur)
		for i, b := range extra {
			if len(tail) > MaxPage/2 {
				r.warn(CodeDropped, ":65:", itoa(len(extra)-i)+" balance line(s) do not fit in one message")
				break
			}
			tag := "64"
			if b.Type == statement.ForwardAvailable {
				tag = "65"
			}
			tail = r.balanceLine(tail, tag, b, cur)
		}
	} else if st.Summary.Set {
		tail = r.summaryLine(tail, "90D", st.Summary.DebitCount, st.Summary.DebitTotal, cur)
		tail = r.summaryLine(tail, "90C", st.Summary.CreditCount, st.Summary.CreditTotal, cur)
	}
	if st.Info != "" {
		if r.typ == "950" {
			r.warn(CodeDropped, ":86:", "MT950 has no information field")
		} else {
			w := lines86{r: r, b: tail}
			w.text(st.Info)
			tail = w.done()
		}
	}
	return tail
}

// pageCuts splits the rendered entries into pages, returning the index of
// the first entry of each page after the first. The header (headLen, with
// a 5-digit page number) and balances in their longest form are counted,
// so a page never overflows; the last page carries the full trailer
// (tailLen), so entries move to a new page until it fits.
func (r *renderer) pageCuts(headLen, tailLen int, report bool) []int {
	const maxBal = len(":60M:C991231XXX") + 15 + 2
	budget := MaxPage - len("\r\n") - len("-")
	fixed := headLen
	mid := 0
	if !report {
		fixed += maxBal
		mid = maxBal
	}
	ends := r.ends
	var cuts []int
	size := 0
	for i := range ends {
		if size > 0 && fixed+size+r.entryLen(i)+mid > budget {
			cuts = append(cuts, i)
			size = 0
		}
		size += r.entryLen(i)
	}
	for {
		start := 0
		if len(cuts) > 0 {
			start = cuts[len(cuts)-1]
		}
		size = len(r.entryText(start, len(ends)))
		if fixed+size+tailLen <= budget || len(ends)-start <= 1 {
			break
		}
		end, s := start, 0
		for end < len(ends) && fixed+s+r.entryLen(end)+mid <= budget {
			s += r.entryLen(end)
			end++
		}
		if end == start {
			end++
		}
		if end >= len(ends) {
			end = len(ends) - 1
		}
		cuts = append(cuts, end)
	}
	return cuts
}

// writePages appends one message per page to pages: header, opening (or
// intermediate :60M:) balance, the page's entries, then an intermediate
// :62M: or, on the last page, the trailer.
func (r *renderer) writePages(pages []string, st *statement.Statement, cur, num, seq string, opening statement.Balance, cuts []int, tail []byte, report bool) []string {
	n := len(cuts) + 1
	running := newSum(opening.Mark, opening.Value)
	start := 0
	for p := 0; p < n; p++ {
		end := len(r.ends)
		if p < len(cuts) {
			end = cuts[p]
		}
		pageSeq := seq
		if n > 1 {
			pageSeq = itoa(atoiSafe(seq) + p)
		}
		b := r.finHead(r.buf[:0], st)
		// Transliterations in the header were counted when it was measured.
		saved := r.tl.n
		b = r.header(b, st, cur, num, pageSeq, report)
		r.tl.n = saved
		if !report {
			ob := opening
			if p > 0 {
				ob = balanceOf(running.value(), lastDate(st.Entries[start-1]), cur)
				ob.Intermediate = true
			}
			b = r.balanceLine(b, "60", ob, cur)
		}
		b = append(b, r.entryText(start, end)...)
		for i := start; i < end; i++ {
			running.add(st.Entries[i].Mark, st.Entries[i].Value)
		}
		if p < n-1 {
			if !report {
				cb := balanceOf(running.value(), lastDate(st.Entries[end-1]), cur)
				cb.Intermediate = true
				b = r.balanceLine(b, "62", cb, cur)
			}
		} else {
			b = append(b, tail...)
		}
		b = append(b, "-}"...)
		pages = append(pages, string(b))
		r.buf = b
		start = end
	}
	return pages
}

// oneCurrency refuses a statement whose balances or entries are not all in
// cur, naming the first that is not. MT carries one currency per statement
// (the one of :60a:), so writing them would relabel amounts of one currency
// as another. Decision: refuse rather than split into one MT per currency;
// a statement of several currencies has no opening and closing balance per
// currency to split by, and balances derived for each would be invented.
func oneCurrency(st *statement.Statement, cur string) error {
	why := func(other string) string {
		return "the statement holds amounts in " + cur + " and " + other + ": MT carries one currency per statement, and amounts are never relabelled; " +
			"send one statement per currency or keep the camt"
	}
	for i, b := range st.Balances {
		if b.Currency != "" && b.Currency != cur {
			return st.Refuse(b.Line, b.MTTag(), camtPath(st, "Bal", i), why(b.Currency))
		}
	}
	for i := range st.Entries {
		if e := &st.Entries[i]; e.Currency != "" && e.Currency != cur {
			return st.Refuse(e.Line, ":61:", camtPath(st, "Ntry", i), why(e.Currency))
		}
	}
	return nil
}

// camtPath names the currency of the i-th (0-based) element name of a camt
// source's statement ("BkToCstmrStmt/Stmt[1]/Ntry[3]/Amt/@Ccy"); "" for
// an MT source, which Refuse names by its line and field.
func camtPath(st *statement.Statement, name string, i int) string {
	o := st.Origin.Path()
	if o == "" {
		return ""
	}
	return o + "/" + name + "[" + itoa(i+1) + "]/Amt/@Ccy"
}

// finHead appends blocks 1 and 2 of an input message of r.typ from the
// account servicer to the statement's receiver, and opens block 4.
func (r *renderer) finHead(b []byte, st *statement.Statement) []byte {
	// A placeholder where FIN needs a BIC is said, never silently written.
	switch sender, receiver := looksLikeBIC(st.Account.Servicer), looksLikeBIC(st.Header.To); {
	case !sender && !receiver:
		r.warn(CodeDefaulted, "{1:} {2:}", "no BIC for the sender (the account servicer) nor the receiver: the placeholder "+DefaultBIC+" is written in blocks 1 and 2")
	case !sender:
		r.warn(CodeDefaulted, "{1:}", "no BIC for the sender (the account servicer): the placeholder "+DefaultBIC+" is written in block 1")
	case !receiver:
		r.warn(CodeDefaulted, "{2:}", "no BIC for the receiver: the placeholder "+DefaultBIC+" is written in block 2")
	}
	b = append(b, "{1:F01"...)
	b = appendLTAddress(b, st.Account.Servicer)
	b = append(b, "0000000000}{2:I"...)
	b = append(b, r.typ...)
	b = appendLTAddress(b, st.Header.To)
	return append(b, "N}{4:\r\n"...)
}

// numbers returns :28C: statement and sequence numbers (5n each).
func (r *renderer) numbers(st *statement.Statement) (num, seq string) {
	num, seq = st.StatementNumber, st.SequenceNumber
	if num == "" || !allDigits(num) {
		if num != "" {
			r.warn(CodeTruncated, ":28C:", "statement number is not numeric; its digits are used")
		}
		num = digitsOf(num)
		if num == "" {
			r.warn(CodeDefaulted, ":28C:", "no statement number; 1 is used")
			num = "1"
		}
	}
	if len(num) > 5 {
		r.warn(CodeTruncated, ":28C:", "statement number longer than 5 digits; the last 5 are used")
		num = num[len(num)-5:]
	}
	if seq != "" && (!allDigits(seq) || len(seq) > 5) {
		r.warn(CodeTruncated, ":28C:", "sequence number is not 1 to 5 digits")
		seq = digitsOf(seq)
		if len(seq) > 5 {
			seq = seq[len(seq)-5:]
		}
	}
	return num, seq
}

func firstSeq(seq string) string {
	if seq == "" || atoiSafe(seq) == 0 {
		return "1"
	}
	return seq
}

func atoiSafe(s string) int {
	n := 0
	for i := 0; i < len(s) && i < 9; i++ {
		if isDigit(s[i]) {
			n = n*10 + int(s[i]-'0')
		}
	}
	return n
}

func digitsOf(s string) string {
	var b []byte
	for i := 0; i < len(s); i++ {
		if isDigit(s[i]) {
			b = append(b, s[i])
		}
	}
	return string(b)
}

func (r *renderer) header(b []byte, st *statement.Statement, cur, num, seq string, report bool) []byte {
	ref := st.Reference
	if ref == "" {
		ref = st.MessageID
	}
	if ref == "" {
		r.warn(CodeDefaulted, ":20:", "no statement reference; NONREF is used")
		ref = "NONREF"
	}
	b = append(b, ":20:"...)
	b = append(b, r.fit(ref, 16, ":20:")...)
	b = append(b, "\r\n"...)
	if st.RelatedReference != "" {
		b = append(b, ":21:"...)
		b = append(b, r.fit(st.RelatedReference, 16, ":21:")...)
		b = append(b, "\r\n"...)
	}
	acct := st.Account.IBAN
	if acct == "" {
		acct = st.Account.Other
	}
	if acct == "" {
		r.warn(CodeDefaulted, ":25:", "no account identifier; NOTPROVIDED is used")
		acct = "NOTPROVIDED"
	}
	if bic := st.Account.OwnerBIC; looksLikeBIC(bic) {
		// Option P: the account, then the owner's identifier code.
		b = append(b, ":25P:"...)
		b = append(b, r.fit(acct, 35, ":25P:")...)
		b = append(b, "\r\n"...)
		b = append(b, bic...)
	} else {
		if bic != "" {
			r.warn(CodeDropped, ":25:", "the account owner's identifier code is not a BIC (4!a2!a2!c[3!c]) and was left out")
		}
		b = append(b, ":25:"...)
		b = append(b, r.fit(acct, 35, ":25:")...)
	}
	if r.typ == "941" {
		b = append(b, "\r\n:28:"...) // MT941's own tag, 5n[/2n]
	} else {
		b = append(b, "\r\n:28C:"...)
	}
	b = append(b, num...)
	if seq != "" {
		b = append(b, '/')
		b = append(b, seq...)
	}
	b = append(b, "\r\n"...)
	if report {
		d, c := st.FloorLimitDebit, st.FloorLimitCredit
		switch {
		case d == nil && c == nil:
			r.warn(CodeDefaulted, ":34F:", "no floor limit; zero is used")
			b = append(b, ":34F:"+cur+"0,\r\n"...)
		case d != nil && c != nil && d.Value.Equal(c.Value):
			b = r.floorLine(b, "", *d, cur)
		default:
			if d != nil {
				b = r.floorLine(b, "D", *d, cur)
			}
			if c != nil {
				b = r.floorLine(b, "C", *c, cur)
			}
		}
		t := reportTime(st)
		if t.IsZero() {
			d := statementDate(st)
			t = time.Date(d.Year, d.Month, d.Day, 0, 0, 0, 0, time.UTC)
			r.warn(CodeDefaulted, ":13D:", "no report time; midnight UTC of the report date is used")
		}
		b = appendDateTime(b, t)
	} else if t := reportTime(st); r.typ == "941" && !t.IsZero() {
		b = appendDateTime(b, t) // optional in MT941: written when known
	}
	return b
}

// reportTime is the time a report was made: :13D:, else the creation time.
func reportTime(st *statement.Statement) time.Time {
	if t := st.DateTimeIndicator; !t.IsZero() {
		return t
	}
	return st.CreatedAt
}

// appendDateTime writes :13D: (YYMMDDhhmm+hhmm).
func appendDateTime(b []byte, t time.Time) []byte {
	b = append(b, ":13D:"...)
	b = appendYYMMDD(b, statement.DateOf(t))
	b = append2(b, t.Hour())
	b = append2(b, t.Minute())
	_, off := t.Zone()
	if off < 0 {
		b = append(b, '-')
		off = -off
	} else {
		b = append(b, '+')
	}
	b = append2(b, off/3600%100)
	b = append2(b, off/60%60)
	return append(b, "\r\n"...)
}

func (r *renderer) floorLine(b []byte, mark string, a statement.Amount, cur string) []byte {
	b = append(b, ":34F:"...)
	b = append(b, cur...)
	b = append(b, mark...)
	b = r.appendAmount(b, a.Value, "34F")
	return append(b, "\r\n"...)
}

func (r *renderer) summaryLine(b []byte, tag string, n int, v decimal.Decimal, cur string) []byte {
	if n > 99999 {
		r.warn(CodeTruncated, ":"+tag+":", "entry count above 99999")
		n = 99999
	}
	b = append(b, ':')
	b = append(b, tag...)
	b = append(b, ':')
	b = append(b, itoa(n)...)
	b = append(b, cur...)
	b = r.appendAmount(b, v, tag)
	return append(b, "\r\n"...)
}

// balanceLine writes :60F:/:60M:, :62F:/:62M:, :64:, :65:.
func (r *renderer) balanceLine(b []byte, tag string, bal statement.Balance, cur string) []byte {
	r.srcLine, r.srcField = bal.Line, bal.MTTag()
	defer func() { r.srcLine, r.srcField = 0, "" }()
	b = append(b, ':')
	b = append(b, tag...)
	if tag == "60" || tag == "62" {
		if bal.Intermediate {
			b = append(b, 'M')
		} else {
			b = append(b, 'F')
		}
	}
	b = append(b, ':')
	v := bal.Value
	mark := bal.Mark
	if v.IsNegative() {
		v = v.Neg()
		mark = flip(mark)
	}
	if mark == statement.Debit {
		b = append(b, 'D')
	} else {
		b = append(b, 'C')
	}
	if bal.Date.IsZero() {
		r.warn(CodeDefaulted, ":"+tag+":", "balance without date; the statement date is used")
		bal.Date = r.date
	}
	b = appendYYMMDD(b, bal.Date)
	b = append(b, cur...) // the balance's own: oneCurrency refused any other
	b = r.appendAmount(b, v, tag)
	return append(b, "\r\n"...)
}

func flip(m statement.Mark) statement.Mark {
	if m == statement.Debit {
		return statement.Credit
	}
	return statement.Debit
}

func balanceOf(v decimal.Decimal, d statement.Date, cur string) statement.Balance {
	b := statement.Balance{Date: d, Mark: statement.Credit}
	b.Currency = cur
	if v.IsNegative() {
		b.Mark, v = statement.Debit, v.Neg()
	}
	b.Value = v
	return b
}

// entry renders one :61: and, except in MT950, its :86:.
func (r *renderer) entry(b []byte, e *statement.Entry, dropped *lostSet) []byte {
	r.srcLine, r.srcField = e.Line, ":61:"
	defer func() { r.srcLine, r.srcField = 0, "" }()
	b = append(b, ":61:"...)
	b = appendYYMMDD(b, r.valueDate(e))
	if !e.BookingDate.IsZero() {
		b = append2(b, int(e.BookingDate.Month))
		b = append2(b, e.BookingDate.Day)
	}
	b, v := appendMark(b, e)
	if len(e.FundsCode) == 1 && isUpper(e.FundsCode[0]) {
		b = append(b, e.FundsCode...)
	}
	b = r.appendAmount(b, v, "61")
	b = append(b, r.transactionType(e)...)
	b = r.appendReferences(b, e)
	b = append(b, "\r\n"...)
	if e.Supplementary != "" {
		sup := r.fit(e.Supplementary, 34, ":61:")
		if sup[0] == ':' || sup[0] == '-' {
			r.tl.n++
			sup = "." + sup[1:]
		}
		b = append(b, sup...)
		b = append(b, "\r\n"...)
	}
	return r.field86(b, e, dropped)
}

// valueDate is the entry's value date, mandatory in MT; camt may only have
// a booking date, which is used then, else the statement date.
func (r *renderer) valueDate(e *statement.Entry) statement.Date {
	vd := e.ValueDate
	if vd.IsZero() {
		vd = e.BookingDate
		if vd.IsZero() {
			vd = r.date
		}
		r.warn(CodeDefaulted, ":61:", "entry without value date; the booking or statement date is used")
	}
	return vd
}

// appendMark appends the debit/credit mark of :61: and returns the amount
// to write: a negative value flips the mark, and RC reverses a credit and
// so books as a debit (RD the other way).
func appendMark(b []byte, e *statement.Entry) ([]byte, decimal.Decimal) {
	v, mark := e.Value, e.Mark
	if v.IsNegative() {
		v, mark = v.Neg(), flip(mark)
	}
	if e.Reversal {
		b = append(b, 'R')
		if mark == statement.Debit {
			b = append(b, 'C')
		} else {
			b = append(b, 'D')
		}
	} else if mark == statement.Debit {
		b = append(b, 'D')
	} else {
		b = append(b, 'C')
	}
	return b, v
}

// transactionType is the entry's 4-character MT type code; NMSC (non-SWIFT,
// miscellaneous) is the neutral choice when the source has none.
func (r *renderer) transactionType(e *statement.Entry) string {
	tt := r.x(e.TransactionType)
	if len(tt) != 4 || !isLetter(tt[0]) {
		if tt != "" {
			r.warn(CodeTruncated, ":61:", "transaction type is not 4 characters; NMSC is used")
		}
		tt = "NMSC"
	}
	return tt
}

// appendReferences appends the customer reference (NONREF when there is
// none, with no "//", which would start the bank reference when the line
// is read back) and the bank reference after "//".
func (r *renderer) appendReferences(b []byte, e *statement.Entry) []byte {
	ref := e.CustomerReference
	if ref == "" {
		ref = "NONREF"
	}
	ref = r.fit(ref, 16, ":61:")
	if indexSlashes(ref) >= 0 {
		r.tl.n++
		ref = strings.ReplaceAll(ref, "//", "/.")
	}
	b = append(b, ref...)
	if e.BankReference != "" {
		b = append(b, "//"...)
		b = append(b, r.fit(e.BankReference, 16, ":61:")...)
	}
	return b
}

// field86 appends the entry's :86:: none in MT950 (what it had is marked
// dropped), the German structured form, the plain text, or the slash-coded
// form of the Dutch banks (field86_sepa.go): the entry information as it is
// (pairs it kept, /TRTP/…), then the pairs.
func (r *renderer) field86(b []byte, e *statement.Entry, dropped *lostSet) []byte {
	if r.typ == "950" {
		if e.Info != "" || len(e.Remittance) > 0 {
			*dropped |= lostInfo
		}
		r.lostParties(e, "", dropped)
		return b
	}
	if r.german {
		text, trunc := german86(r.xEntry(e))
		if e.Purpose != "" || e.ReturnReason != "" {
			*dropped |= lostPurpose
		}
		if e.CreditorReference != "" {
			*dropped |= lostRemittance
		}
		if trunc {
			r.warn(CodeTruncated, r.mxPath(":86:", "NtryDtls/TxDtls/RmtInf/Ustrd"), "structured :86: subfields cut to fit")
		}
		w := lines86{r: r, b: b}
		w.text(text)
		return w.done()
	}
	w := lines86{r: r, b: b}
	if !structured(e) {
		for _, l := range e.Remittance {
			w.text(l)
		}
		w.text(e.Info)
		return w.done()
	}
	w.text(e.Info)
	w.line(r.slashPairs(e, w.out, dropped))
	return w.done()
}

// mxPath names a value of the entry being written: the field, and for a
// camt source the element it came from (BkToCstmrStmt/Stmt[1]/Ntry[2]/…).
func (r *renderer) mxPath(field, rel string) string {
	if r.st == nil || r.st.Origin.Element == "" || r.entryNo == 0 {
		return field
	}
	return field + " (" + r.st.Origin.Path() + "/Ntry[" + itoa(r.entryNo) + "]/" + rel + ")"
}

// slashPairs writes an entry's structured data as the "/CODE/value" pairs
// Dutch banks use in their MT940, in the room the :86: has left after used
// lines: the remittance first, one /REMI/ a line (cut to the room, with
// TRUNCATED naming its source), as the free-text form gives the text
// priority; then EREF, MARF, CSID, NAME, IBAN, ACCT, BIC, BANK, PURP, RTRN,
// ULTD, ULTC and a Currence reference (/REMI/STRD/CUR/). What the entry
// information already holds is not repeated; a pair that does not fit is
// reported as dropped.
func (r *renderer) slashPairs(e *statement.Entry, used int, dropped *lostSet) string {
	room := (6-used)*65 - 6 // a little slack for line breaks moved off ':' and '-'
	var b strings.Builder
	for i, l := range e.Remittance {
		if l = r.x(strings.TrimSpace(l)); l == "" {
			continue
		}
		free := room - b.Len() - len("/REMI/")
		if free < 1 {
			*dropped |= lostRemittance
			break
		}
		if len(l) > free {
			r.warn(CodeTruncated, r.mxPath(":86:", "NtryDtls/TxDtls/RmtInf/Ustrd["+itoa(i+1)+"]"),
				"remittance cut to "+itoa(free)+" of "+itoa(len(l))+" characters to fit :86: (6 x 65)")
			l = strings.TrimRight(l[:free], " ")
		}
		b.WriteString("/REMI/" + l)
	}
	add := func(code, v string, flag lostSet) {
		if v == "" || strings.Contains(e.Info, "/"+code+"/"+v) {
			return
		}
		v = r.x(v)
		if b.Len()+len(code)+2+len(v) > room {
			*dropped |= flag
			return
		}
		b.WriteString("/" + code + "/" + v)
	}
	cp := e.Counterparty
	add("EREF", e.EndToEndID, lostEndToEnd)
	add("MARF", e.MandateID, lostMandate)
	add("CSID", e.CreditorID, lostCreditor)
	add("NAME", cp.Name, lostCounterparty)
	add("IBAN", cp.IBAN, lostCounterparty)
	add("ACCT", cp.Account, lostCounterparty)
	add("BIC", cp.BIC, lostCounterparty)
	add("BANK", cp.BankCode, lostCounterparty)
	add("PURP", e.Purpose, lostPurpose)
	add("RTRN", e.ReturnReason, lostPurpose)
	add("ULTD", e.UltimateDebtor, lostUltimate)
	add("ULTC", e.UltimateCreditor, lostUltimate)
	add("REMI", remiPrefix(e.CreditorReference), lostRemittance)
	return b.String()
}

// remiPrefix is the /REMI/ value of a Currence payment reference.
func remiPrefix(ref string) string {
	if ref == "" {
		return ""
	}
	return "STRD/CUR/" + ref
}

func structured(e *statement.Entry) bool {
	return e.Counterparty != (statement.Counterparty{}) || e.EndToEndID != "" || e.MandateID != "" ||
		e.CreditorID != "" || e.UltimateDebtor != "" || e.UltimateCreditor != "" ||
		e.Purpose != "" || e.ReturnReason != "" || e.CreditorReference != ""
}

// lostParties notes structured entry data that a free-text :86: (or none)
// does not carry, unless the text already contains it.
func (r *renderer) lostParties(e *statement.Entry, text string, dropped *lostSet) {
	miss := func(v string) bool { return v != "" && !strings.Contains(text, v) }
	if miss(e.Counterparty.Name) || miss(e.Counterparty.IBAN) || miss(e.Counterparty.Account) || miss(e.Counterparty.BIC) {
		*dropped |= lostCounterparty
	}
	if miss(e.EndToEndID) {
		*dropped |= lostEndToEnd
	}
	if miss(e.MandateID) {
		*dropped |= lostMandate
	}
	if miss(e.CreditorID) {
		*dropped |= lostCreditor
	}
	if miss(e.UltimateDebtor) || miss(e.UltimateCreditor) {
		*dropped |= lostUltimate
	}
	if miss(e.Purpose) || miss(e.ReturnReason) {
		*dropped |= lostPurpose
	}
	if miss(e.CreditorReference) {
		*dropped |= lostRemittance
	}
}

// lostSet records which kinds of entry data a statement could not carry.
type lostSet uint8

const (
	lostCounterparty lostSet = 1 << iota
	lostEndToEnd
	lostMandate
	lostCreditor
	lostUltimate
	lostInfo
	lostPurpose
	lostRemittance
)

var lostNames = []string{"counterparty", "end-to-end id", "mandate id", "creditor id", "ultimate parties", ":86: information", "purpose or return reason", "remittance"}

// xEntry is a copy of e with every text the german :86: uses already in
// the X character set, so subfield lengths count output characters.
func (r *renderer) xEntry(e *statement.Entry) *statement.Entry {
	c := *e
	c.GVC = r.x(c.GVC)
	c.PostingText, c.Primanota, c.TextKeyAddition = r.x(c.PostingText), r.x(c.Primanota), r.x(c.TextKeyAddition)
	c.EndToEndID, c.MandateID, c.CreditorID = r.x(c.EndToEndID), r.x(c.MandateID), r.x(c.CreditorID)
	c.UltimateDebtor, c.UltimateCreditor, c.Info = r.x(c.UltimateDebtor), r.x(c.UltimateCreditor), r.x(c.Info)
	c.Counterparty.Name, c.Counterparty.IBAN, c.Counterparty.Account = r.x(c.Counterparty.Name), r.x(c.Counterparty.IBAN), r.x(c.Counterparty.Account)
	c.Counterparty.BIC, c.Counterparty.BankCode = r.x(c.Counterparty.BIC), r.x(c.Counterparty.BankCode)
	if len(c.Remittance) > 0 {
		c.Remittance = make([]string, len(e.Remittance))
		for i, s := range e.Remittance {
			c.Remittance[i] = r.x(s)
		}
	}
	return &c
}

// lines86 writes a :86: of at most 6 lines of 65 characters. Longer lines
// are broken, and a line may not begin with ':' or '-' (it would read as a
// new field or the end of the message): a long line is broken earlier to
// avoid that, and a line that itself starts so gets '.' instead.
type lines86 struct {
	r   *renderer
	b   []byte
	out int
	cut bool
}

// text writes s, whose own line breaks are "\n"; empty lines are skipped.
func (w *lines86) text(s string) {
	for s != "" {
		var l string
		l, s, _ = strings.Cut(s, "\n")
		w.line(w.r.x(l))
	}
}

func (w *lines86) line(l string) {
	// Readers drop a line's trailing spaces (ours with MT_TRAILING_SPACE),
	// so none are written: not at the end of the text, and not where it is
	// broken, which moves the break before the spaces.
	l = strings.TrimRight(l, " ")
	for len(l) > 0 {
		if w.out == 6 {
			w.cut = true
			return
		}
		n := len(l)
		if n > 65 {
			n = 65
			for n > 1 && (l[n] == ':' || l[n] == '-') {
				n--
			}
			for n > 1 && l[n-1] == ' ' {
				n--
			}
		}
		part := l[:n]
		l = l[n:]
		if w.out == 0 {
			w.b = append(w.b, ":86:"...)
			w.b = append(w.b, part...)
		} else {
			if part[0] == ':' || part[0] == '-' {
				w.r.tl.n++
				w.b = append(w.b, '.')
				part = part[1:]
			}
			w.b = append(w.b, part...)
		}
		w.b = append(w.b, "\r\n"...)
		w.out++
	}
}

func (w *lines86) done() []byte {
	if w.cut {
		w.r.warn(CodeTruncated, ":86:", ":86: cut to 6 lines of 65 characters")
	}
	return w.b
}

// appendAmount writes 15d: digits and a decimal comma, always present.
func (r *renderer) appendAmount(b []byte, v decimal.Decimal, tag string) []byte {
	start := len(b)
	b = appendDecimal(b, v)
	if len(b)-start > 15 && r.err == nil {
		// Money is never cut: an amount MT cannot hold fails the conversion.
		src := r.srcField
		if src == "" {
			src = ":" + tag + ":"
		}
		r.err = r.st.Refuse(r.srcLine, src, ":"+tag+":", "amount "+v.String()+" does not fit in 15 characters (15d)")
	}
	return b
}

func appendYYMMDD(b []byte, d statement.Date) []byte {
	b = append2(b, d.Year%100)
	b = append2(b, int(d.Month))
	return append2(b, d.Day)
}

func append2(b []byte, n int) []byte {
	if n < 0 {
		n = 0
	}
	return append(b, byte('0'+n/10%10), byte('0'+n%10))
}

// appendLTAddress appends the 12-character logical terminal address of a
// BIC: the BIC8, terminal code X, and the branch (XXX for the head office).
func appendLTAddress(b []byte, bic string) []byte {
	if !looksLikeBIC(bic) {
		bic = DefaultBIC
	}
	b = append(b, bic[:8]...)
	if len(bic) == 8 {
		return append(b, "XXXX"...)
	}
	b = append(b, 'X')
	return append(b, bic[8:]...)
}

// currencyField is the MT field that gives a statement its currency: :34F:
// in a report (MT942), the opening balance otherwise.
func currencyField(st *statement.Statement) string {
	if st.Kind == statement.KindReport {
		return ":34F:"
	}
	return ":60a:"
}

func statementDate(st *statement.Statement) statement.Date {
	if b, ok := st.Balance(statement.ClosingBooked); ok {
		return b.Date
	}
	if !st.ToDate.IsZero() {
		return st.ToDate
	}
	if n := len(st.Entries); n > 0 {
		return lastDate(st.Entries[n-1])
	}
	// A statement without entries is dated by its opening balance before
	// its creation time: a camt.053 is often created (and converted) a day
	// or more after the day it reports, and a closing balance derived from
	// the opening one must not move to that day.
	if b, ok := st.Balance(statement.OpeningBooked); ok {
		return b.Date
	}
	if !st.DateTimeIndicator.IsZero() {
		return statement.DateOf(st.DateTimeIndicator)
	}
	if !st.CreatedAt.IsZero() {
		return statement.DateOf(st.CreatedAt)
	}
	for _, b := range st.Balances {
		if !b.Date.IsZero() {
			return b.Date // an interim or available balance (camt.052)
		}
	}
	return statement.Date{}
}

func firstDate(st *statement.Statement, def statement.Date) statement.Date {
	if !st.FromDate.IsZero() {
		return st.FromDate
	}
	if len(st.Entries) > 0 {
		return lastDate(st.Entries[0])
	}
	return def
}

func lastDate(e statement.Entry) statement.Date {
	if !e.BookingDate.IsZero() {
		return e.BookingDate
	}
	return e.ValueDate
}
