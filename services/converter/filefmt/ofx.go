package filefmt

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/shopspring/decimal"

	"github.com/ledgerlane/platform/services/converter/statement"
)

// now is the clock for DTSERVER.
var now = time.Now

// OFXOptions selects the OFX flavour.
type OFXOptions struct {
	Version string // "102" (default, SGML) or "220" (XML)
	IntuBid string // Intuit bank id: <INTU.BID>, and FID of the FI aggregate
	QBO     bool   // QuickBooks Web Connect
}

const (
	maxName = 32  // OFX NAME is A-32
	maxMemo = 255 // OFX MEMO is A-255
)

// ofxWriter writes OFX elements. In SGML (1.0.2) leaf elements are not
// closed; in XML (2.2.0) every element is.
type ofxWriter struct {
	b     strings.Builder
	xml   bool
	fold  bool // ASCII only: 1.0.2 declares ENCODING:USASCII
	warns *warnCounter
}

type warnCounter struct {
	folded, replaced int
}

func (w *ofxWriter) open(tag string)  { w.b.WriteString("<" + tag + ">\n") }
func (w *ofxWriter) close(tag string) { w.b.WriteString("</" + tag + ">\n") }

// leaf writes a value element; empty values are skipped by the callers, as
// importers reject empty elements.
func (w *ofxWriter) leaf(tag, value string) {
	w.b.WriteString("<" + tag + ">")
	value = w.clean(value)
	for i := 0; i < len(value); i++ {
		switch c := value[i]; c {
		case '&':
			w.b.WriteString("&amp;")
		case '<':
			w.b.WriteString("&lt;")
		case '>':
			w.b.WriteString("&gt;")
		default:
			w.b.WriteByte(c)
		}
	}
	if w.xml {
		w.b.WriteString("</" + tag + ">")
	}
	w.b.WriteByte('\n')
}

// clean makes text fit a leaf: line breaks become spaces (an SGML leaf ends
// at the line end), controls become '?', and in 1.0.2 letters are folded to
// ASCII. Length limits apply to the cleaned text, as importers count it.
func (w *ofxWriter) clean(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 0x80 || c < 0x20 || c == 0x7f {
			ascii = false
			break
		}
	}
	if ascii {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\n' || r == '\r' || r == '\t':
			b.WriteByte(' ')
		case r < 0x20 || r == 0x7f || r == utf8.RuneError:
			w.warns.replaced++
			b.WriteByte('?')
		case r < 0x80 || !w.fold:
			b.WriteRune(r)
		default:
			if f, ok := asciiFold[r]; ok {
				w.warns.folded++
				b.WriteString(f)
			} else {
				w.warns.replaced++
				b.WriteByte('?')
			}
		}
	}
	return b.String()
}

// account groups the statements of one account and currency: importers
// expect one STMTRS per account, and a multi-day MT940 file holds one
// statement per day.
type account struct {
	id, bankID, currency string
	stmts                []*statement.Statement
}

