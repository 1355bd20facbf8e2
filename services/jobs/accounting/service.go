package accounting

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/ledgerlane/platform/pkg/cursor"
	"github.com/ledgerlane/platform/pkg/periodic"
	"github.com/ledgerlane/platform/pkg/problem"
)

// Defaults of Config.
const (
	DefaultStateTTL       = 15 * time.Minute
	DefaultRefreshBefore  = 5 * time.Minute
	DefaultRefreshBackoff = time.Minute
	// MaxRefreshFailures consecutive transient refresh failures put a
	// connection in error: a refresh is never retried forever.
	MaxRefreshFailures = 5
	DefaultPageSize    = 50
	MaxPageSize        = 200
	MaxDisplayName     = 100
	// MaxEntries bounds one push: each entry is one platform call.
	MaxEntries = 1000
	// refreshLease is how long a claimed refresh keeps others off.
	refreshLease = 30 * time.Second
)

// Config assembles a Service.
type Config struct {
	Store Store
	// Keys seals tokens and verifiers; nil answers every route unavailable
	// (the jobs service's JOB_ENCRYPTION_KEY is unset).
	Keys Sealer
	// Platforms are the configured adapters by slug; a slug missing here is
	// refused on create.
	Platforms map[string]Platform
	// Converter reads statements (through the converter service).
	Converter StatementConverter
	// Cursors signs list cursors.
	Cursors *cursor.Codec
	Clock   func() time.Time
	Log     *slog.Logger
	// StateTTL bounds the time between create and callback (default 15m).
	StateTTL time.Duration
	// RefreshBefore is how long before expiry a token is refreshed (5m).
	RefreshBefore time.Duration
	// RefreshBackoff is the first wait after a transient refresh failure,
	// doubled per failure (1m).
	RefreshBackoff time.Duration
	// Metrics observes platform calls; nil observes nothing.
	Metrics Metrics
}

// Service implements the connection routes, the OAuth callback, pushes and
// the background token refresher.
type Service struct {
	cfg Config
	now func() time.Time
	log *slog.Logger
}

// NewService returns a Service from cfg, filling defaults.
func NewService(cfg Config) *Service {
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.StateTTL <= 0 {
		cfg.StateTTL = DefaultStateTTL
	}
	if cfg.RefreshBefore <= 0 {
		cfg.RefreshBefore = DefaultRefreshBefore
	}
	if cfg.RefreshBackoff <= 0 {
		cfg.RefreshBackoff = DefaultRefreshBackoff
	}
	if cfg.Metrics == nil {
		cfg.Metrics = noMetrics{}
	}
	if cfg.Cursors == nil {
		key := make([]byte, 32)
		_, _ = rand.Read(key)
		cfg.Cursors = cursor.New(key)
	}
	return &Service{cfg: cfg, now: cfg.Clock, log: cfg.Log}
}

// reasonExpired is why a connection whose authorization window closed is
// in error, whether its callback came late or the sweep found it first.
const reasonExpired = "the authorization was not completed in time"

// ExpirePending puts pending connections whose authorization window
// (StateTTL after create) has closed in error, up to limit, and returns how
// many it swept. Their sealed PKCE verifier is dropped with their state:
// nothing can complete them any more, and a client listing its connections
// sees why instead of a pending that never ends (docs/accounting.md).
func (s *Service) ExpirePending(ctx context.Context, limit int) (int, error) {
	swept, err := s.cfg.Store.ExpirePending(ctx, s.timestamp(), reasonExpired, limit)
	for _, c := range swept {
		s.log.Info("accounting authorization expired", "account_id", c.AccountID, "connection_id", c.ID, "platform", c.Platform)
	}
	return len(swept), err
}

// RunPendingSweep calls ExpirePending every interval until ctx ends.
func (s *Service) RunPendingSweep(ctx context.Context, interval time.Duration) {
	periodic.Task{Name: "accounting pending sweep", Every: interval, AtStart: true, Log: s.log, Run: func(ctx context.Context) error {
		_, err := s.ExpirePending(ctx, 100)
		return err
	}}.Loop(ctx)
}

func (s *Service) timestamp() time.Time {
	// Microseconds: the finest PostgreSQL keeps, so memory and PostgreSQL agree.
	return s.now().UTC().Truncate(time.Microsecond)
}

