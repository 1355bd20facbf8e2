package finance

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/ledgerlane/platform/pkg/cursor"
	"github.com/ledgerlane/platform/pkg/pg"
	"github.com/ledgerlane/platform/pkg/problem"
)

// Page sizes of list endpoints. The spec sets only the minimum (1); 200 is
// our maximum, large enough for a screen of transactions and small enough to
// bound one query.
const (
	DefaultPageSize = 50
	MaxPageSize     = 200
)

// StaleAfter is how long a synced connection may go without a successful sync
// before sync status reports it unhealthy.
const StaleAfter = 48 * time.Hour

// Clock tells the time; tests pass a fixed one.
type Clock func() time.Time

// Service answers the finance reads with the caller's grant applied: rows on
// excluded accounts or in excluded categories are invisible (not-found when
// asked for by id), and redacted field ids are stripped and listed.
//
// Errors it returns are *problem.Problem values; anything unexpected is
// logged here and surfaces as an internal problem without detail.
type Service struct {
	store   Store
	cursors *cursor.Codec
	now     Clock
	log     *slog.Logger
	// parser reads imported statement files (import_service.go); nil until
	// UseStatementParser, and then imports answer not-implemented.
	parser StatementParser
	// baselines caches budget anomaly baselines (baseline.go).
	baselines *baselineCache
}

// NewService returns a Service. cursors signs pagination cursors; every
// replica must share its key.
func NewService(store Store, cursors *cursor.Codec, clock Clock, log *slog.Logger) *Service {
	if clock == nil {
		clock = time.Now
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Service{store: store, cursors: cursors, now: clock, log: log, baselines: &baselineCache{}}
}

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
	// (derivedID), so a retry whose first answer was lost after the commit
	// finds that row instead of making a second one.
	CredentialID   string
	IdempotencyKey string
}

// idNamespace is the UUID namespace of ids derived from idempotency keys.
var idNamespace = uuid.MustParse("5b0e3c1e-7f4a-4d6e-9d8b-2c61a3f0e9a4")

// derivedID is the id a create under c makes: random without an
// Idempotency-Key, else a name-based UUID of the key in the scope the edge
// keys its idempotency records by (the credential, the user and the grant)
// and of what is created.
func (c Caller) derivedID(kind string) string {
	if c.IdempotencyKey == "" {
		return uuid.NewString()
	}
	return uuid.NewSHA1(idNamespace, []byte(kind+"|"+c.UserID+"|"+c.GrantID+"|"+c.CredentialID+"|"+c.IdempotencyKey)).String()
}

