package identity_test

import (
	"regexp"
	"testing"

	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/pkg/rpc"
	"github.com/ledgerlane/platform/services/metering/identity"
	"github.com/ledgerlane/platform/services/metering/notify"
)

var resetLink = regexp.MustCompile(`https://portal\.example/reset\?t=(pr_[a-z2-7]+)`)

func TestPasswordReset(t *testing.T) {
	e := newPortal(t)
	ctx := t.Context()
	_, si, err := e.svc.SignUp(ctx, "ann@example.com", goodPassword, "Ann Ltd", "Ann")
	if err != nil {
		t.Fatal(err)
	}
	sessA, _, _ := e.svc.SignIn(ctx, "ann@example.com", goodPassword)
	const base = "https://portal.example/reset?t="

	// The same answer for an unknown address, and no mail.
	if err := e.svc.RequestPasswordReset(ctx, "nobody@example.com", base); err != nil {
		t.Fatal(err)
	}
	if err := e.svc.RequestPasswordReset(ctx, "not an address", base); rpc.Problem(err).Field != "email" {
		t.Fatalf("malformed address: %v", err)
	}
	if err := e.svc.RequestPasswordReset(ctx, "ANN@example.com", base); err != nil {
		t.Fatal(err)
	}
	mails, err := e.nt.Outbox(ctx, si.Account.ID)
	if err != nil {
		t.Fatal(err)
	}
	var token string
	for _, m := range mails {
		if m.Milestone == notify.MilestonePasswordReset && m.To == "ann@example.com" {
			if got := resetLink.FindStringSubmatch(m.Body); got != nil {
				token = got[1]
			}
		}
	}
	if token == "" {
		t.Fatalf("no reset mail: %+v", mails)
	}
	if _, err := e.svc.PasswordResetUser(ctx, token); err != nil {
		t.Fatal(err)
	}
	if err := e.svc.ResetPassword(ctx, token, "short"); rpc.Problem(err).Field != "password" {
		t.Fatalf("short password: %v", err)
	}
	const newPassword = "a brand new passphrase"
	if err := e.svc.ResetPassword(ctx, token, newPassword); err != nil {
		t.Fatal(err)
	}
	// Every session ended; the old password no longer works, the new one does.
	if _, err := e.svc.Session(ctx, sessA); rpc.Problem(err).Type != problem.Unauthorized {
		t.Fatalf("a session survived the reset: %v", err)
	}
	if _, _, err := e.svc.SignIn(ctx, "ann@example.com", goodPassword); rpc.Problem(err).Type != problem.Unauthorized {
		t.Fatalf("the old password still signs in: %v", err)
	}
	if _, _, err := e.svc.SignIn(ctx, "ann@example.com", newPassword); err != nil {
		t.Fatalf("the new password: %v", err)
	}
	// Single use.
	if err := e.svc.ResetPassword(ctx, token, "yet another passphrase"); rpc.Problem(err).Type != problem.NotFound {
		t.Fatalf("a used token: %v", err)
	}
	for _, bad := range []string{"", "pr_nope", "ps_" + token[3:], token + "x"} {
		if _, err := e.svc.PasswordResetUser(ctx, bad); rpc.Problem(err).Type != problem.NotFound {
			t.Fatalf("token %q: %v", bad, err)
		}
	}
}

func TestPasswordResetExpiryAndThrottle(t *testing.T) {
	e := newPortal(t)
	ctx := t.Context()
	_, si, err := e.svc.SignUp(ctx, "bob@example.com", goodPassword, "Bob Ltd", "")
	if err != nil {
		t.Fatal(err)
	}
	const base = "https://portal.example/reset?t="
	if err := e.svc.RequestPasswordReset(ctx, "bob@example.com", base); err != nil {
		t.Fatal(err)
	}
	mails, _ := e.nt.Outbox(ctx, si.Account.ID)
	token := resetLink.FindStringSubmatch(mails[len(mails)-1].Body)[1]
	e.advance(identity.PasswordResetTTL)
	if err := e.svc.ResetPassword(ctx, token, "a brand new passphrase"); rpc.Problem(err).Type != problem.NotFound {
		t.Fatalf("an expired token: %v", err)
	}
	// ResetRequests per address and window, known and unknown alike.
	for _, addr := range []string{"bob@example.com", "ghost@example.com"} {
		for i := 1; i < identity.ResetRequests; i++ {
			if err := e.svc.RequestPasswordReset(ctx, addr, base); err != nil {
				t.Fatalf("%s request %d: %v", addr, i, err)
			}
		}
		if addr == "ghost@example.com" {
			if err := e.svc.RequestPasswordReset(ctx, addr, base); err != nil {
				t.Fatal(err)
			}
		}
		err := e.svc.RequestPasswordReset(ctx, addr, base)
		if p := rpc.Problem(err); p.Type != problem.RateLimited || p.RetryAfter <= 0 {
			t.Fatalf("%s over the limit: %v", addr, err)
		}
	}
	e.advance(identity.ResetWindow)
	if err := e.svc.RequestPasswordReset(ctx, "bob@example.com", base); err != nil {
		t.Fatalf("after the window: %v", err)
	}
}
