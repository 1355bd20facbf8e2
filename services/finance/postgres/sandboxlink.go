package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ledgerlane/platform/pkg/pg"
	"github.com/ledgerlane/platform/services/finance"
	"github.com/ledgerlane/platform/services/finance/sandboxlink"
)

var _ sandboxlink.Store = (*Store)(nil)

// CreateSandboxUser implements sandboxlink.Store. A transaction-scoped
// advisory lock on the owner serialises its creates, so the count stays
// true until the insert commits (there is no owner row to lock).
func (s *Store) CreateSandboxUser(ctx context.Context, u finance.User, limit int) error {
	return storeErr("create sandbox user", pg.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('sandbox-users/' || $1, 0))`, u.OwnerAccountID); err != nil {
			return err
		}
		var n int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM users WHERE owner_account_id = $1 AND mode = 'test'`, u.OwnerAccountID).Scan(&n); err != nil {
			return err
		}
		if n >= limit {
			return fmt.Errorf("sandbox users of %s: %w", u.OwnerAccountID, finance.ErrLimitReached)
		}
		_, err := tx.Exec(ctx, `INSERT INTO users (id, name, owner_account_id, created_at, mode) VALUES ($1, $2, $3, $4, 'test')`,
			u.ID, nullStr(u.Name), u.OwnerAccountID, u.CreatedAt)
		return err
	}))
}

// ListSandboxUsers implements sandboxlink.Store.
func (s *Store) ListSandboxUsers(ctx context.Context, ownerAccountID string) ([]finance.User, error) {
	if !isUUID(ownerAccountID) {
		return nil, nil
	}
	rows, err := s.pool.Query(ctx, `
		SELECT id::text, COALESCE(name, ''), owner_account_id::text, created_at, mode
		FROM users WHERE owner_account_id = $1 AND mode = 'test' ORDER BY created_at, id`, ownerAccountID)
	if err != nil {
		return nil, storeErr("list sandbox users", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (finance.User, error) {
		var u finance.User
		err := r.Scan(&u.ID, &u.Name, &u.OwnerAccountID, &u.CreatedAt, &u.Mode)
		return u, err
	})
	return out, storeErr("list sandbox users", err)
}

const linkColumns = `id::text, owner_account_id::text, user_id::text, institution_id, status, COALESCE(error_code, ''),
	mfa_attempts, writes_enabled, COALESCE(connection_id::text, ''), COALESCE(grant_id::text, ''), version,
	created_at, updated_at, expires_at`

func scanLink(r pgx.Row) (sandboxlink.Link, error) {
	var (
		l       sandboxlink.Link
		expires *time.Time
	)
	err := r.Scan(&l.ID, &l.OwnerAccountID, &l.UserID, &l.InstitutionID, &l.Status, &l.ErrorCode, &l.MFAAttempts,
		&l.WritesEnabled, &l.ConnectionID, &l.GrantID, &l.Version, &l.CreatedAt, &l.UpdatedAt, &expires)
	if expires != nil {
		l.ExpiresAt = *expires
	}
	return l, err
}

func linkArgs(l sandboxlink.Link) []any {
	var expires *time.Time
	if !l.ExpiresAt.IsZero() {
		expires = &l.ExpiresAt
	}
	return []any{l.ID, l.OwnerAccountID, l.UserID, l.InstitutionID, l.Status, nullStr(l.ErrorCode), l.MFAAttempts,
		l.WritesEnabled, nullStr(l.ConnectionID), nullStr(l.GrantID), l.Version, l.CreatedAt, l.UpdatedAt, expires}
}

// CreateLink implements sandboxlink.Store. Locking the user's row
// serialises the user's link creates, so the count holds until commit.
func (s *Store) CreateLink(ctx context.Context, l sandboxlink.Link, limit int, w *sandboxlink.Linked) error {
	return storeErr("create link", pg.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT 1 FROM users WHERE id = $1 FOR UPDATE`, l.UserID); err != nil {
			return err
		}
		var n int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM sandbox_links WHERE user_id = $1`, l.UserID).Scan(&n); err != nil {
			return err
		}
		if n >= limit {
			return fmt.Errorf("links of %s: %w", l.UserID, finance.ErrLimitReached)
		}
		if err := writeLinked(ctx, tx, w); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `
			INSERT INTO sandbox_links (id, owner_account_id, user_id, institution_id, status, error_code, mfa_attempts,
				writes_enabled, connection_id, grant_id, version, created_at, updated_at, expires_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`, linkArgs(l)...)
		return err
	}))
}

