package filefmt

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/ledgerlane/platform/services/converter/engine"
	"github.com/ledgerlane/platform/services/converter/statement"
)

// CSVMapping says where a CSV statement keeps each value: columns are named
// by their header text (the file's first row), compared after trimming
// spaces. CSV has no standard layout, so the reader is told rather than
// guessing; it is strict and refuses the whole file at the first fault,
// naming its line and column.
type CSVMapping struct {
	Date           string // booking date column; required
	Amount         string // signed amount column (negative: money out)
	Debit, Credit  string // or unsigned amounts out and in
	CurrencyColumn string // ISO 4217 per row; else Currency
	Currency       string // the file's currency when there is no currency column
	Description    string
	Counterparty   string
	Reference      string
	// DateFormat is "ymd" (default), "dmy" or "mdy"; the parts may be
	// separated by '-', '.' or '/'.
	DateFormat string
	// DecimalSeparator is "." (default) or ",". Amounts have no grouping
	// separators: "1,234.50" is refused rather than misread.
	DecimalSeparator string
	// Delimiter is ",", ";" or "\t"; default ",".
	Delimiter string
}

// MaxCSVRows bounds the rows one file may have; a statement import is a few
// months of one account, and the body limit (2 MiB) comes first anyway.
const MaxCSVRows = 20000

// mappingField is the request member that names a mapping fault.
func mappingField(name string) string { return "csv_mapping." + name }

// ParseCSV reads a CSV bank statement as one statement of entries, each row
// one booked entry. Mapping faults are *engine.FieldError naming the
// csv_mapping member; data faults are *statement.ParseError naming the line
// and column.
func ParseCSV(input []byte, m CSVMapping) ([]*statement.Statement, error) {
	comma, decimalMark, err := checkCSVMapping(m)
	if err != nil {
		return nil, err
	}
	r := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(input, []byte("\xef\xbb\xbf"))))
	r.Comma = comma
	r.ReuseRecord = false
	header, err := r.Read()
	if err != nil {
		return nil, csvError(err, 1)
	}
	c, err := csvHeader(header, m)
	if err != nil {
		return nil, err
	}
	st := &statement.Statement{Kind: statement.KindStatement}
	if c.currency < 0 {
		st.Account.Currency = m.Currency
	}
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, csvError(err, 0)
		}
		line, _ := r.FieldPos(0)
		if len(st.Entries) == MaxCSVRows {
			return nil, &statement.ParseError{Line: line, Reason: fmt.Sprintf("more than %d rows", MaxCSVRows)}
		}
		row := csvRow{rec: rec, header: header, line: line}
		e, err := row.entry(&c, m.DateFormat, decimalMark, st.Account.Currency)
		if err != nil {
			return nil, err
		}
		st.Entries = append(st.Entries, e)
	}
	return []*statement.Statement{st}, nil
}

// checkCSVMapping checks the mapping before any row is read and returns
// its delimiter and decimal mark ("." unless named, never the delimiter):
// a known date format, a date column, an amount column or debit/credit
// columns (not both), and a currency when there is no currency column.
func checkCSVMapping(m CSVMapping) (comma rune, decimalMark string, err error) {
	comma, err = csvDelimiter(m.Delimiter)
	if err != nil {
		return 0, "", err
	}
	decimalMark = m.DecimalSeparator
	switch decimalMark {
	case "":
		decimalMark = "."
	case ".", ",":
	default:
		return 0, "", &engine.FieldError{Field: mappingField("decimal_separator"), Reason: `must be "." or ","`}
	}
	if decimalMark == string(comma) {
		return 0, "", &engine.FieldError{Field: mappingField("decimal_separator"), Reason: "must differ from the delimiter"}
	}
	switch m.DateFormat {
	case "", "ymd", "dmy", "mdy":
	default:
		return 0, "", &engine.FieldError{Field: mappingField("date_format"), Reason: "must be one of ymd, dmy, mdy"}
	}
	if m.Date == "" {
		return 0, "", &engine.FieldError{Field: mappingField("date"), Reason: "the date column is required"}
	}
	if m.Amount == "" && m.Debit == "" && m.Credit == "" {
		return 0, "", &engine.FieldError{Field: mappingField("amount"), Reason: "name the amount column, or the debit and credit columns"}
	}
	if m.Amount != "" && (m.Debit != "" || m.Credit != "") {
		return 0, "", &engine.FieldError{Field: mappingField("amount"), Reason: "name either amount or debit/credit, not both"}
	}
	if m.CurrencyColumn == "" && !isCurrency(m.Currency) {
		return 0, "", &engine.FieldError{Field: mappingField("currency"), Reason: "an ISO 4217 code is required when there is no currency column"}
	}
	return comma, decimalMark, nil
}

