package sandboxlink

import (
	"cmp"
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/services/finance"
)

// Limits bound what one account can make in the sandbox, so a test key
// cannot grow the finance store without end. Zero fields take the defaults.
type Limits struct {
	// UsersPerAccount: test-mode finance users per metering account (10).
	UsersPerAccount int
	// LinksPerUser: links of any status per user (5). A refused start
	// (wrong credentials, an institution down) stores nothing and does not
	// count.
	LinksPerUser int
	// MFAAttempts: wrong codes before a link fails (3).
	MFAAttempts int
	// MFAWindow: how long a link waits for its MFA code (10 minutes).
	MFAWindow time.Duration
}

// DefaultLimits are the limits docs/finance-sandbox.md states.
var DefaultLimits = Limits{UsersPerAccount: 10, LinksPerUser: 5, MFAAttempts: 3, MFAWindow: 10 * time.Minute}

func (l Limits) orDefaults() Limits {
	d := DefaultLimits
	return Limits{UsersPerAccount: cmp.Or(l.UsersPerAccount, d.UsersPerAccount), LinksPerUser: cmp.Or(l.LinksPerUser, d.LinksPerUser),
		MFAAttempts: cmp.Or(l.MFAAttempts, d.MFAAttempts), MFAWindow: cmp.Or(l.MFAWindow, d.MFAWindow)}
}

// Config is what the Service is built from.
type Config struct {
	Kernel  *finance.Service
	Store   Store
	History HistoryFunc
	Limits  Limits
}

// Service is the finance sandbox.
type Service struct {
	kernel  *finance.Service
	store   Store
	history HistoryFunc
	limits  Limits
}

// NewService returns the sandbox over cfg.
func NewService(cfg Config) *Service {
	return &Service{kernel: cfg.Kernel, store: cfg.Store, history: cfg.History, limits: cfg.Limits.orDefaults()}
}

// Owner is who calls: the metering account, in the credential's mode. The
// sandbox acts in test mode only; the portal calls it as the account holder
// in test mode.
type Owner struct {
	AccountID string
	Mode      string
}

// ModeTest is the only mode the sandbox serves.
const ModeTest = "test"

func (s *Service) check(o Owner) error {
	if o.Mode != ModeTest {
		return problem.New(problem.TestModeOnly,
			"the finance sandbox is test mode only: call it with a test credential (ak_test_… or at_test_…) carrying finance_sandbox:manage")
	}
	if o.AccountID == "" {
		return problem.New(problem.Unauthorized, "a credential is required")
	}
	return nil
}

// now is the kernel's clock at the stores' precision, so what is written
// reads back equal.
func (s *Service) now() time.Time { return s.kernel.Now().UTC().Truncate(time.Microsecond) }

// Institutions is the catalogue, for an owner in test mode.
func (s *Service) Institutions(o Owner) ([]Institution, error) {
	if err := s.check(o); err != nil {
		return nil, err
	}
	return Institutions(), nil
}

// MaxNameLength bounds a sandbox user's name.
const MaxNameLength = 200

// CreateUser makes a test-mode finance user of the owner account.
func (s *Service) CreateUser(ctx context.Context, o Owner, name string) (finance.User, error) {
	if err := s.check(o); err != nil {
		return finance.User{}, err
	}
	name = strings.TrimSpace(name)
	switch {
	case name == "":
		name = "Sandbox user"
	case len(name) > MaxNameLength:
		return finance.User{}, finance.Invalid("name", fmt.Sprintf("name is longer than %d bytes", MaxNameLength))
	case !finance.Printable(name):
		return finance.User{}, finance.Invalid("name", "name must be text without control characters")
	}
	u := finance.User{ID: uuid.NewString(), Name: name, OwnerAccountID: o.AccountID, Mode: ModeTest, CreatedAt: s.now()}
	err := s.store.CreateSandboxUser(ctx, u, s.limits.UsersPerAccount)
	if errors.Is(err, finance.ErrLimitReached) {
		return finance.User{}, problem.New(problem.SandboxLimitReached,
			fmt.Sprintf("this account already has %d sandbox users, the most it may have", s.limits.UsersPerAccount))
	}
	if err != nil {
		return finance.User{}, finance.Internal("create sandbox user", err)
	}
	s.kernel.Log().InfoContext(ctx, "sandbox user created", "user_id", u.ID, "account_id", o.AccountID)
	return u, nil
}

