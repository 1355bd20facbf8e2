package identity_test

import (
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/ledgerlane/platform/services/metering"
	"github.com/ledgerlane/platform/services/metering/identity"
	"github.com/ledgerlane/platform/services/metering/notify"
)

// TestHousekeep: what has expired by the service clock goes, what is live
// stays, and a run with nothing expired deletes nothing.
func TestHousekeep(t *testing.T) {
	e := newPortal(t)
	ctx := t.Context()
	a, err := e.meter.CreateAccount(ctx, "A", metering.PlanFree, metering.USD)
	if err != nil {
		t.Fatal(err)
	}
	u := identity.PortalUser{ID: uuid.NewString(), AccountID: a.ID, Email: "ann@example.com", Name: "Ann", CreatedAt: e.now()}
	if err := e.store.AddPortalUser(ctx, u); err != nil {
		t.Fatal(err)
	}
	session := func(hash string, ttl time.Duration) {
		if err := e.store.CreateSession(ctx, identity.PortalSession{TokenHash: hash, UserID: u.ID, AccountID: a.ID,
			CSRFToken: "c", CreatedAt: e.now(), ExpiresAt: e.now().Add(ttl)}); err != nil {
			t.Fatal(err)
		}
	}
	session("short", time.Hour)
	session("long", identity.DefaultSessionTTL)
	mail := notify.OutboxMail{ID: uuid.NewString(), AccountID: a.ID, Milestone: notify.MilestonePasswordReset,
		PeriodStart: e.now(), To: u.Email, Subject: "reset", Body: "link", CreatedAt: e.now(), NextAttemptAt: e.now()}
	if err := e.store.CreatePortalToken(ctx, identity.PortalToken{TokenHash: "reset", Purpose: identity.TokenPasswordReset,
		UserID: u.ID, CreatedAt: e.now(), ExpiresAt: e.now().Add(30 * time.Minute)}, mail); err != nil {
		t.Fatal(err)
	}
	secret, c, err := e.svc.CreateOAuthClient(ctx, a.ID, "ci", []string{"convert"})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := e.svc.ClientCredentialsToken(ctx, identity.TokenRequest{GrantType: "client_credentials", ClientID: c.ClientID, ClientSecret: secret})
	if err != nil {
		t.Fatal(err)
	}

	if got, err := e.svc.Housekeep(ctx); err != nil || got != (identity.Housekept{}) {
		t.Fatalf("nothing expired yet: %+v, %v", got, err)
	}
	e.advance(identity.AccessTokenTTL + time.Minute) // past the token, the link and the short session
	got, err := e.svc.Housekeep(ctx)
	if want := (identity.Housekept{Sessions: 1, PortalTokens: 1, AccessTokens: 1}); err != nil || got != want {
		t.Fatalf("Housekeep = %+v, %v; want %+v", got, err, want)
	}
	if _, err := e.store.SessionByHash(ctx, "short"); !errors.Is(err, metering.ErrNotFound) {
		t.Errorf("the expired session is still there: %v", err)
	}
	if _, err := e.store.SessionByHash(ctx, "long"); err != nil {
		t.Errorf("the live session was deleted: %v", err)
	}
	if _, err := e.store.PortalTokenByHash(ctx, "reset"); !errors.Is(err, metering.ErrNotFound) {
		t.Errorf("the expired reset link is still there: %v", err)
	}
	if _, err := e.store.CredentialByHash(ctx, tok.Credential.SecretHash); !errors.Is(err, metering.ErrNotFound) {
		t.Errorf("the expired access token is still there: %v", err)
	}
	if _, err := e.store.OAuthClientByClientID(ctx, c.ClientID); err != nil {
		t.Errorf("the client went with its token: %v", err)
	}
}
