package mt

import (
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/ledgerlane/platform/services/converter/bankid"
	"github.com/ledgerlane/platform/services/converter/statement"
)

// Parse reads every MT940, MT941, MT942 or MT950 message in input. Each
// message (page) becomes one statement; a statement split over several
// messages keeps its :28C: sequence numbers and :60M:/:62M: intermediate
// balances. A message whose block 2 names MT970 to MT973 is refused with
// the reason (statement.Refused).
func Parse(input []byte, opts statement.Options) ([]*statement.Statement, []statement.Warning, error) {
	return parse(input, opts, "")
}

// parse is Parse with the type ("941", "970", …) of messages that do not
// name one themselves (bare block 4 text without a bank header line).
func parse(input []byte, opts statement.Options, typ string) ([]*statement.Statement, []statement.Warning, error) {
	w := &warner{}
	// The structured forms join their lines without a separator: a space
	// at a line's end is text there, kept for the profiles that ask for them.
	lx := lex(string(input), w, opts.Field86Profile == "german" || opts.Field86Profile == "sepa")
	defer lx.release()
	msgs := lx.msgs
	if len(msgs) == 0 {
		return nil, nil, &statement.ParseError{Line: 1, Reason: "no MT940/MT942/MT950 fields found (expected lines such as :20: or :61:)"}
	}
	// Statements, entries and balances of all messages come from one
	// allocation each; every statement gets a window capped at its own
	// length, so a caller appending to one cannot overwrite the next.
	a := arena{
		stmts:    make([]statement.Statement, len(msgs)),
		entries:  make([]statement.Entry, lx.n61),
		balances: make([]statement.Balance, lx.nbal),
	}
	a.text.chunk = min(len(input), 32<<10)
	out := make([]*statement.Statement, 0, len(msgs))
	for _, m := range msgs {
		p := msgParser{m: m, w: w, profile: opts.Field86Profile, a: &a, typ: m.typeHint}
		if p.typ == "" {
			p.typ = typ
		}
		st, err := p.parse()
		if err != nil {
			return nil, nil, err
		}
		out = append(out, st)
	}
	return out, w.result(), nil
}

type msgParser struct {
	m *rawMessage
	w *warner
	// profile is the field86Profile: "german", "sepa", else plain.
	profile string
	// typ is the message's type ("940", "941", …; "" when unknown): from
	// its block 2 or header line, else the type the caller named.
	typ string
	a   *arena
	st  *statement.Statement
	f   rawField // the field being parsed
	// last is the int64 form of the amount read last; entries sums the
	// entries' signed amounts while that holds, so the balance check need
	// not take the amounts apart again.
	last       smallAmount
	entries    sum
	entriesBig bool // entries does not hold the sum
}

// smallAmount is an amount as coef*10^exp, when ok.
type smallAmount struct {
	coef int64
	exp  int32
	ok   bool
}

// arena holds what Parse hands out to the messages it parses.
type arena struct {
	stmts    []statement.Statement
	entries  []statement.Entry
	balances []statement.Balance
	text     texts
	amounts  amountCache
}

// amountCache hands out one decimal per value within a parse. Values repeat
// (a closing balance is the next page's or day's opening one, :64: is often
// :62F:, entries of one amount recur): on the shared bank files 290 of 525
// amounts are distinct per file, and every new decimal costs two
// allocations, its big.Int and the word under it (issue 30). A decimal is
// never changed in place (every operation returns a new one), so two
// entries may share one. A slot holds the last value hashed to it.
type amountCache [64]struct {
	coef int64
	exp  int32
	d    decimal.Decimal
	set  bool
}

// get is decimal.New(coef, exp), shared with an earlier call of the same value.
func (c *amountCache) get(coef int64, exp int32) decimal.Decimal {
	h := (uint64(coef)*0x9E3779B97F4A7C15 ^ uint64(uint32(exp))) >> 58 // 6 bits: 64 slots
	e := &c[h]
	if !e.set || e.coef != coef || e.exp != exp {
		e.coef, e.exp, e.d, e.set = coef, exp, decimal.New(coef, exp), true
	}
	return e.d
}