// Users lists the owner account's sandbox users.
func (s *Service) Users(ctx context.Context, o Owner) ([]finance.User, error) {
	if err := s.check(o); err != nil {
		return nil, err
	}
	us, err := s.store.ListSandboxUsers(ctx, o.AccountID)
	if err != nil {
		return nil, finance.Internal("list sandbox users", err)
	}
	return us, nil
}

// user reads a sandbox user of the owner; another account's, a live one
// and an unknown id are the same 404.
func (s *Service) user(ctx context.Context, o Owner, id string) (finance.User, error) {
	id, err := finance.RequiredUUID(id, "user_id")
	if err != nil {
		return finance.User{}, err
	}
	u, err := s.store.GetUser(ctx, id)
	switch {
	case errors.Is(err, finance.ErrNotFound):
	case err != nil:
		return finance.User{}, finance.Internal("get user", err)
	case u.OwnerAccountID == o.AccountID && finance.ModeOf(u.Mode) == ModeTest:
		return u, nil
	}
	return finance.User{}, problem.New(problem.NotFound, "sandbox user not found").WithField("user_id")
}

// View is a link as answered: its status at the time of the answer, its
// institution and, once linked, the connection's accounts.
type View struct {
	Link
	// Status is Link.StatusAt the answer's time.
	Status      string
	Institution Institution
	// MFAPrompt says what to send while the status is mfa_required.
	MFAPrompt string
	Accounts  []finance.Account
}

func (s *Service) view(l Link, now time.Time, accounts []finance.Account) View {
	in, _ := InstitutionByID(l.InstitutionID)
	v := View{Link: l, Status: l.StatusAt(now), Institution: in}
	if v.Status == StatusMFARequired {
		v.MFAPrompt = fmt.Sprintf("Enter the code %s sent to your phone (in the sandbox it is always %s).", in.Name, TestMFACode)
	}
	if l.ConnectionID != "" {
		for _, a := range accounts {
			if a.ConnectionID == l.ConnectionID {
				v.Accounts = append(v.Accounts, a)
			}
		}
	}
	return v
}

// LinkInput starts a link.
type LinkInput struct {
	UserID        string
	InstitutionID string
	Username      string
	Password      string
	// WritesEnabled is the new grant's writes_enabled.
	WritesEnabled bool
}