// csvCols holds the index of each mapped column, -1 when not mapped.
type csvCols struct{ date, amount, debit, credit, currency, description, counterparty, reference int }

// csvHeader finds each mapped column in the header row: a mapped column
// must be in it, and only once.
func csvHeader(header []string, m CSVMapping) (csvCols, error) {
	cols := map[string]int{}
	dup := map[string]bool{}
	for i, h := range header {
		h = strings.TrimSpace(h)
		if _, seen := cols[h]; seen {
			dup[h] = true
		}
		cols[h] = i
	}
	var c csvCols
	for _, f := range []struct {
		member, name string
		dst          *int
	}{
		{"date", m.Date, &c.date}, {"amount", m.Amount, &c.amount}, {"debit", m.Debit, &c.debit},
		{"credit", m.Credit, &c.credit}, {"currency_column", m.CurrencyColumn, &c.currency},
		{"description", m.Description, &c.description}, {"counterparty", m.Counterparty, &c.counterparty},
		{"reference", m.Reference, &c.reference},
	} {
		var err error
		if *f.dst, err = csvIndex(cols, dup, f.member, f.name); err != nil {
			return csvCols{}, err
		}
	}
	return c, nil
}

// csvIndex is the index of column name (-1 when the mapping names none)
// for the mapping member.
func csvIndex(cols map[string]int, dup map[string]bool, member, name string) (int, error) {
	if name == "" {
		return -1, nil
	}
	name = strings.TrimSpace(name)
	i, ok := cols[name]
	switch {
	case !ok:
		return 0, &engine.FieldError{Field: mappingField(member), Reason: fmt.Sprintf("the header has no column %q", name)}
	case dup[name]:
		return 0, &engine.FieldError{Field: mappingField(member), Reason: fmt.Sprintf("the header has column %q twice", name)}
	}
	return i, nil
}

// csvRow is one data row, at line of the input.
type csvRow struct {
	rec, header []string
	line        int
}

// get is the trimmed value of column col, "" when not mapped.
func (row csvRow) get(col int) string {
	if col < 0 {
		return ""
	}
	return strings.TrimSpace(row.rec[col])
}

// fault names the row's line and the column col.
func (row csvRow) fault(col int, reason string) error {
	return &statement.ParseError{Line: row.line, Field: strings.TrimSpace(row.header[col]), Reason: reason}
}

// entry reads the row as one booked entry: its date is the booking and
// value date, its amount and mark come from amount or debit/credit, its
// currency is the row's (else cur), and description, counterparty and
// reference are carried as they are.
func (row csvRow) entry(c *csvCols, dateFormat, decimalMark, cur string) (statement.Entry, error) {
	var e statement.Entry
	d, ok := csvDate(row.get(c.date), dateFormat)
	if !ok {
		return e, row.fault(c.date, "not a date in the mapping's date_format")
	}
	e.BookingDate, e.ValueDate = d, d
	var err error
	if e.Value, e.Mark, err = row.amount(c, decimalMark); err != nil {
		return e, err
	}
	e.Currency = cur
	if c.currency >= 0 {
		e.Currency = strings.ToUpper(row.get(c.currency))
		if !isCurrency(e.Currency) {
			return e, row.fault(c.currency, "not an ISO 4217 currency code")
		}
	}
	if s := row.get(c.description); s != "" {
		e.Remittance = []string{s}
	}
	e.Counterparty.Name = row.get(c.counterparty)
	e.BankReference = row.get(c.reference)
	return e, nil
}