// texts builds the strings the parser joins from several lines (:86:
// text) in shared chunks: one allocation per chunk instead of one per
// entry. A strings.Builder never changes bytes it has written, so every
// string taken from it stays valid when a new chunk is started.
type texts struct {
	b     strings.Builder
	chunk int // size of a new chunk
}

// join is strings.Join(parts, sep).
func (t *texts) join(parts []string, sep string) string {
	switch len(parts) {
	case 0:
		return ""
	case 1:
		return parts[0]
	}
	n := len(sep) * (len(parts) - 1)
	for _, s := range parts {
		n += len(s)
	}
	if t.b.Cap()-t.b.Len() < n {
		t.b.Reset() // drops the chunk; strings already taken keep it alive
		t.b.Grow(max(n, t.chunk))
	}
	start := t.b.Len()
	t.b.WriteString(parts[0])
	for _, s := range parts[1:] {
		t.b.WriteString(sep)
		t.b.WriteString(s)
	}
	return t.b.String()[start:]
}

func (p *msgParser) fail(reason string) error {
	return &statement.ParseError{Message: p.m.no, Line: p.f.line, Field: ":" + p.f.tag + ":", Reason: reason}
}

func (p *msgParser) warn(code, text string) {
	p.w.add(code, p.m.no, p.f.line, ":"+p.f.tag+":", text)
}

// parse reads the message as one statement, field by field; what each
// field holds is read by the helper its tag names.
func (p *msgParser) parse() (*statement.Statement, error) {
	m := p.m
	if strings.HasPrefix(p.typ, "97") {
		if why, ok := statement.Refused()["MT"+p.typ]; ok {
			return nil, &statement.ParseError{Message: m.no, Line: m.line, Reason: why}
		}
	}
	st := p.newStatement()
	p.reserve(st)
	var seen tagSet
	prev := "" // tag of the previous known field, to attach :86: to its :61:
	var opening, closing int = -1, -1
	var info []string // statement-level :86: lines, joined once at the end
	for _, f := range m.fields {
		p.f = f
		lines := m.lines[f.from:f.to]
		first := lines[0]
		tag := p.fieldTag(f.tag, &seen)
		var err error
		switch tag {
		case "20":
			st.Reference = p.text16(first)
		case "21":
			st.RelatedReference = p.text16(first)
		case "25", "25P":
			p.account(lines)
		case "28C":
			p.statementNumber(first)
		case "60F", "60M", "62F", "62M", "64", "65":
			err = p.addBalance(st, tag, first, f.line, &opening, &closing)
		case "61":
			err = p.addEntry(st, lines, f.line)
		case "86":
			if prev == "61" {
				p.info86(&st.Entries[len(st.Entries)-1], lines)
			} else {
				if p.profile == "german" || p.profile == "sepa" {
					p.trimLines(lines, 0)
				}
				info = append(info, lines...)
			}
		case "34F":
			st.Kind = statement.KindReport
			err = p.floorLimit(first)
		case "13D":
			st.Kind = statement.KindReport
			err = p.dateTime(first)
		case "90D", "90C":
			err = p.summary(first, tag == "90D")
		default:
			p.warn(CodeUnknownField, "field :"+f.tag+": is not part of MT940/MT941/MT942/MT950 and was skipped")
			continue
		}
		if err != nil {
			return nil, err
		}
		prev = tag
	}
	p.finish(st, info, seen)
	return st, nil
}

