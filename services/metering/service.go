package metering

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/ledgerlane/platform/pkg/clock"
	"github.com/ledgerlane/platform/pkg/logging"
	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/services/metering/admission/quota"
)

// MaxNameLen bounds account, credential and payment method holder names,
// which are shown in listings.
const MaxNameLen = 200

// Service applies the rules for accounts and credentials on top of a Store.
type Service struct {
	store    Store
	now      Clock
	log      *slog.Logger
	counters Counters // nil: usage cannot be read (no Redis configured)
	// finance checks finance credentials' users and grants; nil: finance
	// credentials are refused.
	finance FinanceDirectory
	// payments is the accounts' payment standing (billing.Standing); nil:
	// every account's is PaymentOK.
	payments PaymentStanding
	// watcher hears that an account's limits changed; nil: nobody does.
	watcher Watcher
}

// Counters are what the root reads and writes of the usage counters the
// gateway's admission keeps: admission.Controller, the Redis adapter the
// wiring (server.New) gives, so this package imports only admission's plain
// values (admission/quota), never its Redis client.
type Counters interface {
	// Usage reads the live window of l and the test pool.
	Usage(ctx context.Context, accountID string, l quota.Limits) (quota.Usage, error)
	// Refund gives back n units r's account was counted for, once per ref.
	Refund(ctx context.Context, r quota.Request, ref string, n int64) (int64, error)
	// Daily reads the usage by day and credential of the live windows
	// ending after since (l's current one always) and of the test pool.
	Daily(ctx context.Context, accountID string, l quota.Limits, since time.Time) (quota.DailyCounts, error)
}

// PaymentStanding is an account's payment standing, which narrows its
// limits (limits.go): billing.Standing, which reads billing's payments. It
// answers PaymentOK, PaymentSettling or PaymentFailed.
type PaymentStanding interface {
	PaymentState(ctx context.Context, accountID string) (string, error)
}

// Watcher hears that an account's limits or standing changed without new
// usage (its plan, its billing limits, its payment standing), which can
// reach a usage alert milestone: notify.Service, whose next ScanAlerts
// checks the account. It is told from one place, Service.AccountChanged,
// which billing calls through its Accounts port. A Watcher logs its own
// failures: the change is made whether or not it hears of it.
type Watcher interface {
	AccountChanged(ctx context.Context, accountID string)
}

// Config assembles a Service.
type Config struct {
	Store Store
	// Counters are the usage counters admission keeps in Redis (GET
	// /v1/usage, refunds); nil: usage cannot be read.
	Counters Counters
	// FinanceDirectory checks each finance credential's user and grant
	// (financedir over gRPC); nil: finance credentials are refused.
	FinanceDirectory FinanceDirectory
	// Payments is the accounts' payment standing (billing.NewStanding over
	// billing's store); nil: every account's is PaymentOK.
	Payments PaymentStanding
	// Watcher hears that an account's limits changed (notify.Service); nil:
	// nobody does.
	Watcher Watcher
	// Clock defaults to time.Now; Log to discarding.
	Clock Clock
	Log   *slog.Logger
}

// NewService returns a Service from cfg, filling defaults.
func NewService(cfg Config) *Service {
	return &Service{store: cfg.Store, now: clock.Or(cfg.Clock), log: logging.OrDiscard(cfg.Log), counters: cfg.Counters, finance: cfg.FinanceDirectory,
		payments: cfg.Payments, watcher: cfg.Watcher}
}

// timestamp is the current time in UTC at PostgreSQL's microsecond precision,
// so a value reads back from any Store exactly as it was written.
func (s *Service) timestamp() time.Time {
	return s.now().UTC().Truncate(time.Microsecond)
}

// CreateAccount creates an account on planID billed in currency. Its billing
// anniversary is the creation time.
func (s *Service) CreateAccount(ctx context.Context, name, planID string, currency Currency) (Account, error) {
	name = strings.TrimSpace(name)
	if err := CheckName(name); err != nil {
		return Account{}, err
	}
	if _, ok := PlanByID(planID); !ok {
		return Account{}, problem.New(problem.InvalidInput, fmt.Sprintf("unknown plan %q", planID)).WithField("plan")
	}
	if !currency.Valid() {
		return Account{}, problem.New(problem.InvalidInput, `currency must be one of "usd", "eur", "gbp"`).WithField("currency")
	}
	now := s.timestamp()
	// The first period's end is when the closing job first looks at it.
	p, _ := PlanByID(planID)
	_, end := quota.Period(p.CalendarMonth, now, now)
	a := Account{
		ID:              uuid.NewString(),
		Name:            name,
		PlanID:          planID,
		BillingCurrency: currency,
		BillingAnchor:   now,
		CreatedAt:       now,
		NextCloseAt:     &end,
	}
	if err := s.store.CreateAccount(ctx, a); err != nil {
		return Account{}, fmt.Errorf("create account: %w", err)
	}
	s.log.InfoContext(ctx, "account created", "account_id", a.ID, "plan", a.PlanID, "currency", string(a.BillingCurrency))
	return a, nil
}

