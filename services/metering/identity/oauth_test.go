package identity_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/pkg/rpc"
	"github.com/ledgerlane/platform/services/metering"
	"github.com/ledgerlane/platform/services/metering/identity"
	"github.com/ledgerlane/platform/services/metering/memory"
)

func oauthCode(t *testing.T, err error) string {
	t.Helper()
	var oe *identity.OAuthError
	if !errors.As(err, &oe) {
		t.Fatalf("error %v is not an OAuth error", err)
	}
	return oe.Code
}

func TestOAuthClientCredentials(t *testing.T) {
	e := newPortal(t)
	ctx := t.Context()
	a, err := e.meter.CreateAccount(ctx, "A", metering.PlanFree, metering.USD)
	if err != nil {
		t.Fatal(err)
	}
	secret, c, err := e.svc.CreateOAuthClient(ctx, a.ID, "ci", []string{"convert", "formats:read", "webhooks:manage"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(c.ClientID, "oc_test_") || !strings.HasPrefix(secret, "cs_test_") || c.SecretHash != metering.HashSecret(secret) {
		t.Fatalf("client %+v, secret %q", c, secret)
	}
	ok := identity.TokenRequest{GrantType: "client_credentials", ClientID: c.ClientID, ClientSecret: secret}

	for _, tc := range []struct {
		name string
		req  func(identity.TokenRequest) identity.TokenRequest
		code string
	}{
		{"no client id", func(r identity.TokenRequest) identity.TokenRequest { r.ClientID = ""; return r }, identity.OAuthInvalidClient},
		{"no secret", func(r identity.TokenRequest) identity.TokenRequest { r.ClientSecret = ""; return r }, identity.OAuthInvalidClient},
		{"wrong secret", func(r identity.TokenRequest) identity.TokenRequest { r.ClientSecret += "x"; return r }, identity.OAuthInvalidClient},
		{"unknown client", func(r identity.TokenRequest) identity.TokenRequest { r.ClientID = "oc_test_nope"; return r }, identity.OAuthInvalidClient},
		{"no grant type", func(r identity.TokenRequest) identity.TokenRequest { r.GrantType = ""; return r }, identity.OAuthInvalidRequest},
		{"password grant", func(r identity.TokenRequest) identity.TokenRequest { r.GrantType = "password"; return r }, identity.OAuthUnauthorizedClient},
		{"unknown grant", func(r identity.TokenRequest) identity.TokenRequest { r.GrantType = "magic"; return r }, identity.OAuthUnsupportedGrantType},
		{"scope not granted", func(r identity.TokenRequest) identity.TokenRequest { r.Scope = "convert enrich"; return r }, identity.OAuthInvalidScope},
		{"reserved scope", func(r identity.TokenRequest) identity.TokenRequest { r.Scope = "usage:read"; return r }, identity.OAuthInvalidScope},
		{"bad scope character", func(r identity.TokenRequest) identity.TokenRequest { r.Scope = `con"vert`; return r }, identity.OAuthInvalidScope},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.svc.ClientCredentialsToken(ctx, tc.req(ok))
			if got := oauthCode(t, err); got != tc.code {
				t.Fatalf("code %q, want %q", got, tc.code)
			}
		})
	}

	// All of the client's scopes, or the subset asked for.
	tok, err := e.svc.ClientCredentialsToken(ctx, ok)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(tok.AccessToken, "at_test_") || tok.ExpiresIn != time.Hour || !slices.Equal(tok.Scopes, c.Scopes) {
		t.Fatalf("token %+v", tok)
	}
	sub := ok
	sub.Scope = "formats:read  convert formats:read"
	tok2, err := e.svc.ClientCredentialsToken(ctx, sub)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(tok2.Scopes, []string{"formats:read", "convert"}) {
		t.Fatalf("scopes %v", tok2.Scopes)
	}
	cred, err := e.meter.Resolve(ctx, tok.AccessToken)
	if err != nil {
		t.Fatal(err)
	}
	if cred.AccountID != a.ID || cred.Mode != metering.ModeTest || cred.Surface != metering.SurfaceConversion || cred.Kind != metering.KindAccessToken {
		t.Fatalf("credential %+v", cred)
	}
	// Tokens are not keys: the keys page does not list them.
	if keys, _ := e.svc.PortalKeys(ctx, a.ID); len(keys) != 0 {
		t.Fatalf("keys page lists %d tokens", len(keys))
	}

	// Expiry: refused from ExpiresAt on, like a revoked credential.
	e.advance(time.Hour - time.Second)
	if _, err := e.meter.Resolve(ctx, tok.AccessToken); err != nil {
		t.Fatalf("a token is refused before its expiry: %v", err)
	}
	e.advance(time.Second)
	if _, err := e.meter.Resolve(ctx, tok.AccessToken); !errors.Is(err, metering.ErrNotFound) {
		t.Fatalf("an expired token resolves: %v", err)
	}

	// Revoking the client revokes its live tokens and its secret; another
	// account cannot revoke it.
	tok3, err := e.svc.ClientCredentialsToken(ctx, ok)
	if err != nil {
		t.Fatal(err)
	}
	// That grant deleted the client's expired tokens.
	if _, err := e.store.CredentialByHash(ctx, metering.HashSecret(tok.AccessToken)); !errors.Is(err, metering.ErrNotFound) {
		t.Fatalf("an expired token is still stored: %v", err)
	}
	b, _ := e.meter.CreateAccount(ctx, "B", metering.PlanFree, metering.USD)
	if err := e.svc.RevokeOAuthClient(ctx, b.ID, c.ID); rpc.Problem(err).Type != problem.NotFound {
		t.Fatalf("another account revoked the client: %v", err)
	}
	if err := e.svc.RevokeOAuthClient(ctx, a.ID, c.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.meter.Resolve(ctx, tok3.AccessToken); !errors.Is(err, metering.ErrNotFound) {
		t.Fatalf("a revoked client's token resolves: %v", err)
	}
	if _, err := e.svc.ClientCredentialsToken(ctx, ok); oauthCode(t, err) != identity.OAuthInvalidClient {
		t.Fatalf("a revoked client gets a token: %v", err)
	}
}

func TestOAuthClientRules(t *testing.T) {
	e := newPortal(t)
	ctx := t.Context()
	a, _ := e.meter.CreateAccount(ctx, "A", metering.PlanFree, metering.USD)
	for _, tc := range []struct {
		name, field string
		scopes      []string
	}{
		{"", "name", nil},
		{"ci", "scopes", []string{"keys:manage"}},
		{"ci", "scopes", []string{"usage:read"}},
		{"ci", "scopes", []string{"transactions:read"}},
	} {
		_, _, err := e.svc.CreateOAuthClient(ctx, a.ID, tc.name, tc.scopes)
		if p := rpc.Problem(err); p.Type != problem.InvalidInput || p.Field != tc.field {
			t.Fatalf("CreateOAuthClient(%q, %v) = %v, want invalid input on %s", tc.name, tc.scopes, err, tc.field)
		}
	}
	_, c, err := e.svc.CreateOAuthClient(ctx, a.ID, "defaults", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.Scopes, metering.DefaultConversionScopes()) {
		t.Fatalf("default scopes %v", c.Scopes)
	}
}

func TestOAuthClientThrottle(t *testing.T) {
	e := newPortal(t)
	ctx := t.Context()
	a, _ := e.meter.CreateAccount(ctx, "A", metering.PlanFree, metering.USD)
	secret, c, err := e.svc.CreateOAuthClient(ctx, a.ID, "ci", nil)
	if err != nil {
		t.Fatal(err)
	}
	bad := identity.TokenRequest{GrantType: "client_credentials", ClientID: c.ClientID, ClientSecret: "wrong"}
	for range identity.ClientAuthFailures {
		if _, err := e.svc.ClientCredentialsToken(ctx, bad); oauthCode(t, err) != identity.OAuthInvalidClient {
			t.Fatal(err)
		}
	}
	good := bad
	good.ClientSecret = secret
	// Locked now, even with the right secret: a guesser cannot tell.
	_, err = e.svc.ClientCredentialsToken(ctx, good)
	if p := rpc.Problem(err); p.Type != problem.RateLimited || p.RetryAfter <= 0 {
		t.Fatalf("after %d failures: %v", identity.ClientAuthFailures, err)
	}
	e.advance(identity.ClientAuthWindow)
	if _, err := e.svc.ClientCredentialsToken(ctx, good); err != nil {
		t.Fatalf("after the window: %v", err)
	}
}

// FuzzTokenScope: whatever scope string is asked for, a token carries a
// subset of the client's scopes without duplicates, or the answer is
// invalid_scope.
func FuzzTokenScope(f *testing.F) {
	for _, s := range []string{"", "convert", "convert  formats:read convert", "enrich", "usage:read", "con\"vert", "\t", "é"} {
		f.Add(s)
	}
	store := memory.New()
	meter := metering.NewService(metering.Config{Store: store})
	svc := identity.NewService(identity.Config{Store: store, Accounts: meter})
	ctx := context.Background()
	a, _ := meter.CreateAccount(ctx, "A", metering.PlanFree, metering.USD)
	secret, c, err := svc.CreateOAuthClient(ctx, a.ID, "ci", []string{"convert", "formats:read"})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, scope string) {
		tok, err := svc.ClientCredentialsToken(ctx, identity.TokenRequest{GrantType: "client_credentials",
			ClientID: c.ClientID, ClientSecret: secret, Scope: scope})
		if err != nil {
			if code := oauthCode(t, err); code != identity.OAuthInvalidScope {
				t.Fatalf("scope %q: %s", scope, code)
			}
			return
		}
		seen := map[string]bool{}
		for _, s := range tok.Scopes {
			if !slices.Contains(c.Scopes, s) || seen[s] {
				t.Fatalf("scope %q granted %v", scope, tok.Scopes)
			}
			seen[s] = true
		}
	})
}

// BenchmarkClientCredentialsToken: one grant (client lookup, secret hash,
// token credential stored) on the memory store.
func BenchmarkClientCredentialsToken(b *testing.B) {
	store := memory.New()
	meter := metering.NewService(metering.Config{Store: store})
	svc := identity.NewService(identity.Config{Store: store, Accounts: meter})
	ctx := context.Background()
	a, _ := meter.CreateAccount(ctx, "A", metering.PlanFree, metering.USD)
	secret, c, err := svc.CreateOAuthClient(ctx, a.ID, "ci", nil)
	if err != nil {
		b.Fatal(err)
	}
	req := identity.TokenRequest{GrantType: "client_credentials", ClientID: c.ClientID, ClientSecret: secret}
	for b.Loop() {
		if _, err := svc.ClientCredentialsToken(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}
