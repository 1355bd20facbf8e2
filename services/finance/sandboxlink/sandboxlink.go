// Package sandboxlink is the finance sandbox: an account's own test-mode
// finance users, the pretend institutions they can link with published test
// credentials, and the link itself, a small state machine (started, waiting
// for an MFA code, linked or failed). A successful link writes a connection,
// its accounts, a grant and a couple of months of generated history in one
// atomic step; from then on the sandbox aggregator (finance/sandbox) syncs the
// connection like the demo's. docs/finance-sandbox.md has the contract.
//
// It owns the links, the institution catalogue and the limits, and imports
// only the kernel (finance). The history is a port (Config.History, filled by
// seed.SandboxHistory in the wiring), so the generator stays with the demo
// data it shares merchants with.
//
// Test credentials are compared and forgotten: no link stores a username,
// password or MFA code, and nothing here logs them.
package sandboxlink

import (
	"time"

	"github.com/ledgerlane/platform/services/finance"
)

// Link statuses. Expired is never stored: it is how a link still waiting for
// its MFA code reads once ExpiresAt has passed.
const (
	StatusMFARequired = "mfa_required"
	StatusLinked      = "linked"
	StatusFailed      = "failed"
	StatusExpired     = "expired"
)

// Error codes of a failed link.
const (
	// ErrorTooManyMFAAttempts: MaxMFAAttempts wrong codes in a row.
	ErrorTooManyMFAAttempts = "too_many_mfa_attempts"
)

// Outcomes an institution gives to its test credentials.
const (
	OutcomeSuccess = "success"      // linked at once
	OutcomeMFA     = "mfa_required" // linked once the MFA code is sent
	OutcomeDown    = "institution_down"
)

// Test credentials every institution publishes (Plaid's sandbox spelling,
// so a developer who knows it needs nothing new).
const (
	TestUsername = "user_good"
	TestPassword = "pass_good"
	TestMFACode  = "1234"
)

// Institution is one pretend bank.
type Institution struct {
	ID      string
	Name    string
	Outcome string
	// Accounts are what a link to it holds; History makes their rows.
	Accounts []AccountSpec
}

// AccountSpec is one account an institution's link holds.
type AccountSpec struct {
	// Key names the account within its connection (its id derives from it).
	Key      string
	Name     string
	Type     string
	Subtype  string
	Mask     string
	Currency string
	// Opening is the balance the history starts from, a plain decimal:
	// what is owed runs negative until the generator flips it.
	Opening string
}

// institutions is the catalogue: one of each outcome. Names are ours.
var institutions = []Institution{
	{ID: "ins_otter", Name: "Harbor Otter Bank", Outcome: OutcomeSuccess, Accounts: []AccountSpec{
		{Key: "checking", Name: "Otter Everyday Checking", Type: finance.AccountDepository, Subtype: "checking", Mask: "0417", Currency: "USD", Opening: "4200.00"},
		{Key: "savings", Name: "Otter High-Yield Savings", Type: finance.AccountDepository, Subtype: "savings", Mask: "8821", Currency: "USD", Opening: "15000.00"},
		{Key: "card", Name: "Otter Cashback Card", Type: finance.AccountCredit, Subtype: "credit card", Mask: "3390", Currency: "USD", Opening: "0"},
	}},
	{ID: "ins_quokka", Name: "Quokka Credit Union", Outcome: OutcomeMFA, Accounts: []AccountSpec{
		{Key: "checking", Name: "Quokka Share Draft", Type: finance.AccountDepository, Subtype: "checking", Mask: "1150", Currency: "USD", Opening: "2600.00"},
		{Key: "card", Name: "Quokka Rewards Visa", Type: finance.AccountCredit, Subtype: "credit card", Mask: "7002", Currency: "USD", Opening: "0"},
	}},
	{ID: "ins_wombat", Name: "Wombat Trust Company", Outcome: OutcomeDown},
}

// Institutions returns the catalogue, in a fixed order.
func Institutions() []Institution { return institutions }

// InstitutionByID finds an institution of the catalogue.
func InstitutionByID(id string) (Institution, bool) {
	for _, in := range institutions {
		if in.ID == id {
			return in, true
		}
	}
	return Institution{}, false
}

// Link is one attempt to link a user to an institution.
type Link struct {
	ID string
	// OwnerAccountID is the metering account of the user (the tenant).
	OwnerAccountID string
	UserID         string
	InstitutionID  string
	Status         string // StatusMFARequired, StatusLinked or StatusFailed
	ErrorCode      string // set when failed
	// MFAAttempts counts wrong codes.
	MFAAttempts   int
	WritesEnabled bool
	// Set once linked.
	ConnectionID string
	GrantID      string
	// Version counts the link's writes, for UpdateLink's compare-and-swap.
	Version   int64
	CreatedAt time.Time
	UpdatedAt time.Time
	// ExpiresAt is when a link waiting for its MFA code stops taking one;
	// zero once it is not waiting.
	ExpiresAt time.Time
}

// StatusAt is the link's status as a client sees it at now: a link past
// its MFA deadline reads expired.
func (l Link) StatusAt(now time.Time) string {
	if l.Status == StatusMFARequired && !now.Before(l.ExpiresAt) {
		return StatusExpired
	}
	return l.Status
}

// History is what a successful link writes besides the connection and the
// grant.
type History struct {
	Accounts []finance.Account
	// Categories are the system categories the rows name; the store writes
	// those it does not hold yet (they are shared, with fixed ids).
	Categories   []finance.Category
	Transactions []finance.Transaction
}

// HistoryFunc makes a new connection's accounts and rows, deterministically
// from the institution, the connection (whose id names every row) and now.
// seed.SandboxHistory is the one the wiring passes.
type HistoryFunc func(in Institution, conn finance.Connection, now time.Time) History

// Linked is the write of a successful link: the connection, its accounts
// and history, and the grant a credential is issued on. The store writes it
// with the link in one atomic step, and marks the user due for recurring
// detection at RecurringDueAt.
type Linked struct {
	Connection     finance.Connection
	Grant          finance.Grant
	History        History
	RecurringDueAt time.Time
}

// LinkedConnection is a linked connection the sandbox aggregator keeps
// syncing, with the accounts that get new activity.
type LinkedConnection struct {
	ConnectionID string
	Accounts     []LinkedAccount
}

// LinkedAccount is one account of a LinkedConnection.
type LinkedAccount struct {
	ID, Type, Subtype, Currency string
}
