package identity

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/services/metering"
	"github.com/ledgerlane/platform/services/metering/notify"
)

// E-mail verification (docs/portal.md, "E-mail verification"): sign-up mails
// a single-use link; until the person follows it, they may do everything in
// the portal except create live credentials, which spend money and reach
// production. An accepted invitation or a password reset verifies too: both
// links arrived at the address.

// Verification rules.
const (
	// VerifyEmailTTL is how long a verification link works.
	VerifyEmailTTL = 48 * time.Hour
	// VerifyMails verification mails per person within VerifyWindow.
	VerifyMails  = 3
	VerifyWindow = time.Hour
)

var errVerify = problem.New(problem.NotFound, "this verification link is not valid any more; send a new one from the portal")

// ErrUnverifiedLive refuses a live credential to a person whose address is
// not verified yet.
var ErrUnverifiedLive = problem.New(problem.InvalidInput,
	"confirm your e-mail address first: live credentials need a verified address (test ones do not)").WithField("mode")

// ErrUnverifiedConnections refuses connections:manage to a person whose
// address is not verified: the scope lets a key send people to third-party
// accounting platforms and act there, test keys included.
var ErrUnverifiedConnections = problem.New(problem.InvalidInput,
	"confirm your e-mail address first: connections:manage needs a verified address").WithField("scopes")

// RequireVerified answers ErrUnverifiedLive or ErrUnverifiedConnections
// when u may not create a credential of mode with scopes.
func RequireVerified(u PortalUser, mode string, scopes []string) error {
	switch {
	case u.EmailVerified:
		return nil
	case mode == metering.ModeLive:
		return ErrUnverifiedLive
	case slices.Contains(scopes, "connections:manage"):
		return ErrUnverifiedConnections
	}
	return nil
}

// SendVerification mails u a verification link (linkBase followed by the
// token). A verified person gets none (nil); more than VerifyMails within
// VerifyWindow answer rate-limited.
func (s *Service) SendVerification(ctx context.Context, userID, linkBase string) error {
	u, err := s.store.GetPortalUser(ctx, userID)
	if err != nil {
		return fmt.Errorf("verification: %w", err)
	}
	if u.EmailVerified {
		return nil
	}
	now := s.now()
	if wait := s.verifies.Blocked(ctx, u.ID, now); wait > 0 {
		secs := int(math.Ceil(wait.Seconds()))
		return problem.New(problem.RateLimited,
			fmt.Sprintf("a verification e-mail was sent %d times this hour; try again in %d minutes", VerifyMails, (secs+59)/60)).WithRetryAfter(secs)
	}
	s.verifies.Fail(ctx, u.ID, now)
	a, err := s.accounts.Account(ctx, u.AccountID)
	if err != nil {
		return fmt.Errorf("verification: %w", err)
	}
	token := "pv_" + newToken()
	at := s.timestamp()
	exp := at.Add(VerifyEmailTTL)
	m, err := notify.Verification(notify.Link{AccountID: u.AccountID, AccountName: a.Name, To: u.Email, Name: u.Name,
		URL: linkBase + token, Expires: exp}, at)
	if err != nil {
		return fmt.Errorf("verification: %w", err)
	}
	tk := PortalToken{TokenHash: metering.HashSecret(token), Purpose: TokenVerifyEmail, UserID: u.ID, CreatedAt: at, ExpiresAt: exp}
	if err := s.store.CreatePortalToken(ctx, tk, m); err != nil {
		return fmt.Errorf("verification: %w", err)
	}
	s.log.InfoContext(ctx, "portal verification mail queued", "account_id", u.AccountID, "user_id", u.ID)
	return nil
}

// VerifyEmail uses a live verification token up and marks its person's
// address verified; otherwise a not-found problem.
func (s *Service) VerifyEmail(ctx context.Context, token string) error {
	if !strings.HasPrefix(token, "pv_") || len(token) > 100 {
		return errVerify
	}
	hash := metering.HashSecret(token)
	tk, err := s.store.PortalTokenByHash(ctx, hash)
	switch {
	case errors.Is(err, metering.ErrNotFound):
		return errVerify
	case err != nil:
		return err
	case tk.Purpose != TokenVerifyEmail || tk.UsedAt != nil || !s.now().Before(tk.ExpiresAt):
		return errVerify
	}
	if err := s.store.VerifyEmail(ctx, hash, s.timestamp()); err != nil {
		if errors.Is(err, metering.ErrNotFound) {
			return errVerify
		}
		return fmt.Errorf("verify e-mail: %w", err)
	}
	s.log.InfoContext(ctx, "portal e-mail verified", "user_id", tk.UserID)
	return nil
}
