package conformance

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/ledgerlane/platform/services/metering"
	"github.com/ledgerlane/platform/services/metering/identity"
	"github.com/ledgerlane/platform/services/metering/notify"
)

func runOAuth(t *testing.T, newStore func(t *testing.T) Store) {
	t.Run("OAuthClients", func(t *testing.T) { testOAuthClients(t, newStore) })
	t.Run("RevokeOAuthClient", func(t *testing.T) { testRevokeOAuthClient(t, newStore) })
	t.Run("PasswordReset", func(t *testing.T) { testPasswordReset(t, newStore) })
	t.Run("EmailVerification", func(t *testing.T) { testEmailVerification(t, newStore) })
}

func newClient(accountID, name string, at time.Time) identity.OAuthClient {
	return identity.OAuthClient{ID: uuid.NewString(), AccountID: accountID, Name: name, ClientID: "oc_test_" + uuid.NewString(),
		SecretHash: metering.HashSecret(uuid.NewString()), Scopes: []string{"convert", "formats:read"}, CreatedAt: at}
}

func testOAuthClients(t *testing.T, newStore func(t *testing.T) Store) {
	ctx := t.Context()
	s := newStore(t)
	a, b := newAccount("a"), newAccount("b")
	mustCreateAccount(t, s, a)
	mustCreateAccount(t, s, b)
	c1, c2 := newClient(a.ID, "one", t0.Add(time.Second)), newClient(a.ID, "two", t0)
	cb := newClient(b.ID, "b", t0)
	for _, c := range []identity.OAuthClient{c1, c2, cb} {
		if err := s.CreateOAuthClient(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	for name, c := range map[string]identity.OAuthClient{
		"same id":          func() identity.OAuthClient { d := newClient(a.ID, "x", t0); d.ID = c1.ID; return d }(),
		"same client id":   func() identity.OAuthClient { d := newClient(a.ID, "x", t0); d.ClientID = c1.ClientID; return d }(),
		"same secret hash": func() identity.OAuthClient { d := newClient(a.ID, "x", t0); d.SecretHash = c1.SecretHash; return d }(),
	} {
		t.Run(name, func(t *testing.T) { wantErr(t, s.CreateOAuthClient(ctx, c), metering.ErrConflict) })
	}
	wantErr(t, s.CreateOAuthClient(ctx, newClient(uuid.NewString(), "x", t0)), metering.ErrNotFound)
	wantErr(t, s.CreateOAuthClient(ctx, newClient("not-a-uuid", "x", t0)), metering.ErrNotFound)

	got, err := s.OAuthClientByClientID(ctx, c1.ClientID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(c1, got); diff != "" {
		t.Fatalf("OAuthClientByClientID (-want +got):\n%s", diff)
	}
	_, err = s.OAuthClientByClientID(ctx, "oc_test_unknown")
	wantErr(t, err, metering.ErrNotFound)

	list, err := s.ListOAuthClients(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]identity.OAuthClient{c2, c1}, list); diff != "" {
		t.Fatalf("ListOAuthClients (-want +got):\n%s", diff)
	}
	for _, id := range []string{uuid.NewString(), "not-a-uuid"} {
		if list, err := s.ListOAuthClients(ctx, id); err != nil || len(list) != 0 {
			t.Fatalf("ListOAuthClients(%q) = %v, %v", id, list, err)
		}
	}
	// Values are copies.
	got.Scopes[0] = "changed"
	if again, _ := s.OAuthClientByClientID(ctx, c1.ClientID); again.Scopes[0] != "convert" {
		t.Fatal("a returned client shares memory with the store")
	}
}

func testRevokeOAuthClient(t *testing.T, newStore func(t *testing.T) Store) {
	ctx := t.Context()
	s := newStore(t)
	a, b := newAccount("a"), newAccount("b")
	mustCreateAccount(t, s, a)
	mustCreateAccount(t, s, b)
	c, other := newClient(a.ID, "c", t0), newClient(a.ID, "other", t0)
	for _, x := range []identity.OAuthClient{c, other} {
		if err := s.CreateOAuthClient(ctx, x); err != nil {
			t.Fatal(err)
		}
	}
	exp := t0.Add(time.Hour)
	token := func(clientID string) metering.Credential {
		cr := metering.Credential{ID: uuid.NewString(), AccountID: a.ID, Name: "token", Kind: metering.KindAccessToken,
			Surface: metering.SurfaceConversion, Mode: metering.ModeTest, Scopes: []string{"convert"},
			SecretHash: metering.HashSecret(uuid.NewString()), Prefix: "at_test_abcd", CreatedAt: t0,
			ExpiresAt: &exp, OAuthClientID: clientID}
		if err := s.CreateCredential(ctx, cr); err != nil {
			t.Fatal(err)
		}
		return cr
	}
	mine, theirs := token(c.ID), token(other.ID)
	got, err := s.CredentialByHash(ctx, mine.SecretHash)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(mine, got); diff != "" {
		t.Fatalf("a token reads back changed (-want +got):\n%s", diff)
	}

	// Another account cannot revoke it; unknown ids are not found.
	wantErr(t, s.RevokeOAuthClient(ctx, b.ID, c.ID, t0), metering.ErrNotFound)
	wantErr(t, s.RevokeOAuthClient(ctx, a.ID, uuid.NewString(), t0), metering.ErrNotFound)
	wantErr(t, s.RevokeOAuthClient(ctx, a.ID, "not-a-uuid", t0), metering.ErrNotFound)

	at := t0.Add(time.Minute)
	if err := s.RevokeOAuthClient(ctx, a.ID, c.ID, at); err != nil {
		t.Fatal(err)
	}
	if err := s.RevokeOAuthClient(ctx, a.ID, c.ID, at.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	rc, err := s.OAuthClientByClientID(ctx, c.ClientID)
	if err != nil {
		t.Fatal(err)
	}
	if rc.RevokedAt == nil || !rc.RevokedAt.Equal(at) {
		t.Fatalf("client revoked at %v, want %v (the first time)", rc.RevokedAt, at)
	}
	if cr, _ := s.CredentialByHash(ctx, mine.SecretHash); cr.RevokedAt == nil || !cr.RevokedAt.Equal(at) {
		t.Fatalf("the client's token revoked at %v, want %v", cr.RevokedAt, at)
	}
	if cr, _ := s.CredentialByHash(ctx, theirs.SecretHash); cr.RevokedAt != nil {
		t.Fatal("another client's token was revoked")
	}
	if oc, _ := s.OAuthClientByClientID(ctx, other.ClientID); oc.RevokedAt != nil {
		t.Fatal("another client was revoked")
	}

	// Expired tokens of one client are deleted; live ones and other
	// clients' stay.
	live := t0.Add(3 * time.Hour)
	fresh := token(c.ID)
	fresh.ExpiresAt = &live
	fresh.ID, fresh.SecretHash = uuid.NewString(), metering.HashSecret(uuid.NewString())
	if err := s.CreateCredential(ctx, fresh); err != nil {
		t.Fatal(err)
	}
	n, err := s.DeleteExpiredTokens(ctx, c.ID, t0.Add(2*time.Hour))
	if err != nil || n != 2 { // mine, and the extra one token() made above
		t.Fatalf("DeleteExpiredTokens = %d, %v; want 2", n, err)
	}
	_, err = s.CredentialByHash(ctx, mine.SecretHash)
	wantErr(t, err, metering.ErrNotFound)
	if _, err := s.CredentialByHash(ctx, fresh.SecretHash); err != nil {
		t.Fatal("a live token was deleted")
	}
	if _, err := s.CredentialByHash(ctx, theirs.SecretHash); err != nil {
		t.Fatal("another client's token was deleted")
	}
	if n, err := s.DeleteExpiredTokens(ctx, "not-a-uuid", t0); err != nil || n != 0 {
		t.Fatalf("malformed id: %d %v", n, err)
	}
}

func testPasswordReset(t *testing.T, newStore func(t *testing.T) Store) {
	ctx := t.Context()
	s := newStore(t)
	a := newAccount("a")
	mustCreateAccount(t, s, a)
	u := identity.PortalUser{ID: uuid.NewString(), AccountID: a.ID, Email: "ann@example.com", Name: "Ann", PasswordHash: "$argon2id$old", CreatedAt: t0}
	other := identity.PortalUser{ID: uuid.NewString(), AccountID: a.ID, Email: "bob@example.com", Name: "Bob", PasswordHash: "$argon2id$bob", CreatedAt: t0}
	for _, x := range []identity.PortalUser{u, other} {
		if err := s.AddPortalUser(ctx, x); err != nil {
			t.Fatal(err)
		}
	}
	sess := func(hash, user string) identity.PortalSession {
		ps := identity.PortalSession{TokenHash: hash, UserID: user, AccountID: a.ID, CSRFToken: "c", CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)}
		if err := s.CreateSession(ctx, ps); err != nil {
			t.Fatal(err)
		}
		return ps
	}
	s1, s2, sb := sess("s1", u.ID), sess("s2", u.ID), sess("sb", other.ID)
	mail := func() notify.OutboxMail {
		return notify.OutboxMail{ID: uuid.NewString(), AccountID: a.ID, Milestone: notify.MilestonePasswordReset, PeriodStart: t0,
			To: u.Email, Subject: "reset", Body: "link", CreatedAt: t0, NextAttemptAt: t0}
	}
	tk := identity.PortalToken{TokenHash: "reset-hash", Purpose: identity.TokenPasswordReset, UserID: u.ID, CreatedAt: t0, ExpiresAt: t0.Add(30 * time.Minute)}
	wantErr(t, s.CreatePortalToken(ctx, tk, mail()), nil)
	wantErr(t, s.CreatePortalToken(ctx, tk, mail()), metering.ErrConflict)
	ghost := tk
	ghost.TokenHash, ghost.UserID = "ghost", uuid.NewString()
	wantErr(t, s.CreatePortalToken(ctx, ghost, mail()), metering.ErrNotFound)
	if out, err := s.Outbox(ctx, a.ID); err != nil || len(out) != 1 || out[0].Milestone != notify.MilestonePasswordReset {
		t.Fatalf("outbox after a refused token: %+v %v", out, err)
	}
	got, err := s.PortalTokenByHash(ctx, tk.TokenHash)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(tk, got); diff != "" {
		t.Fatalf("PortalTokenByHash (-want +got):\n%s", diff)
	}
	_, err = s.PortalTokenByHash(ctx, "unknown")
	wantErr(t, err, metering.ErrNotFound)

	// An older link of the same user, and one of another user: the reset
	// ends the first, not the second.
	older := tk
	older.TokenHash, older.CreatedAt = "reset-hash-older", t0.Add(-time.Minute)
	wantErr(t, s.CreatePortalToken(ctx, older, mail()), nil)
	others := tk
	others.TokenHash, others.UserID = "reset-hash-other-user", other.ID
	wantErr(t, s.CreatePortalToken(ctx, others, mail()), nil)

	at := t0.Add(time.Minute)
	wantErr(t, s.ResetPassword(ctx, "unknown", "$argon2id$new", at), metering.ErrNotFound)
	wantErr(t, s.ResetPassword(ctx, tk.TokenHash, "$argon2id$new", at), nil)
	// Once only, and the user's other links died with it.
	wantErr(t, s.ResetPassword(ctx, tk.TokenHash, "$argon2id$newer", at), metering.ErrNotFound)
	wantErr(t, s.ResetPassword(ctx, older.TokenHash, "$argon2id$newer", at), metering.ErrNotFound)
	if o, _ := s.PortalTokenByHash(ctx, others.TokenHash); o.UsedAt != nil {
		t.Fatal("another user's reset link died with this reset")
	}
	if got, _ := s.GetPortalUser(ctx, u.ID); got.PasswordHash != "$argon2id$new" || !got.EmailVerified {
		t.Fatalf("after the reset: hash %q, verified %v", got.PasswordHash, got.EmailVerified)
	}
	if got, _ := s.GetPortalUser(ctx, other.ID); got.PasswordHash != other.PasswordHash {
		t.Fatal("another user's password changed")
	}
	if used, _ := s.PortalTokenByHash(ctx, tk.TokenHash); used.UsedAt == nil || !used.UsedAt.Equal(at) {
		t.Fatalf("token used at %v, want %v", used.UsedAt, at)
	}
	for _, ps := range []identity.PortalSession{s1, s2} {
		_, err := s.SessionByHash(ctx, ps.TokenHash)
		wantErr(t, err, metering.ErrNotFound)
	}
	if _, err := s.SessionByHash(ctx, sb.TokenHash); err != nil {
		t.Fatal("a reset ended another user's session")
	}
}

func testEmailVerification(t *testing.T, newStore func(t *testing.T) Store) {
	ctx := t.Context()
	s := newStore(t)
	a := newAccount("a")
	mustCreateAccount(t, s, a)
	u := identity.PortalUser{ID: uuid.NewString(), AccountID: a.ID, Email: "ann@example.com", Name: "Ann", PasswordHash: "$argon2id$x", CreatedAt: t0}
	v := identity.PortalUser{ID: uuid.NewString(), AccountID: a.ID, Email: "vic@example.com", Name: "Vic", PasswordHash: "$argon2id$y", CreatedAt: t0, EmailVerified: true}
	w := identity.PortalUser{ID: uuid.NewString(), AccountID: a.ID, Email: "wes@example.com", Name: "Wes", CreatedAt: t0}
	for _, x := range []identity.PortalUser{u, v, w} {
		if err := s.AddPortalUser(ctx, x); err != nil {
			t.Fatal(err)
		}
	}
	if got, _ := s.GetPortalUser(ctx, v.ID); !got.EmailVerified {
		t.Fatal("EmailVerified is not stored")
	}
	m := notify.OutboxMail{ID: uuid.NewString(), AccountID: a.ID, Milestone: notify.MilestoneVerifyEmail, PeriodStart: t0,
		To: u.Email, Subject: "verify", Body: "link", CreatedAt: t0, NextAttemptAt: t0}
	tk := identity.PortalToken{TokenHash: "verify-hash", Purpose: identity.TokenVerifyEmail, UserID: u.ID, CreatedAt: t0, ExpiresAt: t0.Add(48 * time.Hour)}
	wantErr(t, s.CreatePortalToken(ctx, tk, m), nil)
	// A verification token is not a reset token, nor the other way round.
	wantErr(t, s.ResetPassword(ctx, tk.TokenHash, "$argon2id$new", t0), metering.ErrNotFound)
	wantErr(t, s.VerifyEmail(ctx, "unknown", t0), metering.ErrNotFound)
	wantErr(t, s.VerifyEmail(ctx, tk.TokenHash, t0.Add(time.Minute)), nil)
	wantErr(t, s.VerifyEmail(ctx, tk.TokenHash, t0.Add(time.Minute)), metering.ErrNotFound)
	if got, _ := s.GetPortalUser(ctx, u.ID); !got.EmailVerified || got.PasswordHash != u.PasswordHash {
		t.Fatalf("after verification: %+v", got)
	}
	if got, _ := s.GetPortalUser(ctx, w.ID); got.EmailVerified {
		t.Fatal("another user was verified")
	}
	wantErr(t, s.MarkEmailVerified(ctx, w.ID), nil)
	if got, _ := s.GetPortalUser(ctx, w.ID); !got.EmailVerified {
		t.Fatal("MarkEmailVerified did not verify")
	}
	wantErr(t, s.MarkEmailVerified(ctx, uuid.NewString()), metering.ErrNotFound)
	wantErr(t, s.MarkEmailVerified(ctx, "not-a-uuid"), metering.ErrNotFound)
}
