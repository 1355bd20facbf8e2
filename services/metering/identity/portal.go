package identity

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"net/mail"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"golang.org/x/crypto/argon2"

	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/services/metering"
	"github.com/ledgerlane/platform/services/metering/notify"
)

// The portal's people and sessions (docs/portal.md). The HTML is the
// gateway's (gateway/portal); the rules are here.

// PortalSession is a signed-in person. Only the SHA-256 of its token is
// stored, like a credential's secret.
type PortalSession struct {
	TokenHash string
	UserID    string
	AccountID string
	// CSRFToken is the synchronizer token every form of the session carries.
	CSRFToken string
	CreatedAt time.Time
	ExpiresAt time.Time
}

// PortalStore is the part of the Store behind portal sign-in and sessions.
type PortalStore interface {
	// PortalLogins returns every portal user, of any account, whose e-mail
	// is email (lowercase) and who has a password, oldest first.
	PortalLogins(ctx context.Context, email string) ([]PortalUser, error)
	// GetPortalUser returns a user by id; metering.ErrNotFound when unknown.
	GetPortalUser(ctx context.Context, id string) (PortalUser, error)
	// CreateSession stores s; metering.ErrNotFound when its user does not exist,
	// metering.ErrConflict when its TokenHash does.
	CreateSession(ctx context.Context, s PortalSession) error
	// SessionByHash returns a session, expired ones too; metering.ErrNotFound.
	SessionByHash(ctx context.Context, hash string) (PortalSession, error)
	// DeleteSession removes one session; removing an unknown one is no error.
	DeleteSession(ctx context.Context, hash string) error
	// DeleteUserSessions removes every session of a user.
	DeleteUserSessions(ctx context.Context, userID string) error
	// InviteUser adds u (with its InviteHash) and puts m in the mail outbox,
	// in one transaction; metering.ErrConflict when the account has a user with the
	// same e-mail address, metering.ErrNotFound for an unknown account.
	InviteUser(ctx context.Context, u PortalUser, m notify.OutboxMail) error
	// PortalUserByInvite returns the user with a pending invitation of
	// hash, expired ones too; metering.ErrNotFound.
	PortalUserByInvite(ctx context.Context, hash string) (PortalUser, error)
	// AcceptInvite sets the invited user's password and name and clears the
	// invitation, only while it is pending (metering.ErrNotFound otherwise).
	AcceptInvite(ctx context.Context, userID, passwordHash, name string) error
}

// Portal rules.
const (
	// DefaultSessionTTL is how long a session lasts from sign-in; it is not
	// extended by use.
	DefaultSessionTTL = 12 * time.Hour
	// MinPasswordLen and MaxPasswordLen bound a password, in characters.
	MinPasswordLen = 12
	MaxPasswordLen = 256
	// SignInFailures failed sign-ins for one address within SignInWindow
	// refuse further attempts for that address until the window has passed.
	SignInFailures = 5
	SignInWindow   = 15 * time.Minute
	// SignUps sign-ups with one address within SignUpWindow refuse further
	// sign-ups with it until the window has passed. Counted per address, not
	// per client IP: the gateway passes no client address to metering.
	SignUps      = 5
	SignUpWindow = time.Hour
	// Invites invitations of one account within InviteWindow refuse
	// further ones until the window has passed.
	Invites      = 10
	InviteWindow = time.Hour
)

// ErrSignIn is the one answer to a wrong address or password: it never says
// which, nor whether the address has a user.
var ErrSignIn = problem.New(problem.Unauthorized, "the e-mail address or password is not right")

// errSession answers an unknown, ended or expired session.
var errSession = problem.New(problem.Unauthorized, "the session has ended; sign in again")

// argon2id parameters: the OWASP minimum (19 MiB, 2 passes, 1 lane).
const (
	argonMemory  = 19 * 1024
	argonTime    = 2
	argonThreads = 1
	argonKeyLen  = 32
	argonSaltLen = 16
)

// argonCost is the memory (KiB) and passes new hashes use. A test binary
// (testing.Testing) hashes with 64 KiB and 1 pass: the suites sign people
// up and in hundreds of times under the race detector, where one OWASP
// hash costs about half a second. A hash names its parameters, so
// CheckPassword reads either, and no binary built without `go test` can
// take the cheap path (TestProductionCost pins the OWASP figures).
var argonCost = func() (memory, time uint32) {
	if testing.Testing() {
		return 64, 1
	}
	return argonMemory, argonTime
}

