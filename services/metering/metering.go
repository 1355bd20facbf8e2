// Package metering holds the root of the metering service's domain:
// accounts, the credentials (API keys and access tokens) that act for them,
// the price list (plans.go), and the accounts' limits and usage. Billing
// (plan changes, invoices, collection, payments) is package billing, which
// imports this one (its Accounts port, which Service implements); the
// limits read the payment standing billing keeps through this package's
// PaymentStanding port (billing.Standing), so no call runs from here to
// billing. The portal's people are identity's (which imports this package
// through its Accounts port) and the mail notify's (which this package
// imports: Service.AlertStanding is notify's Meter, and notify is the
// Watcher told when an account's limits change). Storage and transport live
// in subpackages (memory, postgres, grpcapi); this package only defines the
// types, the Store contract and the Service rules, and imports no other
// metering package but admission/quota (plain values; the counters are its
// Counters port) and notify (README.md, "Packages and which
// imports which").
package metering

import (
	"context"
	"errors"
	"time"
)

// Clock returns the current time. Services take one so tests can pin time.
type Clock func() time.Time

// Currency is a billing currency, lowercase as the public API shows it.
type Currency string

const (
	USD Currency = "usd"
	EUR Currency = "eur"
	GBP Currency = "gbp"
)

// Valid reports whether c is a supported billing currency.
func (c Currency) Valid() bool { return c == USD || c == EUR || c == GBP }

// Credential kinds, as the secret's first segment shows them.
const (
	KindAPIKey      = "ak"
	KindAccessToken = "at"
)

// Credential surfaces: which public API a credential may call. They are
// principal.SurfaceConversion and principal.SurfaceFinance, spelled out so
// that the root does not import pkg/principal (gRPC metadata); grpcapi's
// tests check that they agree.
const (
	SurfaceConversion = "conversion"
	SurfaceFinance    = "finance"
)

// Credential modes. Live usage counts against the plan; test usage against the
// one-time test pool.
const (
	ModeLive = "live"
	ModeTest = "test"
)

// Account is a customer of the platform: the unit that is billed and metered.
type Account struct {
	ID              string // UUID
	Name            string
	PlanID          string
	BillingCurrency Currency
	// BillingAnchor is the billing anniversary: paid plans' periods start on
	// its day of month. Free ignores it and uses the UTC calendar month.
	BillingAnchor time.Time
	CreatedAt     time.Time
	// Billing settings the account owner changes with
	// POST /v1/portal/billing/limits. HardStop refuses overage on a paid plan;
	// OverageCapCents (nil: no cap) bounds accrued overage, pre-tax, in the
	// billing currency's minor units.
	HardStop        bool
	OverageCapCents *int64
	// A downgrade waiting for the end of the current period (billing):
	// ScheduledPlanID takes effect at ScheduledAt. Empty and nil: none.
	ScheduledPlanID string
	ScheduledAt     *time.Time
	// CreditCents is credit granted to the account and not yet applied to
	// an invoice, in the billing currency's minor units.
	CreditCents int64
	// NextCloseAt is the end of the account's oldest period without an
	// invoice, which the closing job waits for (billing); nil: not known
	// yet (an account from before it was kept), so the next tick looks.
	NextCloseAt *time.Time
}

// Credential is an API key or access token. The secret itself is never kept:
// only its SHA-256 and a short display prefix.
type Credential struct {
	ID        string // UUID
	AccountID string
	Name      string
	Kind      string // KindAPIKey or KindAccessToken
	Surface   string // SurfaceConversion or SurfaceFinance
	Mode      string // ModeLive or ModeTest
	Scopes    []string
	// SecretHash is the lowercase hex SHA-256 of the secret.
	SecretHash string
	// Prefix is the secret's first 12 characters, e.g. "ak_live_x7fq", so a
	// person can tell keys apart in a listing.
	Prefix string
	// Finance credentials only: the user and connection grant they act under.
	FinanceUserID string
	GrantID       string
	CreatedAt     time.Time
	RevokedAt     *time.Time
	// ExpiresAt ends an OAuth access token's life (nil: never expires).
	ExpiresAt *time.Time
	// OAuthClientID is the OAuthClient.ID an access token was issued to;
	// revoking the client revokes it too. Empty otherwise.
	OAuthClientID string
	// LastUsedAt is when a request last authenticated with the credential,
	// to within LastUsedGranularity; nil: never.
	LastUsedAt *time.Time
}

// Revoked reports whether the credential has been revoked.
func (c Credential) Revoked() bool { return c.RevokedAt != nil }

// Store errors. Implementations return them (possibly wrapped) so callers can
// use errors.Is regardless of the backend.
var (
	ErrNotFound = errors.New("metering: not found")
	ErrConflict = errors.New("metering: conflict")
)

// Store persists accounts and credentials. IDs are UUID strings; a malformed
// ID is simply not found. memory and postgres implement it, and the conformance
// package holds the tests both must pass.
type Store interface {
	// CreateAccount fails with ErrConflict when the ID exists.
	CreateAccount(ctx context.Context, a Account) error
	GetAccount(ctx context.Context, id string) (Account, error)
	// CreateCredential fails with ErrConflict when the ID or SecretHash exists
	// and with ErrNotFound when the account does not.
	CreateCredential(ctx context.Context, c Credential) error
	// CredentialByHash returns revoked credentials too: deciding what a
	// revoked credential means is the Service's job, not the Store's.
	CredentialByHash(ctx context.Context, hash string) (Credential, error)
	// ListCredentials returns the account's credentials oldest first; an
	// unknown account has none.
	ListCredentials(ctx context.Context, accountID string) ([]Credential, error)
	// SetBillingLimits stores the account's hard stop and overage cap
	// (nil clears it) and records the change at time at in the account's
	// limits history (LimitChanges), in one transaction; ErrNotFound for an
	// unknown account.
	SetBillingLimits(ctx context.Context, accountID string, hardStop bool, capCents *int64, at time.Time) error
	// RevokeCredential records the revocation time. Revoking twice keeps the
	// first time, so the audit trail shows when access really ended.
	RevokeCredential(ctx context.Context, id string, at time.Time) error
	// TouchCredential records at as the credential's LastUsedAt unless it
	// already holds a later time (replicas may touch it out of order);
	// ErrNotFound for an unknown id.
	TouchCredential(ctx context.Context, id string, at time.Time) error
	// ApplyDowngrade makes a scheduled downgrade due at now the account's
	// plan and clears the schedule; otherwise it does nothing.
	ApplyDowngrade(ctx context.Context, accountID string, now time.Time) error
}