// newStatement takes the next statement from the arena: a report for
// MT941 and MT942, serviced by the sender, with the FIN header and, for an
// output message, its date and time as the creation time.
func (p *msgParser) newStatement() *statement.Statement {
	m, a := p.m, p.a
	st := &a.stmts[0]
	a.stmts = a.stmts[1:]
	st.Kind = statement.KindStatement
	p.st = st
	if p.typ == "942" || p.typ == "941" {
		st.Kind = statement.KindReport
	}
	st.Account.Servicer = senderBIC(m.block1, m.block2)
	if m.fin && (m.block1 != "" || m.block2 != "") {
		st.Header = statement.Header{Set: true, From: st.Account.Servicer, To: receiverBIC(m.block1, m.block2)}
		if b2 := m.block2; len(b2) >= 46 && b2[0] == 'O' {
			// An output message's date and time (YYMMDDHHMM, in the
			// receiver's time, kept as UTC as for payments) is when the
			// statement was delivered: its creation time, rather than the
			// time of conversion.
			if t, err := time.Parse("0601021504", b2[36:46]); err == nil {
				st.CreatedAt = t
			}
		}
	}
	st.Origin = statement.Origin{Message: m.no, Line: m.line}
	if len(m.fields) > 0 {
		st.Origin.Line = m.fields[0].line
	}
	return st
}

// reserve gives the statement windows of the arena with room for every
// :61: and balance field of the message.
func (p *msgParser) reserve(st *statement.Statement) {
	m, a := p.m, p.a
	n61, nbal := 0, 0
	for i := range m.fields {
		switch m.fields[i].tag {
		case "61":
			n61++
		case "60F", "60M", "62F", "62M", "64", "65":
			nbal++
		}
	}
	st.Entries, a.entries = a.entries[:0:n61], a.entries[n61:]
	st.Balances, a.balances = a.balances[:0:nbal], a.balances[nbal:]
}

// fieldTag is the tag the field is read as (legacy :28: and :13: as :28C:
// and :13D:), warning when a field that may not repeat is seen again.
func (p *msgParser) fieldTag(tag string, seen *tagSet) string {
	switch tag {
	case "28":
		if p.typ != "941" { // MT941's own tag is :28:
			p.warn(CodeLegacyTag, ":28: read as :28C:")
		}
		tag = "28C"
	case "13":
		p.warn(CodeLegacyTag, ":13: read as :13D:")
		tag = "13D"
	}
	repeatable := tag == "61" || tag == "86" || tag == "65" || tag == "34F"
	if !repeatable && seen.has(tag) {
		p.warn(CodeDuplicateField, "field repeated; the last occurrence is used")
	}
	seen.add(tag)
	return tag
}

// addBalance reads a balance field: one opening (:60F:/:60M:) and one
// closing (:62F:/:62M:), a repeated one replacing the first, and any
// number of :64: and :65:. The first balance's currency is the account's
// when it has none.
func (p *msgParser) addBalance(st *statement.Statement, tag, first string, line int, opening, closing *int) error {
	b, err := p.balance(first)
	if err != nil {
		return err
	}
	b.Line = line
	switch tag[:2] {
	case "60":
		b.Type, b.Intermediate = statement.OpeningBooked, tag == "60M"
		if *opening >= 0 {
			st.Balances[*opening] = b
			break
		}
		*opening = len(st.Balances)
		st.Balances = append(st.Balances, b)
	case "62":
		b.Type, b.Intermediate = statement.ClosingBooked, tag == "62M"
		st.LastPage = tag == "62F"
		if *closing >= 0 {
			st.Balances[*closing] = b
			break
		}
		*closing = len(st.Balances)
		st.Balances = append(st.Balances, b)
	case "64":
		b.Type = statement.ClosingAvailable
		st.Balances = append(st.Balances, b)
	case "65":
		b.Type = statement.ForwardAvailable
		st.Balances = append(st.Balances, b)
	}
	if st.Account.Currency == "" {
		st.Account.Currency = b.Currency
	}
	return nil
}

// addEntry reads a :61: in place: an Entry is large, copying it costs. The
// window has room for every :61: and is already zeroed.
func (p *msgParser) addEntry(st *statement.Statement, lines []string, line int) error {
	st.Entries = st.Entries[:len(st.Entries)+1]
	if err := p.entry(&st.Entries[len(st.Entries)-1], lines); err != nil {
		return err
	}
	st.Entries[len(st.Entries)-1].Line = line
	return nil
}