// hashSlots bounds the argon2id computations running at once, so a burst of
// sign-ins cannot take more than hashSlots × 19 MiB of memory.
var hashSlots = make(chan struct{}, 4)

func idKey(password, salt []byte, t, m uint32, p uint8, n uint32) []byte {
	hashSlots <- struct{}{}
	defer func() { <-hashSlots }()
	return argon2.IDKey(password, salt, t, m, p, n)
}

// HashPassword returns password's argon2id hash in the PHC string format.
func HashPassword(password string) string {
	m, t := argonCost()
	return hashPassword(password, m, t)
}

func hashPassword(password string, m, t uint32) string {
	salt := make([]byte, argonSaltLen)
	_, _ = rand.Read(salt)
	key := idKey([]byte(password), salt, t, m, argonThreads, argonKeyLen)
	enc := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, m, t, argonThreads,
		enc.EncodeToString(salt), enc.EncodeToString(key))
}

// CheckPassword reports whether password matches hash (HashPassword's
// format, with the parameters it names), in constant time.
func CheckPassword(hash, password string) bool {
	parts := strings.Split(hash, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return false
	}
	var v int
	var m, t uint32
	var p uint8
	if _, err := fmt.Sscanf(parts[2], "v=%d", &v); err != nil || v != argon2.Version {
		return false
	}
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &m, &t, &p); err != nil || m == 0 || m > 1<<20 || t == 0 || t > 16 || p == 0 {
		return false
	}
	enc := base64.RawStdEncoding
	salt, err1 := enc.DecodeString(parts[4])
	want, err2 := enc.DecodeString(parts[5])
	if err1 != nil || err2 != nil || len(want) == 0 || len(want) > 128 {
		return false
	}
	got := idKey([]byte(password), salt, t, m, p, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1
}

// dummyHash is checked against when an address has no user, so a sign-in
// takes as long whether or not it does.
var dummyHash = sync.OnceValue(func() string { return HashPassword(newToken()) })

// commonPasswords are well-known passwords of 12 characters or more (from
// the lists breached-password checkers start with), lower case.
var commonPasswords = map[string]bool{
	"123456789012": true, "1234567890123": true, "12345678901234": true, "123456789123": true,
	"111111111111": true, "000000000000": true, "qwertyuiopas": true, "qwertyuiop12": true,
	"qwertyqwerty": true, "1q2w3e4r5t6y": true, "1qaz2wsx3edc": true, "password1234": true,
	"password123!": true, "passwordpassword": true, "password12345": true, "iloveyou1234": true,
	"letmein12345": true, "welcome12345": true, "administrator": true, "abc123abc123": true,
	"abcdefghijkl": true, "changeme1234": true, "football1234": true, "baseball1234": true,
	"superman1234": true, "trustno11234": true, "monkey123456": true, "dragon123456": true,
}

// trivial reports a password made of fewer than five distinct characters
// ("aaaaaaaaaaaa", "abababababab") or one straight run ("abcdefghijkl",
// "987654321098" is not one: the run breaks).
func trivial(password string) bool {
	rs := []rune(password)
	distinct := map[rune]bool{}
	up, down := true, true
	for i, r := range rs {
		distinct[r] = true
		if i > 0 {
			up = up && r == rs[i-1]+1
			down = down && r == rs[i-1]-1
		}
	}
	return len(distinct) < 5 || up || down
}

// CheckNewPassword applies the password rules: 12 to 256 characters, not the
// e-mail address, not a well-known password, not a trivial repeat or run.
func CheckNewPassword(password, email string) error {
	n := utf8.RuneCountInString(password)
	switch {
	case n < MinPasswordLen:
		return problem.New(problem.InvalidInput, fmt.Sprintf("the password must have at least %d characters", MinPasswordLen)).WithField("password")
	case n > MaxPasswordLen:
		return problem.New(problem.InvalidInput, fmt.Sprintf("the password must have at most %d characters", MaxPasswordLen)).WithField("password")
	case strings.EqualFold(strings.TrimSpace(password), strings.TrimSpace(email)):
		return problem.New(problem.InvalidInput, "the password must not be the e-mail address").WithField("password")
	case commonPasswords[strings.ToLower(password)]:
		return problem.New(problem.InvalidInput, "this password is one of the most common ones; choose another").WithField("password")
	case trivial(password):
		return problem.New(problem.InvalidInput, "the password must not be a repeat of a few characters or a straight run; choose another").WithField("password")
	}
	return nil
}