// Account returns the account with id, or ErrNotFound.
func (s *Service) Account(ctx context.Context, id string) (Account, error) {
	return s.store.GetAccount(ctx, id)
}

// IssueParams describe a credential to issue.
type IssueParams struct {
	AccountID string
	Name      string
	Kind      string // KindAPIKey or KindAccessToken
	Surface   string // SurfaceConversion or SurfaceFinance
	Mode      string // ModeLive or ModeTest
	// Scopes asked for; empty means the surface's defaults.
	Scopes []string
	// Operator is set only by the admin command: it may grant usage:read.
	Operator bool
	// Finance credentials only, and required there.
	FinanceUserID string
	GrantID       string
	// Sandbox marks a finance sandbox issue (IssueSandboxCredential): a
	// user or grant that is not the account's is 404 not-found, as every
	// sandbox route answers another tenant's ids, not 400.
	Sandbox bool
}

// IssueCredential creates a credential and returns its secret. The secret is
// returned this once and never stored; the account ID, if unknown, answers
// ErrNotFound. Invalid parameters answer invalid-input problems, among them a
// finance user that is not the account's (finance_user_id) or a grant that
// is not the user's (grant_id). Finance credentials need a FinanceDirectory
// (ErrNoFinanceDirectory).
func (s *Service) IssueCredential(ctx context.Context, p IssueParams) (string, Credential, error) {
	p.Name = strings.TrimSpace(p.Name)
	if err := CheckName(p.Name); err != nil {
		return "", Credential{}, err
	}
	if p.Kind != KindAPIKey && p.Kind != KindAccessToken {
		return "", Credential{}, problem.New(problem.InvalidInput, `kind must be "ak" or "at"`).WithField("kind")
	}
	if p.Mode != ModeLive && p.Mode != ModeTest {
		return "", Credential{}, problem.New(problem.InvalidInput, `mode must be "live" or "test"`).WithField("mode")
	}
	switch p.Surface {
	case SurfaceFinance:
		// A finance credential always speaks for one user under one grant.
		if p.FinanceUserID == "" {
			return "", Credential{}, problem.New(problem.InvalidInput, "a finance credential needs a finance user").WithField("finance_user_id")
		}
		if p.GrantID == "" {
			return "", Credential{}, problem.New(problem.InvalidInput, "a finance credential needs a grant").WithField("grant_id")
		}
	case SurfaceConversion:
		if p.FinanceUserID != "" {
			return "", Credential{}, problem.New(problem.InvalidInput, "only finance credentials have a finance user").WithField("finance_user_id")
		}
		if p.GrantID != "" {
			return "", Credential{}, problem.New(problem.InvalidInput, "only finance credentials have a grant").WithField("grant_id")
		}
	default:
		return "", Credential{}, problem.New(problem.InvalidInput, `surface must be "conversion" or "finance"`).WithField("surface")
	}
	scopes := p.Scopes
	if len(scopes) == 0 {
		scopes = DefaultScopes(p.Surface)
	}
	scopes, err := ValidateScopes(p.Surface, scopes, p.Operator)
	if err != nil {
		return "", Credential{}, err
	}
	if _, err := s.store.GetAccount(ctx, p.AccountID); err != nil {
		return "", Credential{}, fmt.Errorf("account %q: %w", p.AccountID, err)
	}
	// The user must be the account's and the grant the user's: checked here,
	// at issue, and again by the finance service on every use.
	if p.Surface == SurfaceFinance {
		if err := s.checkFinance(ctx, p); err != nil {
			return "", Credential{}, err
		}
	}

	secret := newSecret(p.Kind, p.Mode)
	c := Credential{
		ID:            uuid.NewString(),
		AccountID:     p.AccountID,
		Name:          p.Name,
		Kind:          p.Kind,
		Surface:       p.Surface,
		Mode:          p.Mode,
		Scopes:        scopes,
		SecretHash:    HashSecret(secret),
		Prefix:        secret[:displayPrefix],
		FinanceUserID: p.FinanceUserID,
		GrantID:       p.GrantID,
		CreatedAt:     s.timestamp(),
	}
	if err := s.store.CreateCredential(ctx, c); err != nil {
		return "", Credential{}, fmt.Errorf("create credential: %w", err)
	}
	s.log.InfoContext(ctx, "credential issued", "credential_id", c.ID, "account_id", c.AccountID,
		"kind", c.Kind, "surface", c.Surface, "mode", c.Mode, "scopes", c.Scopes, "operator", p.Operator)
	return secret, c, nil
}

