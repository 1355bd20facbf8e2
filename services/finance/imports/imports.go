// Package imports is statement import (POST /v1/imports): a user's bank
// statement file, read by the converter (StatementParser), becomes
// transactions with source import on one of their accounts, each entry
// added, matched (already present) or refused, and importing a file again
// adds nothing.
//
// It owns the import claims (which transaction each import key of an
// account is taken by) and the rules of an entry; it reads the kernel's
// accounts and transactions and writes rows through its own Store. It may
// import the kernel (services/finance) and nothing else of finance.
package imports

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/shopspring/decimal"

	"github.com/ledgerlane/platform/services/finance"
)

// The file is read by the converter (StatementParser), never here; this
// file holds the rules that decide, entry by entry, whether a row is added,
// matched (already present) or refused. services/finance/README.md
// ("Statement import") is their one statement.

// MaxImportEntries caps the entries of one file: a few years of one account.
// Over it the whole file is refused, naming message.
const MaxImportEntries = 5000

// Refusal reasons of an entry, stable codes on the wire.
const (
	RefuseCurrency = "currency_mismatch"
	RefusePending  = "pending"
	RefuseDate     = "date_out_of_range"
	RefuseAmount   = "amount_out_of_range"
)

// StatementParser reads a statement file into its entries. The converter
// implements it over gRPC (package statementclient); its errors are
// *problem.Problem values (a file it cannot read is invalid-input naming
// message or from).
type StatementParser interface {
	ParseStatement(ctx context.Context, f StatementFile) (ParsedStatement, error)
}

// StatementFile is one file as the client sent it.
type StatementFile struct {
	Message string
	From    string // empty: detect
	CSV     *CSVMapping
}

// CSVMapping says which CSV header names which value (the converter's
// filefmt.CSVMapping, carried through unchanged).
type CSVMapping struct {
	Date, Amount, Debit, Credit             string
	CurrencyColumn, Currency                string
	Description, Counterparty, Reference    string
	DateFormat, DecimalSeparator, Delimiter string
}

// ParsedStatement is what the converter read: every entry of every
// statement in the file, in file order.
type ParsedStatement struct {
	DetectedType string
	Entries      []StatementEntry
}

// StatementEntry is one entry as the converter reports it: dates as
// YYYY-MM-DD, the amount an unsigned exact decimal with its direction apart.
type StatementEntry struct {
	BookingDate, ValueDate string
	Amount                 string
	Currency               string
	Credit                 bool // money in; false is money out
	Pending                bool
	BankReference          string
	CustomerReference      string
	EndToEndID             string
	Counterparty           string
	Remittance             []string
	Info                   string
}

// ImportRequest is POST /v1/imports.
type ImportRequest struct {
	AccountID string
	StatementFile
}

// RefusedRow is one entry that was not imported.
type RefusedRow struct {
	Row       int // 1-based, over all statements of the file
	Reference string
	Reason    string
	Detail    string
}

// ImportResult is the answer: each entry of the file is counted once.
type ImportResult struct {
	Added, Matched, Refused int
	Rows                    []RefusedRow
	DetectedType            string
}

// ImportClaim records that an import key of an account is taken by a
// transaction: one the import added, or the bank-synced row it matched.
type ImportClaim struct {
	AccountID     string
	Key           string
	TransactionID string
}

// ImportRow is one entry to write: claim Key, and either insert Insert or
// point the claim at the existing row MatchID.
type ImportRow struct {
	Key     string
	Insert  *finance.Transaction
	MatchID string
}

// ImportWrite is one import's writes, applied atomically.
type ImportWrite struct {
	UserID    string
	AccountID string
	Rows      []ImportRow
	// Notes are stored in the outbox with the rows (the finance events).
	Notes []finance.Note
}

// importEntry is an accepted entry, ready to be keyed and matched.
type importEntry struct {
	row       int
	date      time.Time     // the booking date
	valueDate time.Time     // zero when the file has none
	amount    finance.Money // signed: negative leaves the account
	reference string
	merchant  string
	descr     string
	key       string
	bankRowID string // set when it matched a bank-synced row
	claimed   bool   // the key was claimed before this import
}

// entryReference is the reference the dedup key uses: the bank's own
// reference, else the account owner's, else the end-to-end id; the
// placeholders NONREF and NOTPROVIDED are no reference.
func entryReference(e StatementEntry) string {
	for _, r := range []string{e.BankReference, e.CustomerReference, e.EndToEndID} {
		r = strings.TrimSpace(r)
		if r != "" && !strings.EqualFold(r, "NONREF") && !strings.EqualFold(r, "NOTPROVIDED") {
			return r
		}
	}
	return ""
}

