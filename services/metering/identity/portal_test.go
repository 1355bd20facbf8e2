package identity_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/pkg/rpc"
	"github.com/ledgerlane/platform/services/metering"
	"github.com/ledgerlane/platform/services/metering/identity"
	"github.com/ledgerlane/platform/services/metering/memory"
	"github.com/ledgerlane/platform/services/metering/notify"
)

// now is when every portal test starts.
var now = time.Date(2026, 5, 4, 12, 30, 0, 123456789, time.UTC)

// portalEnv is a Service on a memory store with a clock the test moves.
type portalEnv struct {
	svc   *identity.Service
	meter *metering.Service // the accounts and credentials on store
	nt    *notify.Service   // the outbox on store
	store *memory.Store
	mu    sync.Mutex
	at    time.Time
}

func newPortal(t *testing.T) *portalEnv {
	t.Helper()
	e := &portalEnv{store: memory.New(), at: now}
	e.nt = notify.NewService(notify.Config{Store: e.store, Clock: e.now})
	e.meter = metering.NewService(metering.Config{Store: e.store, Clock: e.now})
	e.svc = e.identity(nil)
	return e
}

// identity is an identity.Service on the env's store, accounts and clock,
// with the throttles th makes (nil: in this process).
func (e *portalEnv) identity(th identity.ThrottleFactory) *identity.Service {
	return identity.NewService(identity.Config{Store: e.store, Accounts: e.meter, Throttles: th, Clock: e.now})
}

func (e *portalEnv) now() time.Time          { e.mu.Lock(); defer e.mu.Unlock(); return e.at }
func (e *portalEnv) advance(d time.Duration) { e.mu.Lock(); defer e.mu.Unlock(); e.at = e.at.Add(d) }

const goodPassword = "correct horse battery"

func TestPasswordHashing(t *testing.T) {
	h := identity.HashWithProductionCost(goodPassword)
	if !strings.HasPrefix(h, "$argon2id$v=19$m=19456,t=2,p=1$") {
		t.Fatalf("hash %q is not argon2id in PHC form at the OWASP minimum", h)
	}
	if h == identity.HashWithProductionCost(goodPassword) {
		t.Fatal("two hashes of one password are equal: no salt")
	}
	if !identity.CheckPassword(h, goodPassword) || identity.CheckPassword(h, goodPassword+"x") {
		t.Fatal("CheckPassword does not tell the password from another")
	}
	// A test binary's cheap hash names its own parameters and checks too.
	if m, tm := identity.CostInTests(); m >= 19456 || tm != 1 {
		t.Fatalf("test cost m=%d t=%d: not the cheap one", m, tm)
	}
	if cheap := identity.HashPassword(goodPassword); !strings.HasPrefix(cheap, "$argon2id$v=19$m=64,t=1,p=1$") ||
		!identity.CheckPassword(cheap, goodPassword) || identity.CheckPassword(cheap, "x"+goodPassword) {
		t.Fatalf("test-cost hash %q does not check", cheap)
	}
	for _, bad := range []string{"", "$argon2i$v=19$m=19456,t=2,p=1$AAAA$AAAA", "$argon2id$v=19$m=99999999,t=2,p=1$AAAA$AAAA", "plain"} {
		if identity.CheckPassword(bad, goodPassword) {
			t.Fatalf("CheckPassword(%q) accepted", bad)
		}
	}
}

func TestSignUpAndPasswordRules(t *testing.T) {
	e := newPortal(t)
	ctx := t.Context()
	for _, c := range []struct{ email, password, field string }{
		{"not an address", goodPassword, "email"},
		{"ann@example.com", "short", "password"},
		{"ann@example.com", strings.Repeat("x", identity.MaxPasswordLen+1), "password"},
		{"annexample@example.com", "annexample@example.com", "password"},
	} {
		_, _, err := e.svc.SignUp(ctx, c.email, c.password, "Acme", "")
		if p := rpc.Problem(err); p == nil || p.Type != problem.InvalidInput || p.Field != c.field {
			t.Errorf("SignUp(%q, %q) = %v, want invalid %s", c.email, c.password, err, c.field)
		}
	}
	token, si, err := e.svc.SignUp(ctx, "Ann@Example.com", goodPassword, "Acme", "Ann")
	if err != nil {
		t.Fatal(err)
	}
	if si.Account.PlanID != metering.PlanFree || si.User.Email != "ann@example.com" || si.User.AccountID != si.Account.ID || si.CSRFToken == "" {
		t.Fatalf("session = %+v", si)
	}
	if si.User.PasswordHash != "" {
		t.Fatal("the password hash leaves the service")
	}
	users, _ := e.svc.PortalUsers(ctx, si.Account.ID)
	if len(users) != 1 || !strings.HasPrefix(users[0].PasswordHash, "$argon2id$") || strings.Contains(users[0].PasswordHash, goodPassword) {
		t.Fatalf("stored users = %+v", users)
	}
	if got, err := e.svc.Session(ctx, token); err != nil || got.User.ID != si.User.ID {
		t.Fatalf("Session = %+v, %v", got, err)
	}
	// The same address signs up again: no message says it is in use; a
	// second account is made.
	_, si2, err := e.svc.SignUp(ctx, "ann@example.com", goodPassword+"2", "Acme two", "Ann")
	if err != nil {
		t.Fatalf("second sign-up with the same address: %v", err)
	}
	if si2.Account.ID == si.Account.ID {
		t.Fatal("second sign-up reused the account")
	}
	// Each password signs in to its own account.
	if _, got, err := e.svc.SignIn(ctx, "ann@example.com", goodPassword+"2"); err != nil || got.Account.ID != si2.Account.ID {
		t.Fatalf("SignIn second password = %+v, %v", got, err)
	}
	if _, got, err := e.svc.SignIn(ctx, " ANN@example.com ", goodPassword); err != nil || got.Account.ID != si.Account.ID {
		t.Fatalf("SignIn first password = %+v, %v", got, err)
	}
}

