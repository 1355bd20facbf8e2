package postgres

import (
	"cmp"
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ledgerlane/platform/pkg/pg"
	"github.com/ledgerlane/platform/services/jobs/accounting"
)

// Accounting implements accounting.Store on the jobs schema (migration
// 00003), beside Store.
type Accounting struct {
	pool *pgxpool.Pool
}

var _ accounting.Store = (*Accounting)(nil)

// NewAccounting returns the accounting store on pool.
func NewAccounting(pool *pgxpool.Pool) *Accounting { return &Accounting{pool: pool} }

// acctErr maps a driver error the way every adapter does (pg.Error).
func acctErr(op string, err error) error {
	return pg.Error("accounting postgres: "+op, err, accounting.ErrNotFound, nil)
}

const connCols = `id, account_id, platform, display_name, status, status_reason, created_at, updated_at,
	connected_at, state_hash, state_expires_at, verifier, tokens, token_expires_at, platform_tenant_id,
	refresh_failures, refresh_after, mode`

func nullString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func scanConn(row pgx.Row) (accounting.Connection, error) {
	var c accounting.Connection
	var connected, stateExp, tokenExp, refreshAfter *time.Time
	var stateHash *string
	err := row.Scan(&c.ID, &c.AccountID, &c.Platform, &c.DisplayName, &c.Status, &c.StatusReason, &c.CreatedAt, &c.UpdatedAt,
		&connected, &stateHash, &stateExp, &c.Verifier, &c.Tokens, &tokenExp, &c.PlatformTenantID,
		&c.RefreshFailures, &refreshAfter, &c.Mode)
	if err != nil {
		return c, err
	}
	utc := func(t *time.Time) time.Time {
		if t == nil {
			return time.Time{}
		}
		return t.UTC()
	}
	c.CreatedAt, c.UpdatedAt = c.CreatedAt.UTC(), c.UpdatedAt.UTC()
	c.ConnectedAt, c.StateExpiresAt, c.TokenExpiresAt, c.RefreshAfter = utc(connected), utc(stateExp), utc(tokenExp), utc(refreshAfter)
	if stateHash != nil {
		c.StateHash = *stateHash
	}
	return c, nil
}