// StartLink signs in at the institution with the test credentials. Right
// credentials link at once (a linked link with its connection) or ask for
// an MFA code (mfa_required); wrong ones, or an institution that is down,
// are refused with nothing stored.
func (s *Service) StartLink(ctx context.Context, o Owner, in LinkInput) (View, error) {
	if err := s.check(o); err != nil {
		return View{}, err
	}
	u, err := s.user(ctx, o, in.UserID)
	if err != nil {
		return View{}, err
	}
	if in.InstitutionID == "" {
		return View{}, finance.Invalid("institution_id", "institution_id is required")
	}
	inst, ok := InstitutionByID(in.InstitutionID)
	if !ok {
		return View{}, finance.Invalid("institution_id", "unknown institution_id: GET /v1/sandbox/institutions lists them")
	}
	if in.Username == "" {
		return View{}, finance.Invalid("username", "username is required")
	}
	if in.Password == "" {
		return View{}, finance.Invalid("password", "password is required")
	}
	// The institution answers before it looks at credentials when it is
	// down, as a real one would; neither refusal writes anything.
	if inst.Outcome == OutcomeDown {
		s.kernel.Log().InfoContext(ctx, "sandbox link refused", "institution_id", inst.ID, "reason", OutcomeDown)
		return View{}, problem.New(problem.InstitutionDown,
			inst.Name+" is not answering (in the sandbox it never does): try another institution")
	}
	if !same(in.Username, TestUsername) || !same(in.Password, TestPassword) {
		s.kernel.Log().InfoContext(ctx, "sandbox link refused", "institution_id", inst.ID, "reason", "invalid_credentials")
		return View{}, problem.New(problem.InvalidCredentials,
			fmt.Sprintf("%s refused the username or password (the sandbox's are %s and %s)", inst.Name, TestUsername, TestPassword)).
			WithField("password")
	}
	now := s.now()
	l := Link{ID: uuid.NewString(), OwnerAccountID: o.AccountID, UserID: u.ID, InstitutionID: inst.ID,
		WritesEnabled: in.WritesEnabled, Version: 1, CreatedAt: now, UpdatedAt: now}
	var w *Linked
	if inst.Outcome == OutcomeMFA {
		l.Status, l.ExpiresAt = StatusMFARequired, now.Add(s.limits.MFAWindow)
	} else {
		w = s.linked(&l, inst, now)
	}
	err = s.store.CreateLink(ctx, l, s.limits.LinksPerUser, w)
	if errors.Is(err, finance.ErrLimitReached) {
		return View{}, problem.New(problem.SandboxLimitReached,
			fmt.Sprintf("this sandbox user already has %d links, the most it may have: create another user", s.limits.LinksPerUser))
	}
	if err != nil {
		return View{}, finance.Internal("create link", err)
	}
	s.kernel.Log().InfoContext(ctx, "sandbox link started", "link_id", l.ID, "user_id", u.ID, "institution_id", inst.ID, "status", l.Status)
	return s.view(l, now, accountsOf(w)), nil
}

// same compares a sent credential with the published one in constant time.
func same(got, want string) bool { return subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1 }

func accountsOf(w *Linked) []finance.Account {
	if w == nil {
		return nil
	}
	return w.History.Accounts
}

// linked makes l linked and returns what that writes: a sandbox connection
// synced now, its accounts and history, and a grant without privacy
// settings (a credential issued on it sees every connection of the user, as
// any grant does).
func (s *Service) linked(l *Link, inst Institution, now time.Time) *Linked {
	conn := finance.Connection{ID: uuid.NewString(), UserID: l.UserID, Provider: finance.ProviderSandbox, Institution: inst.Name,
		Status: finance.ConnectionActive, LastSyncedAt: &now, CreatedAt: now, UpdatedAt: now}
	grant := finance.Grant{ID: uuid.NewString(), UserID: l.UserID, WritesEnabled: l.WritesEnabled, Version: 1, CreatedAt: now}
	l.Status, l.ErrorCode, l.ExpiresAt = StatusLinked, "", time.Time{}
	l.ConnectionID, l.GrantID = conn.ID, grant.ID
	return &Linked{Connection: conn, Grant: grant, History: s.history(inst, conn, now), RecurringDueAt: now}
}

// AnswerMFA sends the MFA code of a link waiting for one. The right code
// links it; a wrong one is refused with the attempts left, and the last
// wrong one fails the link.
func (s *Service) AnswerMFA(ctx context.Context, o Owner, id, code string) (View, error) {
	l, err := s.link(ctx, o, id)
	if err != nil {
		return View{}, err
	}
	now := s.now()
	switch st := l.StatusAt(now); st {
	case StatusMFARequired:
	case StatusExpired:
		return View{}, problem.New(problem.Conflict, "the link expired waiting for its MFA code: start a new link")
	default:
		return View{}, problem.New(problem.Conflict, fmt.Sprintf("the link is %s: it takes no MFA code", st))
	}
	if code == "" {
		return View{}, finance.Invalid("code", "code is required")
	}
	prev := l.Version
	l.Version++
	l.UpdatedAt = now
	if !same(code, TestMFACode) {
		l.MFAAttempts++
		left := s.limits.MFAAttempts - l.MFAAttempts
		if left <= 0 {
			l.Status, l.ErrorCode, l.ExpiresAt = StatusFailed, ErrorTooManyMFAAttempts, time.Time{}
		}
		if err := s.update(ctx, l, prev, nil); err != nil {
			return View{}, err
		}
		s.kernel.Log().InfoContext(ctx, "sandbox link mfa refused", "link_id", l.ID, "attempts_left", left)
		if left <= 0 {
			return View{}, problem.New(problem.InvalidMFACode, "wrong code, and no attempts are left: the link failed; start a new one").WithField("code")
		}
		return View{}, problem.New(problem.InvalidMFACode, fmt.Sprintf("wrong code: %d attempts left", left)).WithField("code")
	}
	inst, _ := InstitutionByID(l.InstitutionID)
	w := s.linked(&l, inst, now)
	if err := s.update(ctx, l, prev, w); err != nil {
		return View{}, err
	}
	s.kernel.Log().InfoContext(ctx, "sandbox link linked", "link_id", l.ID, "connection_id", l.ConnectionID)
	return s.view(l, now, accountsOf(w)), nil
}