// finish completes the statement once every field is read: its :86:
// lines, the account currency (else the floor limit's) on every entry, a
// report as its last page, then the required fields and the balance check.
func (p *msgParser) finish(st *statement.Statement, info []string, seen tagSet) {
	st.Info = p.a.text.join(info, "\n")
	p.f = rawField{line: p.m.line}
	if st.Account.Currency == "" && st.FloorLimitDebit != nil {
		st.Account.Currency = st.FloorLimitDebit.Currency
	}
	for i := range st.Entries {
		st.Entries[i].Currency = st.Account.Currency
	}
	if st.Kind == statement.KindReport {
		st.LastPage = true
	}
	p.required(seen)
	p.checkBalance()
}

func (p *msgParser) required(seen tagSet) {
	need := []string{"20", "25", "28C", "60", "62"}
	switch {
	case p.typ == "941":
		need = []string{"20", "25", "28C", "62"}
	case p.st.Kind == statement.KindReport:
		need = []string{"20", "25", "28C", "34F", "13D"}
	}
	for _, t := range need {
		ok := seen.has(t)
		switch t {
		case "25":
			ok = seen.has("25") || seen.has("25P")
		case "60":
			ok = seen.has("60F") || seen.has("60M")
		case "62":
			ok = seen.has("62F") || seen.has("62M")
		}
		if !ok {
			label := ":" + t + ":"
			switch {
			case t == "60" || t == "62":
				label = ":" + t + "a:"
			case t == "28C" && p.typ == "941":
				label = ":28:"
			}
			p.w.add(CodeMissingField, p.m.no, p.m.line, label, "mandatory field "+label+" is missing")
		}
	}
}

// checkBalance verifies opening + entries = closing, the first thing a
// reconciling importer checks. A balance report (MT941) lists no entries:
// its balances need not meet.
func (p *msgParser) checkBalance() {
	st := p.st
	if p.typ == "941" && len(st.Entries) == 0 {
		return
	}
	open, ok1 := st.Balance(statement.OpeningBooked)
	cl, ok2 := st.Balance(statement.ClosingBooked)
	if !ok1 || !ok2 {
		return
	}
	acc := newSum(open.Mark, open.Value)
	if !p.entriesBig && acc.big == nil && acc.addSmall(p.entries.coef, p.entries.exp) && acc.equalSmall(newSum(cl.Mark, cl.Value)) {
		return
	}
	// Not known to balance: the exact sum decides.
	acc = newSum(open.Mark, open.Value)
	for i := range st.Entries {
		acc.add(st.Entries[i].Mark, st.Entries[i].Value)
	}
	if got, want := acc.value(), signed(cl.Mark, cl.Value); !got.Equal(want) {
		p.w.add(CodeBalance, p.m.no, p.m.line, "", "opening balance plus entries is "+got.String()+", closing balance is "+want.String())
	}
}

func signed(m statement.Mark, v decimal.Decimal) decimal.Decimal {
	if m == statement.Debit {
		return v.Neg()
	}
	return v
}

func (p *msgParser) text16(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 16 {
		p.warn(CodeFieldTooLong, "longer than 16 characters")
	}
	return s
}

func (p *msgParser) account(lines []string) {
	a := &p.st.Account
	id := strings.TrimSpace(lines[0])
	a.OwnerBIC = ""
	if p.f.tag == "25P" && len(lines) > 1 {
		// The second line is the account owner's identifier code.
		bic := strings.TrimSpace(lines[1])
		if up := strings.ToUpper(bic); looksLikeBIC(up) {
			if up != bic {
				p.warn(CodeNonstandardValue, ":25P: identifier code in lower case; read in upper case")
			}
			a.OwnerBIC = up
		} else if bic != "" {
			p.warn(CodeDropped, ":25P: identifier code is not a BIC (4!a2!a2!c[3!c]) and was left out")
		}
	}
	if len(id) > 35 {
		p.warn(CodeFieldTooLong, "account longer than 35 characters")
	}
	a.IBAN, a.Other = "", ""
	if compact := strings.ReplaceAll(id, " ", ""); bankid.ValidIBAN(compact) {
		a.IBAN = compact
	} else {
		a.Other = id
	}
}

