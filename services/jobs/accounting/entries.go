package accounting

import (
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"fmt"
	"io"
	"regexp"
	"strings"
)

// Entry is one statement entry as the converter's CSV target writes it
// (docs/conversion-formats.md, "CSV"). Reading our own CSV is how the jobs
// service gets structured entries without a second statement parser.
type Entry struct {
	ID            string // stable: see EntryIDs
	Account       string
	Currency      string
	BookingDate   string // YYYY-MM-DD
	Amount        string // signed decimal text, negative for debits
	Reference     string
	BankReference string
	EndToEndID    string
	Counterparty  string
	Description   string
	Status        string // booked or pending
}

// csvColumns are the converter's CSV columns this package reads; the
// converter only ever appends columns, so they are found by name.
var csvColumns = []string{"account", "currency", "booking_date", "amount", "reference",
	"bank_reference", "end_to_end_id", "counterparty", "description", "status"}

var (
	dateRE   = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)
	amountRE = regexp.MustCompile(`^-?\d{1,15}(\.\d{1,6})?$`)
	ccyRE    = regexp.MustCompile(`^[A-Z]{3}$`)
)

// ReadCSV reads the converter's CSV (dateFormat ymd) into entries with their
// stable ids. A row it cannot read is an error naming the row: it would be a
// converter bug, never silently skipped.
func ReadCSV(data string) ([]Entry, error) {
	r := csv.NewReader(strings.NewReader(data))
	r.FieldsPerRecord = -1
	head, err := r.Read()
	if err == io.EOF {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("statement csv header: %w", err)
	}
	col := map[string]int{}
	for i, h := range head {
		col[strings.TrimSpace(h)] = i
	}
	for _, c := range csvColumns {
		if _, ok := col[c]; !ok {
			return nil, fmt.Errorf("statement csv: no %s column", c)
		}
	}
	var out []Entry
	for row := 2; ; row++ {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("statement csv row %d: %w", row, err)
		}
		get := func(name string) string {
			if i := col[name]; i < len(rec) {
				// The converter guards text cells against spreadsheet
				// formulas with a leading apostrophe; take it off again.
				v := rec[i]
				if len(v) > 1 && v[0] == '\'' && strings.ContainsRune("=+@\t\r", rune(v[1])) {
					v = v[1:]
				}
				return v
			}
			return ""
		}
		e := Entry{
			Account: get("account"), Currency: get("currency"), BookingDate: get("booking_date"),
			Amount: get("amount"), Reference: get("reference"), BankReference: get("bank_reference"),
			EndToEndID: get("end_to_end_id"), Counterparty: get("counterparty"), Description: get("description"),
			Status: get("status"),
		}
		switch {
		case !dateRE.MatchString(e.BookingDate):
			return nil, fmt.Errorf("statement csv row %d: booking_date %q", row, e.BookingDate)
		case !amountRE.MatchString(e.Amount):
			return nil, fmt.Errorf("statement csv row %d: amount %q", row, e.Amount)
		case !ccyRE.MatchString(e.Currency):
			return nil, fmt.Errorf("statement csv row %d: currency %q", row, e.Currency)
		}
		out = append(out, e)
	}
	AssignIDs(out)
	return out, nil
}

// AssignIDs gives each entry its stable id: the first 16 bytes, in hex, of
// SHA-256 over the account, currency, booking date, signed amount, bank
// reference, customer reference and end-to-end id, and the ordinal of the
// entry among the entries with all of these equal, in file order. The same
// statement (or an overlapping one) always yields the same ids, whatever its
// format, so a push repeated or retried books nothing twice; two identical
// entries in one statement stay two.
func AssignIDs(es []Entry) {
	seen := map[string]int{}
	for i := range es {
		e := &es[i]
		key := strings.Join([]string{e.Account, e.Currency, e.BookingDate, e.Amount, e.BankReference, e.Reference, e.EndToEndID}, "\x1f")
		n := seen[key]
		seen[key] = n + 1
		sum := sha256.Sum256(fmt.Appendf(nil, "%s\x1f%d", key, n))
		e.ID = hex.EncodeToString(sum[:16])
	}
}

// idempotencyKey is the key a platform de-duplicates a booking by: the entry
// id bound to the connection, so one statement pushed to two companies is
// two bookings. 32 hex characters fit QuickBooks' requestid (50) and Xero's
// Idempotency-Key (128).
func idempotencyKey(connectionID, entryID string) string {
	sum := sha256.Sum256([]byte(connectionID + "|" + entryID))
	return hex.EncodeToString(sum[:16])
}
