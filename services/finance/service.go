package finance

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/ledgerlane/platform/pkg/clock"
	"github.com/ledgerlane/platform/pkg/cursor"
	"github.com/ledgerlane/platform/pkg/logging"
	"github.com/ledgerlane/platform/pkg/problem"
)

// Clock tells the time; tests pass a fixed one.
type Clock func() time.Time

// Subdomain is what a subdomain service (debt, insights, net worth,
// recurring, bank sync) is built from: this kernel, which gives it the
// caller's scope, the clock, the main currency and store failures, and the
// subdomain's own Store.
type Subdomain[S any] struct {
	Kernel *Service
	Store  S
}

// Service answers the finance reads with the caller's grant applied: rows on
// excluded accounts or in excluded categories are invisible (not-found when
// asked for by id), and redacted field ids are stripped and listed.
//
// Errors it returns are *problem.Problem values, or a failure it cannot
// answer wrapped with context (Internal), which pkg/rpc logs and answers as
// an internal problem without detail (or as the unavailable problem the
// store put in its chain).
type Service struct {
	store   Store
	cursors *cursor.Codec
	now     Clock
	log     *slog.Logger
	// notifier hears of committed changes (the Notifier port, store.go).
	notifier Notifier
}

// Config assembles the kernel Service.
type Config struct {
	Store Store
	// Cursors signs and checks the list and sync cursors.
	Cursors *cursor.Codec
	// Notifier hears of committed changes (Notifier); nil: nobody does.
	Notifier Notifier
	// Clock defaults to time.Now; Log to discarding.
	Clock Clock
	Log   *slog.Logger
}

// NewService returns the kernel Service from cfg, filling defaults.
func NewService(cfg Config) *Service {
	n := cfg.Notifier
	if n == nil {
		n = nopNotifier{}
	}
	return &Service{store: cfg.Store, cursors: cfg.Cursors, notifier: n, now: clock.Or(cfg.Clock), log: logging.OrDiscard(cfg.Log)}
}

// Now is the service clock's time.
func (s *Service) Now() time.Time { return s.now() }

// Log is the service's logger, for subdomains.
func (s *Service) Log() *slog.Logger { return s.log }

// Caller is who a request is for: the finance user and the grant through
// which the client sees that user's data, and the metering account whose
// credential made the request.
type Caller struct {
	UserID  string
	GrantID string
	// OwnerAccountID is the metering account of the credential; it must
	// own the user.
	OwnerAccountID string
	// Mode is the credential's mode; it must be the user's (User.Mode).
	Mode string
	// CredentialID and IdempotencyKey name a write the edge admitted with an
	// Idempotency-Key: a create derives its new row's id from them
	// (DerivedID), so a retry whose first answer was lost after the commit
	// finds that row instead of making a second one.
	CredentialID   string
	IdempotencyKey string
}

// idNamespace is the UUID namespace of ids derived from idempotency keys.
var idNamespace = uuid.MustParse("5b0e3c1e-7f4a-4d6e-9d8b-2c61a3f0e9a4")

// DerivedID is the id a create under c makes: random without an
// Idempotency-Key, else a name-based UUID of the key in the scope the edge
// keys its idempotency records by (the credential, the user and the grant)
// and of what is created.
func (c Caller) DerivedID(kind string) string {
	if c.IdempotencyKey == "" {
		return uuid.NewString()
	}
	return uuid.NewSHA1(idNamespace, []byte(kind+"|"+c.UserID+"|"+c.GrantID+"|"+c.CredentialID+"|"+c.IdempotencyKey)).String()
}

// Result is a single-resource response with its envelope members.
type Result[T any] struct {
	Data           T
	RedactedFields []string
	Filtered       bool
	// Replayed is set when a versioned write was recognised as the retry of
	// one an earlier attempt with the same Idempotency-Key committed
	// (WriteMark): Data is the row that write left, and the answer carries
	// Idempotency-Replayed: true.
	Replayed bool
}