func normalizeEmail(email string) (string, error) {
	addr, err := mail.ParseAddress(strings.TrimSpace(email))
	if err != nil || addr.Name != "" || len(addr.Address) > 254 || !plainAddress.MatchString(addr.Address) {
		return "", problem.New(problem.InvalidInput, "email must be a plain e-mail address").WithField("email")
	}
	return strings.ToLower(addr.Address), nil
}

// plainAddress is what every mail server takes (RFC 5321's dot-string and a
// dotted host name, ASCII): net/mail also parses quoted local parts, spaces,
// comments and bare host names, which SMTP servers and libraries refuse, and
// a stored address that can never be sent to is a mail retried forever.
var plainAddress = regexp.MustCompile("^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(\\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*@[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)+$")

// newToken is 32 random bytes in the secrets' alphabet.
func newToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return metering.TokenEncoding.EncodeToString(b)
}

// SessionInfo is what the portal knows of a signed-in person.
type SessionInfo struct {
	// ID names the session without being its secret: the first 16 hex
	// digits of the token's hash, "ps_" in front. The edge forwards it as the
	// principal's credential id (logs, traces).
	ID        string
	User      PortalUser
	Account   metering.Account
	CSRFToken string
	ExpiresAt time.Time
}

// SignUp creates an account on the free plan, billed in currency, with its
// first portal user, and signs that user in. Whether the address is used in
// another account is never said: it is allowed.
func (s *Service) SignUp(ctx context.Context, email, password, accountName, name string) (string, SessionInfo, error) {
	email, err := normalizeEmail(email)
	if err != nil {
		return "", SessionInfo{}, err
	}
	now := s.now()
	if wait := s.signups.Blocked(ctx, email, now); wait > 0 {
		secs := int(math.Ceil(wait.Seconds()))
		return "", SessionInfo{}, problem.New(problem.RateLimited,
			fmt.Sprintf("too many sign-ups with this address; try again in %d minutes", (secs+59)/60)).WithRetryAfter(secs)
	}
	if err := CheckNewPassword(password, email); err != nil {
		return "", SessionInfo{}, err
	}
	if strings.TrimSpace(name) == "" {
		name = email
	}
	if err := metering.CheckName(strings.TrimSpace(name)); err != nil {
		return "", SessionInfo{}, err
	}
	a, err := s.accounts.CreateAccount(ctx, accountName, metering.PlanFree, metering.USD)
	if err != nil {
		return "", SessionInfo{}, err
	}
	u := PortalUser{ID: uuid.NewString(), AccountID: a.ID, Email: email, Name: strings.TrimSpace(name),
		PasswordHash: HashPassword(password), CreatedAt: s.timestamp()}
	if err := s.store.AddPortalUser(ctx, u); err != nil {
		return "", SessionInfo{}, fmt.Errorf("sign up: %w", err)
	}
	// Only accounts created count: a rejected password costs nothing.
	s.signups.Fail(ctx, email, now)
	s.log.InfoContext(ctx, "portal sign-up", "account_id", a.ID, "user_id", u.ID)
	return s.startSession(ctx, u, a)
}