// UpdateLink implements sandboxlink.Store: the row is locked first, so two
// answers to one MFA step cannot both pass the version check.
func (s *Store) UpdateLink(ctx context.Context, l sandboxlink.Link, expectedVersion int64, w *sandboxlink.Linked) error {
	if !isUUID(l.ID) {
		return fmt.Errorf("link %q: %w", l.ID, finance.ErrNotFound)
	}
	return storeErr("update link", pg.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		var version int64
		if err := tx.QueryRow(ctx, `SELECT version FROM sandbox_links WHERE id = $1 FOR UPDATE`, l.ID).Scan(&version); err != nil {
			return err // no rows: not found
		}
		if version != expectedVersion {
			return fmt.Errorf("link %s: %w", l.ID, finance.ErrVersionConflict)
		}
		if err := writeLinked(ctx, tx, w); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `
			UPDATE sandbox_links SET owner_account_id = $2, user_id = $3, institution_id = $4, status = $5, error_code = $6,
				mfa_attempts = $7, writes_enabled = $8, connection_id = $9, grant_id = $10, version = $11, created_at = $12,
				updated_at = $13, expires_at = $14
			WHERE id = $1`, linkArgs(l)...)
		return err
	}))
}

// writeLinked writes a successful link's connection, grant, accounts, the
// missing system categories and the rows, and marks the user due for
// recurring detection, in tx; in that order, for the foreign keys.
func writeLinked(ctx context.Context, tx pgx.Tx, w *sandboxlink.Linked) error {
	if w == nil {
		return nil
	}
	b := &pgx.Batch{}
	b.Queue(insertConnection, connectionArgs(w.Connection)...)
	b.Queue(insertGrant, grantArgs(w.Grant)...)
	for _, a := range w.History.Accounts {
		b.Queue(insertAccount, accountArgs(a)...)
	}
	for _, c := range w.History.Categories {
		b.Queue(insertCategory+` ON CONFLICT (id) DO NOTHING`, categoryArgs(c)...)
	}
	for _, t := range w.History.Transactions {
		b.Queue(insertTransaction, insertArgs(t)...)
	}
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
		return err
	}
	if w.RecurringDueAt.IsZero() || len(w.History.Transactions) == 0 {
		return nil
	}
	return markRecurringDue(ctx, tx, w.Connection.UserID, w.RecurringDueAt)
}

// GetLink implements sandboxlink.Store.
func (s *Store) GetLink(ctx context.Context, id string) (sandboxlink.Link, error) {
	if !isUUID(id) {
		return sandboxlink.Link{}, fmt.Errorf("link %q: %w", id, finance.ErrNotFound)
	}
	l, err := scanLink(s.pool.QueryRow(ctx, `SELECT `+linkColumns+` FROM sandbox_links WHERE id = $1`, id))
	return l, storeErr("get link", err)
}

// ListLinks implements sandboxlink.Store.
func (s *Store) ListLinks(ctx context.Context, ownerAccountID, userID string) ([]sandboxlink.Link, error) {
	if !isUUID(ownerAccountID) || (userID != "" && !isUUID(userID)) {
		return nil, nil
	}
	rows, err := s.pool.Query(ctx, `SELECT `+linkColumns+` FROM sandbox_links
		WHERE owner_account_id = $1 AND ($2 = '' OR user_id::text = $2) ORDER BY created_at, id`, ownerAccountID, userID)
	if err != nil {
		return nil, storeErr("list links", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (sandboxlink.Link, error) { return scanLink(r) })
	return out, storeErr("list links", err)
}

// LinkedConnections implements sandboxlink.Store.
func (s *Store) LinkedConnections(ctx context.Context) ([]sandboxlink.LinkedConnection, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT l.connection_id::text, a.id::text, COALESCE(a.type, ''), COALESCE(a.subtype, ''), a.currency
		FROM sandbox_links l JOIN accounts a ON a.connection_id = l.connection_id
		WHERE l.status = 'linked'
		ORDER BY l.connection_id, a.created_at, a.id`)
	if err != nil {
		return nil, storeErr("linked connections", err)
	}
	defer rows.Close()
	var out []sandboxlink.LinkedConnection
	for rows.Next() {
		var conn string
		var a sandboxlink.LinkedAccount
		if err := rows.Scan(&conn, &a.ID, &a.Type, &a.Subtype, &a.Currency); err != nil {
			return nil, storeErr("linked connections", err)
		}
		if len(out) == 0 || out[len(out)-1].ConnectionID != conn {
			out = append(out, sandboxlink.LinkedConnection{ConnectionID: conn})
		}
		out[len(out)-1].Accounts = append(out[len(out)-1].Accounts, a)
	}
	return out, storeErr("linked connections", rows.Err())
}