// Page is one page of a list response with its envelope members.
type Page[T any] struct {
	Data           []T
	NextCursor     string // empty on the last page
	HasMore        bool
	RedactedFields []string
	Filtered       bool
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

// PageQuery is the paging input of a list endpoint. A nil PageSize means the
// default; a sent page_size must be between 1 and MaxPageSize.
type PageQuery struct {
	Cursor   string
	PageSize *int32
}

// TransactionQuery is GET /v1/transactions. Ids and dates arrive as the
// client sent them and are validated here.
type TransactionQuery struct {
	PageQuery
	AccountID     string
	CategoryID    string
	StartDate     string // YYYY-MM-DD, inclusive
	EndDate       string // YYYY-MM-DD, inclusive
	Pending       *bool
	Source        string
	Uncategorized bool
}

// ConnectionSummary is a connection as listed, with the number of accounts
// under it that the grant lets the caller see.
type ConnectionSummary struct {
	Connection
	AccountCount int
}

// AccountBalance is the balance snapshot of one account.
type AccountBalance struct {
	AccountID        string
	Name             string
	Balance          Money
	AvailableBalance *Money
	AsOf             *time.Time
}

// ConnectionSync is one connection's line in the sync status.
type ConnectionSync struct {
	ConnectionID string
	Institution  string
	Status       string
	LastSyncedAt *time.Time
	Healthy      bool
}

// SyncStatus reports sync health over all of the user's connections.
type SyncStatus struct {
	Connections    []ConnectionSync
	AllHealthy     bool
	OldestSyncedAt *time.Time // nil when nothing has synced
}

// scope is the grant of one request, resolved for filtering.
type scope struct {
	grant              Grant
	excludedAccounts   []string
	excludedCategories []string // the grant's exclusions and their subcategories
	// institutions are the names of the user's institutions, loaded when
	// the grant redacts connection.institution (redact.go).
	institutions []phrase
}

func (sc scope) hidesAccount(id string) bool { return slices.Contains(sc.excludedAccounts, id) }

func (sc scope) hidesCategory(id string) bool {
	return id != "" && slices.Contains(sc.excludedCategories, id)
}

// ListTransactions answers GET /v1/transactions, newest first.
func (s *Service) ListTransactions(ctx context.Context, c Caller, q TransactionQuery) (Page[Transaction], error) {
	var page Page[Transaction]
	sc, err := s.scope(ctx, c, true)
	if err != nil {
		return page, err
	}
	size, err := pageSize(q.PageSize)
	if err != nil {
		return page, err
	}
	f := TransactionFilter{
		ExcludeAccountIDs:  sc.excludedAccounts,
		ExcludeCategoryIDs: sc.excludedCategories,
		Pending:            q.Pending,
		Uncategorized:      q.Uncategorized,
	}
	if f.AccountID, err = optionalUUID(q.AccountID, "account_id"); err != nil {
		return page, err
	}
	if f.CategoryID, err = optionalUUID(q.CategoryID, "category_id"); err != nil {
		return page, err
	}
	if f.StartDate, err = optionalDate(q.StartDate, "start_date"); err != nil {
		return page, err
	}
	if f.EndDate, err = optionalDate(q.EndDate, "end_date"); err != nil {
		return page, err
	}
	if !f.StartDate.IsZero() && !f.EndDate.IsZero() && f.StartDate.After(f.EndDate) {
		return page, invalid("start_date", "start_date is after end_date")
	}
	if q.Source != "" && !ValidSource(q.Source) {
		return page, invalid("source", "source must be one of bank_sync, manual, import")
	}
	f.Source = q.Source

	pending := ""
	if q.Pending != nil {
		pending = strconv.FormatBool(*q.Pending)
	}
	cursorScope := scopeString(c, "/v1/transactions",
		"account_id="+f.AccountID, "category_id="+f.CategoryID,
		"start_date="+dateOrEmpty(f.StartDate), "end_date="+dateOrEmpty(f.EndDate),
		"pending="+pending, "source="+f.Source, "uncategorized="+strconv.FormatBool(f.Uncategorized))

	after, err := s.txAfter(q.Cursor, cursorScope)
	if err != nil {
		return page, err
	}
	rows, err := s.store.ListTransactions(ctx, c.UserID, f, after, size+1)
	if err != nil {
		return page, s.internal(ctx, "list transactions", err)
	}
	return s.txPage(ctx, sc, rows, size, cursorScope)
}

// txAfter decodes a transaction cursor signed for cursorScope.
func (s *Service) txAfter(cur, cursorScope string) (*TxPosition, error) {
	if cur == "" {
		return nil, nil
	}
	var pos txCursor
	if err := s.cursors.Decode(cur, cursorScope, &pos); err != nil {
		return nil, badCursor()
	}
	d, err := ParseDate(pos.Date)
	if err != nil || !isUUID(pos.ID) {
		return nil, badCursor()
	}
	return &TxPosition{Date: d, ID: pos.ID}, nil
}

// txPage makes a page of rows, fetched one over size to learn whether more
// follow, with the grant's redactions applied.
func (s *Service) txPage(ctx context.Context, sc scope, rows []Transaction, size int, cursorScope string) (Page[Transaction], error) {
	var page Page[Transaction]
	if len(rows) > size {
		rows = rows[:size]
		last := rows[size-1]
		page.HasMore = true
		var err error
		if page.NextCursor, err = s.cursors.Encode(cursorScope, txCursor{Date: last.Date.Format(DateLayout), ID: last.ID}); err != nil {
			return page, s.internal(ctx, "encode cursor", err)
		}
	}
	page.RedactedFields = sc.redactTransactions(rows)
	page.Data = rows
	page.Filtered = sc.grant.Filtered()
	return page, nil
}

// GetTransaction answers GET /v1/transactions/{id}. A row the grant hides is
// not found, exactly like one that does not exist.
func (s *Service) GetTransaction(ctx context.Context, c Caller, id string) (Result[Transaction], error) {
	var res Result[Transaction]
	sc, err := s.scope(ctx, c, true)
	if err != nil {
		return res, err
	}
	if id, err = requiredUUID(id, "id"); err != nil {
		return res, err
	}
	t, err := s.store.GetTransaction(ctx, c.UserID, id)
	if errors.Is(err, ErrNotFound) || (err == nil && (sc.hidesAccount(t.AccountID) || sc.hidesCategory(t.CategoryID))) {
		return res, problem.New(problem.NotFound, "transaction not found")
	}
	if err != nil {
		return res, s.internal(ctx, "get transaction", err)
	}
	rows := []Transaction{t}
	res.RedactedFields = sc.redactTransactions(rows)
	res.Data = rows[0]
	res.Filtered = sc.grant.Filtered()
	return res, nil
}

// ListCategories answers GET /v1/categories: the system categories and the
// user's own, less those the grant excludes (with their subcategories). The
// spec gives this endpoint no paging, so it is one page.
func (s *Service) ListCategories(ctx context.Context, c Caller) (Page[Category], error) {
	var page Page[Category]
	sc, err := s.scope(ctx, c, false)
	if err != nil {
		return page, err
	}
	all, err := s.store.ListCategories(ctx, c.UserID)
	if err != nil {
		return page, s.internal(ctx, "list categories", err)
	}
	hidden := expandCategories(sc.grant.ExcludedCategoryIDs, all)
	for _, cat := range all {
		if !slices.Contains(hidden, cat.ID) {
			page.Data = append(page.Data, cat)
		}
	}
	page.Filtered = len(sc.grant.ExcludedCategoryIDs) > 0
	return page, nil
}

// ListConnections answers GET /v1/connections in creation order. account_count
// counts only accounts the grant shows, so account exclusions make the
// response filtered.
func (s *Service) ListConnections(ctx context.Context, c Caller, q PageQuery) (Page[ConnectionSummary], error) {
	var page Page[ConnectionSummary]
	sc, err := s.scope(ctx, c, false)
	if err != nil {
		return page, err
	}
	size, err := pageSize(q.PageSize)
	if err != nil {
		return page, err
	}
	cursorScope := scopeString(c, "/v1/connections")
	var after *ConnectionPosition
	if q.Cursor != "" {
		var pos connCursor
		if err := s.cursors.Decode(q.Cursor, cursorScope, &pos); err != nil {
			return page, badCursor()
		}
		at, err := time.Parse(time.RFC3339Nano, pos.CreatedAt)
		if err != nil || !isUUID(pos.ID) {
			return page, badCursor()
		}
		after = &ConnectionPosition{CreatedAt: at, ID: pos.ID}
	}
	conns, err := s.store.ListConnections(ctx, c.UserID, after, size+1)
	if err != nil {
		return page, s.internal(ctx, "list connections", err)
	}
	if len(conns) > size {
		conns = conns[:size]
		last := conns[size-1]
		page.HasMore = true
		pos := connCursor{CreatedAt: last.CreatedAt.UTC().Format(time.RFC3339Nano), ID: last.ID}
		if page.NextCursor, err = s.cursors.Encode(cursorScope, pos); err != nil {
			return page, s.internal(ctx, "encode cursor", err)
		}
	}
	accounts, err := s.store.ListAccounts(ctx, c.UserID)
	if err != nil {
		return page, s.internal(ctx, "list accounts", err)
	}
	counts := map[string]int{}
	for _, a := range accounts {
		if !sc.hidesAccount(a.ID) {
			counts[a.ConnectionID]++
		}
	}
	redact := sc.grant.Redacts(FieldConnectionInstitution)
	for _, conn := range conns {
		if redact {
			redactConnection(&conn, sc.institutions)
		}
		page.Data = append(page.Data, ConnectionSummary{Connection: conn, AccountCount: counts[conn.ID]})
	}
	page.RedactedFields = sc.redacted(FieldConnectionInstitution)
	page.Filtered = len(sc.excludedAccounts) > 0
	return page, nil
}

// GetAccountBalances answers GET /v1/accounts/{id}/balances. An excluded
// account is not found; a visible one's balance is the bank's figure, which
// no exclusion changes, so the response is never filtered. Under
// connection.institution the name is a neutral label (redact.go).
func (s *Service) GetAccountBalances(ctx context.Context, c Caller, accountID string) (Result[AccountBalance], error) {
	var res Result[AccountBalance]
	sc, err := s.scope(ctx, c, false)
	if err != nil {
		return res, err
	}
	if accountID, err = requiredUUID(accountID, "id"); err != nil {
		return res, err
	}
	a, err := s.store.GetAccount(ctx, c.UserID, accountID)
	if errors.Is(err, ErrNotFound) || (err == nil && sc.hidesAccount(a.ID)) {
		return res, problem.New(problem.NotFound, "account not found")
	}
	if err != nil {
		return res, s.internal(ctx, "get account", err)
	}
	if sc.grant.Redacts(FieldConnectionInstitution) {
		redactAccount(&a, sc.institutions)
	}
	res.Data = AccountBalance{AccountID: a.ID, Name: a.Name, Balance: a.Balance,
		AvailableBalance: a.AvailableBalance, AsOf: a.BalanceAsOf}
	res.RedactedFields = sc.redacted(FieldConnectionInstitution)
	return res, nil
}

// GetSyncStatus answers GET /v1/sync-status. A connection is healthy when it
// is active and, unless manual, synced within StaleAfter.
func (s *Service) GetSyncStatus(ctx context.Context, c Caller) (Result[SyncStatus], error) {
	var res Result[SyncStatus]
	sc, err := s.scope(ctx, c, false)
	if err != nil {
		return res, err
	}
	conns, err := s.store.ListConnections(ctx, c.UserID, nil, 0)
	if err != nil {
		return res, s.internal(ctx, "list connections", err)
	}
	now := s.now()
	redact := sc.grant.Redacts(FieldConnectionInstitution)
	st := SyncStatus{AllHealthy: true}
	for _, conn := range conns {
		line := ConnectionSync{ConnectionID: conn.ID, Institution: conn.Institution, Status: conn.Status,
			LastSyncedAt: conn.LastSyncedAt, Healthy: healthy(conn, now)}
		if redact {
			line.Institution = ""
		}
		st.AllHealthy = st.AllHealthy && line.Healthy
		if at := conn.LastSyncedAt; at != nil && (st.OldestSyncedAt == nil || at.Before(*st.OldestSyncedAt)) {
			st.OldestSyncedAt = at
		}
		st.Connections = append(st.Connections, line)
	}
	res.Data = st
	if redact {
		res.RedactedFields = []string{FieldConnectionInstitution}
	}
	return res, nil
}

func healthy(c Connection, now time.Time) bool {
	if c.Status != ConnectionActive {
		return false
	}
	if c.Provider == ProviderManual {
		return true // nothing to sync
	}
	return c.LastSyncedAt != nil && now.Sub(*c.LastSyncedAt) <= StaleAfter
}

// scope loads the caller's grant. A grant that is gone, or that belongs to
// someone else, makes the credential unusable: 401, not 404. withCategories
// resolves category exclusions down to subcategories, which costs a query.
func (s *Service) scope(ctx context.Context, c Caller, withCategories bool) (scope, error) {
	if c.UserID == "" || c.GrantID == "" {
		return scope{}, problem.New(problem.Unauthorized, "no finance user on this credential")
	}
	g, check, err := s.lookupGrant(ctx, c.OwnerAccountID, c.UserID, c.GrantID, c.Mode)
	if err != nil {
		return scope{}, err
	}
	// A grant of another user and a user of another account get the same
	// answer, so a credential learns nothing about either.
	if !check.OK() {
		return scope{}, problem.New(problem.Unauthorized, "the credential's grant is not valid")
	}
	sc := scope{grant: g, excludedAccounts: g.ExcludedAccountIDs}
	if g.Redacts(FieldConnectionInstitution) {
		if sc.institutions, err = s.institutionPhrases(ctx, c.UserID); err != nil {
			return scope{}, err
		}
	}
	if withCategories && len(g.ExcludedCategoryIDs) > 0 {
		cats, err := s.store.ListCategories(ctx, c.UserID)
		if err != nil {
			return scope{}, s.internal(ctx, "list categories", err)
		}
		sc.excludedCategories = expandCategories(g.ExcludedCategoryIDs, cats)
	}
	return sc, nil
}

// expandCategories returns excluded plus the subcategories of each: hiding
// a parent must not leave its children showing what it hid.
func expandCategories(excluded []string, all []Category) []string {
	if len(excluded) == 0 {
		return nil
	}
	out := slices.Clone(excluded)
	for _, c := range all {
		if c.ParentID != "" && slices.Contains(excluded, c.ParentID) && !slices.Contains(out, c.ID) {
			out = append(out, c.ID)
		}
	}
	return out
}

// internal answers a store failure: 503 unavailable (with Retry-After) when
// the database did not answer (pg.Unavailable, the one classification), an
// opaque 500 internal otherwise.
func (s *Service) internal(ctx context.Context, op string, err error) error {
	if p := pg.UnavailableProblem(err); p != nil {
		s.log.WarnContext(ctx, "finance store unavailable", "op", op, "err", err)
		return p
	}
	s.log.ErrorContext(ctx, "finance store failure", "op", op, "err", err)
	return problem.New(problem.Internal, "")
}

// txCursor and connCursor are the signed positions inside cursors.
type txCursor struct {
	Date string `json:"d"`
	ID   string `json:"i"`
}

type connCursor struct {
	CreatedAt string `json:"c"`
	ID        string `json:"i"`
}

// scopeString binds a cursor to the user, the grant, the route and the
// filter values, so a cursor replayed under another query, grant or user
// fails its signature check. Values are validated before they get here and
// cannot contain the separator.
func scopeString(c Caller, route string, filters ...string) string {
	parts := append([]string{"finance.v1", route, "user=" + c.UserID, "grant=" + c.GrantID}, filters...)
	return strings.Join(parts, "|")
}

func pageSize(n *int32) (int, error) {
	switch {
	case n == nil:
		return DefaultPageSize, nil
	case *n < 1 || *n > MaxPageSize:
		return 0, invalid("page_size", "page_size must be between 1 and "+strconv.Itoa(MaxPageSize))
	}
	return int(*n), nil
}

func invalid(field, detail string) error {
	return problem.New(problem.InvalidInput, detail).WithField(field)
}

func badCursor() error {
	return invalid("cursor", "cursor is invalid or belongs to another query")
}

// isUUID accepts only the canonical 36-character form; uuid.Parse alone also
// takes braces and urn: prefixes.
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	_, err := uuid.Parse(s)
	return err == nil
}

func requiredUUID(s, field string) (string, error) {
	if !isUUID(s) {
		return "", invalid(field, field+" must be a UUID")
	}
	return strings.ToLower(s), nil
}

func optionalUUID(s, field string) (string, error) {
	if s == "" {
		return "", nil
	}
	return requiredUUID(s, field)
}

func optionalDate(s, field string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	d, err := ParseDate(s)
	if err != nil {
		return time.Time{}, invalid(field, field+" must be a date (YYYY-MM-DD)")
	}
	return d, nil
}

func dateOrEmpty(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Format(DateLayout)
}