// TestSignInNoEnumeration: an unknown address, a wrong password and a user
// without a password (alerts only) get the same answer.
func TestSignInNoEnumeration(t *testing.T) {
	e := newPortal(t)
	ctx := t.Context()
	_, si, err := e.svc.SignUp(ctx, "ann@example.com", goodPassword, "Acme", "Ann")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.AddPortalUser(ctx, si.Account.ID, "ops@example.com", "Ops"); err != nil {
		t.Fatal(err)
	}
	var answers []string
	for _, c := range []struct{ email, password string }{
		{"nobody@example.com", goodPassword},
		{"ann@example.com", "wrong password!"},
		{"ops@example.com", ""},
		{"ops@example.com", goodPassword},
		{"not an address", goodPassword},
	} {
		_, _, err := e.svc.SignIn(ctx, c.email, c.password)
		p := rpc.Problem(err)
		if p == nil || p.Type != problem.Unauthorized {
			t.Fatalf("SignIn(%q) = %v, want unauthorized", c.email, err)
		}
		answers = append(answers, p.Detail+"|"+p.Field)
	}
	for _, a := range answers[1:] {
		if a != answers[0] {
			t.Fatalf("sign-in answers differ: %q", answers)
		}
	}
}

func TestSignInThrottling(t *testing.T) {
	e := newPortal(t)
	ctx := t.Context()
	if _, _, err := e.svc.SignUp(ctx, "ann@example.com", goodPassword, "Acme", "Ann"); err != nil {
		t.Fatal(err)
	}
	for _, email := range []string{"ann@example.com", "nobody@example.com"} {
		for i := range identity.SignInFailures {
			if _, _, err := e.svc.SignIn(ctx, email, "wrong password!"); rpc.Problem(err).Type != problem.Unauthorized {
				t.Fatalf("%s attempt %d: %v", email, i+1, err)
			}
		}
		// Now even the right password is refused, however the address is
		// spelled, and an unknown address is refused the same way (no
		// enumeration through the throttle).
		pw := goodPassword
		if _, _, err := e.svc.SignIn(ctx, "<"+email+">", pw); rpc.Problem(err).Type != problem.RateLimited {
			t.Fatalf("%s in angle brackets escapes the throttle: %v", email, err)
		}
		_, _, err := e.svc.SignIn(ctx, strings.ToUpper(email), pw)
		p := rpc.Problem(err)
		if p == nil || p.Type != problem.RateLimited || p.RetryAfter <= 0 || p.RetryAfter > int(identity.SignInWindow.Seconds()) {
			t.Fatalf("%s after %d failures: %v", email, identity.SignInFailures, err)
		}
	}
	// Another address is not affected.
	if _, _, err := e.svc.SignIn(ctx, "other@example.com", "x"); rpc.Problem(err).Type != problem.Unauthorized {
		t.Fatalf("other address: %v", err)
	}
	e.advance(identity.SignInWindow)
	if _, _, err := e.svc.SignIn(ctx, "ann@example.com", goodPassword); err != nil {
		t.Fatalf("after the window: %v", err)
	}
}

