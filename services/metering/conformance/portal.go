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

func runPortal(t *testing.T, newStore func(t *testing.T) Store) {
	t.Run("PortalLogins", func(t *testing.T) { testPortalLogins(t, newStore) })
	t.Run("PortalSessions", func(t *testing.T) { testPortalSessions(t, newStore) })
	t.Run("Invitations", func(t *testing.T) { testInvitations(t, newStore) })
}

func testPortalLogins(t *testing.T, newStore func(t *testing.T) Store) {
	ctx := t.Context()
	s := newStore(t)
	a, b := newAccount("a"), newAccount("b")
	mustCreateAccount(t, s, a)
	mustCreateAccount(t, s, b)
	// The same address in two accounts, both with passwords; one more
	// without a password (alerts only), which cannot sign in.
	ua := identity.PortalUser{ID: uuid.NewString(), AccountID: a.ID, Email: "ann@example.com", Name: "Ann", PasswordHash: "$argon2id$a", CreatedAt: t0.Add(time.Second)}
	ub := identity.PortalUser{ID: uuid.NewString(), AccountID: b.ID, Email: "ann@example.com", Name: "Ann B", PasswordHash: "$argon2id$b", CreatedAt: t0}
	alerts := identity.PortalUser{ID: uuid.NewString(), AccountID: a.ID, Email: "ops@example.com", Name: "Ops", CreatedAt: t0}
	for _, u := range []identity.PortalUser{ua, ub, alerts} {
		if err := s.AddPortalUser(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.PortalLogins(ctx, "ann@example.com")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]identity.PortalUser{ub, ua}, got); diff != "" {
		t.Fatalf("PortalLogins (-want +got):\n%s", diff)
	}
	if got, err := s.PortalLogins(ctx, "ops@example.com"); err != nil || len(got) != 0 {
		t.Fatalf("a user without a password has a login: %v %v", got, err)
	}
	if got, err := s.PortalLogins(ctx, "nobody@example.com"); err != nil || len(got) != 0 {
		t.Fatalf("unknown address: %v %v", got, err)
	}
	u, err := s.GetPortalUser(ctx, ua.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(ua, u); diff != "" {
		t.Fatalf("GetPortalUser (-want +got):\n%s", diff)
	}
	for _, id := range []string{uuid.NewString(), "not-a-uuid"} {
		_, err := s.GetPortalUser(ctx, id)
		wantErr(t, err, metering.ErrNotFound)
	}
}

func testPortalSessions(t *testing.T, newStore func(t *testing.T) Store) {
	ctx := t.Context()
	s := newStore(t)
	a, b := newAccount("a"), newAccount("b")
	mustCreateAccount(t, s, a)
	mustCreateAccount(t, s, b)
	u := identity.PortalUser{ID: uuid.NewString(), AccountID: a.ID, Email: "ann@example.com", Name: "Ann", PasswordHash: "h", CreatedAt: t0}
	v := identity.PortalUser{ID: uuid.NewString(), AccountID: a.ID, Email: "bob@example.com", Name: "Bob", PasswordHash: "h", CreatedAt: t0}
	for _, x := range []identity.PortalUser{u, v} {
		if err := s.AddPortalUser(ctx, x); err != nil {
			t.Fatal(err)
		}
	}
	sess := func(user identity.PortalUser, n string) identity.PortalSession {
		return identity.PortalSession{TokenHash: "hash-" + n, UserID: user.ID, AccountID: user.AccountID, CSRFToken: "csrf-" + n,
			CreatedAt: t0, ExpiresAt: t0.Add(12 * time.Hour)}
	}
	s1, s2, s3 := sess(u, "1"), sess(u, "2"), sess(v, "3")
	for _, x := range []identity.PortalSession{s1, s2, s3} {
		if err := s.CreateSession(ctx, x); err != nil {
			t.Fatal(err)
		}
	}
	wantErr(t, s.CreateSession(ctx, s1), metering.ErrConflict)
	// A user of account a cannot hold a session of account b.
	cross := sess(u, "x")
	cross.AccountID = b.ID
	wantErr(t, s.CreateSession(ctx, cross), metering.ErrNotFound)
	ghost := sess(u, "g")
	ghost.UserID = uuid.NewString()
	wantErr(t, s.CreateSession(ctx, ghost), metering.ErrNotFound)

	got, err := s.SessionByHash(ctx, s1.TokenHash)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(s1, got); diff != "" {
		t.Fatalf("SessionByHash (-want +got):\n%s", diff)
	}
	_, err = s.SessionByHash(ctx, "hash-unknown")
	wantErr(t, err, metering.ErrNotFound)

	wantErr(t, s.DeleteSession(ctx, s1.TokenHash), nil)
	wantErr(t, s.DeleteSession(ctx, s1.TokenHash), nil)
	_, err = s.SessionByHash(ctx, s1.TokenHash)
	wantErr(t, err, metering.ErrNotFound)
	if _, err := s.SessionByHash(ctx, s2.TokenHash); err != nil {
		t.Fatal("deleting one session removed another")
	}
	wantErr(t, s.DeleteUserSessions(ctx, u.ID), nil)
	_, err = s.SessionByHash(ctx, s2.TokenHash)
	wantErr(t, err, metering.ErrNotFound)
	if _, err := s.SessionByHash(ctx, s3.TokenHash); err != nil {
		t.Fatal("signing one user out everywhere ended another user's session")
	}
}

func testInvitations(t *testing.T, newStore func(t *testing.T) Store) {
	ctx := t.Context()
	s := newStore(t)
	a := newAccount("a")
	mustCreateAccount(t, s, a)
	exp := t0.Add(7 * 24 * time.Hour)
	u := identity.PortalUser{ID: uuid.NewString(), AccountID: a.ID, Email: "bob@example.com", Name: "bob@example.com",
		InviteHash: "invite-hash", InviteExpiresAt: &exp, CreatedAt: t0}
	m := notify.OutboxMail{ID: uuid.NewString(), AccountID: a.ID, Milestone: notify.MilestoneInvite, PeriodStart: t0,
		To: u.Email, Subject: "invited", Body: "link", CreatedAt: t0, NextAttemptAt: t0}
	wantErr(t, s.InviteUser(ctx, u, m), nil)
	dup := u
	dup.ID, dup.InviteHash = uuid.NewString(), "other"
	m2 := m
	m2.ID = uuid.NewString()
	wantErr(t, s.InviteUser(ctx, dup, m2), metering.ErrConflict)
	ghost := u
	ghost.ID, ghost.AccountID, ghost.InviteHash = uuid.NewString(), unknownID, "ghost"
	wantErr(t, s.InviteUser(ctx, ghost, m2), metering.ErrNotFound)
	if out, err := s.Outbox(ctx, a.ID); err != nil || len(out) != 1 || out[0].To != u.Email {
		t.Fatalf("outbox after a refused invitation: %+v %v", out, err)
	}
	got, err := s.PortalUserByInvite(ctx, "invite-hash")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(u, got); diff != "" {
		t.Fatalf("PortalUserByInvite (-want +got):\n%s", diff)
	}
	_, err = s.PortalUserByInvite(ctx, "")
	wantErr(t, err, metering.ErrNotFound)
	wantErr(t, s.AcceptInvite(ctx, u.ID, "pw-hash", "Bob"), nil)
	wantErr(t, s.AcceptInvite(ctx, u.ID, "pw-hash-2", "Mallory"), metering.ErrNotFound)
	_, err = s.PortalUserByInvite(ctx, "invite-hash")
	wantErr(t, err, metering.ErrNotFound)
	joined, err := s.GetPortalUser(ctx, u.ID)
	if err != nil || joined.PasswordHash != "pw-hash" || joined.Name != "Bob" || joined.InviteHash != "" || joined.InviteExpiresAt != nil {
		t.Fatalf("after accepting: %+v %v", joined, err)
	}
	if logins, _ := s.PortalLogins(ctx, "bob@example.com"); len(logins) != 1 {
		t.Fatalf("logins after accepting: %+v", logins)
	}
}
