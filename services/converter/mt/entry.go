package mt

import (
	"strings"
	"time"

	"github.com/ledgerlane/platform/services/converter/bankid"
	"github.com/ledgerlane/platform/services/converter/statement"
)

// entry reads a :61: statement line:
//
//	6!n[4!n]2a[1!a]15d1!a3!c16x[//16x]
//	[34x]
//
// value date, entry date (MMDD), mark (C, D, RC, RD), funds code, amount,
// transaction type and code, account owner's reference, bank reference, and
// supplementary details on the second line.
func (p *msgParser) entry(e *statement.Entry, lines []string) error {
	s := lines[0]
	rest := lines[1:]
	if len(s) < 6 {
		return p.fail("statement line too short (expected value date YYMMDD)")
	}
	var err error
	if e.ValueDate, err = p.date(s[:6]); err != nil {
		return err
	}
	i := p.entryDate(e, s, 6)
	if i, err = p.entryMark(e, s, i); err != nil {
		return err
	}
	i = fundsCode(e, s, i, rest)
	if s, rest, i, err = p.entryAmount(e, s, rest, i); err != nil {
		return err
	}
	i = p.entryType(e, s, i)
	extra := p.entryReferences(e, s[i:])
	p.supplementary(e, extra, rest)
	return nil
}

// entryDate reads the optional entry date (MMDD) at s[i:], the booking
// date in the year that puts it nearest the value date; without one the
// booking date is the value date. It returns where the mark starts.
func (p *msgParser) entryDate(e *statement.Entry, s string, i int) int {
	e.BookingDate = e.ValueDate
	switch {
	case len(s) >= i+4 && allDigits(s[i:i+4]):
		mm, dd := atoi2(s[i:i+2]), atoi2(s[i+2:i+4])
		if d, ok := rollover(e.ValueDate, mm, dd); ok {
			e.BookingDate = d
		} else {
			p.warn(CodeInvalidDate, "entry date "+s[i:i+4]+" is not a calendar date; the value date is used")
		}
		i += 4
	case len(s) >= i+4 && s[i:i+4] == "    ":
		p.warn(CodeBlankEntryDate, "entry date is blank")
		i += 4
	}
	return i
}

// entryMark reads the debit/credit mark at s[i:] (C, D, RC, RD, in any
// case); a reversal books in the opposite direction of what it reverses.
func (p *msgParser) entryMark(e *statement.Entry, s string, i int) (int, error) {
	if i >= len(s) {
		return i, p.fail("debit/credit mark is missing (expected C, D, RC or RD)")
	}
	c0 := s[i] &^ 0x20 // upper case
	if s[i] >= 'a' && s[i] <= 'z' {
		p.warn(CodeLowerCase, "lower-case debit/credit mark")
	}
	switch {
	case c0 == 'R' && i+1 < len(s) && (s[i+1]&^0x20 == 'C' || s[i+1]&^0x20 == 'D'):
		e.Reversal = true
		if s[i+1]&^0x20 == 'C' {
			e.Mark = statement.Debit
		} else {
			e.Mark = statement.Credit
		}
		return i + 2, nil
	case c0 == 'C':
		e.Mark = statement.Credit
		return i + 1, nil
	case c0 == 'D':
		e.Mark = statement.Debit
		return i + 1, nil
	}
	return i, p.fail("debit/credit mark must be C, D, RC or RD")
}

// fundsCode reads the funds code at s[i:], the third letter of a currency
// code, present when a letter (not a digit) follows the mark.
func fundsCode(e *statement.Entry, s string, i int, rest []string) int {
	if i+1 < len(s) && isLetter(s[i]) && (isDigit(s[i+1]) || s[i+1] == ',' || s[i+1] == '.') ||
		i+1 == len(s) && isLetter(s[i]) && len(rest) > 0 && rest[0] != "" && isDigit(rest[0][0]) {
		e.FundsCode = strings.ToUpper(s[i : i+1])
		i++
	}
	return i
}

// entryAmount reads the amount at s[i:] (15d), which Sparkasse exports
// break onto the next line (s and rest are returned joined then), and adds
// it to the running sum of the entries. It returns where the transaction
// type starts.
func (p *msgParser) entryAmount(e *statement.Entry, s string, rest []string, i int) (string, []string, int, error) {
	j := i
	for j < len(s) && (isDigit(s[j]) || s[j] == ',' || s[j] == '.') {
		j++
	}
	if j == i && j == len(s) && len(rest) > 0 && rest[0] != "" && isDigit(rest[0][0]) {
		p.warn(CodeFieldWrapped, "amount continued on the next line")
		s = s + rest[0]
		rest = rest[1:]
		for j < len(s) && (isDigit(s[j]) || s[j] == ',' || s[j] == '.') {
			j++
		}
	}
	if j == i {
		return s, rest, j, p.fail("amount is missing or not a number (15d)")
	}
	var err error
	if e.Value, err = p.amount(s[i:j]); err != nil {
		return s, rest, j, err
	}
	if c := p.last.coef; p.last.ok && !p.entriesBig {
		if e.Mark == statement.Debit {
			c = -c
		}
		p.entriesBig = !p.entries.addSmall(c, p.last.exp)
	} else {
		p.entriesBig = true
	}
	return s, rest, j, nil
}