// RenderOFX writes one OFX file for all statements.
func RenderOFX(stmts []*statement.Statement, o OFXOptions) (string, []statement.Warning, error) {
	if len(stmts) == 0 {
		return "", nil, fmt.Errorf("nothing to render: no statements")
	}
	switch o.Version {
	case "":
		o.Version = "102"
	case "102", "220":
	default:
		return "", nil, fmt.Errorf("ofxVersion %q: must be 102 or 220", o.Version)
	}
	counts := &warnCounter{}
	w := &ofxWriter{xml: o.Version == "220", fold: o.Version == "102", warns: counts}
	var warns []statement.Warning
	w.b.Grow(1024 + 400*countEntries(stmts))
	if w.xml {
		w.b.WriteString(`<?xml version="1.0" encoding="UTF-8" standalone="no"?>` + "\n")
		w.b.WriteString(`<?OFX OFXHEADER="200" VERSION="220" SECURITY="NONE" OLDFILEUID="NONE" NEWFILEUID="NONE"?>` + "\n")
	} else {
		w.b.WriteString("OFXHEADER:100\nDATA:OFXSGML\nVERSION:102\nSECURITY:NONE\nENCODING:USASCII\nCHARSET:1252\nCOMPRESSION:NONE\nOLDFILEUID:NONE\nNEWFILEUID:NONE\n\n")
	}
	w.open("OFX")
	w.open("SIGNONMSGSRSV1")
	w.open("SONRS")
	status(w)
	w.leaf("DTSERVER", ofxTime(now()))
	w.leaf("LANGUAGE", "ENG")
	if o.IntuBid != "" {
		// QuickBooks matches the FI by FID and INTU.BID; ORG is free text.
		w.open("FI")
		w.leaf("ORG", firstNonEmpty(stmts[0].Account.Servicer, "BANK"))
		w.leaf("FID", o.IntuBid)
		w.close("FI")
		w.leaf("INTU.BID", o.IntuBid)
	}
	w.close("SONRS")
	w.close("SIGNONMSGSRSV1")
	accounts, err := groupAccounts(stmts)
	if err != nil {
		return "", nil, err
	}
	w.open("BANKMSGSRSV1")
	for i, a := range accounts {
		warns = append(warns, stmtrs(w, a, i+1)...)
	}
	w.close("BANKMSGSRSV1")
	w.close("OFX")
	if counts.folded > 0 {
		warns = append(warns, statement.Warning{Code: CodeTransliterated, Severity: statement.SeverityInfo,
			Message: fmt.Sprintf("%d non-ASCII characters transliterated for OFX 1.0.2 (ENCODING:USASCII)", counts.folded)})
	}
	if counts.replaced > 0 {
		warns = append(warns, statement.Warning{Code: CodeCharactersReplaced, Severity: statement.SeverityWarning, Lossy: true,
			Message: fmt.Sprintf("%d characters with no ASCII equivalent or not allowed in OFX replaced by '?'", counts.replaced)})
	}
	return w.b.String(), warns, nil
}

func countEntries(stmts []*statement.Statement) int {
	n := 0
	for _, s := range stmts {
		n += len(s.Entries)
	}
	return n
}

func status(w *ofxWriter) {
	w.open("STATUS")
	w.leaf("CODE", "0")
	w.leaf("SEVERITY", "INFO")
	w.close("STATUS")
}

// groupAccounts groups the statements by account and currency. A statement
// without any currency is refused: CURDEF is mandatory and an importer
// refuses an empty one, and guessing a currency would misstate every amount.
func groupAccounts(stmts []*statement.Statement) ([]*account, error) {
	var out []*account
	index := map[string]*account{}
	for _, s := range stmts {
		id := firstNonEmpty(accountID(s.Account), "UNKNOWN")
		ccy := firstNonEmpty(s.Account.Currency, firstCurrency(s))
		if ccy == "" {
			mtField, target := ":60a:", "CURDEF"
			if s.Kind == statement.KindReport {
				mtField = ":34F:"
			}
			if path := s.Origin.Path(); path != "" {
				target = path + "/Acct/Ccy"
			}
			return nil, s.Refuse(0, mtField, target, "the statement has no currency (no account currency, balance or entry names one) and OFX requires CURDEF")
		}
		key := id + "\x00" + ccy
		a, ok := index[key]
		if !ok {
			a = &account{id: id, currency: ccy, bankID: bankID(s.Account)}
			index[key] = a
			out = append(out, a)
		}
		a.stmts = append(a.stmts, s)
	}
	return out, nil
}

// firstCurrency is the first currency a balance or entry names, or "".
func firstCurrency(s *statement.Statement) string {
	for _, b := range s.Balances {
		if b.Currency != "" {
			return b.Currency
		}
	}
	for i := range s.Entries {
		if c := s.Entries[i].Currency; c != "" {
			return c
		}
	}
	return ""
}