func (p *msgParser) statementNumber(s string) {
	s = strings.TrimSpace(s)
	num, seq, _ := strings.Cut(s, "/")
	num, seq = strings.TrimSpace(num), strings.TrimSpace(seq)
	if !allDigits(num) || len(num) > 5 || (seq != "" && (!allDigits(seq) || len(seq) > 5)) {
		p.warn(CodeNonstandardValue, ":28C: is not 5n[/5n]; kept as text")
	}
	p.st.StatementNumber, p.st.SequenceNumber = num, seq
}

// balance reads 1!a6!n3!a15d (:60F:, :62F:, :64:, :65:).
func (p *msgParser) balance(s string) (statement.Balance, error) {
	var b statement.Balance
	s = strings.TrimSpace(s)
	if s == "" {
		return b, p.fail("empty balance (expected mark, date, currency, amount)")
	}
	mark, err := p.mark(s[0])
	if err != nil {
		return b, err
	}
	b.Mark = mark
	if len(s) < 10 {
		return b, p.fail("balance too short (expected 1!a6!n3!a15d)")
	}
	if b.Date, err = p.date(s[1:7]); err != nil {
		return b, err
	}
	if b.Currency, err = p.currency(s[7:10]); err != nil {
		return b, err
	}
	b.Value, err = p.amount(s[10:])
	return b, err
}

func (p *msgParser) mark(c byte) (statement.Mark, error) {
	switch c {
	case 'C':
		return statement.Credit, nil
	case 'D':
		return statement.Debit, nil
	case 'c':
		p.warn(CodeLowerCase, "lower-case debit/credit mark")
		return statement.Credit, nil
	case 'd':
		p.warn(CodeLowerCase, "lower-case debit/credit mark")
		return statement.Debit, nil
	}
	return "", p.fail("debit/credit mark must be C or D")
}

func (p *msgParser) currency(s string) (string, error) {
	if len(s) != 3 {
		return "", p.fail("currency must be 3 letters")
	}
	up := true
	for i := 0; i < 3; i++ {
		if !isLetter(s[i]) {
			return "", p.fail("currency must be 3 letters (3!a)")
		}
		up = up && isUpper(s[i])
	}
	if !up {
		p.warn(CodeLowerCase, "lower-case currency")
		return strings.ToUpper(s), nil
	}
	return s, nil
}

// date reads YYMMDD. Years 80-99 are 1980-1999, 00-79 are 2000-2079: SWIFT
// gives no century, and statements are never older than the 1980s.
func (p *msgParser) date(s string) (statement.Date, error) {
	if len(s) != 6 || !allDigits(s) {
		return statement.Date{}, p.fail("date must be YYMMDD (6!n)")
	}
	y := int(s[0]-'0')*10 + int(s[1]-'0')
	mo := int(s[2]-'0')*10 + int(s[3]-'0')
	d := int(s[4]-'0')*10 + int(s[5]-'0')
	if y < 80 {
		y += 2000
	} else {
		y += 1900
	}
	if mo < 1 || mo > 12 || d < 1 || d > 31 {
		return statement.Date{}, p.fail("date " + s + " is not a calendar date")
	}
	if n := daysIn(y, mo); d > n {
		// Banks do emit 30 February (see samples); a reader takes the month's end.
		p.warn(CodeInvalidDate, "day "+s[4:]+" is beyond the end of the month; the last day is used")
		d = n
	}
	return statement.Date{Year: y, Month: time.Month(mo), Day: d}, nil
}