func (s *Accounting) CreateConnection(ctx context.Context, c accounting.Connection) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO accounting_connections (`+connCols+`)
		VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17,$18)`,
		c.ID, c.AccountID, c.Platform, c.DisplayName, c.Status, c.StatusReason, c.CreatedAt, c.UpdatedAt,
		nullTime(c.ConnectedAt), nullString(c.StateHash), nullTime(c.StateExpiresAt), c.Verifier, c.Tokens,
		nullTime(c.TokenExpiresAt), c.PlatformTenantID, c.RefreshFailures, nullTime(c.RefreshAfter), cmp.Or(c.Mode, "live"))
	return acctErr("create connection", err)
}

func (s *Accounting) GetConnection(ctx context.Context, accountID, id string) (accounting.Connection, error) {
	c, err := scanConn(s.pool.QueryRow(ctx, `SELECT `+connCols+` FROM accounting_connections WHERE id = $1 AND account_id = $2`, id, accountID))
	return c, acctErr("get connection", err)
}

func (s *Accounting) list(ctx context.Context, op, q string, args ...any) ([]accounting.Connection, error) {
	rows, err := s.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, acctErr(op, err)
	}
	defer rows.Close()
	var out []accounting.Connection
	for rows.Next() {
		c, err := scanConn(rows)
		if err != nil {
			return nil, acctErr(op, err)
		}
		out = append(out, c)
	}
	return out, acctErr(op, rows.Err())
}

func (s *Accounting) ListConnections(ctx context.Context, accountID, mode string, after *accounting.Position, limit int) ([]accounting.Connection, error) {
	if after == nil {
		return s.list(ctx, "list connections", `SELECT `+connCols+` FROM accounting_connections WHERE account_id = $1
			AND mode = $2 ORDER BY created_at DESC, id DESC LIMIT $3`, accountID, mode, limit)
	}
	return s.list(ctx, "list connections", `SELECT `+connCols+` FROM accounting_connections WHERE account_id = $1
		AND mode = $2 AND (created_at, id) < ($3, $4::uuid) ORDER BY created_at DESC, id DESC LIMIT $5`,
		accountID, mode, after.CreatedAt, after.ID, limit)
}

func (s *Accounting) UpdateConnection(ctx context.Context, c accounting.Connection) error {
	tag, err := s.pool.Exec(ctx, `UPDATE accounting_connections SET display_name = $2, status = $3, status_reason = $4,
		updated_at = $5, connected_at = $6, state_hash = $7, state_expires_at = $8, verifier = $9, tokens = $10,
		token_expires_at = $11, platform_tenant_id = $12, refresh_failures = $13, refresh_after = $14 WHERE id = $1`,
		c.ID, c.DisplayName, c.Status, c.StatusReason, c.UpdatedAt, nullTime(c.ConnectedAt), nullString(c.StateHash),
		nullTime(c.StateExpiresAt), c.Verifier, c.Tokens, nullTime(c.TokenExpiresAt), c.PlatformTenantID,
		c.RefreshFailures, nullTime(c.RefreshAfter))
	if err != nil {
		return acctErr("update connection", err)
	}
	if tag.RowsAffected() == 0 {
		return accounting.ErrNotFound
	}
	return nil
}

func (s *Accounting) DeleteConnection(ctx context.Context, accountID, id string) error {
	tag, err := s.pool.Exec(ctx, `DELETE FROM accounting_connections WHERE id = $1 AND account_id = $2`, id, accountID)
	if err != nil {
		return acctErr("delete connection", err)
	}
	if tag.RowsAffected() == 0 {
		return accounting.ErrNotFound
	}
	return nil
}

func (s *Accounting) ConsumeState(ctx context.Context, stateHash string) (accounting.Connection, error) {
	// One statement: of two concurrent callbacks with the same state, one
	// updates the row and the other finds none.
	c, err := scanConn(s.pool.QueryRow(ctx, `UPDATE accounting_connections SET state_hash = NULL
		WHERE state_hash = $1 RETURNING `+connCols, stateHash))
	return c, acctErr("consume state", err)
}

func (s *Accounting) ExpirePending(ctx context.Context, now time.Time, reason string, limit int) ([]accounting.Connection, error) {
	// Only rows whose state is still open: a callback that consumed the
	// state is completing (its exchange decides the status), and once a row
	// is swept its state is gone, so a late callback finds none.
	return s.list(ctx, "expire pending", `UPDATE accounting_connections
		SET status = 'error', status_reason = $2, updated_at = $1, state_hash = NULL, verifier = NULL
		WHERE id IN (SELECT id FROM accounting_connections
			WHERE status = 'pending' AND state_hash IS NOT NULL AND state_expires_at <= $1
			ORDER BY state_expires_at, id LIMIT $3 FOR UPDATE SKIP LOCKED)
		RETURNING `+connCols, now, reason, limit)
}

func (s *Accounting) DueRefresh(ctx context.Context, before, now time.Time, limit int) ([]accounting.Connection, error) {
	return s.list(ctx, "due refresh", `SELECT `+connCols+` FROM accounting_connections
		WHERE status = 'active' AND token_expires_at < $1 AND (refresh_after IS NULL OR refresh_after <= $2)
		ORDER BY token_expires_at, id LIMIT $3`, before, now, limit)
}

func (s *Accounting) ClaimRefresh(ctx context.Context, id string, now, until time.Time) (bool, error) {
	tag, err := s.pool.Exec(ctx, `UPDATE accounting_connections SET refresh_after = $3
		WHERE id = $1 AND (refresh_after IS NULL OR refresh_after <= $2)`, id, now, until)
	if err != nil {
		return false, acctErr("claim refresh", err)
	}
	return tag.RowsAffected() == 1, nil
}

func (s *Accounting) PushedEntries(ctx context.Context, connectionID string, entryIDs []string) (map[string]string, error) {
	rows, err := s.pool.Query(ctx, `SELECT entry_id, platform_id FROM accounting_pushed_entries
		WHERE connection_id = $1 AND entry_id = ANY($2)`, connectionID, entryIDs)
	if err != nil {
		return nil, acctErr("pushed entries", err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var e, p string
		if err := rows.Scan(&e, &p); err != nil {
			return nil, acctErr("pushed entries", err)
		}
		out[e] = p
	}
	return out, acctErr("pushed entries", rows.Err())
}

func (s *Accounting) RecordPushed(ctx context.Context, connectionID, entryID, platformID string, at time.Time) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO accounting_pushed_entries (connection_id, entry_id, platform_id, pushed_at)
		VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING`, connectionID, entryID, platformID, at)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23503" { // the connection is gone
		return accounting.ErrNotFound
	}
	return acctErr("record pushed", err)
}

// RawConnection returns a connection row's secret columns as stored, for
// tests that check nothing is kept in the clear.
func (s *Accounting) RawConnection(ctx context.Context, id string) (verifier, tokens []byte, err error) {
	err = s.pool.QueryRow(ctx, `SELECT verifier, tokens FROM accounting_connections WHERE id = $1`, id).Scan(&verifier, &tokens)
	return verifier, tokens, acctErr("raw connection", err)
}