func TestSessionExpiryAndSignOut(t *testing.T) {
	e := newPortal(t)
	ctx := t.Context()
	t1, si, err := e.svc.SignUp(ctx, "ann@example.com", goodPassword, "Acme", "Ann")
	if err != nil {
		t.Fatal(err)
	}
	if !si.ExpiresAt.Equal(now.Truncate(time.Microsecond).Add(identity.DefaultSessionTTL)) {
		t.Fatalf("expires at %v", si.ExpiresAt)
	}
	t2, _, _ := e.svc.SignIn(ctx, "ann@example.com", goodPassword)
	t3, _, _ := e.svc.SignIn(ctx, "ann@example.com", goodPassword)
	if t1 == t2 || t2 == t3 {
		t.Fatal("sign-in reused a session token (fixation)")
	}
	for _, bad := range []string{"", "ps_unknown", "ak_live_x", strings.Repeat("p", 200)} {
		if _, err := e.svc.Session(ctx, bad); rpc.Problem(err).Type != problem.Unauthorized {
			t.Fatalf("Session(%q) = %v", bad, err)
		}
	}
	// Sign out one session: the others stay.
	if err := e.svc.SignOut(ctx, t1, false); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Session(ctx, t1); rpc.Problem(err).Type != problem.Unauthorized {
		t.Fatal("signed-out session still works")
	}
	if _, err := e.svc.Session(ctx, t2); err != nil {
		t.Fatal("signing out one session ended another")
	}
	// Everywhere: every session of the user ends.
	if err := e.svc.SignOut(ctx, t2, true); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Session(ctx, t3); rpc.Problem(err).Type != problem.Unauthorized {
		t.Fatal("sign-out everywhere left a session")
	}
	// Expiry comes from the clock.
	t4, _, _ := e.svc.SignIn(ctx, "ann@example.com", goodPassword)
	e.advance(identity.DefaultSessionTTL - time.Second)
	if _, err := e.svc.Session(ctx, t4); err != nil {
		t.Fatalf("a second before expiry: %v", err)
	}
	e.advance(time.Second)
	if _, err := e.svc.Session(ctx, t4); rpc.Problem(err).Type != problem.Unauthorized {
		t.Fatal("expired session still works")
	}
}

