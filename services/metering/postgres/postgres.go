// Package postgres is the PostgreSQL metering.Store. The pool is expected to
// point at the service's own schema with Migrations applied (see pkg/pg).
package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ledgerlane/platform/pkg/pg"
	"github.com/ledgerlane/platform/services/metering"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Migrations are the goose SQL migrations of the store, at the root of the FS
// as pg.Open expects.
var Migrations fs.FS = pg.MigrationsFS(migrationFiles, "migrations")

// Store implements metering.Store on a pgx pool.
type Store struct {
	pool *pgxpool.Pool
}

var _ metering.Store = (*Store)(nil)

// New returns a Store on pool.
func New(pool *pgxpool.Pool) *Store { return &Store{pool: pool} }

// PostgreSQL error codes the store maps to domain errors.
const (
	uniqueViolation     = "23505"
	foreignKeyViolation = "23503"
)

// storeErr maps driver errors onto metering's sentinels.
func storeErr(op string, err error) error {
	if errors.Is(err, pgx.ErrNoRows) {
		return metering.ErrNotFound
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case uniqueViolation:
			return fmt.Errorf("%s: %w", op, metering.ErrConflict)
		case foreignKeyViolation:
			return fmt.Errorf("%s: %w", op, metering.ErrNotFound)
		}
	}
	return fmt.Errorf("%s: %w", op, err)
}

// isUUID guards lookups: a malformed ID is simply not found, as in every other
// Store, instead of a PostgreSQL syntax error.
func isUUID(id string) bool { return uuid.Validate(id) == nil }

func (s *Store) CreateAccount(ctx context.Context, a metering.Account) error {
	_, err := s.pool.Exec(ctx, `
		INSERT INTO accounts (id, name, plan_id, billing_currency, billing_anchor, created_at, hard_stop, overage_cap_cents, next_close_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		a.ID, a.Name, a.PlanID, string(a.BillingCurrency), a.BillingAnchor, a.CreatedAt, a.HardStop, a.OverageCapCents, a.NextCloseAt)
	if err != nil {
		return storeErr("create account", err)
	}
	return nil
}

func (s *Store) GetAccount(ctx context.Context, id string) (metering.Account, error) {
	if !isUUID(id) {
		return metering.Account{}, metering.ErrNotFound
	}
	var a metering.Account
	var currency string
	err := s.pool.QueryRow(ctx, `
		SELECT id::text, name, plan_id, billing_currency, billing_anchor, created_at, hard_stop, overage_cap_cents,
			COALESCE(scheduled_plan_id, ''), scheduled_at, credit_cents, next_close_at
		FROM accounts WHERE id = $1`, id).
		Scan(&a.ID, &a.Name, &a.PlanID, &currency, &a.BillingAnchor, &a.CreatedAt, &a.HardStop, &a.OverageCapCents,
			&a.ScheduledPlanID, &a.ScheduledAt, &a.CreditCents, &a.NextCloseAt)
	if err != nil {
		return metering.Account{}, storeErr("get account", err)
	}
	a.BillingCurrency = metering.Currency(currency)
	a.BillingAnchor = a.BillingAnchor.UTC()
	a.CreatedAt = a.CreatedAt.UTC()
	a.ScheduledAt, a.NextCloseAt = utcPtr(a.ScheduledAt), utcPtr(a.NextCloseAt)
	return a, nil
}

func (s *Store) SetBillingLimits(ctx context.Context, id string, hardStop bool, capCents *int64, at time.Time) error {
	if !isUUID(id) {
		return metering.ErrNotFound
	}
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE accounts SET hard_stop = $2, overage_cap_cents = $3 WHERE id = $1`, id, hardStop, capCents)
		if err != nil {
			return storeErr("set billing limits", err)
		}
		if tag.RowsAffected() == 0 {
			return metering.ErrNotFound
		}
		_, err = tx.Exec(ctx, `INSERT INTO limit_changes (account_id, at, hard_stop, overage_cap_cents) VALUES ($1, $2, $3, $4)`,
			id, at, hardStop, capCents)
		if err != nil {
			return storeErr("set billing limits", err)
		}
		return nil
	})
}

func (s *Store) CreateCredential(ctx context.Context, c metering.Credential) error {
	if !isUUID(c.AccountID) {
		return metering.ErrNotFound
	}
	scopes := c.Scopes
	if scopes == nil {
		scopes = []string{} // the column is NOT NULL
	}
	_, err := s.pool.Exec(ctx, `
		INSERT INTO credentials (id, account_id, name, kind, surface, mode, scopes, secret_hash,
			prefix, finance_user_id, grant_id, created_at, revoked_at, expires_at, oauth_client_id)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, NULLIF($15, '')::uuid)`,
		c.ID, c.AccountID, c.Name, c.Kind, c.Surface, c.Mode, scopes, c.SecretHash,
		c.Prefix, c.FinanceUserID, c.GrantID, c.CreatedAt, c.RevokedAt, c.ExpiresAt, c.OAuthClientID)
	if err != nil {
		return storeErr("create credential", err)
	}
	return nil
}

