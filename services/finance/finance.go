// Package finance is the domain of the personal-finance data surface: users,
// the grants through which they share data, bank connections, accounts,
// categories, recurring rules and transactions, the Store that keeps them, and
// the Service that answers reads with the caller's privacy scope applied.
//
// Adapters live in subpackages: memory and postgres implement Store, grpcapi
// serves the Service over gRPC, seed writes demo data.
package finance

import (
	"errors"
	"slices"
	"time"
)

// Store errors. Implementations return them unwrapped or wrapped; callers test
// with errors.Is.
var (
	ErrNotFound      = errors.New("finance: not found")
	ErrAlreadyExists = errors.New("finance: already exists")
	// ErrVersionConflict: a compare-and-swap write found another version.
	ErrVersionConflict = errors.New("finance: version conflict")
	// ErrHasChildren: a category still has subcategories.
	ErrHasChildren = errors.New("finance: category has subcategories")
	// ErrLimitReached: the user has as many custom categories as allowed.
	ErrLimitReached = errors.New("finance: limit reached")
)

// User is a person whose financial data the service holds.
type User struct {
	ID   string
	Name string
	// OwnerAccountID is the metering account (the tenant, a UUID) the user
	// belongs to: only that account's credentials may act for the user.
	// Empty only for users stored before owners existed, which no
	// credential can use.
	OwnerAccountID string
	// Mode is "live" or "test" (empty: live, users from before modes). Only
	// credentials of the user's mode act for it: a test credential never
	// reaches a live user's data (docs/security.md).
	Mode      string
	CreatedAt time.Time
}

// ModeOf is a user's mode: "live" unless it is "test".
func ModeOf(m string) string {
	if m == "test" {
		return "test"
	}
	return "live"
}

// Field ids a grant can redact. They name a unit of the payload, not a single
// proto field: transaction.location strips the whole Location,
// connection.institution strips institution and institution_logo_url.
const (
	FieldTransactionLocation   = "transaction.location"
	FieldConnectionInstitution = "connection.institution"
)

// Grant is one user's consent to share data with one client: the privacy
// scope every read is filtered through, and whether writes are allowed.
type Grant struct {
	ID                  string
	UserID              string
	RedactedFields      []string
	ExcludedAccountIDs  []string
	ExcludedCategoryIDs []string
	WritesEnabled       bool
	// Version counts the settings' changes (PATCH /v1/finance-grants/{id},
	// compare-and-swap on expected_version): a grant starts at 1, and a
	// zero Version is stored as 1.
	Version   int64
	CreatedAt time.Time
	// UpdatedAt is when the settings last changed; zero until then.
	UpdatedAt time.Time
	// LastWrite fingerprints the last PATCH under an Idempotency-Key
	// (write_mark.go); nil when it had none. Not on the wire.
	LastWrite *WriteMark
}

// Redacts reports whether the grant strips field id f.
func (g Grant) Redacts(f string) bool { return slices.Contains(g.RedactedFields, f) }

// Filtered reports whether the grant hides any rows at all. Transaction
// responses report it as filtered; other responses report only the
// exclusions that can change them.
func (g Grant) Filtered() bool {
	return len(g.ExcludedAccountIDs) > 0 || len(g.ExcludedCategoryIDs) > 0
}

// Provider rails a connection runs on. The spec leaves the values open; these
// are ours:
//   - "plaid": a third-party aggregator that is itself the aggregator, so
//     SourceAggregator is empty;
//   - "quiltt": a third-party rail that fronts other aggregators, so
//     SourceAggregator names the one behind it (e.g. "mx", "finicity");
//   - "manual": accounts the user keeps by hand; nothing syncs;
//   - "sandbox": a pretend institution linked through the finance sandbox
//     (finance/sandboxlink), synced by the sandbox aggregator.
const (
	ProviderPlaid   = "plaid"
	ProviderQuiltt  = "quiltt"
	ProviderManual  = "manual"
	ProviderSandbox = "sandbox"
)

// Connection statuses. Only active connections count as healthy.
const (
	ConnectionActive        = "active"
	ConnectionLoginRequired = "login_required"
	ConnectionError         = "error"
	ConnectionDisconnected  = "disconnected"
)

// Connection is a link to one institution through a provider rail.
type Connection struct {
	ID                 string
	UserID             string
	Provider           string
	SourceAggregator   string // empty when Provider is itself the aggregator
	Institution        string
	InstitutionLogoURL string
	Status             string
	LastSyncedAt       *time.Time // nil for manual connections and before the first sync
	ErrorCode          string
	ErrorMessage       string
	CreatedAt          time.Time
	UpdatedAt          time.Time
}

// ConnectionPosition is the keyset position of ListConnections, which orders
// by creation time, then id.
type ConnectionPosition struct {
	CreatedAt time.Time
	ID        string
}

// Account types. Balances of credit and loan accounts are what is owed, as a
// positive amount.
const (
	AccountDepository = "depository"
	AccountCredit     = "credit"
	AccountLoan       = "loan"
	AccountInvestment = "investment"
)

