package finance

import (
	"context"
	"errors"
	"time"

	"github.com/ledgerlane/platform/pkg/problem"
)

// ListAccounts answers GET /v1/accounts (ours; the spec leaves listing
// accounts open): the user's accounts the grant shows, by creation time
// then id, in cursor pages. Under connection.institution each account is
// redacted as on its balances route, and its nickname is dropped.
func (s *Service) ListAccounts(ctx context.Context, c Caller, q PageQuery) (Page[Account], error) {
	var page Page[Account]
	l, err := OpenList[connCursor](ctx, s, c, q, ListRoute{Path: "/v1/accounts"})
	if err != nil {
		return page, err
	}
	sc, pager, after := l.Scope, l.Pager, l.After.position()
	all, err := s.store.ListAccounts(ctx, c.UserID)
	if err != nil {
		return page, Internal("list accounts", err)
	}
	var rows []Account
	for _, a := range all {
		if sc.HidesAccount(a.ID) {
			continue
		}
		if after != nil && compareCreatedAt(a.CreatedAt, a.ID, after.CreatedAt, after.ID) <= 0 {
			continue
		}
		rows = append(rows, a)
	}
	if rows, page.NextCursor, err = Cut(ctx, pager, rows, func(a Account) connCursor {
		return createdCursor(a.CreatedAt, a.ID)
	}); err != nil {
		return page, err
	}
	page.HasMore = page.NextCursor != ""
	if sc.grant.Redacts(FieldConnectionInstitution) {
		for i := range rows {
			redactAccount(&rows[i], sc.institutions)
			// A nickname is the user's label for the bank account and
			// often carries part of the brand ("Zorblax joint"), which
			// the phrase match does not catch: dropped whole here.
			rows[i].Nickname = ""
		}
	}
	page.Data = rows
	page.RedactedFields = sc.Redacted(FieldConnectionInstitution)
	page.Filtered = len(sc.excludedAccounts) > 0
	return page, nil
}

func compareCreatedAt(aAt time.Time, aID string, bAt time.Time, bID string) int {
	if c := aAt.Compare(bAt); c != 0 {
		return c
	}
	switch {
	case aID < bID:
		return -1
	case aID > bID:
		return 1
	}
	return 0
}

// AccountBalance is the balance snapshot of one account.
type AccountBalance struct {
	AccountID        string
	Name             string
	Balance          Money
	AvailableBalance *Money
	AsOf             *time.Time
}

// GetAccountBalances answers GET /v1/accounts/{id}/balances. An excluded
// account is not found; a visible one's balance is the bank's figure, which
// no exclusion changes, so the response is never filtered. Under
// connection.institution the name is a neutral label (redact.go).
func (s *Service) GetAccountBalances(ctx context.Context, c Caller, accountID string) (Result[AccountBalance], error) {
	var res Result[AccountBalance]
	sc, a, err := s.visibleAccount(ctx, c, accountID)
	if err != nil {
		return res, err
	}
	if sc.grant.Redacts(FieldConnectionInstitution) {
		redactAccount(&a, sc.institutions)
	}
	res.Data = AccountBalance{AccountID: a.ID, Name: a.Name, Balance: a.Balance,
		AvailableBalance: a.AvailableBalance, AsOf: a.BalanceAsOf}
	res.RedactedFields = sc.Redacted(FieldConnectionInstitution)
	return res, nil
}

// VisibleAccount is the account of a route's path id ({id}) as stored,
// unredacted: 400 naming id when it is not a UUID, 404 when it is not the
// user's or the grant excludes it (the same answer, so a credential learns
// nothing of accounts it cannot see).
func (s *Service) VisibleAccount(ctx context.Context, c Caller, accountID string) (Account, error) {
	_, a, err := s.visibleAccount(ctx, c, accountID)
	return a, err
}

