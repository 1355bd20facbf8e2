package identity

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/services/metering"
	"github.com/ledgerlane/platform/services/metering/notify"
)

// Password reset (docs/portal.md, "Password reset"): a person asks for a
// link by e-mail address; the answer is the same whether or not the address
// has a portal user. The link carries a single-use token, stored only as its
// SHA-256, that works for PasswordResetTTL; setting a new password with it
// ends every session of that person.

// PortalToken is a single-use token mailed to a portal user.
type PortalToken struct {
	TokenHash string
	Purpose   string // TokenPasswordReset
	UserID    string
	CreatedAt time.Time
	ExpiresAt time.Time
	UsedAt    *time.Time
}

// Portal token purposes.
const (
	TokenPasswordReset = "reset"
	TokenVerifyEmail   = "verify"
)

// PortalTokenStore is the part of the Store behind mailed portal tokens.
type PortalTokenStore interface {
	// CreatePortalToken stores tk and puts m in the mail outbox, in one
	// transaction; metering.ErrNotFound when the user does not exist, metering.ErrConflict
	// when the hash does.
	CreatePortalToken(ctx context.Context, tk PortalToken, m notify.OutboxMail) error
	// PortalTokenByHash returns a token, used and expired ones too;
	// metering.ErrNotFound.
	PortalTokenByHash(ctx context.Context, hash string) (PortalToken, error)
	// ResetPassword, only while the reset token of hash is unused: marks it
	// and every other unused reset token of its user used at at, sets the
	// user's password hash, marks their address verified (the link reached
	// it) and deletes every session of the user, in one transaction. metering.ErrNotFound when the token is
	// unknown, of another purpose, or used.
	ResetPassword(ctx context.Context, hash, passwordHash string, at time.Time) error
	// VerifyEmail, only while the verification token of hash is unused:
	// marks it used at at and its user's address verified, in one
	// transaction; metering.ErrNotFound when the token is unknown, of another
	// purpose, or used.
	VerifyEmail(ctx context.Context, hash string, at time.Time) error
	// MarkEmailVerified marks a user's address verified; metering.ErrNotFound for an
	// unknown user.
	MarkEmailVerified(ctx context.Context, userID string) error
}

// Password reset rules.
const (
	// PasswordResetTTL is how long a reset link works.
	PasswordResetTTL = 30 * time.Minute
	// ResetRequests requests for one address within ResetWindow refuse
	// further requests for it until the window has passed.
	ResetRequests = 3
	ResetWindow   = time.Hour
)

var errReset = problem.New(problem.NotFound, "this password reset link is not valid any more; ask for a new one")

// RequestPasswordReset mails a reset link (linkBase followed by the token)
// to every portal user of address who can sign in, one per account. It
// answers nil whether or not there is one, so the answer never tells; only a
// malformed address (invalid input) and too many requests for the address
// (rate-limited, for any address alike) are refused.
func (s *Service) RequestPasswordReset(ctx context.Context, email, linkBase string) error {
	addr, err := normalizeEmail(email)
	if err != nil {
		return err
	}
	now := s.now()
	if wait := s.resets.Blocked(ctx, addr, now); wait > 0 {
		secs := int(math.Ceil(wait.Seconds()))
		return problem.New(problem.RateLimited,
			fmt.Sprintf("too many reset requests for this address; try again in %d minutes", (secs+59)/60)).WithRetryAfter(secs)
	}
	// Every request counts, known address or not, so the throttle says
	// nothing either.
	s.resets.Fail(ctx, addr, now)
	users, err := s.store.PortalLogins(ctx, addr)
	if err != nil {
		return fmt.Errorf("password reset: %w", err)
	}
	for _, u := range users {
		a, err := s.accounts.Account(ctx, u.AccountID)
		if err != nil {
			return fmt.Errorf("password reset: %w", err)
		}
		token := "pr_" + newToken()
		at := s.timestamp()
		exp := at.Add(PasswordResetTTL)
		m, err := notify.PasswordReset(notify.Link{AccountID: u.AccountID, AccountName: a.Name, To: u.Email, Name: u.Name,
			URL: linkBase + token, Expires: exp}, at)
		if err != nil {
			return fmt.Errorf("password reset: %w", err)
		}
		tk := PortalToken{TokenHash: metering.HashSecret(token), Purpose: TokenPasswordReset, UserID: u.ID, CreatedAt: at, ExpiresAt: exp}
		if err := s.store.CreatePortalToken(ctx, tk, m); err != nil {
			return fmt.Errorf("password reset: %w", err)
		}
		s.log.InfoContext(ctx, "portal password reset requested", "account_id", u.AccountID, "user_id", u.ID)
	}
	return nil
}

// PasswordResetUser returns the person a live reset token is for (for the
// form); otherwise a not-found problem.
func (s *Service) PasswordResetUser(ctx context.Context, token string) (PortalUser, error) {
	if !strings.HasPrefix(token, "pr_") || len(token) > 100 {
		return PortalUser{}, errReset
	}
	tk, err := s.store.PortalTokenByHash(ctx, metering.HashSecret(token))
	switch {
	case errors.Is(err, metering.ErrNotFound):
		return PortalUser{}, errReset
	case err != nil:
		return PortalUser{}, err
	case tk.Purpose != TokenPasswordReset || tk.UsedAt != nil || !s.now().Before(tk.ExpiresAt):
		return PortalUser{}, errReset
	}
	u, err := s.store.GetPortalUser(ctx, tk.UserID)
	if errors.Is(err, metering.ErrNotFound) {
		return PortalUser{}, errReset
	} else if err != nil {
		return PortalUser{}, err
	}
	u.PasswordHash = ""
	return u, nil
}

// ResetPassword sets a new password with a live reset token, uses the token
// up and ends every session of its person. It does not sign them in: they
// sign in with the new password.
func (s *Service) ResetPassword(ctx context.Context, token, password string) error {
	u, err := s.PasswordResetUser(ctx, token)
	if err != nil {
		return err
	}
	if err := CheckNewPassword(password, u.Email); err != nil {
		return err
	}
	if err := s.store.ResetPassword(ctx, metering.HashSecret(token), HashPassword(password), s.timestamp()); err != nil {
		if errors.Is(err, metering.ErrNotFound) {
			return errReset // used meanwhile
		}
		return fmt.Errorf("reset password: %w", err)
	}
	s.signins.Clear(ctx, u.Email)
	s.log.InfoContext(ctx, "portal password reset", "account_id", u.AccountID, "user_id", u.ID)
	return nil
}
