package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ledgerlane/platform/services/metering"
	"github.com/ledgerlane/platform/services/metering/identity"
)

var _ identity.OAuthStore = (*Store)(nil)

const oauthClientColumns = `id::text, account_id::text, name, client_id, secret_hash, scopes, created_at, revoked_at`

func scanOAuthClient(row pgx.CollectableRow) (identity.OAuthClient, error) {
	var c identity.OAuthClient
	if err := row.Scan(&c.ID, &c.AccountID, &c.Name, &c.ClientID, &c.SecretHash, &c.Scopes, &c.CreatedAt, &c.RevokedAt); err != nil {
		return identity.OAuthClient{}, err
	}
	c.CreatedAt = c.CreatedAt.UTC()
	if c.RevokedAt != nil {
		t := c.RevokedAt.UTC()
		c.RevokedAt = &t
	}
	return c, nil
}

func (s *Store) CreateOAuthClient(ctx context.Context, c identity.OAuthClient) error {
	if !isUUID(c.AccountID) {
		return metering.ErrNotFound
	}
	scopes := c.Scopes
	if scopes == nil {
		scopes = []string{}
	}
	_, err := s.pool.Exec(ctx, `
		INSERT INTO oauth_clients (id, account_id, name, client_id, secret_hash, scopes, created_at, revoked_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		c.ID, c.AccountID, c.Name, c.ClientID, c.SecretHash, scopes, c.CreatedAt, c.RevokedAt)
	if err != nil {
		return storeErr("create oauth client", err)
	}
	return nil
}

func (s *Store) OAuthClientByClientID(ctx context.Context, clientID string) (identity.OAuthClient, error) {
	return queryOne(ctx, s.pool, "oauth client", scanOAuthClient, `SELECT `+oauthClientColumns+` FROM oauth_clients WHERE client_id = $1`, clientID)
}

func (s *Store) ListOAuthClients(ctx context.Context, accountID string) ([]identity.OAuthClient, error) {
	if !isUUID(accountID) {
		return []identity.OAuthClient{}, nil
	}
	rows, err := s.pool.Query(ctx,
		`SELECT `+oauthClientColumns+` FROM oauth_clients WHERE account_id = $1 ORDER BY created_at, id`, accountID)
	if err != nil {
		return nil, storeErr("list oauth clients", err)
	}
	out, err := pgx.CollectRows(rows, scanOAuthClient)
	if err != nil {
		return nil, storeErr("list oauth clients", err)
	}
	if out == nil {
		out = []identity.OAuthClient{}
	}
	return out, nil
}

func (s *Store) RevokeOAuthClient(ctx context.Context, accountID, id string, at time.Time) error {
	if !isUUID(accountID) || !isUUID(id) {
		return metering.ErrNotFound
	}
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		// COALESCE keeps the first revocation time when revoked twice.
		tag, err := tx.Exec(ctx, `UPDATE oauth_clients SET revoked_at = COALESCE(revoked_at, $3)
			WHERE id = $1 AND account_id = $2`, id, accountID, at)
		if err != nil {
			return storeErr("revoke oauth client", err)
		}
		if tag.RowsAffected() == 0 {
			return metering.ErrNotFound
		}
		if _, err := tx.Exec(ctx, `UPDATE credentials SET revoked_at = $2
			WHERE oauth_client_id = $1 AND revoked_at IS NULL`, id, at); err != nil {
			return storeErr("revoke oauth tokens", err)
		}
		return nil
	})
}

func (s *Store) DeleteExpiredTokens(ctx context.Context, id string, before time.Time) (int, error) {
	if !isUUID(id) {
		return 0, nil
	}
	tag, err := s.pool.Exec(ctx, `DELETE FROM credentials WHERE oauth_client_id = $1 AND expires_at <= $2`, id, before)
	if err != nil {
		return 0, storeErr("delete expired tokens", err)
	}
	return int(tag.RowsAffected()), nil
}
