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
	comma, err := csvDelimiter(m.Delimiter)
	if err != nil {
		return nil, err
	}
	decimalMark := m.DecimalSeparator
	switch decimalMark {
	case "":
		decimalMark = "."
	case ".", ",":
	default:
		return nil, &engine.FieldError{Field: mappingField("decimal_separator"), Reason: `must be "." or ","`}
	}
	if decimalMark == string(comma) {
		return nil, &engine.FieldError{Field: mappingField("decimal_separator"), Reason: "must differ from the delimiter"}
	}
	switch m.DateFormat {
	case "", "ymd", "dmy", "mdy":
	default:
		return nil, &engine.FieldError{Field: mappingField("date_format"), Reason: "must be one of ymd, dmy, mdy"}
	}
	if m.Date == "" {
		return nil, &engine.FieldError{Field: mappingField("date"), Reason: "the date column is required"}
	}
	if m.Amount == "" && m.Debit == "" && m.Credit == "" {
		return nil, &engine.FieldError{Field: mappingField("amount"), Reason: "name the amount column, or the debit and credit columns"}
	}
	if m.Amount != "" && (m.Debit != "" || m.Credit != "") {
		return nil, &engine.FieldError{Field: mappingField("amount"), Reason: "name either amount or debit/credit, not both"}
	}
	if m.CurrencyColumn == "" && !isCurrency(m.Currency) {
		return nil, &engine.FieldError{Field: mappingField("currency"), Reason: "an ISO 4217 code is required when there is no currency column"}
	}

	r := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(input, []byte("\xef\xbb\xbf"))))
	r.Comma = comma
	r.ReuseRecord = false
	header, err := r.Read()
	if err != nil {
		return nil, csvError(err, 1)
	}
	cols := map[string]int{}
	dup := map[string]bool{}
	for i, h := range header {
		h = strings.TrimSpace(h)
		if _, seen := cols[h]; seen {
			dup[h] = true
		}
		cols[h] = i
	}
	index := func(member, name string) (int, error) {
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
	var c struct{ date, amount, debit, credit, currency, description, counterparty, reference int }
	for _, f := range []struct {
		member, name string
		dst          *int
	}{
		{"date", m.Date, &c.date}, {"amount", m.Amount, &c.amount}, {"debit", m.Debit, &c.debit},
		{"credit", m.Credit, &c.credit}, {"currency_column", m.CurrencyColumn, &c.currency},
		{"description", m.Description, &c.description}, {"counterparty", m.Counterparty, &c.counterparty},
		{"reference", m.Reference, &c.reference},
	} {
		if *f.dst, err = index(f.member, f.name); err != nil {
			return nil, err
		}
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
		fault := func(col int, reason string) error {
			return &statement.ParseError{Line: line, Field: strings.TrimSpace(header[col]), Reason: reason}
		}
		get := func(col int) string {
			if col < 0 {
				return ""
			}
			return strings.TrimSpace(rec[col])
		}
		var e statement.Entry
		d, ok := csvDate(get(c.date), m.DateFormat)
		if !ok {
			return nil, fault(c.date, "not a date in the mapping's date_format")
		}
		e.BookingDate, e.ValueDate = d, d
		switch {
		case c.amount >= 0:
			v, ok := csvAmount(get(c.amount), decimalMark)
			if !ok {
				return nil, fault(c.amount, "not an amount (digits, one decimal mark, an optional sign)")
			}
			e.Mark = statement.Credit
			if v.IsNegative() {
				e.Mark, v = statement.Debit, v.Neg()
			}
			e.Value = v
		default:
			debit, credit := get(c.debit), get(c.credit)
			col, text, mark := c.debit, debit, statement.Debit
			switch {
			case debit != "" && credit != "":
				return nil, fault(c.credit, "a row has either a debit or a credit amount, not both")
			case debit == "" && credit == "":
				col = c.debit
				if col < 0 {
					col = c.credit
				}
				return nil, fault(col, "the row has no amount")
			case credit != "":
				col, text, mark = c.credit, credit, statement.Credit
			}
			v, ok := csvAmount(text, decimalMark)
			if !ok {
				return nil, fault(col, "not an amount (digits, one decimal mark, an optional sign)")
			}
			// Some banks write debits as negative numbers in their own column.
			e.Value, e.Mark = v.Abs(), mark
		}
		e.Currency = st.Account.Currency
		if c.currency >= 0 {
			e.Currency = strings.ToUpper(get(c.currency))
			if !isCurrency(e.Currency) {
				return nil, fault(c.currency, "not an ISO 4217 currency code")
			}
		}
		if s := get(c.description); s != "" {
			e.Remittance = []string{s}
		}
		e.Counterparty.Name = get(c.counterparty)
		e.BankReference = get(c.reference)
		st.Entries = append(st.Entries, e)
	}
	return []*statement.Statement{st}, nil
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