func (s *Service) update(ctx context.Context, l Link, prev int64, w *Linked) error {
	err := s.store.UpdateLink(ctx, l, prev, w)
	if errors.Is(err, finance.ErrVersionConflict) {
		return problem.New(problem.Conflict, "the link changed meanwhile (another answer to its MFA step): read it and try again")
	}
	if err != nil {
		return finance.Internal("update link", err)
	}
	return nil
}

// link reads a link of the owner; another account's is not found.
func (s *Service) link(ctx context.Context, o Owner, id string) (Link, error) {
	if err := s.check(o); err != nil {
		return Link{}, err
	}
	id, err := finance.RequiredUUID(id, "id")
	if err != nil {
		return Link{}, err
	}
	l, err := s.store.GetLink(ctx, id)
	switch {
	case errors.Is(err, finance.ErrNotFound):
	case err != nil:
		return Link{}, finance.Internal("get link", err)
	case l.OwnerAccountID == o.AccountID:
		return l, nil
	}
	return Link{}, problem.New(problem.NotFound, "link not found")
}

// GetLink reads one of the owner's links.
func (s *Service) GetLink(ctx context.Context, o Owner, id string) (View, error) {
	l, err := s.link(ctx, o, id)
	if err != nil {
		return View{}, err
	}
	var accounts []finance.Account
	if l.ConnectionID != "" {
		if accounts, err = s.store.ListAccounts(ctx, l.UserID); err != nil {
			return View{}, finance.Internal("list accounts", err)
		}
	}
	return s.view(l, s.now(), accounts), nil
}

// Links lists the owner's links, only userID's when it is not empty (a
// user of another account is not found).
func (s *Service) Links(ctx context.Context, o Owner, userID string) ([]View, error) {
	if err := s.check(o); err != nil {
		return nil, err
	}
	if userID != "" {
		u, err := s.user(ctx, o, userID)
		if err != nil {
			return nil, err
		}
		userID = u.ID
	}
	ls, err := s.store.ListLinks(ctx, o.AccountID, userID)
	if err != nil {
		return nil, finance.Internal("list links", err)
	}
	accounts := map[string][]finance.Account{}
	now := s.now()
	out := make([]View, 0, len(ls))
	for _, l := range ls {
		if _, ok := accounts[l.UserID]; !ok && l.ConnectionID != "" {
			as, err := s.store.ListAccounts(ctx, l.UserID)
			if err != nil {
				return nil, finance.Internal("list accounts", err)
			}
			accounts[l.UserID] = as
		}
		out = append(out, s.view(l, now, accounts[l.UserID]))
	}
	return out, nil
}

// LinkedConnections is the sandbox aggregator's work list: every linked
// connection with its checking and card accounts (the ones that get new
// card and debit activity).
func (s *Service) LinkedConnections(ctx context.Context) ([]LinkedConnection, error) {
	cs, err := s.store.LinkedConnections(ctx)
	if err != nil {
		return nil, finance.Internal("linked connections", err)
	}
	for i := range cs {
		cs[i].Accounts = slices.DeleteFunc(cs[i].Accounts, func(a LinkedAccount) bool {
			return a.Type != finance.AccountCredit && a.Subtype != "checking"
		})
	}
	return cs, nil
}
