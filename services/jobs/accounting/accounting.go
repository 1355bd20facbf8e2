// Package accounting connects accounting platforms (QuickBooks Online, Xero
// and the local sandbox) to a conversion account and books bank statements
// into them. This package is the domain, in plain Go: the Connection, the
// Store contract, the Platform contract each adapter implements (quickbooks,
// xero; the sandbox speaks Xero's API), the OAuth 2.0 authorization-code flow
// (state, PKCE verifier, expiry, single use), token refresh and the push of
// statement entries with their stable ids. Adapters do the HTTP; the
// behaviour is described in docs/accounting.md.
package accounting

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Platform slugs.
const (
	QuickBooks = "quickbooks"
	Xero       = "xero"
	Sandbox    = "sandbox"
)

// Connection statuses.
const (
	// StatusPending: created, waiting for the user to approve at the
	// platform (the callback).
	StatusPending = "pending"
	// StatusActive: tokens are held and statements can be pushed.
	StatusActive = "active"
	// StatusError: the platform refused the authorization or a refresh, or
	// the authorization expired; StatusReason says which. Terminal: the
	// client deletes the connection and connects again.
	StatusError = "error"
)

// Connection is one accounting-platform connection of a tenant. Secrets
// (the PKCE verifier, the tokens) are sealed blobs: the store never sees
// plaintext.
type Connection struct {
	ID        string // UUID
	AccountID string // the tenant
	// Mode is the mode of the key that created it ("live" or "test"): only
	// keys of that mode see, use or delete it (docs/accounting.md).
	Mode        string
	Platform    string
	DisplayName string
	Status      string
	// StatusReason says why the status is error; empty otherwise.
	StatusReason string
	CreatedAt    time.Time
	UpdatedAt    time.Time
	ConnectedAt  time.Time // zero until active

	// StateHash is the hex SHA-256 of the OAuth state while the
	// authorization is open; empty once used. The state itself is never
	// stored: it is a bearer secret until the callback.
	StateHash      string
	StateExpiresAt time.Time
	// Verifier is the sealed PKCE code verifier (nil after the callback).
	Verifier []byte

	// Tokens is the sealed Token (nil until active, and after revocation).
	Tokens []byte
	// TokenExpiresAt is the access token's expiry, kept in the clear so the
	// refresher can find what is due without opening every blob.
	TokenExpiresAt time.Time
	// PlatformTenantID is the platform's company (QuickBooks realmId) or
	// organisation (Xero tenantId).
	PlatformTenantID string
	// RefreshFailures counts consecutive refreshes that failed for a
	// transient reason; at MaxRefreshFailures the connection goes to error.
	RefreshFailures int
	// RefreshAfter is the refresher's lease and backoff: no refresh is
	// claimed before it.
	RefreshAfter time.Time
}

// Token is a platform grant's tokens: the plaintext of Connection.Tokens.
type Token struct {
	AccessToken  string    `json:"access_token"`
	RefreshToken string    `json:"refresh_token,omitempty"`
	Expiry       time.Time `json:"expiry"`
}

// Grant is what a completed authorization yields.
type Grant struct {
	Token    Token
	TenantID string
}

// Callback is what the platform's redirect carried, with the verifier the
// connection kept.
type Callback struct {
	Code     string
	RealmID  string // QuickBooks only
	Verifier string
}

// BankTransaction is one statement entry as the platform books it. Amount is
// the exact decimal text, unsigned; Direction says which way money moved.
type BankTransaction struct {
	// Key is the platform idempotency key (QuickBooks requestid, Xero
	// Idempotency-Key), derived from the entry id and the connection.
	Key           string
	EntryID       string
	Date          string // YYYY-MM-DD, the booking date
	Amount        string // unsigned decimal, '.' separator
	Credit        bool   // money in (a deposit / RECEIVE)
	Currency      string
	Description   string
	Counterparty  string
	Reference     string
	BankAccount   string
	ContraAccount string
}

// Platform is one accounting platform's API: its OAuth endpoints and its
// bank-transaction endpoint. Errors are *PlatformError values (or wrap one);
// anything else counts as the platform being unavailable.
type Platform interface {
	// AuthCodeURL is where the user approves: the platform's authorization
	// endpoint with our client id, redirect URI, scopes and state, and the
	// S256 challenge of verifier when the platform supports PKCE.
	AuthCodeURL(state, verifier string) string
	// Exchange trades the callback's code for tokens and finds the company
	// or organisation the grant is for.
	Exchange(ctx context.Context, cb Callback) (Grant, error)
	// Refresh trades a refresh token for fresh tokens.
	Refresh(ctx context.Context, refreshToken string) (Token, error)
	// Revoke ends the grant at the platform.
	Revoke(ctx context.Context, tok Token) error
	// Push books one transaction and returns the platform's id for it. The
	// same Key twice books once.
	Push(ctx context.Context, accessToken, tenantID string, tx BankTransaction) (string, error)
	// Accounts says whether pushes need the bank and contra accounts named
	// (the real platforms do), and the defaults when they do not.
	Accounts() (required bool, bank, contra string)
}

// ErrorKind classifies a platform's failure.
type ErrorKind int

