package finance

import (
	"context"
	"time"
)

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