// Resolve returns the live credential for a presented secret. Unknown,
// malformed and revoked secrets all answer ErrNotFound, so a caller cannot
// learn whether a key ever existed. Other errors mean the store failed.
func (s *Service) Resolve(ctx context.Context, secret string) (Credential, error) {
	if _, _, ok := ParseSecret(secret); !ok {
		return Credential{}, ErrNotFound
	}
	// The lookup is by hash, so timing reveals at most something about the
	// hash, never about the secret.
	c, err := s.store.CredentialByHash(ctx, HashSecret(secret))
	switch {
	case errors.Is(err, ErrNotFound):
		return Credential{}, ErrNotFound
	case err != nil:
		s.log.ErrorContext(ctx, "resolve credential", "err", err)
		return Credential{}, fmt.Errorf("resolve credential: %w", err)
	case c.Revoked():
		return Credential{}, ErrNotFound
	case c.ExpiresAt != nil && !s.now().Before(*c.ExpiresAt):
		// An expired access token is refused exactly as a revoked one.
		return Credential{}, ErrNotFound
	}
	s.touch(ctx, &c)
	return c, nil
}

// LastUsedGranularity is how stale a credential's LastUsedAt may get: the
// gateway resolves a credential at most every few seconds (its cache), and
// Resolve writes the time only when the stored one is older than this, so a
// busy key costs one UPDATE a minute, not one per request.
const LastUsedGranularity = time.Minute

// touch records now as c's last use when the stored time is older than
// LastUsedGranularity. It is best effort: a failed write is logged and the
// request goes on, since authenticating must not depend on it.
func (s *Service) touch(ctx context.Context, c *Credential) {
	now := s.now().UTC().Truncate(time.Second) // the listing shows seconds
	if c.LastUsedAt != nil && now.Sub(*c.LastUsedAt) < LastUsedGranularity {
		return
	}
	if err := s.store.TouchCredential(ctx, c.ID, now); err != nil {
		s.log.WarnContext(ctx, "record credential use", "credential_id", c.ID, "err", err)
		return
	}
	c.LastUsedAt = &now
}

// Revoke ends a credential's access from now on. Revoking a revoked credential
// is a no-op; an unknown ID answers ErrNotFound.
func (s *Service) Revoke(ctx context.Context, credentialID string) error {
	if err := s.store.RevokeCredential(ctx, credentialID, s.timestamp()); err != nil {
		return fmt.Errorf("revoke credential %q: %w", credentialID, err)
	}
	s.log.InfoContext(ctx, "credential revoked", "credential_id", credentialID)
	return nil
}

// ListCredentials returns the account's credentials, revoked ones included,
// oldest first.
func (s *Service) ListCredentials(ctx context.Context, accountID string) ([]Credential, error) {
	return s.store.ListCredentials(ctx, accountID)
}

// CheckName checks an account, credential or person's name: required and
// at most 200 characters.
func CheckName(name string) error {
	switch {
	case name == "":
		return problem.New(problem.InvalidInput, "name is required").WithField("name")
	case utf8.RuneCountInString(name) > MaxNameLen:
		return problem.New(problem.InvalidInput, fmt.Sprintf("name is longer than %d characters", MaxNameLen)).WithField("name")
	}
	return nil
}

// AccessTokenParams describe an OAuth access token (identity's test OAuth
// clients): a test-mode conversion access token that expires.
type AccessTokenParams struct {
	AccountID string
	Name      string
	Scopes    []string // already checked against the client's
	TTL       time.Duration
	// OAuthClientID is the OAuth client it is issued to; revoking the
	// client revokes it.
	OAuthClientID string
}

// IssueAccessToken creates an OAuth access token and returns its secret,
// this once. ErrNotFound for an unknown account.
func (s *Service) IssueAccessToken(ctx context.Context, p AccessTokenParams) (string, Credential, error) {
	secret := newSecret(KindAccessToken, ModeTest)
	at := s.timestamp()
	exp := at.Add(p.TTL)
	c := Credential{ID: uuid.NewString(), AccountID: p.AccountID, Name: p.Name, Kind: KindAccessToken,
		Surface: SurfaceConversion, Mode: ModeTest, Scopes: p.Scopes, SecretHash: HashSecret(secret), Prefix: secret[:displayPrefix],
		CreatedAt: at, ExpiresAt: &exp, OAuthClientID: p.OAuthClientID}
	if err := s.store.CreateCredential(ctx, c); err != nil {
		return "", Credential{}, fmt.Errorf("issue access token: %w", err)
	}
	return secret, c, nil
}