const (
	// KindUnavailable: no answer, a timeout, 429 or 5xx. Worth retrying.
	KindUnavailable ErrorKind = iota
	// KindRejected: the platform refused the request (validation, 4xx).
	KindRejected
	// KindInvalidGrant: the token endpoint refused the code or refresh
	// token (invalid_grant and the like): the grant is gone.
	KindInvalidGrant
	// KindUnauthorized: the API refused the access token (401); a refresh
	// may help.
	KindUnauthorized
)

// PlatformError is a platform's failure. Message is the platform's own
// text (never a token), shown to the client.
type PlatformError struct {
	Kind    ErrorKind
	Status  int // HTTP status, 0 when there was no answer
	Message string
}

func (e *PlatformError) Error() string {
	return fmt.Sprintf("accounting platform: status %d: %s", e.Status, e.Message)
}

// kindOf classifies err; an error that is no *PlatformError is a failure to
// reach the platform.
func kindOf(err error) (ErrorKind, string) {
	var pe *PlatformError
	if errors.As(err, &pe) {
		return pe.Kind, pe.Message
	}
	return KindUnavailable, ""
}

// ErrNotFound is returned for a missing connection, and for another
// tenant's.
var ErrNotFound = errors.New("accounting: not found")

// Position is a place in a tenant's connection list (newest first).
type Position struct {
	CreatedAt time.Time
	ID        string
}

// Store persists connections and what was pushed through them.
// Implementations: the jobs service's memory and postgres packages;
// services/jobs/conformance holds the behaviour both must have. Methods
// taking accountID treat another tenant's row as missing.
type Store interface {
	CreateConnection(ctx context.Context, c Connection) error
	// GetConnection returns the tenant's connection.
	GetConnection(ctx context.Context, accountID, id string) (Connection, error)
	// ListConnections returns up to limit of the tenant's connections of
	// mode, newest first (CreatedAt, then ID, descending), strictly after
	// after when it is not nil.
	ListConnections(ctx context.Context, accountID, mode string, after *Position, limit int) ([]Connection, error)
	// UpdateConnection writes every mutable field of c (found by ID).
	UpdateConnection(ctx context.Context, c Connection) error
	// DeleteConnection removes the tenant's connection and its push records.
	DeleteConnection(ctx context.Context, accountID, id string) error
	// ConsumeState finds the connection whose open authorization has
	// stateHash and closes it (StateHash emptied) in the same step, so a
	// state completes at most once. ErrNotFound when none has it.
	ConsumeState(ctx context.Context, stateHash string) (Connection, error)
	// ExpirePending moves up to limit pending connections whose
	// authorization window closed at or before now to error with reason,
	// dropping their open state and sealed verifier in the same step (a
	// callback racing it either consumed the state first or finds none),
	// and returns them as updated.
	ExpirePending(ctx context.Context, now time.Time, reason string, limit int) ([]Connection, error)
	// DueRefresh returns up to limit active connections whose token expires
	// before before and whose RefreshAfter is not after now, soonest expiry
	// first.
	DueRefresh(ctx context.Context, before, now time.Time, limit int) ([]Connection, error)
	// ClaimRefresh sets RefreshAfter to until if it is not after now, and
	// reports whether it did: one refresher per connection at a time. A
	// missing connection is not claimed (false, no error).
	ClaimRefresh(ctx context.Context, id string, now, until time.Time) (bool, error)
	// PushedEntries returns, of entryIDs, those already pushed through the
	// connection, with the platform's transaction id.
	PushedEntries(ctx context.Context, connectionID string, entryIDs []string) (map[string]string, error)
	// RecordPushed notes an entry as pushed; recording it again is no error
	// and keeps the first record.
	RecordPushed(ctx context.Context, connectionID, entryID, platformID string, at time.Time) error
}

// Sealer seals and opens secrets bound to where they are stored; the jobs
// service's Keyring is one.
type Sealer interface {
	Seal(plaintext []byte, aad string) ([]byte, error)
	Open(blob []byte, aad string) ([]byte, error)
}

// StatementConverter turns a statement's text into the converter's CSV (the
// jobs service's converter client): the converter is the one parser.
type StatementConverter interface {
	StatementCSV(ctx context.Context, c Caller, from, message string) (string, error)
}

// Metrics observes platform calls and pushed entries (the jobs service's
// metrics.Prometheus); labels take only platform slugs and the fixed values
// below.
type Metrics interface {
	// PlatformCall counts one call: operation exchange, refresh, push or
	// revoke; outcome ok, rejected, unavailable, invalid_grant or
	// unauthorized.
	PlatformCall(platform, operation, outcome string)
	// EntriesPushed counts a push's entries by what became of them.
	EntriesPushed(platform string, created, present int)
}

type noMetrics struct{}

func (noMetrics) PlatformCall(string, string, string) {}
func (noMetrics) EntriesPushed(string, int, int)      {}

// outcome is err's metrics label.
func outcome(err error) string {
	if err == nil {
		return "ok"
	}
	var pe *PlatformError
	if !errors.As(err, &pe) {
		return "unavailable"
	}
	return map[ErrorKind]string{KindUnavailable: "unavailable", KindRejected: "rejected",
		KindInvalidGrant: "invalid_grant", KindUnauthorized: "unauthorized"}[pe.Kind]
}

// Caller is the tenant a request acts for.
type Caller struct {
	AccountID string
	Mode      string
	RequestID string
}

func tokensAAD(id string) string   { return "accounting/v1|" + id + "|tokens" }
func verifierAAD(id string) string { return "accounting/v1|" + id + "|pkce-verifier" }
