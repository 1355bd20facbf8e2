package identity

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/services/metering"
)

// Test OAuth clients (docs/portal.md, "Test OAuth clients"): an account
// creates them in the portal; POST /v1/oauth/token exchanges a client's id
// and secret for an at_test_ access token by the client-credentials grant
// (RFC 6749 §4.4). The token is an ordinary conversion credential of test
// mode with an expiry, so the gateway authenticates it exactly as any key.

// OAuthClient is a test-mode OAuth client of an account. Only the SHA-256 of
// its secret is stored, like a credential's.
type OAuthClient struct {
	ID        string // UUID, for the portal's revoke form
	AccountID string
	Name      string
	// ClientID is the public identifier, "oc_test_…".
	ClientID string
	// SecretHash is the lowercase hex SHA-256 of the client secret.
	SecretHash string
	// Scopes are the most a token of this client may carry.
	Scopes    []string
	CreatedAt time.Time
	RevokedAt *time.Time
}

// Revoked reports whether the client has been revoked.
func (c OAuthClient) Revoked() bool { return c.RevokedAt != nil }

// OAuthStore is the part of the Store behind OAuth clients.
type OAuthStore interface {
	// CreateOAuthClient stores c; metering.ErrNotFound for an unknown account,
	// metering.ErrConflict when its ID, ClientID or SecretHash exists.
	CreateOAuthClient(ctx context.Context, c OAuthClient) error
	// OAuthClientByClientID returns a client, revoked ones too; metering.ErrNotFound.
	OAuthClientByClientID(ctx context.Context, clientID string) (OAuthClient, error)
	// ListOAuthClients returns the account's clients oldest first.
	ListOAuthClients(ctx context.Context, accountID string) ([]OAuthClient, error)
	// RevokeOAuthClient records the revocation of the account's client id
	// and of every credential issued to it, in one transaction (the first
	// time is kept when revoked twice); metering.ErrNotFound when the account has no
	// such client.
	RevokeOAuthClient(ctx context.Context, accountID, id string, at time.Time) error
	// DeleteExpiredTokens deletes the credentials issued to client id
	// (OAuthClient.ID) whose ExpiresAt is at or before before (refused from
	// then on), and says how many.
	DeleteExpiredTokens(ctx context.Context, id string, before time.Time) (int, error)
}

// OAuth rules.
const (
	// AccessTokenTTL is how long a client-credentials access token works.
	AccessTokenTTL = time.Hour
	// ClientAuthFailures failed authentications of one client id within
	// ClientAuthWindow refuse further attempts for it until the window
	// has passed.
	ClientAuthFailures = 10
	ClientAuthWindow   = 15 * time.Minute
	// GrantClientCredentials is the only grant type the token route takes.
	GrantClientCredentials = "client_credentials"
	clientIDPrefix         = "oc_test_"
	clientSecretPrefix     = "cs_test_"
)

// OAuth error codes of RFC 6749 §5.2.
const (
	OAuthInvalidRequest       = "invalid_request"
	OAuthInvalidClient        = "invalid_client"
	OAuthInvalidGrant         = "invalid_grant"
	OAuthUnauthorizedClient   = "unauthorized_client"
	OAuthUnsupportedGrantType = "unsupported_grant_type"
	OAuthInvalidScope         = "invalid_scope"
)

// OAuthError is a refusal the token route answers in RFC 6749's own JSON
// shape (not a problem document: the OAuth spec fixes the token endpoint's
// error format, docs/errors.md).
type OAuthError struct {
	Code        string
	Description string
}

func (e *OAuthError) Error() string { return "oauth: " + e.Code + ": " + e.Description }

func oauthErr(code, desc string) *OAuthError { return &OAuthError{Code: code, Description: desc} }

// errClient is the one answer to an unknown client, a wrong secret and a
// revoked client, so none can be told from the others.
var errClient = oauthErr(OAuthInvalidClient, "client authentication failed")

// CreateOAuthClient creates a test-mode OAuth client for the account with at
// most scopes (empty: the default conversion scopes; the reserved ones are
// refused as for keys) and returns its secret, shown this once.
func (s *Service) CreateOAuthClient(ctx context.Context, accountID, name string, scopes []string) (string, OAuthClient, error) {
	name = strings.TrimSpace(name)
	if err := metering.CheckName(name); err != nil {
		return "", OAuthClient{}, err
	}
	if len(scopes) == 0 {
		scopes = metering.DefaultConversionScopes()
	}
	scopes, err := metering.ValidateScopes(metering.SurfaceConversion, scopes, false)
	if err != nil {
		return "", OAuthClient{}, err
	}
	id := make([]byte, 16)
	_, _ = rand.Read(id)
	secret := clientSecretPrefix + newToken()
	c := OAuthClient{ID: uuid.NewString(), AccountID: accountID, Name: name,
		ClientID: clientIDPrefix + metering.TokenEncoding.EncodeToString(id), SecretHash: metering.HashSecret(secret),
		Scopes: scopes, CreatedAt: s.timestamp()}
	if err := s.store.CreateOAuthClient(ctx, c); err != nil {
		return "", OAuthClient{}, fmt.Errorf("create oauth client: %w", err)
	}
	s.log.InfoContext(ctx, "oauth client created", "account_id", accountID, "oauth_client_id", c.ID, "scopes", c.Scopes)
	return secret, c, nil
}

// OAuthClients returns the account's clients, revoked ones too, oldest first.
func (s *Service) OAuthClients(ctx context.Context, accountID string) ([]OAuthClient, error) {
	return s.store.ListOAuthClients(ctx, accountID)
}

