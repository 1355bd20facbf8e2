package identity_test

import (
	"regexp"
	"testing"

	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/pkg/rpc"
	"github.com/ledgerlane/platform/services/metering"
	"github.com/ledgerlane/platform/services/metering/identity"
	"github.com/ledgerlane/platform/services/metering/notify"
)

var verifyLink = regexp.MustCompile(`https://portal\.example/verify\?t=(pv_[a-z2-7]+)`)

func TestEmailVerification(t *testing.T) {
	e := newPortal(t)
	ctx := t.Context()
	const base = "https://portal.example/verify?t="
	sess, si, err := e.svc.SignUp(ctx, "eve@example.com", goodPassword, "Eve Ltd", "")
	if err != nil {
		t.Fatal(err)
	}
	if si.User.EmailVerified {
		t.Fatal("a new sign-up is verified")
	}
	for _, tc := range []struct {
		mode   string
		scopes []string
		ok     bool
	}{
		{metering.ModeTest, []string{"convert", "webhooks:manage"}, true},
		{metering.ModeLive, []string{"convert"}, false},
		// Reaching third-party accounting platforms needs a verified
		// address, whatever the mode.
		{metering.ModeTest, []string{"convert", "connections:manage"}, false},
	} {
		if err := identity.RequireVerified(si.User, tc.mode, tc.scopes); (err == nil) != tc.ok {
			t.Fatalf("RequireVerified(%s, %v) = %v", tc.mode, tc.scopes, err)
		}
	}
	if err := e.svc.SendVerification(ctx, si.User.ID, base); err != nil {
		t.Fatal(err)
	}
	mails, _ := e.nt.Outbox(ctx, si.Account.ID)
	m := mails[len(mails)-1]
	if m.Milestone != notify.MilestoneVerifyEmail || !notify.PersonalMail(m.Milestone) {
		t.Fatalf("mail %+v", m)
	}
	token := verifyLink.FindStringSubmatch(m.Body)[1]
	for _, bad := range []string{"", "pv_nope", "pr_" + token[3:]} {
		if err := e.svc.VerifyEmail(ctx, bad); rpc.Problem(err).Type != problem.NotFound {
			t.Fatalf("token %q: %v", bad, err)
		}
	}
	if err := e.svc.VerifyEmail(ctx, token); err != nil {
		t.Fatal(err)
	}
	if err := e.svc.VerifyEmail(ctx, token); rpc.Problem(err).Type != problem.NotFound {
		t.Fatalf("twice: %v", err)
	}
	after, err := e.svc.Session(ctx, sess)
	if err != nil || !after.User.EmailVerified || identity.RequireVerified(after.User, metering.ModeLive, []string{"connections:manage"}) != nil {
		t.Fatalf("after verification: %+v %v", after.User, err)
	}
	// A verified person gets no more mails.
	n := len(mails)
	if err := e.svc.SendVerification(ctx, si.User.ID, base); err != nil {
		t.Fatal(err)
	}
	if mails, _ := e.nt.Outbox(ctx, si.Account.ID); len(mails) != n {
		t.Fatal("a verified person was mailed again")
	}
}

func TestEmailVerificationExpiryThrottleAndInvitation(t *testing.T) {
	e := newPortal(t)
	ctx := t.Context()
	const base = "https://portal.example/verify?t="
	_, si, err := e.svc.SignUp(ctx, "fay@example.com", goodPassword, "Fay Ltd", "")
	if err != nil {
		t.Fatal(err)
	}
	for i := range identity.VerifyMails {
		if err := e.svc.SendVerification(ctx, si.User.ID, base); err != nil {
			t.Fatalf("mail %d: %v", i, err)
		}
	}
	if p := rpc.Problem(e.svc.SendVerification(ctx, si.User.ID, base)); p.Type != problem.RateLimited || p.RetryAfter <= 0 {
		t.Fatalf("over the limit: %v", p)
	}
	mails, _ := e.nt.Outbox(ctx, si.Account.ID)
	token := verifyLink.FindStringSubmatch(mails[len(mails)-1].Body)[1]
	e.advance(identity.VerifyEmailTTL)
	if err := e.svc.VerifyEmail(ctx, token); rpc.Problem(err).Type != problem.NotFound {
		t.Fatalf("an expired link: %v", err)
	}
	// An unverified person cannot invite; a verified one can, and an
	// accepted invitation verifies: its link reached the address.
	if _, err := e.svc.Invite(ctx, si.Account.ID, si.User, "gus@example.com", "https://portal.example/invite?t="); rpc.Problem(err).Type != problem.InvalidInput {
		t.Fatalf("an unverified inviter: %v", err)
	}
	inviter := si.User
	inviter.EmailVerified = true
	if _, err := e.svc.Invite(ctx, si.Account.ID, inviter, "gus@example.com", "https://portal.example/invite?t="); err != nil {
		t.Fatal(err)
	}
	mails, _ = e.nt.Outbox(ctx, si.Account.ID)
	inv := regexp.MustCompile(`pi_[a-z2-7]+`).FindString(mails[len(mails)-1].Body)
	_, gus, err := e.svc.AcceptInvite(ctx, inv, goodPassword, "Gus")
	if err != nil {
		t.Fatal(err)
	}
	if !gus.User.EmailVerified {
		t.Fatal("an invited person is not verified")
	}
}