// importKey is the dedup key of an entry within its account: a SHA-256 over
// booking date, signed amount (by value: 12.5 and 12.50 are one amount),
// currency, reference and ordinal. The ordinal (1, 2, …) tells apart
// entries of one file that agree on everything else, such as two coffees of
// the same price on one day without references; importing the file again
// gives every entry the same ordinal, so it matches.
func importKey(date time.Time, amount finance.Money, reference string, ordinal int) string {
	h := sha256.New()
	for _, part := range []string{date.Format(finance.DateLayout), amount.Amount.String(), amount.Currency, reference, strconv.Itoa(ordinal)} {
		// Length-prefixed, so no choice of reference can forge another key.
		fmt.Fprintf(h, "%d:%s;", len(part), part)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// prepareImport checks each entry against the account and gives the
// accepted ones their keys. now is the service clock's time.
func prepareImport(entries []StatementEntry, account finance.Account, now time.Time) (accepted []importEntry, refused []RefusedRow) {
	latest := finance.Day(now).AddDate(1, 0, 0)
	earliest := time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC)
	ordinals := map[string]int{}
	for i, e := range entries {
		ie := importEntry{row: i + 1, reference: entryReference(e)}
		refuse := func(reason, detail string) {
			refused = append(refused, RefusedRow{Row: ie.row, Reference: ie.reference, Reason: reason, Detail: detail})
		}
		if e.Pending {
			refuse(RefusePending, "a pending entry is not imported: its amount and date may still change")
			continue
		}
		if e.Currency != account.Currency {
			refuse(RefuseCurrency, fmt.Sprintf("the entry is in %q, the account in %s", e.Currency, account.Currency))
			continue
		}
		d, err := finance.ParseDate(e.BookingDate)
		if err != nil || d.Before(earliest) || d.After(latest) {
			refuse(RefuseDate, "the booking date must be from 1900-01-01 to a year after today")
			continue
		}
		ie.date = d
		if v, err := finance.ParseDate(e.ValueDate); err == nil {
			ie.valueDate = v
		}
		if !finance.PlainDecimal(e.Amount) || strings.HasPrefix(e.Amount, "-") {
			refuse(RefuseAmount, "the amount must have at most 15 digits before the decimal point and 6 after")
			continue
		}
		v := decimal.RequireFromString(e.Amount)
		if !e.Credit {
			v = v.Neg()
		}
		ie.amount = finance.Money{Amount: v, Currency: account.Currency}
		ie.merchant, ie.descr = entryText(e)
		base := importKey(ie.date, ie.amount, ie.reference, 0)
		ordinals[base]++
		ie.key = importKey(ie.date, ie.amount, ie.reference, ordinals[base])
		accepted = append(accepted, ie)
	}
	return accepted, refused
}

// matchBankRows pairs entries that no earlier import claimed with
// bank-synced rows of the account, one to one: same amount and currency,
// posted (not pending), not claimed by another import key, and dated on the
// entry's booking date or else its value date. Entries go in file order and
// take the earliest-created free row, so the outcome does not depend on
// how the store lists rows.
func matchBankRows(entries []importEntry, bankRows []finance.Transaction, claimed map[string]bool) {
	rows := make([]finance.Transaction, 0, len(bankRows))
	for _, t := range bankRows {
		if t.Source == finance.SourceBankSync && !t.IsPending && !claimed[t.ID] {
			rows = append(rows, t)
		}
	}
	sort.Slice(rows, func(i, j int) bool {
		if !rows[i].CreatedAt.Equal(rows[j].CreatedAt) {
			return rows[i].CreatedAt.Before(rows[j].CreatedAt)
		}
		return rows[i].ID < rows[j].ID
	})
	// Rows by (date, currency, amount by value), each list in pairing order,
	// so a file of n entries pairs in O(n) lookups rather than n × rows.
	free := map[string][]finance.Transaction{}
	for _, t := range rows {
		k := matchKey(t.Date, t.Amount)
		free[k] = append(free[k], t)
	}
	for i := range entries {
		e := &entries[i]
		if e.claimed {
			continue
		}
		for _, day := range []time.Time{e.date, e.valueDate} {
			if day.IsZero() {
				continue
			}
			k := matchKey(day, e.amount)
			if cands := free[k]; len(cands) > 0 {
				e.bankRowID, free[k] = cands[0].ID, cands[1:]
				break
			}
		}
	}
}

// matchKey is what a bank-synced row must share with an entry to pair.
// decimal's String drops trailing zeros, so 5 and 5.00 are one amount.
func matchKey(day time.Time, m finance.Money) string {
	return day.Format(finance.DateLayout) + "|" + m.Currency + "|" + m.Amount.String()
}

// entryText is the merchant and description of an imported row: the
// counterparty's name (else the first remittance line, else the entry's
// information) and the remittance lines. Control characters are dropped,
// as a PATCH refuses them, and the lengths are PATCH's limits.
func entryText(e StatementEntry) (merchant, description string) {
	var lines []string
	for _, l := range e.Remittance {
		if l = cleanText(l); l != "" {
			lines = append(lines, l)
		}
	}
	description = strings.Join(lines, " ")
	if description == "" {
		description = cleanText(e.Info)
	}
	merchant = cleanText(e.Counterparty)
	switch {
	case merchant != "":
	case len(lines) > 0:
		merchant = lines[0]
	default:
		merchant = cleanText(e.Info)
	}
	return truncateRunes(merchant, 200), truncateRunes(description, 1000)
}

// cleanText replaces control characters and runs of spaces with one space.
func cleanText(s string) string {
	s = strings.ToValidUTF8(s, "")
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }), " ")
}

func truncateRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return strings.TrimSpace(string([]rune(s)[:n]))
}