// bankID fills BANKACCTFROM/BANKID, which US importers read as a
// routing number and others merely require: the servicer's BIC without
// branch, else the bank code before a '/' in an MT :25: account ("BLZ/123"),
// else the IBAN's bank part (the 8 characters after the check digits), else
// "0".
func bankID(a statement.Account) string {
	if len(a.Servicer) >= 8 {
		return a.Servicer[:8]
	}
	if i := strings.IndexByte(a.Other, '/'); i > 0 && i <= 9 {
		return a.Other[:i]
	}
	if len(a.IBAN) > 4 {
		s := a.IBAN[4:]
		if len(s) > 8 {
			s = s[:8]
		}
		return s
	}
	return "0"
}

func stmtrs(w *ofxWriter, a *account, trnuid int) []statement.Warning {
	var warns []statement.Warning
	w.open("STMTTRNRS")
	w.leaf("TRNUID", strconv.Itoa(trnuid))
	status(w)
	w.open("STMTRS")
	w.leaf("CURDEF", a.currency)
	w.open("BANKACCTFROM")
	w.leaf("BANKID", a.bankID)
	w.leaf("ACCTID", a.id)
	w.leaf("ACCTTYPE", "CHECKING")
	w.close("BANKACCTFROM")

	start, end := period(a)
	w.open("BANKTRANLIST")
	w.leaf("DTSTART", ofxDate(start))
	w.leaf("DTEND", ofxDate(end))
	seen := map[string]int{}
	truncName, truncMemo := 0, 0
	for _, s := range a.stmts {
		for i := range s.Entries {
			tn, tm := stmttrn(w, a, &s.Entries[i], seen)
			truncName += tn
			truncMemo += tm
		}
	}
	w.close("BANKTRANLIST")

	ledger, avail, ok := balances(a)
	if !ok {
		warns = append(warns, statement.Warning{Code: CodeBalanceMissing, Severity: statement.SeverityWarning, Lossy: true,
			Path: "account " + a.id, Message: "no booked balance in the source; LEDGERBAL and AVAILBAL are computed from the entries"})
	}
	for _, bal := range []struct {
		tag string
		b   statement.Balance
	}{{"LEDGERBAL", ledger}, {"AVAILBAL", avail}} {
		w.open(bal.tag)
		w.leaf("BALAMT", signed(bal.b.Mark, bal.b.Value))
		w.leaf("DTASOF", ofxDate(bal.b.Date))
		w.close(bal.tag)
	}
	w.close("STMTRS")
	w.close("STMTTRNRS")
	if truncName > 0 {
		warns = append(warns, statement.Warning{Code: CodeNameTruncated, Severity: statement.SeverityInfo, Path: "account " + a.id,
			Message: fmt.Sprintf("%d payee names cut to %d characters for NAME; the full name is kept in MEMO", truncName, maxName)})
	}
	if truncMemo > 0 {
		warns = append(warns, statement.Warning{Code: CodeMemoTruncated, Severity: statement.SeverityWarning, Lossy: true, Path: "account " + a.id,
			Message: fmt.Sprintf("%d memos cut to %d characters", truncMemo, maxMemo)})
	}
	return warns
}

// period is DTSTART/DTEND: the statements' own period when given, else the
// opening and closing balance dates, else the span of the entries.
func period(a *account) (statement.Date, statement.Date) {
	var start, end statement.Date
	widen := func(d statement.Date) {
		if d.IsZero() {
			return
		}
		if start.IsZero() || d.Time().Before(start.Time()) {
			start = d
		}
		if end.IsZero() || d.Time().After(end.Time()) {
			end = d
		}
	}
	for _, s := range a.stmts {
		widen(s.FromDate)
		widen(s.ToDate)
		for _, b := range s.Balances {
			widen(b.Date)
		}
		for _, e := range s.Entries {
			widen(e.BookingDate)
		}
	}
	if start.IsZero() {
		start = statement.DateOf(now().UTC())
		end = start
	}
	return start, end
}