func (s *Service) check(c Caller) error {
	if s.cfg.Keys == nil {
		return problem.New(problem.Unavailable, "accounting connections are not configured on this deployment (no encryption key)")
	}
	if c.AccountID == "" {
		return problem.New(problem.Unauthorized, "")
	}
	return nil
}

func notFound() error { return problem.New(problem.NotFound, "no such connection") }

// storeErr maps a store failure: a missing row is 404, anything else is
// returned as is (pkg/rpc answers internal, or unavailable for a database
// that does not answer: the adapter marked it, pg.Error).
func storeErr(err error) error {
	if errors.Is(err, ErrNotFound) {
		return notFound()
	}
	return err
}

// platformProblem turns a platform failure into the client's problem.
func platformProblem(err error, what string) error {
	kind, msg := kindOf(err)
	msg = clip(msg, 300)
	switch kind {
	case KindRejected, KindUnauthorized:
		d := "the accounting platform refused " + what
		if msg != "" {
			d += ": " + msg
		}
		return problem.New(problem.PlatformRejected, d)
	case KindInvalidGrant:
		d := "the accounting platform refused the authorization"
		if msg != "" {
			d += ": " + msg
		}
		return problem.New(problem.AuthorizationFailed, d)
	default:
		return problem.New(problem.PlatformUnavailable, "the accounting platform did not answer "+what+"; retry later").WithRetryAfter(30)
	}
}

