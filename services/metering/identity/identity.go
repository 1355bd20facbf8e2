// Package identity is the metering service's people and how they prove who
// they are: the portal's users (PortalUser), sign-up, sign-in and sessions
// with argon2id passwords, invitations, password reset and e-mail
// verification tokens, the throttles on all of these, the test OAuth
// clients of the token route, and the housekeeping that deletes what has
// expired (docs/portal.md). The HTML is the gateway's (gateway/portal).
//
// It imports the metering root for accounts and credentials (through the
// Accounts port, which metering.Service implements) and its store errors,
// and notify for the mails it queues with their tokens; neither imports
// it. Its Store is implemented beside the others in memory and postgres.
// Throttles count in this process unless Config.Throttles makes them
// shared (redisthrottle, over Redis).
package identity

import (
	"context"
	"log/slog"
	"time"

	"github.com/ledgerlane/platform/pkg/clock"
	"github.com/ledgerlane/platform/pkg/logging"
	"github.com/ledgerlane/platform/services/metering"
)

// PortalUser is a person of an account: they sign in to the portal and
// receive the account's mail.
type PortalUser struct {
	ID        string // UUID
	AccountID string
	Email     string
	Name      string
	// PasswordHash is the argon2id hash of the portal password (portal.go);
	// empty for a person who only receives alerts and cannot sign in.
	PasswordHash string
	// InviteHash is the SHA-256 of a pending invitation's token, valid until
	// InviteExpiresAt; empty and nil when none is pending (portal.go).
	InviteHash      string
	InviteExpiresAt *time.Time
	CreatedAt       time.Time
	// EmailVerified: the person proved they read mail at Email (a
	// verification link, an invitation or a password reset); until then
	// live keys are refused (email_verify.go).
	EmailVerified bool
}

// Store persists people, sessions, tokens and OAuth clients. Every method
// that takes an account id answers metering.ErrNotFound for an unknown one,
// unless it says otherwise.
type Store interface {
	// AddPortalUser adds a person to an account; metering.ErrConflict when the
	// account has one with the same e-mail address.
	AddPortalUser(ctx context.Context, u PortalUser) error
	// PortalUsers returns the account's people, oldest first.
	PortalUsers(ctx context.Context, accountID string) ([]PortalUser, error)

	PortalStore
	PortalTokenStore
	OAuthStore
	HousekeepingStore
}

// Accounts is what identity uses of metering's accounts and credentials:
// metering.Service.
type Accounts interface {
	CreateAccount(ctx context.Context, name, planID string, currency metering.Currency) (metering.Account, error)
	Account(ctx context.Context, id string) (metering.Account, error)
	IssueCredential(ctx context.Context, p metering.IssueParams) (string, metering.Credential, error)
	IssueAccessToken(ctx context.Context, p metering.AccessTokenParams) (string, metering.Credential, error)
	ListCredentials(ctx context.Context, accountID string) ([]metering.Credential, error)
	Revoke(ctx context.Context, credentialID string) error
}

// Config assembles a Service.
type Config struct {
	Store    Store
	Accounts Accounts
	// Throttles makes each throttle (throttle.go); nil: in this process,
	// each replica counting on its own (redisthrottle.Kinds shares them).
	Throttles ThrottleFactory
	// Clock defaults to time.Now; Log to discarding.
	Clock func() time.Time
	Log   *slog.Logger
}

// Service applies the rules of the portal's people, sessions, tokens and
// OAuth clients.
type Service struct {
	store    Store
	accounts Accounts
	now      func() time.Time
	log      *slog.Logger
	// signins counts failed portal sign-ins (portal.go).
	signins Throttle
	// signups counts portal sign-ups per address (portal.go).
	signups Throttle
	// clientAuths counts failed OAuth client authentications (oauth.go).
	clientAuths Throttle
	// resets counts password reset requests (password_reset.go).
	resets Throttle
	// verifies counts verification mails per person (email_verify.go).
	verifies Throttle
	// invites counts invitations per account (portal.go).
	invites Throttle
}

// NewService returns a Service from cfg, filling defaults.
func NewService(cfg Config) *Service {
	cfg.Clock, cfg.Log = clock.Or(cfg.Clock), logging.OrDiscard(cfg.Log)
	th := cfg.Throttles
	if th == nil {
		th = func(_ string, max int, window time.Duration) Throttle { return NewMemThrottle(max, window) }
	}
	return &Service{store: cfg.Store, accounts: cfg.Accounts, now: cfg.Clock, log: cfg.Log,
		signins:     th("signin", SignInFailures, SignInWindow),
		signups:     th("signup", SignUps, SignUpWindow),
		clientAuths: th("clientauth", ClientAuthFailures, ClientAuthWindow),
		resets:      th("reset", ResetRequests, ResetWindow),
		verifies:    th("verify", VerifyMails, VerifyWindow),
		invites:     th("invite", Invites, InviteWindow)}
}

// timestamp is the current time in UTC at PostgreSQL's microsecond
// precision, so a value reads back from any Store exactly as it was written.
func (s *Service) timestamp() time.Time {
	return s.now().UTC().Truncate(time.Microsecond)
}