// balances picks LEDGERBAL (closing booked of the last statement, else its
// interim booked) and AVAILBAL (closing available, else interim available,
// else the ledger balance). Without any booked balance the ledger balance
// is the opening balance plus the entries, or the entries alone.
func balances(a *account) (ledger, avail statement.Balance, ok bool) {
	last := a.stmts[len(a.stmts)-1]
	pick := func(types ...statement.BalanceType) (statement.Balance, bool) {
		for _, t := range types {
			if b, ok := last.Balance(t); ok {
				return b, true
			}
		}
		return statement.Balance{}, false
	}
	ledger, ok = pick(statement.ClosingBooked, statement.InterimBooked)
	if !ok {
		sum := decimal.Zero
		var date statement.Date
		if b, found := a.stmts[0].Balance(statement.OpeningBooked); found {
			sum = signedValue(b.Mark, b.Value)
			date = b.Date
		}
		for _, s := range a.stmts {
			for _, e := range s.Entries {
				if !e.Pending {
					sum = sum.Add(signedValue(e.Mark, e.Value))
				}
				if date.IsZero() || e.BookingDate.Time().After(date.Time()) {
					date = e.BookingDate
				}
			}
		}
		if date.IsZero() {
			date = statement.DateOf(now().UTC())
		}
		mark := statement.Credit
		if sum.IsNegative() {
			mark = statement.Debit
		}
		ledger = statement.Balance{Type: statement.ClosingBooked, Mark: mark, Date: date, Amount: statement.Amount{Value: sum.Abs(), Currency: a.currency}}
	}
	avail, found := pick(statement.ClosingAvailable, statement.InterimAvailable)
	if !found {
		avail = ledger
	}
	return ledger, avail, ok
}

func signedValue(m statement.Mark, v decimal.Decimal) decimal.Decimal {
	v = v.Abs()
	if m == statement.Debit {
		return v.Neg()
	}
	return v
}

func signed(m statement.Mark, v decimal.Decimal) string {
	s := signedValue(m, v)
	places := -s.Exponent()
	if places < 2 {
		places = 2
	}
	return s.StringFixed(places)
}

func stmttrn(w *ofxWriter, a *account, e *statement.Entry, seen map[string]int) (truncName, truncMemo int) {
	w.open("STMTTRN")
	typ := "CREDIT"
	if e.Mark == statement.Debit {
		typ = "DEBIT"
	}
	w.leaf("TRNTYPE", typ)
	posted := e.BookingDate
	if posted.IsZero() {
		posted = e.ValueDate
	}
	w.leaf("DTPOSTED", ofxDate(posted))
	if !e.ValueDate.IsZero() && e.ValueDate != posted {
		w.leaf("DTAVAIL", ofxDate(e.ValueDate))
	}
	w.leaf("TRNAMT", signed(e.Mark, e.Value))
	w.leaf("FITID", fitID(a.id, posted, e, seen))
	if num := checkNumber(e); num != "" {
		w.leaf("CHECKNUM", num)
	}
	name := w.clean(payeeName(e))
	memo := w.clean(memoText(e))
	if utf8.RuneCountInString(name) > maxName {
		truncName++
		// The whole name goes to the memo so that nothing is lost.
		if !strings.Contains(memo, name) {
			memo = strings.TrimSpace(name + " " + memo)
		}
		name = cut(name, maxName)
	}
	w.leaf("NAME", name)
	if memo != "" {
		if utf8.RuneCountInString(memo) > maxMemo {
			truncMemo++
			memo = cut(memo, maxMemo)
		}
		w.leaf("MEMO", memo)
	}
	w.close("STMTTRN")
	return truncName, truncMemo
}

// fitID derives FITID deterministically, so that importing the same
// statement twice (or an overlapping one) does not duplicate transactions:
// SHA-256 over account, booking date, signed amount, bank reference,
// customer reference and end-to-end id, plus the ordinal among entries of
// the same account with identical values, as 32 hex characters.
func fitID(acct string, posted statement.Date, e *statement.Entry, seen map[string]int) string {
	key := strings.Join([]string{acct, posted.String(), signed(e.Mark, e.Value), e.BankReference, ref(e.CustomerReference), e.EndToEndID}, "\x1f")
	n := seen[key]
	seen[key] = n + 1
	sum := sha256.Sum256([]byte(key + "\x1f" + strconv.Itoa(n)))
	return hex.EncodeToString(sum[:16])
}