func daysIn(y, m int) int {
	switch m {
	case 2:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// amount reads 15d: digits with one decimal comma. '.' and a missing comma
// are tolerated with a warning.
func (p *msgParser) amount(s string) (decimal.Decimal, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return decimal.Decimal{}, p.fail("amount is missing")
	}
	if len(s) > 20 {
		// 15d allows 15 characters; leading zeros a few more are tolerated
		// below, but no real amount is longer than this.
		return decimal.Decimal{}, p.fail("amount is longer than 15 characters (15d)")
	}
	sep := -1
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case isDigit(c):
		case c == ',' || c == '.':
			if sep >= 0 {
				return decimal.Decimal{}, p.fail("amount has more than one decimal separator")
			}
			sep = i
		default:
			return decimal.Decimal{}, p.fail("amount must be digits with a decimal comma (15d)")
		}
	}
	switch {
	case sep < 0:
		p.warn(CodeAmountNoComma, "amount without decimal comma")
	case s[sep] == '.':
		p.warn(CodeDecimalPoint, "'.' used as decimal separator")
	}
	if len(s) > 15 {
		p.warn(CodeFieldTooLong, "amount longer than 15 characters")
	}
	if sep == 0 && len(s) == 1 {
		return decimal.Decimal{}, p.fail("amount has no digits")
	}
	d, coef, exp, ok := decimalOf(s, sep, &p.a.amounts)
	p.last = smallAmount{coef, exp, ok}
	return d, nil
}

// decimalOf builds the decimal without going through a string parser: the
// common case (up to 18 digits) is one int64, also returned with small set,
// and its decimal comes from c.
func decimalOf(s string, sep int, c *amountCache) (d decimal.Decimal, coef int64, exp int32, small bool) {
	intPart, frac := s, ""
	if sep >= 0 {
		intPart, frac = s[:sep], s[sep+1:]
	}
	if len(intPart)+len(frac) <= 18 {
		var v int64
		for i := 0; i < len(intPart); i++ {
			v = v*10 + int64(intPart[i]-'0')
		}
		for i := 0; i < len(frac); i++ {
			v = v*10 + int64(frac[i]-'0')
		}
		return c.get(v, -int32(len(frac))), v, -int32(len(frac)), true
	}
	d, err := decimal.NewFromString(intPart + "." + frac + "0")
	if err != nil {
		return decimal.Zero, 0, 0, false
	}
	return d, 0, 0, false
}

func (p *msgParser) floorLimit(s string) error {
	s = strings.TrimSpace(s)
	if len(s) < 4 {
		return p.fail("floor limit must be 3!a[1!a]15d")
	}
	cur, err := p.currency(s[:3])
	if err != nil {
		return err
	}
	rest := s[3:]
	var mark byte
	if rest != "" && isLetter(rest[0]) {
		mark = rest[0] &^ 0x20
		if mark != 'D' && mark != 'C' {
			return p.fail("floor limit indicator must be D or C")
		}
		rest = rest[1:]
	}
	v, err := p.amount(rest)
	if err != nil {
		return err
	}
	a := &statement.Amount{Value: v, Currency: cur}
	st := p.st
	switch mark {
	case 'D':
		st.FloorLimitDebit = a
	case 'C':
		st.FloorLimitCredit = a
	default:
		// Without an indicator the limit applies to debits and credits alike.
		st.FloorLimitDebit, st.FloorLimitCredit = a, a
	}
	return nil
}

// dateTime reads :13D: 6!n4!n1x4!n (YYMMDDhhmm+hhmm).
func (p *msgParser) dateTime(s string) error {
	s = strings.TrimSpace(s)
	if len(s) < 10 || !allDigits(s[6:10]) {
		return p.fail("date/time indication must be YYMMDDhhmm+hhmm")
	}
	d, err := p.date(s[:6])
	if err != nil {
		return err
	}
	hh, mm := atoi2(s[6:8]), atoi2(s[8:10])
	if hh > 23 || mm > 59 {
		return p.fail("time " + s[6:10] + " is not a valid hhmm")
	}
	loc := time.UTC
	switch {
	case len(s) == 15 && (s[10] == '+' || s[10] == '-') && allDigits(s[11:]):
		off := (atoi2(s[11:13])*60 + atoi2(s[13:15])) * 60
		if s[10] == '-' {
			off = -off
		}
		loc = time.FixedZone("", off)
	case len(s) == 10:
		p.warn(CodeNonstandardValue, ":13D: without UTC offset; UTC assumed")
	default:
		return p.fail("UTC offset must be +hhmm or -hhmm")
	}
	p.st.DateTimeIndicator = time.Date(d.Year, d.Month, d.Day, hh, mm, 0, 0, loc)
	return nil
}