func clip(s string, n int) string {
	s = strings.ToValidUTF8(s, "")
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// CreateRequest is a new connection's input.
type CreateRequest struct {
	Platform    string
	DisplayName string
}

// Created is a new pending connection with where to send the user.
type Created struct {
	Connection       Connection
	AuthorizationURL string
}

// Create stores a pending connection and returns the platform's
// authorization URL, carrying a fresh single-use state (its hash is all we
// keep) and, where the platform supports PKCE, the challenge of a fresh
// verifier (kept sealed for the callback).
func (s *Service) Create(ctx context.Context, c Caller, req CreateRequest) (Created, error) {
	if err := s.check(c); err != nil {
		return Created{}, err
	}
	slug := strings.ToLower(strings.TrimSpace(req.Platform))
	if slug == "" {
		return Created{}, problem.New(problem.InvalidInput, "platform is required: quickbooks, xero or sandbox").WithField("platform")
	}
	p, ok := s.cfg.Platforms[slug]
	if !ok {
		known := make([]string, 0, len(s.cfg.Platforms))
		for k := range s.cfg.Platforms {
			known = append(known, k)
		}
		sort.Strings(known)
		return Created{}, problem.New(problem.InvalidInput,
			fmt.Sprintf("platform %q is not available on this deployment (available: %s)", clip(req.Platform, 40), strings.Join(known, ", "))).WithField("platform")
	}
	name := strings.TrimSpace(req.DisplayName)
	switch {
	case !utf8.ValidString(name) || strings.ContainsAny(name, "\x00\r\n"):
		return Created{}, problem.New(problem.InvalidInput, "display_name must be one line of text").WithField("display_name")
	case utf8.RuneCountInString(name) > MaxDisplayName:
		return Created{}, problem.New(problem.InvalidInput, fmt.Sprintf("display_name is longer than %d characters", MaxDisplayName)).WithField("display_name")
	case name == "":
		name = map[string]string{QuickBooks: "QuickBooks Online", Xero: "Xero", Sandbox: "Sandbox platform"}[slug]
	}
	state, verifier := randomToken(), randomToken()
	now := s.timestamp()
	conn := Connection{
		ID: uuid.NewString(), AccountID: c.AccountID, Mode: modeOf(c.Mode), Platform: slug, DisplayName: name, Status: StatusPending,
		CreatedAt: now, UpdatedAt: now, StateHash: hashState(state), StateExpiresAt: now.Add(s.cfg.StateTTL),
	}
	sealed, err := s.cfg.Keys.Seal([]byte(verifier), verifierAAD(conn.ID))
	if err != nil {
		return Created{}, err
	}
	conn.Verifier = sealed
	if err := s.cfg.Store.CreateConnection(ctx, conn); err != nil {
		return Created{}, err
	}
	s.log.Info("accounting connection created", "account_id", c.AccountID, "connection_id", conn.ID, "platform", slug)
	return Created{Connection: conn, AuthorizationURL: p.AuthCodeURL(state, verifier)}, nil
}

// randomToken is 32 random bytes in base64url: a state, or a PKCE verifier
// (43 characters of the unreserved set, RFC 7636 4.1).
func randomToken() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

func hashState(state string) string {
	sum := sha256.Sum256([]byte("accounting-state|" + state))
	return hex.EncodeToString(sum[:])
}

// CallbackRequest is the platform's redirect.
type CallbackRequest struct {
	Code, State, RealmID string
	Error, ErrorDesc     string
}

// Complete finishes an authorization: the state (single use, expiring)
// names the connection; the code is exchanged for tokens, which are sealed.
// A declined, expired or refused authorization leaves the connection in
// error with the reason, and answers authorization-failed.
func (s *Service) Complete(ctx context.Context, req CallbackRequest) (Connection, error) {
	if s.cfg.Keys == nil {
		return Connection{}, problem.New(problem.Unavailable, "accounting connections are not configured on this deployment (no encryption key)")
	}
	if req.State == "" || len(req.State) > 512 {
		return Connection{}, problem.New(problem.AuthorizationFailed, "the callback carries no valid state").WithField("state")
	}
	conn, err := s.cfg.Store.ConsumeState(ctx, hashState(req.State))
	if errors.Is(err, ErrNotFound) {
		return Connection{}, problem.New(problem.AuthorizationFailed, "unknown or already used state: create the connection again").WithField("state")
	}
	if err != nil {
		return Connection{}, err
	}
	now := s.timestamp()
	fail := func(reason string, p error) (Connection, error) {
		conn.Status, conn.StatusReason, conn.UpdatedAt, conn.Verifier = StatusError, reason, now, nil
		if err := s.cfg.Store.UpdateConnection(ctx, conn); err != nil {
			return Connection{}, err
		}
		s.log.Info("accounting authorization failed", "account_id", conn.AccountID, "connection_id", conn.ID, "reason", reason)
		return Connection{}, p
	}
	switch {
	case !now.Before(conn.StateExpiresAt):
		return fail(reasonExpired,
			problem.New(problem.AuthorizationFailed, "the authorization expired: create the connection again").WithField("state"))
	case req.Error != "":
		reason := "declined at the platform: " + clip(req.Error, 60)
		return fail(reason, problem.New(problem.AuthorizationFailed, reason))
	case req.Code == "":
		return fail("the platform sent no authorization code",
			problem.New(problem.AuthorizationFailed, "the callback carries no code").WithField("code"))
	}
	p, ok := s.cfg.Platforms[conn.Platform]
	if !ok {
		return fail("the platform is no longer configured", problem.New(problem.AuthorizationFailed, "the platform is no longer configured"))
	}
	verifier, err := s.cfg.Keys.Open(conn.Verifier, verifierAAD(conn.ID))
	if err != nil {
		return Connection{}, err
	}
	grant, err := p.Exchange(ctx, Callback{Code: req.Code, RealmID: req.RealmID, Verifier: string(verifier)})
	s.cfg.Metrics.PlatformCall(conn.Platform, "exchange", outcome(err))
	if err != nil {
		pp := platformProblem(err, "the authorization code")
		var prob *problem.Problem
		if errors.As(err, &prob) { // an adapter's own verdict on the callback (a missing realmId)
			pp = prob
		}
		return fail("the authorization could not be completed: "+problemDetail(pp), pp)
	}
	blob, err := s.sealToken(conn.ID, grant.Token)
	if err != nil {
		return Connection{}, err
	}
	conn.Status, conn.StatusReason, conn.Verifier = StatusActive, "", nil
	conn.Tokens, conn.TokenExpiresAt = blob, grant.Token.Expiry.UTC().Truncate(time.Microsecond)
	conn.PlatformTenantID, conn.ConnectedAt, conn.UpdatedAt = grant.TenantID, now, now
	conn.RefreshFailures, conn.RefreshAfter = 0, time.Time{}
	if err := s.cfg.Store.UpdateConnection(ctx, conn); err != nil {
		return Connection{}, err
	}
	s.log.Info("accounting connection active", "account_id", conn.AccountID, "connection_id", conn.ID, "platform", conn.Platform)
	return conn, nil
}

func problemDetail(err error) string {
	var p *problem.Problem
	if errors.As(err, &p) {
		return p.Detail
	}
	return ""
}

func (s *Service) sealToken(id string, t Token) ([]byte, error) {
	raw, err := json.Marshal(t)
	if err != nil {
		return nil, err
	}
	return s.cfg.Keys.Seal(raw, tokensAAD(id))
}

func (s *Service) openToken(c Connection) (Token, error) {
	raw, err := s.cfg.Keys.Open(c.Tokens, tokensAAD(c.ID))
	if err != nil {
		return Token{}, err
	}
	var t Token
	err = json.Unmarshal(raw, &t)
	return t, err
}

// Page is one page of a tenant's connections.
type Page struct {
	Connections []Connection
	NextCursor  string
}

func listScope(accountID, mode string) string { return accountID + "|" + mode + "|/v1/connections" }

// modeOf is a stored mode: "live" for connections from before modes.
func modeOf(m string) string {
	if m == "" {
		return "live"
	}
	return m
}

// connection is the caller's connection id: another mode's is as absent as
// another tenant's.
func (s *Service) connection(ctx context.Context, c Caller, id string) (Connection, error) {
	conn, err := s.cfg.Store.GetConnection(ctx, c.AccountID, id)
	if err == nil && modeOf(conn.Mode) != modeOf(c.Mode) {
		return Connection{}, ErrNotFound
	}
	return conn, err
}

type listPos struct {
	CreatedAt int64  `json:"c"` // Unix microseconds
	ID        string `json:"i"`
}

// List returns the tenant's connections, newest first, in cursor pages.
func (s *Service) List(ctx context.Context, c Caller, cur string, pageSize *int32) (Page, error) {
	if err := s.check(c); err != nil {
		return Page{}, err
	}
	size := DefaultPageSize
	if pageSize != nil {
		if *pageSize < 1 || *pageSize > MaxPageSize {
			return Page{}, problem.New(problem.InvalidInput, fmt.Sprintf("page_size must be 1 to %d", MaxPageSize)).WithField("page_size")
		}
		size = int(*pageSize)
	}
	var after *Position
	if cur != "" {
		var p listPos
		if err := s.cfg.Cursors.Decode(cur, listScope(c.AccountID, modeOf(c.Mode)), &p); err != nil {
			return Page{}, problem.New(problem.InvalidInput, "invalid value for parameter cursor").WithField("cursor")
		}
		after = &Position{CreatedAt: time.UnixMicro(p.CreatedAt).UTC(), ID: p.ID}
	}
	cs, err := s.cfg.Store.ListConnections(ctx, c.AccountID, modeOf(c.Mode), after, size+1)
	if err != nil {
		return Page{}, err
	}
	var page Page
	if len(cs) > size {
		cs = cs[:size]
		last := cs[len(cs)-1]
		if page.NextCursor, err = s.cfg.Cursors.Encode(listScope(c.AccountID, modeOf(c.Mode)), listPos{last.CreatedAt.UnixMicro(), last.ID}); err != nil {
			return Page{}, err
		}
	}
	page.Connections = cs
	return page, nil
}

// Delete revokes the connection's grant at the platform, then forgets the
// connection and what was pushed through it. A platform that does not answer
// leaves the connection in place (503: retry, so the grant is really
// revoked); one that refuses the revocation has no grant left to revoke.
func (s *Service) Delete(ctx context.Context, c Caller, id string) error {
	if err := s.check(c); err != nil {
		return err
	}
	if uuid.Validate(id) != nil {
		return notFound()
	}
	conn, err := s.connection(ctx, c, id)
	if err != nil {
		return storeErr(err)
	}
	if len(conn.Tokens) > 0 {
		if p, ok := s.cfg.Platforms[conn.Platform]; ok {
			tok, err := s.openToken(conn)
			if err != nil {
				return err
			}
			err = p.Revoke(ctx, tok)
			s.cfg.Metrics.PlatformCall(conn.Platform, "revoke", outcome(err))
			if err != nil {
				if kind, _ := kindOf(err); kind == KindUnavailable {
					s.log.Warn("accounting revoke failed", "account_id", c.AccountID, "connection_id", id, "error", err)
					return platformProblem(err, "the revocation")
				}
				s.log.Info("accounting revoke refused; the grant is already gone", "account_id", c.AccountID, "connection_id", id)
			}
		}
	}
	if err := s.cfg.Store.DeleteConnection(ctx, c.AccountID, id); err != nil {
		return storeErr(err)
	}
	s.log.Info("accounting connection deleted", "account_id", c.AccountID, "connection_id", id, "platform", conn.Platform)
	return nil
}