// checkNumber fills CHECKNUM for cheque entries (MT type NCHK/FCHK/SCHK)
// whose reference is a cheque number.
func checkNumber(e *statement.Entry) string {
	if len(e.TransactionType) != 4 || e.TransactionType[1:] != "CHK" {
		return ""
	}
	r := ref(e.CustomerReference)
	if r == "" || len(r) > 12 || strings.Trim(r, "0123456789") != "" {
		return ""
	}
	return r
}

// payeeName is NAME: the counterparty, else the first remittance line, else
// the entry information, else the transaction type, else the direction.
func payeeName(e *statement.Entry) string {
	if n := strings.TrimSpace(e.Counterparty.Name); n != "" {
		return n
	}
	if lines := trimAll(e.Remittance); len(lines) > 0 {
		return lines[0]
	}
	if s := strings.TrimSpace(e.Info); s != "" {
		return s
	}
	if e.TransactionType != "" {
		return e.TransactionType
	}
	if e.Mark == statement.Debit {
		return "DEBIT"
	}
	return "CREDIT"
}

// memoText is MEMO: remittance lines and entry information.
func memoText(e *statement.Entry) string {
	parts := trimAll(e.Remittance)
	if info := strings.TrimSpace(e.Info); info != "" {
		parts = append(parts, info)
	}
	return strings.Join(parts, " ")
}

func cut(s string, n int) string {
	i := 0
	for pos := range s {
		if i == n {
			return strings.TrimSpace(s[:pos])
		}
		i++
	}
	return s
}

// ofxDate is YYYYMMDD: dates without a time avoid importers shifting an
// entry to the previous day in a time zone west of UTC.
func ofxDate(d statement.Date) string {
	return fmt.Sprintf("%04d%02d%02d", d.Year, d.Month, d.Day)
}

func ofxTime(t time.Time) string {
	return t.UTC().Format("20060102150405") + ".000[0:GMT]"
}

// asciiFold maps the Latin letters bank texts contain to ASCII, the way a
// person would write them without the accent (German umlauts as two letters).
var asciiFold = map[rune]string{
	'ä': "ae", 'ö': "oe", 'ü': "ue", 'Ä': "Ae", 'Ö': "Oe", 'Ü': "Ue", 'ß': "ss",
	'à': "a", 'á': "a", 'â': "a", 'ã': "a", 'å': "a", 'æ': "ae", 'ç': "c",
	'è': "e", 'é': "e", 'ê': "e", 'ë': "e", 'ì': "i", 'í': "i", 'î': "i", 'ï': "i",
	'ñ': "n", 'ò': "o", 'ó': "o", 'ô': "o", 'õ': "o", 'ø': "o", 'ù': "u", 'ú': "u", 'û': "u", 'ý': "y", 'ÿ': "y",
	'À': "A", 'Á': "A", 'Â': "A", 'Ã': "A", 'Å': "A", 'Æ': "AE", 'Ç': "C",
	'È': "E", 'É': "E", 'Ê': "E", 'Ë': "E", 'Ì': "I", 'Í': "I", 'Î': "I", 'Ï': "I",
	'Ñ': "N", 'Ò': "O", 'Ó': "O", 'Ô': "O", 'Õ': "O", 'Ø': "O", 'Ù': "U", 'Ú': "U", 'Û': "U", 'Ý': "Y",
	'€': "EUR", '£': "GBP", '–': "-", '—': "-", '‘': "'", '’': "'", '“': "\"", '”': "\"", '\u00a0': " ",
	'ł': "l", 'Ł': "L", 'ś': "s", 'Ś': "S", 'ź': "z", 'ż': "z", 'Ż': "Z", 'Ź': "Z", 'ć': "c", 'Ć': "C", 'ń': "n", 'ę': "e", 'ą': "a",
	'š': "s", 'Š': "S", 'ž': "z", 'Ž': "Z", 'č': "c", 'Č': "C", 'ř': "r", 'Ř': "R", 'ě': "e", 'ů': "u",
}
