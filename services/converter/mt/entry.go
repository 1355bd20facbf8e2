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
	e.BookingDate = e.ValueDate
	i := 6
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
	if i >= len(s) {
		return p.fail("debit/credit mark is missing (expected C, D, RC or RD)")
	}
	c0 := s[i] &^ 0x20 // upper case
	if s[i] >= 'a' && s[i] <= 'z' {
		p.warn(CodeLowerCase, "lower-case debit/credit mark")
	}
	switch {
	case c0 == 'R' && i+1 < len(s) && (s[i+1]&^0x20 == 'C' || s[i+1]&^0x20 == 'D'):
		// A reversal books in the opposite direction of what it reverses.
		e.Reversal = true
		if s[i+1]&^0x20 == 'C' {
			e.Mark = statement.Debit
		} else {
			e.Mark = statement.Credit
		}
		i += 2
	case c0 == 'C':
		e.Mark = statement.Credit
		i++
	case c0 == 'D':
		e.Mark = statement.Debit
		i++
	default:
		return p.fail("debit/credit mark must be C, D, RC or RD")
	}
	// Funds code: the third letter of a currency code, present when a letter
	// (not a digit) follows the mark.
	if i+1 < len(s) && isLetter(s[i]) && (isDigit(s[i+1]) || s[i+1] == ',' || s[i+1] == '.') ||
		i+1 == len(s) && isLetter(s[i]) && len(rest) > 0 && rest[0] != "" && isDigit(rest[0][0]) {
		e.FundsCode = strings.ToUpper(s[i : i+1])
		i++
	}
	j := i
	for j < len(s) && (isDigit(s[j]) || s[j] == ',' || s[j] == '.') {
		j++
	}
	if j == i && j == len(s) && len(rest) > 0 && rest[0] != "" && isDigit(rest[0][0]) {
		// The amount broke onto the next line (seen in Sparkasse exports).
		p.warn(CodeFieldWrapped, "amount continued on the next line")
		s = s + rest[0]
		rest = rest[1:]
		for j < len(s) && (isDigit(s[j]) || s[j] == ',' || s[j] == '.') {
			j++
		}
	}
	if j == i {
		return p.fail("amount is missing or not a number (15d)")
	}
	if e.Value, err = p.amount(s[i:j]); err != nil {
		return err
	}
	if c := p.last.coef; p.last.ok && !p.entriesBig {
		if e.Mark == statement.Debit {
			c = -c
		}
		p.entriesBig = !p.entries.addSmall(c, p.last.exp)
	} else {
		p.entriesBig = true
	}
	i = j
	// Transaction type: 1!a3!c. Banks write spaces ("NOV ") and other
	// leading letters, and some omit it; all are kept.
	if i < len(s) && isLetter(s[i]) && !strings.HasPrefix(s[i:], "//") {
		end := i + 4
		if end > len(s) {
			end = len(s)
		}
		e.TransactionType = s[i:end]
		if !validType(e.TransactionType) {
			p.warn(CodeNonstandardType, "transaction type is not N, F or S followed by 3 characters")
		}
		i = end
	} else {
		p.warn(CodeNonstandardType, "transaction type is missing")
	}
	ref := s[i:]
	extra := ""
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
		// Rabobank writes the counterparty's IBAN as the supplementary
		// details.
		setAccount(cp, e.Supplementary)
	}
	return nil
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