// RevokeOAuthClient revokes the account's client id and every access token
// issued to it; another account's client is not found, as an unknown one.
func (s *Service) RevokeOAuthClient(ctx context.Context, accountID, id string) error {
	err := s.store.RevokeOAuthClient(ctx, accountID, id, s.timestamp())
	if errors.Is(err, metering.ErrNotFound) {
		return problem.New(problem.NotFound, "no such OAuth client")
	}
	if err != nil {
		return fmt.Errorf("revoke oauth client: %w", err)
	}
	s.log.InfoContext(ctx, "oauth client revoked", "account_id", accountID, "oauth_client_id", id)
	return nil
}

// TokenRequest is a token-route request, the client's credentials already
// taken from HTTP Basic or the form by the gateway.
type TokenRequest struct {
	GrantType    string
	ClientID     string
	ClientSecret string
	// Scope is RFC 6749's space-separated list; empty: every scope of the
	// client.
	Scope string
}

// IssuedToken is a granted access token.
type IssuedToken struct {
	AccessToken string
	ExpiresIn   time.Duration
	Scopes      []string
	Credential  metering.Credential
}

// ClientCredentialsToken authenticates a client and issues an access token
// (RFC 6749 §4.4). Refusals are *OAuthError; too many failed client
// authentications answer a rate-limited problem; other errors mean the
// store failed.
func (s *Service) ClientCredentialsToken(ctx context.Context, req TokenRequest) (IssuedToken, error) {
	// The client is authenticated first: an unauthenticated caller learns
	// nothing about grants or scopes.
	if req.ClientID == "" || req.ClientSecret == "" {
		return IssuedToken{}, oauthErr(OAuthInvalidClient, "client_id and client_secret are required (HTTP Basic or form fields)")
	}
	key := req.ClientID
	if len(key) > 100 {
		key = key[:100] // bound the throttle's memory per key
	}
	now := s.now()
	if wait := s.clientAuths.Blocked(ctx, key, now); wait > 0 {
		secs := int(math.Ceil(wait.Seconds()))
		return IssuedToken{}, problem.New(problem.RateLimited,
			fmt.Sprintf("too many failed authentications of this client; try again in %d seconds", secs)).WithRetryAfter(secs)
	}
	c, err := s.store.OAuthClientByClientID(ctx, req.ClientID)
	switch {
	case errors.Is(err, metering.ErrNotFound):
		c = OAuthClient{}
	case err != nil:
		return IssuedToken{}, fmt.Errorf("oauth client: %w", err)
	}
	// Compared in constant time against a hash that exists even for an
	// unknown client, so timing tells nothing either.
	want := c.SecretHash
	if want == "" {
		want = metering.HashSecret(clientSecretPrefix)
	}
	ok := subtle.ConstantTimeCompare([]byte(metering.HashSecret(req.ClientSecret)), []byte(want)) == 1
	if !ok || c.ID == "" || c.Revoked() {
		s.clientAuths.Fail(ctx, key, now)
		s.log.InfoContext(ctx, "oauth client authentication refused")
		return IssuedToken{}, errClient
	}
	s.clientAuths.Clear(ctx, key)

	switch req.GrantType {
	case "":
		return IssuedToken{}, oauthErr(OAuthInvalidRequest, "grant_type is required")
	case GrantClientCredentials:
	case "authorization_code", "refresh_token", "password", "urn:ietf:params:oauth:grant-type:device_code":
		return IssuedToken{}, oauthErr(OAuthUnauthorizedClient, "this client may use the client_credentials grant only")
	default:
		return IssuedToken{}, oauthErr(OAuthUnsupportedGrantType, "grant_type must be client_credentials")
	}
	scopes, oerr := tokenScopes(req.Scope, c.Scopes)
	if oerr != nil {
		return IssuedToken{}, oerr
	}

	secret, cred, err := s.accounts.IssueAccessToken(ctx, metering.AccessTokenParams{AccountID: c.AccountID,
		Name: "OAuth client " + c.Name, Scopes: scopes, TTL: AccessTokenTTL, OAuthClientID: c.ID})
	if err != nil {
		return IssuedToken{}, err
	}
	at := cred.CreatedAt
	s.log.InfoContext(ctx, "oauth access token issued", "account_id", c.AccountID, "oauth_client_id", c.ID,
		"credential_id", cred.ID, "scopes", scopes)
	// Each grant clears the client's expired tokens (refused anyway), so a
	// client's rows are bounded by the tokens of the last AccessTokenTTL. A
	// failure only leaves them for the next grant.
	if _, err := s.store.DeleteExpiredTokens(ctx, c.ID, at); err != nil {
		s.log.WarnContext(ctx, "delete expired oauth tokens", "oauth_client_id", c.ID, "err", err)
	}
	return IssuedToken{AccessToken: secret, ExpiresIn: AccessTokenTTL, Scopes: scopes, Credential: cred}, nil
}

// tokenScopes is the requested scope list checked against the client's:
// empty asks for all of them; any scope the client lacks is invalid_scope.
func tokenScopes(requested string, allowed []string) ([]string, *OAuthError) {
	fields := strings.FieldsFunc(requested, func(r rune) bool { return r == ' ' })
	if len(fields) == 0 {
		return slices.Clone(allowed), nil
	}
	var out []string
	for _, f := range fields {
		// RFC 6749 §3.3: scope tokens are %x21 / %x23-5B / %x5D-7E.
		for _, r := range f {
			if r < 0x21 || r == 0x22 || r == 0x5c || r > 0x7e {
				return nil, oauthErr(OAuthInvalidScope, "scope holds a character RFC 6749 does not allow")
			}
		}
		if !slices.Contains(allowed, f) {
			return nil, oauthErr(OAuthInvalidScope, fmt.Sprintf("scope %q is not granted to this client", f))
		}
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out, nil
}