// SignIn checks an address and password and starts a session. Every mismatch
// is ErrSignIn; SignInFailures failures for an address within SignInWindow
// answer rate-limited until the window has passed, for any address.
func (s *Service) SignIn(ctx context.Context, email, password string) (string, SessionInfo, error) {
	// The throttle counts per address as it will be looked up, so spelling
	// one address differently ("<a@b.c>", "A@B.C") does not get more tries.
	key := strings.ToLower(strings.TrimSpace(email))
	addr, addrErr := normalizeEmail(email)
	if addrErr == nil {
		key = addr
	}
	now := s.now()
	if wait := s.signins.Blocked(ctx, key, now); wait > 0 {
		secs := int(math.Ceil(wait.Seconds()))
		return "", SessionInfo{}, problem.New(problem.RateLimited,
			fmt.Sprintf("too many sign-in attempts for this address; try again in %d minutes", (secs+59)/60)).WithRetryAfter(secs)
	}
	var users []PortalUser
	if addrErr == nil {
		var err error
		if users, err = s.store.PortalLogins(ctx, addr); err != nil {
			return "", SessionInfo{}, fmt.Errorf("sign in: %w", err)
		}
	}
	if len(users) == 0 {
		CheckPassword(dummyHash(), password)
	}
	// An address may have a user in several accounts: the oldest whose
	// password matches is signed in.
	for _, u := range users {
		if CheckPassword(u.PasswordHash, password) {
			a, err := s.accounts.Account(ctx, u.AccountID)
			if err != nil {
				return "", SessionInfo{}, fmt.Errorf("sign in: %w", err)
			}
			s.signins.Clear(ctx, key)
			return s.startSession(ctx, u, a)
		}
	}
	s.signins.Fail(ctx, key, now)
	s.log.InfoContext(ctx, "portal sign-in refused")
	return "", SessionInfo{}, ErrSignIn
}

func (s *Service) startSession(ctx context.Context, u PortalUser, a metering.Account) (string, SessionInfo, error) {
	token := "ps_" + newToken()
	now := s.timestamp()
	ps := PortalSession{TokenHash: metering.HashSecret(token), UserID: u.ID, AccountID: u.AccountID, CSRFToken: newToken(),
		CreatedAt: now, ExpiresAt: now.Add(DefaultSessionTTL)}
	if err := s.store.CreateSession(ctx, ps); err != nil {
		return "", SessionInfo{}, fmt.Errorf("start session: %w", err)
	}
	u.PasswordHash = ""
	return token, SessionInfo{ID: sessionID(ps.TokenHash), User: u, Account: a, CSRFToken: ps.CSRFToken, ExpiresAt: ps.ExpiresAt}, nil
}

// Session returns the live session of token; an unknown, ended or expired
// one answers unauthorized (and an expired one is removed).
func (s *Service) Session(ctx context.Context, token string) (SessionInfo, error) {
	if !strings.HasPrefix(token, "ps_") || len(token) > 100 {
		return SessionInfo{}, errSession
	}
	ps, err := s.store.SessionByHash(ctx, metering.HashSecret(token))
	switch {
	case errors.Is(err, metering.ErrNotFound):
		return SessionInfo{}, errSession
	case err != nil:
		return SessionInfo{}, fmt.Errorf("session: %w", err)
	}
	if !s.now().Before(ps.ExpiresAt) {
		_ = s.store.DeleteSession(ctx, ps.TokenHash)
		return SessionInfo{}, errSession
	}
	u, err := s.store.GetPortalUser(ctx, ps.UserID)
	if errors.Is(err, metering.ErrNotFound) {
		return SessionInfo{}, errSession
	} else if err != nil {
		return SessionInfo{}, fmt.Errorf("session: %w", err)
	}
	a, err := s.accounts.Account(ctx, ps.AccountID)
	if err != nil {
		return SessionInfo{}, fmt.Errorf("session: %w", err)
	}
	u.PasswordHash = ""
	return SessionInfo{ID: sessionID(ps.TokenHash), User: u, Account: a, CSRFToken: ps.CSRFToken, ExpiresAt: ps.ExpiresAt}, nil
}

func sessionID(tokenHash string) string { return "ps_" + tokenHash[:16] }

// Person returns the account's person id, without the password hash; a
// person of another account is not found, exactly as an unknown one.
func (s *Service) Person(ctx context.Context, accountID, id string) (PortalUser, error) {
	u, err := s.store.GetPortalUser(ctx, id)
	if errors.Is(err, metering.ErrNotFound) || err == nil && u.AccountID != accountID {
		return PortalUser{}, problem.New(problem.NotFound, "no such person")
	} else if err != nil {
		return PortalUser{}, fmt.Errorf("person: %w", err)
	}
	u.PasswordHash = ""
	return u, nil
}

