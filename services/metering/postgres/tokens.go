package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ledgerlane/platform/services/metering"
	"github.com/ledgerlane/platform/services/metering/identity"
	"github.com/ledgerlane/platform/services/metering/notify"
)

var _ identity.PortalTokenStore = (*Store)(nil)

func (s *Store) CreatePortalToken(ctx context.Context, tk identity.PortalToken, m notify.OutboxMail) error {
	if !isUUID(tk.UserID) {
		return metering.ErrNotFound
	}
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO portal_tokens (token_hash, purpose, user_id, created_at, expires_at, used_at)
			VALUES ($1, $2, $3, $4, $5, $6)`, tk.TokenHash, tk.Purpose, tk.UserID, tk.CreatedAt, tk.ExpiresAt, tk.UsedAt); err != nil {
			return storeErr("create portal token", err)
		}
		if err := insertMail(ctx, tx, m); err != nil {
			return storeErr("portal token mail", err)
		}
		return nil
	})
}

func (s *Store) PortalTokenByHash(ctx context.Context, hash string) (identity.PortalToken, error) {
	var tk identity.PortalToken
	err := s.pool.QueryRow(ctx, `SELECT token_hash, purpose, user_id::text, created_at, expires_at, used_at
		FROM portal_tokens WHERE token_hash = $1`, hash).Scan(&tk.TokenHash, &tk.Purpose, &tk.UserID, &tk.CreatedAt, &tk.ExpiresAt, &tk.UsedAt)
	if err != nil {
		return identity.PortalToken{}, storeErr("portal token", err)
	}
	tk.CreatedAt, tk.ExpiresAt = tk.CreatedAt.UTC(), tk.ExpiresAt.UTC()
	if tk.UsedAt != nil {
		t := tk.UsedAt.UTC()
		tk.UsedAt = &t
	}
	return tk, nil
}

func (s *Store) ResetPassword(ctx context.Context, hash, passwordHash string, at time.Time) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		// The UPDATE … WHERE used_at IS NULL is what makes the token single-use
		// under concurrent submissions: only one of them changes the row.
		var userID string
		err := tx.QueryRow(ctx, `UPDATE portal_tokens SET used_at = $2
			WHERE token_hash = $1 AND purpose = 'reset' AND used_at IS NULL RETURNING user_id::text`, hash, at).Scan(&userID)
		if err != nil {
			return storeErr("use reset token", err)
		}
		// Every other link of the user dies with this reset.
		if _, err := tx.Exec(ctx, `UPDATE portal_tokens SET used_at = $2
			WHERE user_id = $1 AND purpose = 'reset' AND used_at IS NULL`, userID, at); err != nil {
			return storeErr("end the other reset links", err)
		}
		if _, err := tx.Exec(ctx, `UPDATE portal_users SET password_hash = $2, email_verified = true WHERE id = $1`, userID, passwordHash); err != nil {
			return storeErr("set password", err)
		}
		if _, err := tx.Exec(ctx, `DELETE FROM portal_sessions WHERE user_id = $1`, userID); err != nil {
			return storeErr("end sessions", err)
		}
		return nil
	})
}

func (s *Store) VerifyEmail(ctx context.Context, hash string, at time.Time) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var userID string
		err := tx.QueryRow(ctx, `UPDATE portal_tokens SET used_at = $2
			WHERE token_hash = $1 AND purpose = 'verify' AND used_at IS NULL RETURNING user_id::text`, hash, at).Scan(&userID)
		if err != nil {
			return storeErr("use verification token", err)
		}
		if _, err := tx.Exec(ctx, `UPDATE portal_users SET email_verified = true WHERE id = $1`, userID); err != nil {
			return storeErr("verify e-mail", err)
		}
		return nil
	})
}

func (s *Store) MarkEmailVerified(ctx context.Context, userID string) error {
	if !isUUID(userID) {
		return metering.ErrNotFound
	}
	tag, err := s.pool.Exec(ctx, `UPDATE portal_users SET email_verified = true WHERE id = $1`, userID)
	if err != nil {
		return storeErr("verify e-mail", err)
	}
	if tag.RowsAffected() == 0 {
		return metering.ErrNotFound
	}
	return nil
}
