package conformance

import (
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/ledgerlane/platform/services/metering"
	"github.com/ledgerlane/platform/services/metering/identity"
	"github.com/ledgerlane/platform/services/metering/notify"
)

// testHousekeeping: expired sessions, portal tokens and access tokens go,
// oldest first and at most limit at a time; live ones, API keys and other
// kinds of row stay.
func testHousekeeping(t *testing.T, newStore func(t *testing.T) Store) {
	ctx := t.Context()
	s := newStore(t)
	a := newAccount("a")
	mustCreateAccount(t, s, a)
	u := identity.PortalUser{ID: uuid.NewString(), AccountID: a.ID, Email: "ann@example.com", Name: "Ann", PasswordHash: "$argon2id$x", CreatedAt: t0}
	if err := s.AddPortalUser(ctx, u); err != nil {
		t.Fatal(err)
	}
	c := newClient(a.ID, "one", t0)
	if err := s.CreateOAuthClient(ctx, c); err != nil {
		t.Fatal(err)
	}
	at := func(min int) time.Time { return t0.Add(time.Duration(min) * time.Minute) }
	// Expiries -3, -2, -1 (expired at t0) and +1 (live) minutes, of each kind.
	mins := []int{-2, 1, -3, -1}
	for i, m := range mins {
		if err := s.CreateSession(ctx, identity.PortalSession{TokenHash: fmtHash("s", i), UserID: u.ID, AccountID: a.ID,
			CSRFToken: "c", CreatedAt: at(-60), ExpiresAt: at(m)}); err != nil {
			t.Fatal(err)
		}
		mail := notify.OutboxMail{ID: uuid.NewString(), AccountID: a.ID, Milestone: notify.MilestonePasswordReset,
			PeriodStart: t0, To: u.Email, Subject: "reset", Body: "link", CreatedAt: t0, NextAttemptAt: t0}
		if err := s.CreatePortalToken(ctx, identity.PortalToken{TokenHash: fmtHash("p", i), Purpose: identity.TokenPasswordReset,
			UserID: u.ID, CreatedAt: at(-60), ExpiresAt: at(m)}, mail); err != nil {
			t.Fatal(err)
		}
		exp := at(m)
		if err := s.CreateCredential(ctx, metering.Credential{ID: uuid.NewString(), AccountID: a.ID, Name: "token",
			Kind: metering.KindAccessToken, Surface: metering.SurfaceConversion, Mode: metering.ModeTest, Scopes: []string{"convert"},
			SecretHash: fmtHash("a", i), Prefix: "at_test_abcd", CreatedAt: at(-60), ExpiresAt: &exp, OAuthClientID: c.ID}); err != nil {
			t.Fatal(err)
		}
	}
	key := newCredential(a.ID, at(-60)) // an API key: no expiry, never swept
	if err := s.CreateCredential(ctx, key); err != nil {
		t.Fatal(err)
	}

	kinds := []struct {
		name   string
		del    func(before time.Time, limit int) (int, error)
		exists func(hash string) bool
		prefix string
	}{
		{"sessions", func(b time.Time, l int) (int, error) { return s.DeleteExpiredSessions(ctx, b, l) },
			func(h string) bool { _, err := s.SessionByHash(ctx, h); return err == nil }, "s"},
		{"portal tokens", func(b time.Time, l int) (int, error) { return s.DeleteExpiredPortalTokens(ctx, b, l) },
			func(h string) bool { _, err := s.PortalTokenByHash(ctx, h); return err == nil }, "p"},
		{"access tokens", func(b time.Time, l int) (int, error) { return s.DeleteExpiredAccessTokens(ctx, b, l) },
			func(h string) bool { _, err := s.CredentialByHash(ctx, h); return err == nil }, "a"},
	}
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			left := func() []bool {
				out := make([]bool, len(mins))
				for i := range mins {
					out[i] = k.exists(fmtHash(k.prefix, i))
				}
				return out
			}
			// A limit of 2 takes the two oldest expiries (-3 and -2).
			if n, err := k.del(t0, 2); err != nil || n != 2 {
				t.Fatalf("first batch: %d, %v; want 2", n, err)
			}
			wantLeft(t, "after the first batch", []bool{false, true, false, true}, left())
			if n, err := k.del(t0, 2); err != nil || n != 1 {
				t.Fatalf("second batch: %d, %v; want 1 (the row expired at -1)", n, err)
			}
			wantLeft(t, "after the second batch", []bool{false, true, false, false}, left())
			if n, err := k.del(t0, 2); err != nil || n != 0 {
				t.Fatalf("nothing left: %d, %v", n, err)
			}
		})
	}
	if _, err := s.CredentialByHash(ctx, key.SecretHash); err != nil {
		t.Fatalf("an API key was swept: %v", err)
	}
	if _, err := s.GetAccount(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
}

// fmtHash is a unique stand-in for a secret's hash.
func fmtHash(kind string, i int) string { return metering.HashSecret(kind + string(rune('0'+i))) }

func wantLeft(t *testing.T, when string, want, got []bool) {
	t.Helper()
	if !slices.Equal(want, got) {
		t.Fatalf("rows left %s (expiries -2, +1, -3, -1 minutes): %v, want %v", when, got, want)
	}
}