// SignOut ends the session of token, or with everywhere every session of
// its user. An unknown token is no error.
func (s *Service) SignOut(ctx context.Context, token string, everywhere bool) error {
	hash := metering.HashSecret(token)
	if everywhere {
		ps, err := s.store.SessionByHash(ctx, hash)
		if errors.Is(err, metering.ErrNotFound) {
			return nil
		} else if err != nil {
			return err
		}
		return s.store.DeleteUserSessions(ctx, ps.UserID)
	}
	return s.store.DeleteSession(ctx, hash)
}

// PortalKeyParams is a key asked for in the portal.
type PortalKeyParams struct {
	Name   string
	Mode   string
	Scopes []string // empty: the defaults
}

// IssuePortalKey issues a conversion API key for the account. The portal is
// never an operator: the reserved scopes are refused.
func (s *Service) IssuePortalKey(ctx context.Context, accountID string, p PortalKeyParams) (string, metering.Credential, error) {
	return s.accounts.IssueCredential(ctx, metering.IssueParams{AccountID: accountID, Name: p.Name, Kind: metering.KindAPIKey,
		Surface: metering.SurfaceConversion, Mode: p.Mode, Scopes: p.Scopes})
}

// PortalKeys returns the account's conversion API keys, revoked ones too.
func (s *Service) PortalKeys(ctx context.Context, accountID string) ([]metering.Credential, error) {
	all, err := s.accounts.ListCredentials(ctx, accountID)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(all, func(c metering.Credential) bool {
		return c.Surface != metering.SurfaceConversion || c.Kind != metering.KindAPIKey
	}), nil
}

// RevokeAccountCredential revokes the account's credential id; a credential
// of another account is not found, exactly as an unknown one.
func (s *Service) RevokeAccountCredential(ctx context.Context, accountID, id string) error {
	all, err := s.accounts.ListCredentials(ctx, accountID)
	if err != nil {
		return err
	}
	if !slices.ContainsFunc(all, func(c metering.Credential) bool { return c.ID == id }) {
		return problem.New(problem.NotFound, "no such key")
	}
	return s.accounts.Revoke(ctx, id)
}

// InviteTTL is how long an invitation link works.
const InviteTTL = 7 * 24 * time.Hour

var errInvite = problem.New(problem.NotFound, "this invitation link is not valid any more; ask for a new one")

// Invite adds a person to the account and mails them a link to choose a
// password: linkBase followed by the invitation token. The link is valid for
// InviteTTL. inviter names who invited them in the mail.
func (s *Service) Invite(ctx context.Context, accountID string, inviter PortalUser, email, linkBase string) (PortalUser, error) {
	// An invitation mails a stranger in the account's name: only people
	// who proved their own address may send one, and an account sends at
	// most Invites an InviteWindow.
	if !inviter.EmailVerified {
		return PortalUser{}, problem.New(problem.InvalidInput,
			"confirm your e-mail address first: invitations need a verified address").WithField("email")
	}
	email, err := normalizeEmail(email)
	if err != nil {
		return PortalUser{}, err
	}
	now0 := s.now()
	if wait := s.invites.Blocked(ctx, accountID, now0); wait > 0 {
		secs := int(math.Ceil(wait.Seconds()))
		return PortalUser{}, problem.New(problem.RateLimited,
			fmt.Sprintf("the account sent %d invitations within the hour; try again in %d minutes", Invites, (secs+59)/60)).WithRetryAfter(secs)
	}
	s.invites.Fail(ctx, accountID, now0)
	a, err := s.accounts.Account(ctx, accountID)
	if err != nil {
		return PortalUser{}, err
	}
	token := "pi_" + newToken()
	now := s.timestamp()
	exp := now.Add(InviteTTL)
	u := PortalUser{ID: uuid.NewString(), AccountID: accountID, Email: email, Name: email, InviteHash: metering.HashSecret(token),
		InviteExpiresAt: &exp, CreatedAt: now}
	m, err := notify.Invitation(notify.Link{AccountID: accountID, AccountName: a.Name, To: email, Inviter: inviter.Email,
		URL: linkBase + token, Expires: exp}, now)
	if err != nil {
		return PortalUser{}, fmt.Errorf("invite: %w", err)
	}
	if err := s.store.InviteUser(ctx, u, m); err != nil {
		if errors.Is(err, metering.ErrConflict) {
			return PortalUser{}, problem.New(problem.Conflict, "the account already has a user with this e-mail address").WithField("email")
		}
		return PortalUser{}, fmt.Errorf("invite: %w", err)
	}
	s.log.InfoContext(ctx, "portal invitation", "account_id", accountID, "user_id", u.ID, "by", inviter.ID)
	return u, nil
}

