// Package statement is the converter's neutral model of a bank statement or
// report: what MT940/MT942/MT950 and camt.053/camt.052 have in common. Parsers
// produce it and renderers consume it, so every pair goes through one model
// and every loss is reported in one vocabulary of warnings.
package statement

import (
	"fmt"
	"time"

	"github.com/shopspring/decimal"
)

// Kind says which family a statement came from or is going to.
type Kind string

const (
	// KindStatement is an end-of-period booked statement: MT940, MT950, camt.053.
	KindStatement Kind = "statement"
	// KindReport is an intraday report: MT942, camt.052.
	KindReport Kind = "report"
)

// Mark is the credit/debit direction of a balance or entry.
type Mark string

const (
	Credit Mark = "C"
	Debit  Mark = "D"
)

// Date is a calendar date without time zone.
type Date struct {
	Year  int
	Month time.Month
	Day   int
}

// IsZero reports whether d is unset.
func (d Date) IsZero() bool { return d.Year == 0 }

// String is YYYY-MM-DD.
func (d Date) String() string { return fmt.Sprintf("%04d-%02d-%02d", d.Year, d.Month, d.Day) }

// Time is d at midnight UTC.
func (d Date) Time() time.Time { return time.Date(d.Year, d.Month, d.Day, 0, 0, 0, 0, time.UTC) }

// DateOf returns the calendar date of t in t's location.
func DateOf(t time.Time) Date { return Date{t.Year(), t.Month(), t.Day()} }

// Amount is an exact, non-negative decimal with its currency. The direction
// lives beside it (Mark), as in both SWIFT and ISO 20022.
type Amount struct {
	Value    decimal.Decimal
	Currency string // ISO 4217, upper case
}

// Balance is one balance line (:60F:, :62M:, <Bal>…).
type Balance struct {
	Type BalanceType
	Mark Mark
	Date Date
	Amount
	// Intermediate is true for :60M:/:62M: (and camt's intermediate types):
	// a balance at a page boundary of a statement split over several messages.
	Intermediate bool
}

// BalanceType names a balance by its role.
type BalanceType string

const (
	OpeningBooked    BalanceType = "OPBD" // :60F:/:60M:
	ClosingBooked    BalanceType = "CLBD" // :62F:/:62M:
	ClosingAvailable BalanceType = "CLAV" // :64:
	ForwardAvailable BalanceType = "FWAV" // :65:
	InterimBooked    BalanceType = "ITBD" // camt.052 interim booked
	InterimAvailable BalanceType = "ITAV" // camt.052 interim available
)

// Account identifies the statement's account (:25:, <Acct>).
type Account struct {
	IBAN     string // set when the identifier is a valid IBAN
	Other    string // any other identifier, as given
	Currency string
	Owner    string // account owner's name, when known
	// OwnerBIC is the account owner's BIC: MT :25P: (second line), camt
	// Acct/Ownr/Id/OrgId/AnyBIC (.001.02: BICOrBEI).
	OwnerBIC string
	// Servicer is the account servicer's BIC (MT: the sender in block 1/2).
	Servicer string
}

// Counterparty is the other side of an entry, when the source names it.
type Counterparty struct {
	Name     string
	IBAN     string
	Account  string // non-IBAN account number
	BIC      string
	BankCode string // national bank code (German BLZ, …)
}

// Entry is one booked or pending movement (:61: + :86:, <Ntry>).
type Entry struct {
	ValueDate   Date
	BookingDate Date // the :61: entry date (with year rollover) or else the value date
	Mark        Mark // direction after reversal: RC books as a debit, RD as a credit
	Reversal    bool // :61: RC/RD, camt RvslInd
	FundsCode   string
	Amount
	// TransactionType is the MT 4-character type+code (e.g. "NTRF", "NMSC"),
	// which camt carries as BkTxCd/Prtry/Cd.
	TransactionType string
	// Domain, family and sub-family codes of an ISO 20022 bank transaction
	// code, when the source has them.
	BankTxDomain, BankTxFamily, BankTxSubFamily string
	CustomerReference                           string // :61: account owner's reference / camt AcctSvcrRef counterpart
	BankReference                               string // :61: //bank reference
	Supplementary                               string // :61: supplementary details (line 2)
	EndToEndID                                  string
	MandateID                                   string
	CreditorID                                  string
	Counterparty                                Counterparty
	UltimateDebtor                              string // SEPA ABWA+
	UltimateCreditor                            string // SEPA ABWE+
	// Remittance is the unstructured remittance information, one element per
	// line as the source had it.
	Remittance []string
	// Info is additional entry information (:86: free text, AddtlNtryInf).
	Info string
	// GVC is the German business transaction code (:86: structured), and
	// PostingText/Primanota/TextKeyAddition its other parts.
	GVC, PostingText, Primanota, TextKeyAddition string
	Pending                                      bool // camt Sts PDNG, MT942 entries when flagged
}

// Summary holds MT942's :90D:/:90C: and camt's TxsSummry.
type Summary struct {
	DebitCount, CreditCount int
	DebitTotal, CreditTotal decimal.Decimal
	Set                     bool
}

// Statement is one statement or report for one account.
type Statement struct {
	Kind             Kind
	Reference        string // :20: transaction reference / camt Stmt/Id
	RelatedReference string // :21:
	MessageID        string // camt GrpHdr/MsgId (defaults to Reference when rendering)
	CreatedAt        time.Time
	Account          Account
	StatementNumber  string // :28C: statement number / camt ElctrncSeqNb or LglSeqNb
	SequenceNumber   string // :28C: page (sequence) number / camt StmtPgntn/PgNb
	LastPage         bool   // camt StmtPgntn/LastPgInd (MT: the last message of a statement)
	FromDate, ToDate Date   // camt FrToDt, when present
	Balances         []Balance
	// FloorLimitDebit/Credit are MT942 :34F: floor limits.
	FloorLimitDebit, FloorLimitCredit *Amount
	// DateTimeIndicator is MT942 :13D:.
	DateTimeIndicator time.Time
	Entries           []Entry
	Summary           Summary
	// Info is statement-level additional information (a trailing :86:,
	// camt AddtlStmtInf).
	Info string
}

// Balance returns the first balance of type t, if any.
func (s *Statement) Balance(t BalanceType) (Balance, bool) {
	for _, b := range s.Balances {
		if b.Type == t {
			return b, true
		}
	}
	return Balance{}, false
}
