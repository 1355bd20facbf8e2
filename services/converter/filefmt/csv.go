package filefmt

import (
	"encoding/csv"
	"fmt"
	"strings"

	"github.com/ledgerlane/platform/services/converter/statement"
)

// CSVHeader is the first row of every CSV file; the columns are documented
// in docs/conversion-formats.md. New columns are only ever appended.
var CSVHeader = []string{
	"account", "currency", "booking_date", "value_date", "amount", "direction",
	"reference", "bank_reference", "end_to_end_id", "counterparty", "counterparty_account",
	"description", "additional_info", "transaction_type", "status", "statement_id",
	"counterparty_bic",
}

// formatDate renders d per the dateFormat option: ymd (default) is ISO 8601
// YYYY-MM-DD, dmy is the European DD.MM.YYYY, mdy the US MM/DD/YYYY. The
// separators differ on purpose so that a reader cannot confuse dmy and mdy.
func formatDate(d statement.Date, format string) string {
	if d.IsZero() {
		return ""
	}
	switch format {
	case "dmy":
		return fmt.Sprintf("%02d.%02d.%04d", d.Day, d.Month, d.Year)
	case "mdy":
		return fmt.Sprintf("%02d/%02d/%04d", d.Month, d.Day, d.Year)
	}
	return d.String()
}

// RenderCSV writes one row per entry of every statement, RFC 4180 quoted
// with CRLF line ends.
func RenderCSV(stmts []*statement.Statement, dateFormat string) (string, []statement.Warning, error) {
	switch dateFormat {
	case "", "ymd", "dmy", "mdy":
	default:
		return "", nil, fmt.Errorf("dateFormat %q: must be dmy, mdy or ymd", dateFormat)
	}
	var b strings.Builder
	w := csv.NewWriter(&b)
	w.UseCRLF = true
	var warns []statement.Warning
	escaped := 0
	cell := func(s string) string {
		// Spreadsheets execute cells starting with = + @ (and tab/CR
		// tricks); a leading apostrophe makes them text. Amounts never pass
		// through here, so a minus sign stays a number.
		if s != "" && strings.ContainsRune("=+@\t\r", rune(s[0])) {
			escaped++
			return "'" + s
		}
		return s
	}
	if err := w.Write(CSVHeader); err != nil {
		return "", nil, err
	}
	hasBalances := false
	for _, s := range stmts {
		hasBalances = hasBalances || len(s.Balances) > 0
		acct := accountID(s.Account)
		for i := range s.Entries {
			e := &s.Entries[i]
			status := "booked"
			if e.Pending {
				status = "pending"
			}
			direction := "credit"
			if e.Mark == statement.Debit {
				direction = "debit"
			}
			desc := strings.Join(trimAll(e.Remittance), " ")
			info := e.Info
			if desc == "" {
				desc, info = info, ""
			}
			row := []string{
				cell(acct), e.Currency, formatDate(e.BookingDate, dateFormat), formatDate(e.ValueDate, dateFormat),
				signedAmount(e), direction,
				cell(ref(e.CustomerReference)), cell(e.BankReference), cell(e.EndToEndID),
				cell(e.Counterparty.Name), cell(firstNonEmpty(e.Counterparty.IBAN, e.Counterparty.Account)),
				cell(desc), cell(info), cell(e.TransactionType), status, cell(s.Reference),
				cell(firstNonEmpty(e.Counterparty.BIC, e.Counterparty.BankCode)),
			}
			if err := w.Write(row); err != nil {
				return "", nil, err
			}
		}
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return "", nil, err
	}
	if hasBalances {
		warns = append(warns, statement.Warning{Code: CodeEntriesOnly, Severity: statement.SeverityInfo,
			Message: "CSV lists entries only; balances and statement numbers are not carried"})
	}
	if escaped > 0 {
		warns = append(warns, statement.Warning{Code: CodeFormulaEscaped, Severity: statement.SeverityInfo,
			Message: fmt.Sprintf("%d cells starting with a spreadsheet formula character were prefixed with an apostrophe", escaped)})
	}
	return b.String(), warns, nil
}

// ref hides MT's NONREF placeholder, which means "no reference".
func ref(s string) string {
	if s == "NONREF" {
		return ""
	}
	return s
}

func trimAll(lines []string) []string {
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

func firstNonEmpty(xs ...string) string {
	for _, x := range xs {
		if x != "" {
			return x
		}
	}
	return ""
}

func accountID(a statement.Account) string {
	return firstNonEmpty(a.IBAN, a.Other)
}

// signedAmount is the entry amount with '.' as decimal separator, negative
// for debits, keeping the source's decimals (at least two for readability).
func signedAmount(e *statement.Entry) string {
	v := e.Value.Abs()
	if e.Mark == statement.Debit {
		v = v.Neg()
	}
	places := -v.Exponent()
	if places < 2 {
		places = 2
	}
	return v.StringFixed(places)
}