// Invitation returns the pending, unexpired invitation of token and its
// account; otherwise a not-found problem.
func (s *Service) Invitation(ctx context.Context, token string) (PortalUser, metering.Account, error) {
	if !strings.HasPrefix(token, "pi_") || len(token) > 100 {
		return PortalUser{}, metering.Account{}, errInvite
	}
	u, err := s.store.PortalUserByInvite(ctx, metering.HashSecret(token))
	switch {
	case errors.Is(err, metering.ErrNotFound):
		return PortalUser{}, metering.Account{}, errInvite
	case err != nil:
		return PortalUser{}, metering.Account{}, err
	case u.InviteExpiresAt == nil || !s.now().Before(*u.InviteExpiresAt):
		return PortalUser{}, metering.Account{}, errInvite
	}
	a, err := s.accounts.Account(ctx, u.AccountID)
	if err != nil {
		return PortalUser{}, metering.Account{}, err
	}
	return u, a, nil
}

// AcceptInvite sets the invited person's password and name and signs them in.
func (s *Service) AcceptInvite(ctx context.Context, token, password, name string) (string, SessionInfo, error) {
	u, a, err := s.Invitation(ctx, token)
	if err != nil {
		return "", SessionInfo{}, err
	}
	if err := CheckNewPassword(password, u.Email); err != nil {
		return "", SessionInfo{}, err
	}
	name = strings.TrimSpace(name)
	if name == "" {
		name = u.Email
	}
	if err := metering.CheckName(name); err != nil {
		return "", SessionInfo{}, err
	}
	if err := s.store.AcceptInvite(ctx, u.ID, HashPassword(password), name); err != nil {
		if errors.Is(err, metering.ErrNotFound) {
			return "", SessionInfo{}, errInvite
		}
		return "", SessionInfo{}, err
	}
	// The invitation link reached the address: it is verified.
	if err := s.store.MarkEmailVerified(ctx, u.ID); err != nil {
		return "", SessionInfo{}, fmt.Errorf("accept invitation: %w", err)
	}
	u.Name, u.InviteHash, u.InviteExpiresAt, u.EmailVerified = name, "", nil, true
	return s.startSession(ctx, u, a)
}

// AddPortalUser adds a person to the account; they receive its usage alerts.
func (s *Service) AddPortalUser(ctx context.Context, accountID, email, name string) (PortalUser, error) {
	addr, err := mail.ParseAddress(strings.TrimSpace(email))
	if err != nil || addr.Name != "" || len(addr.Address) > 254 || !plainAddress.MatchString(addr.Address) {
		return PortalUser{}, problem.New(problem.InvalidInput, "email must be a plain e-mail address").WithField("email")
	}
	name = strings.TrimSpace(name)
	if err := metering.CheckName(name); err != nil {
		return PortalUser{}, err
	}
	if _, err := s.accounts.Account(ctx, accountID); err != nil {
		return PortalUser{}, err
	}
	// The operator who adds a person (meteringctl, the demo) vouches for
	// the address: it counts as verified.
	u := PortalUser{ID: uuid.NewString(), AccountID: accountID, Email: strings.ToLower(addr.Address), Name: name, CreatedAt: s.timestamp(),
		EmailVerified: true}
	if err := s.store.AddPortalUser(ctx, u); err != nil {
		if errors.Is(err, metering.ErrConflict) {
			return PortalUser{}, problem.New(problem.Conflict, "the account already has a user with this e-mail address").WithField("email")
		}
		return PortalUser{}, err
	}
	return u, nil
}

// PortalUsers returns the account's people.
func (s *Service) PortalUsers(ctx context.Context, accountID string) ([]PortalUser, error) {
	return s.store.PortalUsers(ctx, accountID)
}