func (s *Service) visibleAccount(ctx context.Context, c Caller, accountID string) (Scope, Account, error) {
	sc, err := s.Scope(ctx, c, false)
	if err != nil {
		return sc, Account{}, err
	}
	if accountID, err = RequiredUUID(accountID, "id"); err != nil {
		return sc, Account{}, err
	}
	a, err := s.store.GetAccount(ctx, c.UserID, accountID)
	if errors.Is(err, ErrNotFound) || (err == nil && sc.HidesAccount(a.ID)) {
		return sc, Account{}, problem.New(problem.NotFound, "account not found")
	}
	if err != nil {
		return sc, Account{}, Internal("get account", err)
	}
	return sc, a, nil
}

// MainCurrency is the currency most of the accounts the grant shows are in
// (ties: the earliest-created account's); USD when it shows none.
func (s *Service) MainCurrency(ctx context.Context, c Caller, sc Scope) (string, error) {
	accts, err := s.store.ListAccounts(ctx, c.UserID)
	if err != nil {
		return "", Internal("list accounts", err)
	}
	count := map[string]int{}
	best := ""
	for _, a := range accts { // by creation time
		if sc.HidesAccount(a.ID) {
			continue
		}
		count[a.Currency]++
		if best == "" || count[a.Currency] > count[best] {
			best = a.Currency
		}
	}
	if best == "" {
		best = "USD"
	}
	return best, nil
}

// StaleAfter is how long a synced connection may go without a successful sync
// before sync status reports it unhealthy.
const StaleAfter = 48 * time.Hour

// ConnectionSummary is a connection as listed, with the number of accounts
// under it that the grant lets the caller see.
type ConnectionSummary struct {
	Connection
	AccountCount int
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

// ListConnections answers GET /v1/connections in creation order. account_count
// counts only accounts the grant shows, so account exclusions make the
// response filtered.
func (s *Service) ListConnections(ctx context.Context, c Caller, q PageQuery) (Page[ConnectionSummary], error) {
	var page Page[ConnectionSummary]
	l, err := OpenList[connCursor](ctx, s, c, q, ListRoute{Path: "/v1/connections"})
	if err != nil {
		return page, err
	}
	sc, pager := l.Scope, l.Pager
	conns, err := s.store.ListConnections(ctx, c.UserID, l.After.position(), pager.Size+1)
	if err != nil {
		return page, Internal("list connections", err)
	}
	if conns, page.NextCursor, err = Cut(ctx, pager, conns, func(c Connection) connCursor {
		return createdCursor(c.CreatedAt, c.ID)
	}); err != nil {
		return page, err
	}
	page.HasMore = page.NextCursor != ""
	accounts, err := s.store.ListAccounts(ctx, c.UserID)
	if err != nil {
		return page, Internal("list accounts", err)
	}
	counts := map[string]int{}
	for _, a := range accounts {
		if !sc.HidesAccount(a.ID) {
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
	page.RedactedFields = sc.Redacted(FieldConnectionInstitution)
	page.Filtered = len(sc.excludedAccounts) > 0
	return page, nil
}

// GetSyncStatus answers GET /v1/sync-status. A connection is healthy when it
// is active and, unless manual, synced within StaleAfter.
func (s *Service) GetSyncStatus(ctx context.Context, c Caller) (Result[SyncStatus], error) {
	var res Result[SyncStatus]
	sc, err := s.Scope(ctx, c, false)
	if err != nil {
		return res, err
	}
	conns, err := s.store.ListConnections(ctx, c.UserID, nil, 0)
	if err != nil {
		return res, Internal("list connections", err)
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

// connCursor is the position of lists in creation order (connections,
// accounts).
type connCursor struct {
	CreatedAt string `json:"c"`
	ID        string `json:"i"`
}

func createdCursor(at time.Time, id string) connCursor {
	return connCursor{CreatedAt: at.UTC().Format(time.RFC3339Nano), ID: id}
}

func (p connCursor) Valid() bool {
	_, err := time.Parse(time.RFC3339Nano, p.CreatedAt)
	return err == nil && IsUUID(p.ID)
}

// position is the store's form of p; nil stays nil (the first page).
func (p *connCursor) position() *ConnectionPosition {
	if p == nil {
		return nil
	}
	at, _ := time.Parse(time.RFC3339Nano, p.CreatedAt)
	return &ConnectionPosition{CreatedAt: at, ID: p.ID}
}
