// Package statement is the converter's neutral model of a bank statement or
// report: what MT940/MT942/MT950 and camt.053/camt.052 have in common. Parsers
// produce it and renderers consume it, so every pair goes through one model
// and every loss is reported in one vocabulary of warnings.
package statement

import (
	"fmt"
	"strconv"
	"time"

	"github.com/shopspring/decimal"
)

// Kind says which family a statement came from or is going to.
type Kind string

const (
	// KindStatement is an end-of-period booked statement: MT940, MT950, camt.053.
	KindStatement Kind = "statement"
	// KindReport is an intraday or balance report: MT942, MT941 (balances
	// only), camt.052.
	KindReport Kind = "report"
)

// Refused names the statement-like SWIFT types of category 9 that are
// detected but never converted, each with the reason and what to use
// instead. Every statement renderer refuses them by name
// (engine.Renderer.Refuses) and the MT reader refuses a message of these
// types, so a client learns why rather than that the input is unknown.
func Refused() map[string]string {
	const why = " is not converted: a category 9 netting, balance or status message that the CBPR+ translation portfolio does not map to ISO 20022; "
	return map[string]string{
		"MT970": "MT970 (netting statement)" + why + "send the account's bookings as an MT940 or MT950 statement, or as camt.053",
		"MT971": "MT971 (balance report of several accounts)" + why + "report each account's balances as an MT941 or camt.052",
		"MT972": "MT972 (netting interim statement)" + why + "send interim bookings as an MT942 or camt.052, end-of-day ones as MT940/MT950 or camt.053",
		"MT973": "MT973 (status request for an MT971 or MT972)" + why + "ask for a statement or report with an MT920 or camt.060",
	}
}

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
	// Line is the 1-based input line the balance was read from (MT), 0 when
	// unknown, so that a renderer refusing it can name the source line.
	Line int
}

// MTTag is the MT field that carries b: ":60F:", ":62M:", ":64:", …; ""
// for a balance type MT has no field for.
func (b Balance) MTTag() string {
	switch b.Type {
	case OpeningBooked:
		if b.Intermediate {
			return ":60M:"
		}
		return ":60F:"
	case ClosingBooked:
		if b.Intermediate {
			return ":62M:"
		}
		return ":62F:"
	case ClosingAvailable:
		return ":64:"
	case ForwardAvailable:
		return ":65:"
	}
	return ""
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
	// Purpose is the SEPA purpose code (MT :86: /PURP/, camt Purp/Cd, or
	// Purp/Prtry when it is not a code of 1 to 4 characters).
	Purpose string
	// ReturnReason is the reason of a returned payment (MT :86: /RTRN/,
	// camt RtrInf/Rsn/Cd, or Rsn/Prtry when it is not a code).
	ReturnReason string
	// CreditorReference is a structured creditor reference issued by
	// Currence, the Dutch payment reference (MT :86: /REMI/STRD/CUR/,
	// camt RmtInf/Strd/CdtrRefInf with Issr CUR).
	CreditorReference string
	// Remittance is the unstructured remittance information, one element per
	// line as the source had it.
	Remittance []string
	// Info is additional entry information (:86: free text, AddtlNtryInf).
	Info string
	// GVC is the German business transaction code (:86: structured), and
	// PostingText/Primanota/TextKeyAddition its other parts.
	GVC, PostingText, Primanota, TextKeyAddition string
	Pending                                      bool // camt Sts PDNG, MT942 entries when flagged
	// Line is the 1-based input line of the entry's :61: (MT), 0 when unknown.
	Line int
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
	// Origin is where the statement was read, for refusals (Refuse).
	Origin Origin
	// Header is the SWIFT header the statement travelled with.
	Header Header
}

// Header is what a statement's network header said: an MT's blocks 1 and 2
// or a camt's business application header (head.001). It is zero for a
// bare file (block 4 text, a Document alone), which travelled on no network.
type Header struct {
	// Set is true when the source had a FIN header (blocks 1/2) or an AppHdr.
	Set bool
	// From and To are the sender's and receiver's BICs, when known.
	From, To string
	// BizMsgIdr is a camt source's AppHdr/BizMsgIdr.
	BizMsgIdr string
}

// Origin is the place in the input a statement was read from. A renderer
// that cannot write something names it, so that the user can find the fault
// in the file they sent rather than in a document they never saw.
type Origin struct {
	// Message is the 1-based MT message; 0 for a camt source.
	Message int
	// Line is the 1-based line of the MT message's first field or of the
	// camt statement's start tag; 0 when unknown (a statement built in code).
	Line int
	// Element and Index name a camt statement: its element path without
	// ordinal ("BkToCstmrStmt/Stmt") and its 1-based ordinal; empty for MT.
	// Path joins them only when a refusal or warning needs it, so reading
	// a file of many statements builds no strings for them.
	Element string
	Index   int
}

// Path is the camt statement's element path ("BkToCstmrStmt/Stmt[2]"), or
// "" for an MT source.
func (o Origin) Path() string {
	if o.Element == "" {
		return ""
	}
	return o.Element + "[" + strconv.Itoa(o.Index) + "]"
}

// Refuse is the error a renderer returns for something of s it cannot
// write. line is the source line of the balance or entry at fault (0: the
// statement's own line). An MT source is named by its message, line and
// field (mtField, e.g. ":60a:"), with the target's element in the reason; any
// other source by the target's element (target), as the renderer names it,
// and the statement's line.
func (s *Statement) Refuse(line int, mtField, target, reason string) *ParseError {
	if line == 0 {
		line = s.Origin.Line
	}
	pe := &ParseError{Line: line, Field: target, Reason: reason}
	if s.Origin.Message > 0 {
		pe.Message, pe.Field = s.Origin.Message, mtField
		if target != "" && target != mtField {
			pe.Reason += " (" + target + ")"
		}
	}
	return pe
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