// summary reads :90D:/:90C: 5n3!a15d.
func (p *msgParser) summary(s string, debit bool) error {
	s = strings.TrimSpace(s)
	i := 0
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	if i == 0 || i > 5 || len(s) < i+4 {
		return p.fail("summary must be 5n3!a15d")
	}
	n := 0
	for _, c := range []byte(s[:i]) {
		n = n*10 + int(c-'0')
	}
	cur, err := p.currency(s[i : i+3])
	if err != nil {
		return err
	}
	v, err := p.amount(s[i+3:])
	if err != nil {
		return err
	}
	sm := &p.st.Summary
	sm.Set = true
	if debit {
		sm.DebitCount, sm.DebitTotal = n, v
	} else {
		sm.CreditCount, sm.CreditTotal = n, v
	}
	if p.st.Account.Currency == "" {
		p.st.Account.Currency = cur
	}
	return nil
}

func atoi2(s string) int { return int(s[0]-'0')*10 + int(s[1]-'0') }

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

// senderBIC takes the sending bank from an output message's block 2
// (O940...: the sender's LT address follows the input time and MIR) or an
// input message's block 1 (F01<LT address>).
func senderBIC(b1, b2 string) string {
	if len(b2) >= 28 && b2[0] == 'O' {
		return bicOfLT(b2[14:26])
	}
	if len(b1) >= 15 && strings.HasPrefix(b1, "F01") {
		return bicOfLT(b1[3:15])
	}
	return ""
}

// receiverBIC is the receiver of a FIN message: named in block 2 of an
// input message, the owner of block 1 of an output message.
func receiverBIC(b1, b2 string) string {
	if len(b2) >= 16 && b2[0] == 'I' {
		return bicOfLT(b2[4:16])
	}
	if len(b2) >= 28 && b2[0] == 'O' && len(b1) >= 15 && strings.HasPrefix(b1, "F01") {
		return bicOfLT(b1[3:15])
	}
	return ""
}

// bicOfLT turns a 12-character LT address (BIC8 + terminal + branch) into a
// BIC (8 characters, or 11 when the branch is not XXX).
func bicOfLT(lt string) string {
	if len(lt) != 12 {
		return ""
	}
	for i := 0; i < len(lt); i++ {
		c := lt[i]
		if !isUpper(c) && !isDigit(c) {
			return ""
		}
	}
	if lt[:8] == DefaultBIC[:8] && lt[9:] == DefaultBIC[8:] {
		return "" // our own placeholder for an unknown sender
	}
	if lt[9:] == "XXX" {
		return lt[:8]
	}
	return lt[:8] + lt[9:]
}

// tagSet records which known tags a message has; a bit per tag is cheaper
// than a map on the per-field path.
type tagSet uint32

func tagBit(t string) uint32 {
	switch t {
	case "20":
		return 1 << 0
	case "21":
		return 1 << 1
	case "25":
		return 1 << 2
	case "25P":
		return 1 << 3
	case "28C":
		return 1 << 4
	case "34F":
		return 1 << 5
	case "13D":
		return 1 << 6
	case "60F":
		return 1 << 7
	case "60M":
		return 1 << 8
	case "61":
		return 1 << 9
	case "86":
		return 1 << 10
	case "62F":
		return 1 << 11
	case "62M":
		return 1 << 12
	case "64":
		return 1 << 13
	case "65":
		return 1 << 14
	case "90D":
		return 1 << 15
	case "90C":
		return 1 << 16
	}
	return 0
}

func (s *tagSet) add(t string)     { *s |= tagSet(tagBit(t)) }
func (s tagSet) has(t string) bool { b := tagBit(t); return b != 0 && uint32(s)&b != 0 }