// entryType reads the transaction type at s[i:] (1!a3!c). Banks write
// spaces ("NOV ") and other leading letters, and some omit it; all are
// kept. It returns where the references start.
func (p *msgParser) entryType(e *statement.Entry, s string, i int) int {
	if i < len(s) && isLetter(s[i]) && !strings.HasPrefix(s[i:], "//") {
		end := i + 4
		if end > len(s) {
			end = len(s)
		}
		e.TransactionType = s[i:end]
		if !validType(e.TransactionType) {
			p.warn(CodeNonstandardType, "transaction type is not N, F or S followed by 3 characters")
		}
		return end
	}
	p.warn(CodeNonstandardType, "transaction type is missing")
	return i
}

// entryReferences reads the account owner's reference and, after "//",
// the bank reference, and returns what of the first line is supplementary
// detail.
func (p *msgParser) entryReferences(e *statement.Entry, ref string) (extra string) {
	if acct, after, ok := accountAsReference(ref); ok {
		// ASN Bank writes the counterparty's IBAN where the reference
		// belongs, past its 16 characters: it is the counterparty's
		// account, never a (cut) reference.
		setAccount(&e.Counterparty, acct)
		ref, extra = "", after
		if k := indexSlashes(after); k >= 0 {
			extra, e.BankReference = strings.TrimSpace(after[:k]), strings.TrimSpace(after[k+2:])
		}
	}
	if k := indexSlashes(ref); k >= 0 {
		ref, e.BankReference = ref[:k], strings.TrimSpace(ref[k+2:])
		if len(e.BankReference) > 16 {
			p.warn(CodeFieldTooLong, "bank reference longer than 16 characters")
		}
	} else if len(ref) > 16 {
		// Without "//", text beyond 16 characters is supplementary detail
		// written on the first line.
		p.warn(CodeFieldTooLong, "reference longer than 16 characters; the rest is read as supplementary details")
		ref, extra = ref[:16], strings.TrimSpace(ref[16:])
	}
	e.CustomerReference = strings.TrimSpace(ref)
	if len(ref) > 16 {
		p.warn(CodeFieldTooLong, "reference longer than 16 characters")
	}
	return extra
}

// supplementary sets the supplementary details: extra from the first line
// and the further lines (one line of 34 characters in the standard).
// Rabobank writes the counterparty's IBAN there; it is read as the
// counterparty's account when none is set.
func (p *msgParser) supplementary(e *statement.Entry, extra string, rest []string) {
	if len(rest) > 0 {
		sup := p.a.text.join(rest, " ")
		if extra != "" {
			extra += " " + sup
		} else {
			extra = sup
		}
		if len(rest) > 1 || len(sup) > 34 {
			p.warn(CodeFieldTooLong, "supplementary details longer than one line of 34 characters")
		}
	}
	e.Supplementary = strings.TrimSpace(extra)
	if cp := &e.Counterparty; cp.IBAN == "" && cp.Account == "" && bankid.IBANShaped(e.Supplementary) && !strings.Contains(e.Supplementary, " ") {
		setAccount(cp, e.Supplementary)
	}
}

// accountAsReference reports whether the :61: reference subfield starts
// with an account (up to a space or "//"): a valid IBAN, or one shaped like
// an IBAN and longer than the 16 characters a reference has (its check
// digits wrong, as in anonymised files). It returns it and what follows.
func accountAsReference(ref string) (acct, after string, ok bool) {
	end := len(ref)
	if k := strings.IndexByte(ref, ' '); k >= 0 {
		end = k
	}
	if k := indexSlashes(ref[:end]); k >= 0 {
		end = k
	}
	if end < 15 || !bankid.ValidIBAN(ref[:end]) && (end <= 16 || !bankid.IBANShaped(ref[:end])) {
		return "", "", false
	}
	return ref[:end], strings.TrimSpace(ref[end:]), true
}

// indexSlashes is strings.Index(s, "//") for the short texts of :61:,
// where the general search costs more than the scan.
func indexSlashes(s string) int {
	for i := 0; i+1 < len(s); i++ {
		if s[i] == '/' && s[i+1] == '/' {
			return i
		}
	}
	return -1
}

func validType(t string) bool {
	if len(t) != 4 || (t[0] != 'N' && t[0] != 'F' && t[0] != 'S') {
		return false
	}
	for i := 1; i < 4; i++ {
		if !isUpper(t[i]) && !isDigit(t[i]) {
			return false
		}
	}
	return true
}

// rollover places an MMDD entry date in the year nearest the value date:
// value 2023-12-30 with entry 0102 is 2024-01-02, value 2024-01-02 with
// entry 1230 is 2023-12-30.
func rollover(v statement.Date, mm, dd int) (statement.Date, bool) {
	if mm < 1 || mm > 12 || dd < 1 {
		return statement.Date{}, false
	}
	y := v.Year
	switch diff := mm - int(v.Month); {
	case diff > 6:
		y--
	case diff < -6:
		y++
	}
	if dd > daysIn(y, mm) {
		return statement.Date{}, false
	}
	return statement.Date{Year: y, Month: time.Month(mm), Day: dd}, true
}