const credentialColumns = `id::text, account_id::text, name, kind, surface, mode, scopes, secret_hash,
	prefix, finance_user_id, grant_id, created_at, revoked_at, expires_at, COALESCE(oauth_client_id::text, ''),
	last_used_at`

func scanCredential(row pgx.Row) (metering.Credential, error) {
	var c metering.Credential
	err := row.Scan(&c.ID, &c.AccountID, &c.Name, &c.Kind, &c.Surface, &c.Mode, &c.Scopes, &c.SecretHash,
		&c.Prefix, &c.FinanceUserID, &c.GrantID, &c.CreatedAt, &c.RevokedAt, &c.ExpiresAt, &c.OAuthClientID, &c.LastUsedAt)
	if err != nil {
		return metering.Credential{}, err
	}
	c.CreatedAt = c.CreatedAt.UTC()
	for _, p := range []**time.Time{&c.RevokedAt, &c.ExpiresAt, &c.LastUsedAt} {
		if *p != nil {
			t := (*p).UTC()
			*p = &t
		}
	}
	return c, nil
}

func (s *Store) CredentialByHash(ctx context.Context, hash string) (metering.Credential, error) {
	c, err := scanCredential(s.pool.QueryRow(ctx,
		`SELECT `+credentialColumns+` FROM credentials WHERE secret_hash = $1`, hash))
	if err != nil {
		return metering.Credential{}, storeErr("credential by hash", err)
	}
	return c, nil
}

func (s *Store) ListCredentials(ctx context.Context, accountID string) ([]metering.Credential, error) {
	out := []metering.Credential{}
	if !isUUID(accountID) {
		return out, nil
	}
	rows, err := s.pool.Query(ctx,
		`SELECT `+credentialColumns+` FROM credentials WHERE account_id = $1 ORDER BY created_at, id`, accountID)
	if err != nil {
		return nil, storeErr("list credentials", err)
	}
	defer rows.Close()
	for rows.Next() {
		c, err := scanCredential(rows)
		if err != nil {
			return nil, storeErr("list credentials", err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, storeErr("list credentials", err)
	}
	return out, nil
}

func (s *Store) TouchCredential(ctx context.Context, id string, at time.Time) error {
	if !isUUID(id) {
		return metering.ErrNotFound
	}
	// An equal or later time already there is kept: the row is found, so
	// this is no miss, but the UPDATE changes nothing.
	var found bool
	err := s.pool.QueryRow(ctx, `
		WITH t AS (UPDATE credentials SET last_used_at = $2
			WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < $2) RETURNING 1)
		SELECT EXISTS (SELECT 1 FROM t) OR EXISTS (SELECT 1 FROM credentials WHERE id = $1)`, id, at).Scan(&found)
	if err != nil {
		return storeErr("touch credential", err)
	}
	if !found {
		return metering.ErrNotFound
	}
	return nil
}

func (s *Store) RevokeCredential(ctx context.Context, id string, at time.Time) error {
	if !isUUID(id) {
		return metering.ErrNotFound
	}
	// COALESCE keeps the first revocation time when revoked twice.
	tag, err := s.pool.Exec(ctx,
		`UPDATE credentials SET revoked_at = COALESCE(revoked_at, $2) WHERE id = $1`, id, at)
	if err != nil {
		return storeErr("revoke credential", err)
	}
	if tag.RowsAffected() == 0 {
		return metering.ErrNotFound
	}
	return nil
}

func (s *Store) ApplyDowngrade(ctx context.Context, id string, now time.Time) error {
	if !isUUID(id) {
		return metering.ErrNotFound
	}
	_, err := s.pool.Exec(ctx, `
		UPDATE accounts SET plan_id = scheduled_plan_id, scheduled_plan_id = NULL, scheduled_at = NULL
		WHERE id = $1 AND scheduled_at <= $2`, id, now)
	if err != nil {
		return storeErr("apply downgrade", err)
	}
	return nil
}

// queryAll and queryOne are pkg/pg's All and One with this store's error
// mapping (storeErr).
func queryAll[T any](ctx context.Context, q pg.Querier, op string, scan pgx.RowToFunc[T], sql string, args ...any) ([]T, error) {
	return pg.All(ctx, q, storeErr, op, scan, sql, args...)
}

func queryOne[T any](ctx context.Context, q pg.Querier, op string, scan pgx.RowToFunc[T], sql string, args ...any) (T, error) {
	return pg.One(ctx, q, storeErr, op, scan, sql, args...)
}