// amount is the row's amount and mark: a signed amount column (negative is
// a debit), or exactly one of the debit and credit columns, whose sign is
// ignored (some banks write debits as negative numbers in their own
// column).
func (row csvRow) amount(c *csvCols, decimalMark string) (decimal.Decimal, statement.Mark, error) {
	if c.amount >= 0 {
		v, ok := csvAmount(row.get(c.amount), decimalMark)
		if !ok {
			return v, "", row.fault(c.amount, "not an amount (digits, one decimal mark, an optional sign)")
		}
		if v.IsNegative() {
			return v.Neg(), statement.Debit, nil
		}
		return v, statement.Credit, nil
	}
	debit, credit := row.get(c.debit), row.get(c.credit)
	col, text, mark := c.debit, debit, statement.Debit
	switch {
	case debit != "" && credit != "":
		return decimal.Decimal{}, "", row.fault(c.credit, "a row has either a debit or a credit amount, not both")
	case debit == "" && credit == "":
		col = c.debit
		if col < 0 {
			col = c.credit
		}
		return decimal.Decimal{}, "", row.fault(col, "the row has no amount")
	case credit != "":
		col, text, mark = c.credit, credit, statement.Credit
	}
	v, ok := csvAmount(text, decimalMark)
	if !ok {
		return v, "", row.fault(col, "not an amount (digits, one decimal mark, an optional sign)")
	}
	return v.Abs(), mark, nil
}

func csvDelimiter(d string) (rune, error) {
	switch d {
	case "", ",":
		return ',', nil
	case ";":
		return ';', nil
	case "\t", `\t`:
		return '\t', nil
	}
	return 0, &engine.FieldError{Field: mappingField("delimiter"), Reason: `must be ",", ";" or a tab`}
}

func csvError(err error, line int) error {
	// encoding/csv's own errors carry their line; others get the caller's.
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return &statement.ParseError{Line: pe.Line, Reason: pe.Err.Error()}
	}
	if errors.Is(err, io.EOF) {
		return &statement.ParseError{Line: 1, Reason: "the file is empty: a header row is required"}
	}
	return &statement.ParseError{Line: line, Reason: err.Error()}
}

func isCurrency(s string) bool {
	if len(s) != 3 {
		return false
	}
	for _, r := range s {
		if r < 'A' || r > 'Z' {
			return false
		}
	}
	return true
}

// csvAmount reads an optional sign, digits and at most one decimal mark
// followed by digits. Nothing else: no grouping, exponents or spaces.
func csvAmount(s, mark string) (decimal.Decimal, bool) {
	body := strings.TrimLeft(s, "+-")
	if len(s)-len(body) > 1 || body == "" || len(body) > 30 {
		return decimal.Decimal{}, false
	}
	intPart, frac, hasFrac := strings.Cut(body, mark)
	if intPart == "" || hasFrac && frac == "" || !digits(intPart) || hasFrac && !digits(frac) {
		return decimal.Decimal{}, false
	}
	text := intPart
	if hasFrac {
		text += "." + frac
	}
	if strings.HasPrefix(s, "-") {
		text = "-" + text
	}
	v, err := decimal.NewFromString(text)
	return v, err == nil
}

func digits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// csvDate reads three numeric parts separated by '-', '.' or '/' in the
// mapping's order; the year has four digits and the date must exist.
func csvDate(s, format string) (statement.Date, bool) {
	parts := strings.FieldsFunc(s, func(r rune) bool { return r == '-' || r == '.' || r == '/' })
	if len(parts) != 3 || strings.Count(s, "-")+strings.Count(s, ".")+strings.Count(s, "/") != 2 {
		return statement.Date{}, false
	}
	var y, mo, d string
	switch format {
	case "dmy":
		d, mo, y = parts[0], parts[1], parts[2]
	case "mdy":
		mo, d, y = parts[0], parts[1], parts[2]
	default:
		y, mo, d = parts[0], parts[1], parts[2]
	}
	if len(y) != 4 || len(mo) < 1 || len(mo) > 2 || len(d) < 1 || len(d) > 2 || !digits(y+mo+d) {
		return statement.Date{}, false
	}
	yi, _ := strconv.Atoi(y)
	mi, _ := strconv.Atoi(mo)
	di, _ := strconv.Atoi(d)
	t := time.Date(yi, time.Month(mi), di, 0, 0, 0, 0, time.UTC)
	// Year 0 would read as no date at all (statement.Date's zero value).
	if yi < 1 || t.Year() != yi || int(t.Month()) != mi || t.Day() != di {
		return statement.Date{}, false
	}
	return statement.DateOf(t), true
}