// Internal wraps a failure the service cannot answer itself (a store's,
// mostly) with what it was doing. It classifies nothing: the store already
// did (the postgres adapter's errors pass through pg.Error, so a database
// that does not answer is the 503 unavailable problem in the chain), and
// pkg/rpc answers a problem in the chain as that problem and anything else
// as an opaque internal error, which it logs.
func Internal(op string, err error) error {
	return fmt.Errorf("finance: %s: %w", op, err)
}

// Invalid is the 400 invalid-input problem naming field.
func Invalid(field, detail string) error {
	return problem.New(problem.InvalidInput, detail).WithField(field)
}

// IsUUID accepts only the canonical 36-character form; uuid.Parse alone also
// takes braces and urn: prefixes.
func IsUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	_, err := uuid.Parse(s)
	return err == nil
}

// RequiredUUID reads id field: a UUID, lower-cased; invalid-input naming
// field otherwise.
func RequiredUUID(s, field string) (string, error) {
	if !IsUUID(s) {
		return "", Invalid(field, field+" must be a UUID")
	}
	return strings.ToLower(s), nil
}

// OptionalUUID is RequiredUUID for a field that may be empty.
func OptionalUUID(s, field string) (string, error) {
	if s == "" {
		return "", nil
	}
	return RequiredUUID(s, field)
}

// OptionalDate reads date field (YYYY-MM-DD), zero when empty;
// invalid-input naming field otherwise.
func OptionalDate(s, field string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	d, err := ParseDate(s)
	if err != nil {
		return time.Time{}, Invalid(field, field+" must be a date (YYYY-MM-DD)")
	}
	return d, nil
}

// dateRange reads the optional start_date and end_date of a list route;
// start after end is invalid-input naming start_date.
func dateRange(start, end string) (from, to time.Time, err error) {
	if from, err = OptionalDate(start, "start_date"); err != nil {
		return from, to, err
	}
	if to, err = OptionalDate(end, "end_date"); err != nil {
		return from, to, err
	}
	if !from.IsZero() && !to.IsZero() && from.After(to) {
		return from, to, Invalid("start_date", "start_date is after end_date")
	}
	return from, to, nil
}

func dateOrEmpty(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Format(DateLayout)
}

// GrantCheck says whether a finance user, a grant and a metering account
// belong together.
type GrantCheck struct {
	// UserInAccount: the user exists and the account owns it.
	UserInAccount bool
	// GrantOfUser: the grant exists and is one of the user's grants.
	GrantOfUser bool
	// UserOfMode: the user is of the credential's mode (User.Mode).
	UserOfMode bool
}

// OK reports whether the user is the account's and of the mode, and the
// grant the user's.
func (c GrantCheck) OK() bool { return c.UserInAccount && c.GrantOfUser && c.UserOfMode }

// CheckGrant tells the metering service, before it issues a finance
// credential of mode, whether userID is a user of that mode owned by the
// metering account accountID and grantID one of that user's grants. Unknown and malformed
// ids are simply not members. Its only error is an internal problem.
//
// This is internal: no grant applies, and it is reached only over the
// DirectoryService, which has no HTTP route.
func (s *Service) CheckGrant(ctx context.Context, accountID, userID, grantID, mode string) (GrantCheck, error) {
	_, check, err := s.lookupGrant(ctx, accountID, userID, grantID, mode)
	return check, err
}

// lookupGrant reads the grant and the owner of the user; the grant is
// meaningful only when the check is OK. Every request's scope and every
// credential issue go through it, so both apply the same rule.
func (s *Service) lookupGrant(ctx context.Context, accountID, userID, grantID, mode string) (Grant, GrantCheck, error) {
	var check GrantCheck
	u, err := s.store.GetUser(ctx, userID)
	switch {
	case errors.Is(err, ErrNotFound):
	case err != nil:
		return Grant{}, check, Internal("get user", err)
	default:
		check.UserInAccount = accountID != "" && u.OwnerAccountID == accountID
		check.UserOfMode = ModeOf(u.Mode) == ModeOf(mode)
	}
	g, err := s.store.GetGrant(ctx, grantID)
	switch {
	case errors.Is(err, ErrNotFound):
	case err != nil:
		return Grant{}, check, Internal("get grant", err)
	default:
		check.GrantOfUser = g.UserID == userID
	}
	return g, check, nil
}