func TestPortalKeysRulesAndTenants(t *testing.T) {
	e := newPortal(t)
	ctx := t.Context()
	_, a, _ := e.svc.SignUp(ctx, "ann@example.com", goodPassword, "A", "Ann")
	_, b, _ := e.svc.SignUp(ctx, "bob@example.com", goodPassword, "B", "Bob")
	for _, reserved := range []string{metering.ScopeKeysManage, metering.ScopeUsageRead} {
		_, _, err := e.svc.IssuePortalKey(ctx, a.Account.ID, identity.PortalKeyParams{Name: "k", Mode: metering.ModeLive,
			Scopes: []string{metering.ScopeConvert, reserved}})
		if p := rpc.Problem(err); p == nil || p.Field != "scopes" {
			t.Fatalf("portal granted %s: %v", reserved, err)
		}
	}
	secret, c, err := e.svc.IssuePortalKey(ctx, a.Account.ID, identity.PortalKeyParams{Name: "ci", Mode: metering.ModeTest})
	if err != nil || !strings.HasPrefix(secret, "ak_test_") || len(c.Scopes) != 6 {
		t.Fatalf("IssuePortalKey = %q %+v %v", secret, c, err)
	}
	_, c2, err := e.svc.IssuePortalKey(ctx, a.Account.ID, identity.PortalKeyParams{Name: "hooks", Mode: metering.ModeLive,
		Scopes: append(metering.DefaultConversionScopes(), metering.OptInConversionScopes()...)})
	if err != nil || len(c2.Scopes) != len(metering.DefaultConversionScopes())+len(metering.OptInConversionScopes()) {
		t.Fatalf("opt-in scopes: %+v %v", c2, err)
	}
	if keys, _ := e.svc.PortalKeys(ctx, b.Account.ID); len(keys) != 0 {
		t.Fatalf("account B sees %d keys of account A", len(keys))
	}
	if err := e.svc.RevokeAccountCredential(ctx, b.Account.ID, c.ID); rpc.Problem(err).Type != problem.NotFound {
		t.Fatalf("account B revoked A's key: %v", err)
	}
	if _, err := e.meter.Resolve(ctx, secret); err != nil {
		t.Fatal("A's key stopped working after B's attempt")
	}
	if err := e.svc.RevokeAccountCredential(ctx, a.Account.ID, c.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.meter.Resolve(ctx, secret); err == nil {
		t.Fatal("revoked key still resolves")
	}
	keys, _ := e.svc.PortalKeys(ctx, a.Account.ID)
	revoked := 0
	for _, k := range keys {
		if k.RevokedAt != nil {
			revoked++
			if k.ID != c.ID {
				t.Fatalf("revoked the wrong key")
			}
		}
	}
	if len(keys) != 2 || revoked != 1 {
		t.Fatalf("keys = %+v", keys)
	}
}

func TestInvitations(t *testing.T) {
	e := newPortal(t)
	ctx := t.Context()
	_, ann, _ := e.svc.SignUp(ctx, "ann@example.com", goodPassword, "Team", "Ann")
	ann.User.EmailVerified = true // only verified people invite (TestInvitationLimits)
	u, err := e.svc.Invite(ctx, ann.Account.ID, ann.User, "Bob@Example.com", "https://portal.example/portal/invite?t=")
	if err != nil || u.Email != "bob@example.com" || u.PasswordHash != "" {
		t.Fatalf("Invite = %+v, %v", u, err)
	}
	if _, err := e.svc.Invite(ctx, ann.Account.ID, ann.User, "bob@example.com", "x"); rpc.Problem(err).Type != problem.Conflict {
		t.Fatalf("second invitation: %v", err)
	}
	mails, _ := e.nt.Outbox(ctx, ann.Account.ID)
	if len(mails) != 1 || mails[0].To != "bob@example.com" || mails[0].Milestone != notify.MilestoneInvite {
		t.Fatalf("outbox = %+v", mails)
	}
	i := strings.Index(mails[0].Body, "https://portal.example/portal/invite?t=")
	if i < 0 {
		t.Fatalf("no link in %q", mails[0].Body)
	}
	token := strings.Fields(mails[0].Body[i+len("https://portal.example/portal/invite?t="):])[0]
	// A pending invitee cannot sign in.
	if _, _, err := e.svc.SignIn(ctx, "bob@example.com", ""); rpc.Problem(err).Type != problem.Unauthorized {
		t.Fatalf("invitee signs in without a password: %v", err)
	}
	if _, _, err := e.svc.AcceptInvite(ctx, token, "short", "Bob"); rpc.Problem(err).Field != "password" {
		t.Fatalf("short password: %v", err)
	}
	_, si, err := e.svc.AcceptInvite(ctx, token, goodPassword, "Bob")
	if err != nil || si.Account.ID != ann.Account.ID || si.User.Name != "Bob" {
		t.Fatalf("AcceptInvite = %+v, %v", si, err)
	}
	if _, _, err := e.svc.AcceptInvite(ctx, token, goodPassword, "Mallory"); rpc.Problem(err).Type != problem.NotFound {
		t.Fatalf("invitation used twice: %v", err)
	}
	if _, got, err := e.svc.SignIn(ctx, "bob@example.com", goodPassword); err != nil || got.Account.ID != ann.Account.ID {
		t.Fatalf("invitee sign-in: %v", err)
	}
	// Expiry, from the clock.
	if _, err := e.svc.Invite(ctx, ann.Account.ID, ann.User, "cy@example.com", "L:"); err != nil {
		t.Fatal(err)
	}
	mails, _ = e.nt.Outbox(ctx, ann.Account.ID)
	late := strings.Fields(mails[1].Body[strings.Index(mails[1].Body, "L:")+2:])[0]
	if _, _, err := e.svc.Invitation(ctx, late); err != nil {
		t.Fatalf("fresh invitation: %v", err)
	}
	e.advance(identity.InviteTTL)
	if _, _, err := e.svc.AcceptInvite(ctx, late, goodPassword, ""); rpc.Problem(err).Type != problem.NotFound {
		t.Fatalf("expired invitation accepted: %v", err)
	}
	for _, bad := range []string{"", "pi_unknown", "ps_x"} {
		if _, _, err := e.svc.Invitation(ctx, bad); rpc.Problem(err).Type != problem.NotFound {
			t.Fatalf("Invitation(%q) = %v", bad, err)
		}
	}
}

// TestInvitationLimits: an account sends at most identity.Invites
// invitations an hour (then 429 with the wait), counted per account, not
// per person; the window passes.
func TestInvitationLimits(t *testing.T) {
	e := newPortal(t)
	ctx := t.Context()
	_, ann, _ := e.svc.SignUp(ctx, "ann@limits.example", goodPassword, "Team", "Ann")
	ann.User.EmailVerified = true
	for i := range identity.Invites {
		if _, err := e.svc.Invite(ctx, ann.Account.ID, ann.User, fmt.Sprintf("p%d@limits.example", i), "L:"); err != nil {
			t.Fatalf("invitation %d: %v", i+1, err)
		}
	}
	_, err := e.svc.Invite(ctx, ann.Account.ID, ann.User, "one-more@limits.example", "L:")
	if p := rpc.Problem(err); p.Type != problem.RateLimited || p.RetryAfter <= 0 {
		t.Fatalf("over the limit: %v", err)
	}
	e.advance(identity.InviteWindow)
	if _, err := e.svc.Invite(ctx, ann.Account.ID, ann.User, "one-more@limits.example", "L:"); err != nil {
		t.Fatalf("after the window: %v", err)
	}
}