// Account is one bank, card, loan or investment account under a connection.
type Account struct {
	ID               string
	UserID           string
	ConnectionID     string
	Name             string
	Nickname         string
	Type             string
	Subtype          string
	Mask             string
	Currency         string
	Balance          Money
	AvailableBalance *Money
	BalanceAsOf      *time.Time
	IsHidden         bool
	Provider         string
	// Set only when the account's bank differs from its connection's
	// institution (a co-branded card, a serviced loan); empty means the
	// connection's institution applies.
	InstitutionName    string
	InstitutionLogoURL string
	CreatedAt          time.Time
	UpdatedAt          time.Time
}

// Category type tags.
const (
	CategoryIncome   = "income"
	CategoryExpense  = "expense"
	CategoryTransfer = "transfer"
)

// Category groups transactions. System categories have an empty UserID and are
// visible to everyone; custom ones belong to one user. They nest one level:
// ParentID, when set, names a top-level category.
type Category struct {
	ID        string
	UserID    string
	ParentID  string
	Name      string
	Icon      string // Material icon name, or "emoji:" and one emoji
	Color     string // #RRGGBB
	TypeTag   string
	SortOrder int32
	CreatedAt time.Time
	UpdatedAt time.Time
}

// IsSystem reports whether c is a built-in category.
func (c Category) IsSystem() bool { return c.UserID == "" }

// Recurrence frequencies: how a recurring date steps (NextOccurrence).
const (
	FrequencyWeekly      = "weekly"
	FrequencyBiweekly    = "biweekly"
	FrequencySemiMonthly = "semi_monthly"
	FrequencyMonthly     = "monthly"
	FrequencyAnnually    = "annually"
	// FrequencyQuarterly joins the spec-open values for detected streams.
	FrequencyQuarterly = "quarterly"
)

// Transaction sources.
const (
	SourceBankSync = "bank_sync"
	SourceManual   = "manual"
	SourceImport   = "import"
)

// ValidSource reports whether s is a transaction source.
func ValidSource(s string) bool {
	return s == SourceBankSync || s == SourceManual || s == SourceImport
}

// Location is where a card transaction happened. It is redacted, and
// replaced on edit, as one unit.
type Location struct {
	Street     string
	City       string
	State      string
	PostalCode string
	Country    string
}

// IsZero reports whether no component is set; stores keep such a location as
// no location at all.
func (l Location) IsZero() bool { return l == Location{} }

// EqualLocation reports whether two optional locations are the same (both
// absent, or equal in every component).
func EqualLocation(a, b *Location) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// Transaction is one money movement. Amounts are signed from the account
// holder's side: negative leaves the account, positive enters it.
//
// The Provider* fields hold the bank-recorded value of a field once a user
// edit has taken that field away from the provider; nil means nothing was
// captured. OwnedByUser names the fields a user edit owns.
type Transaction struct {
	ID              string
	UserID          string
	AccountID       string
	CategoryID      string // empty: uncategorized
	Amount          Money
	Merchant        string
	DisplayName     string
	Description     string
	Date            time.Time // a date
	PostedAt        *time.Time
	IsPending       bool
	Source          string
	PaymentChannel  string
	TransferPairID  string
	RecurringRuleID string
	ExternalRef     string
	Tags            []string
	CheckNumber     string
	Memo            string
	Location        *Location

	ProviderAmount          *Money
	ProviderMerchantName    *string
	ProviderTransactionDate *time.Time
	ProviderDescription     *string
	ProviderMemo            *string

	Version       int64
	SplitParentID string
	OwnedByUser   []string
	CreatedAt     time.Time
	UpdatedAt     time.Time
	// LastWrite fingerprints the last PATCH under an Idempotency-Key
	// (write_mark.go); nil when the last PATCH had none. Not on the wire.
	LastWrite *WriteMark
}

// TransactionFilter narrows ListTransactions. Zero values mean no filter; all
// set conditions must hold.
type TransactionFilter struct {
	// Privacy scope: rows on these accounts or in these categories are left
	// out (uncategorized rows are never left out by ExcludeCategoryIDs).
	ExcludeAccountIDs  []string
	ExcludeCategoryIDs []string

	AccountID     string
	CategoryID    string
	StartDate     time.Time // inclusive date; zero: unbounded
	EndDate       time.Time // inclusive date; zero: unbounded
	Pending       *bool
	Source        string
	Uncategorized bool // only rows without a category
}

// TxPosition is the keyset position of ListTransactions, which orders by date
// descending, then id descending. Being a position rather than an offset, it
// stays correct while rows are inserted between pages.
type TxPosition struct {
	Date time.Time
	ID   string
}

// Field names a user edit can take away from the provider. The first five
// have a provider_* twin holding the bank-recorded value and are the names
// revert_to_provider accepts. Location has no twin: a user-set location is
// kept by later syncs and can only be replaced or cleared, never reverted.
const (
	OwnAmount      = "amount"
	OwnMerchant    = "merchant"
	OwnDate        = "date"
	OwnDescription = "description"
	OwnMemo        = "memo"
	OwnLocation    = "location"
)

// RevertableFields are the names revert_to_provider accepts, in the order
// they are reported.
var RevertableFields = []string{OwnAmount, OwnMerchant, OwnDate, OwnDescription, OwnMemo}

// Owns reports whether a user edit owns field f of t.
func (t Transaction) Owns(f string) bool { return slices.Contains(t.OwnedByUser, f) }
