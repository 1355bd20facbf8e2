package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/ledgerlane/platform/services/metering"
	"github.com/ledgerlane/platform/services/metering/identity"
	"github.com/ledgerlane/platform/services/metering/notify"
)

var _ identity.Store = (*Store)(nil)

const portalUserColumns = `id::text, account_id::text, email, name, created_at, password_hash, invite_hash, invite_expires_at, email_verified`

func scanPortalUser(row pgx.CollectableRow) (identity.PortalUser, error) {
	var u identity.PortalUser
	err := row.Scan(&u.ID, &u.AccountID, &u.Email, &u.Name, &u.CreatedAt, &u.PasswordHash, &u.InviteHash, &u.InviteExpiresAt, &u.EmailVerified)
	u.CreatedAt = u.CreatedAt.UTC()
	if u.InviteExpiresAt != nil {
		t := u.InviteExpiresAt.UTC()
		u.InviteExpiresAt = &t
	}
	return u, err
}

func (s *Store) PortalLogins(ctx context.Context, email string) ([]identity.PortalUser, error) {
	return queryAll(ctx, s.pool, "portal logins", scanPortalUser, `SELECT `+portalUserColumns+` FROM portal_users
		WHERE email = $1 AND password_hash <> '' ORDER BY created_at, id`, email)
}

func (s *Store) GetPortalUser(ctx context.Context, id string) (identity.PortalUser, error) {
	if !isUUID(id) {
		return identity.PortalUser{}, metering.ErrNotFound
	}
	return queryOne(ctx, s.pool, "portal user", scanPortalUser, `SELECT `+portalUserColumns+` FROM portal_users WHERE id = $1`, id)
}

func (s *Store) CreateSession(ctx context.Context, ps identity.PortalSession) error {
	if !isUUID(ps.UserID) || !isUUID(ps.AccountID) {
		return metering.ErrNotFound
	}
	// The user must be the account's: the row is written only then.
	tag, err := s.pool.Exec(ctx, `
		INSERT INTO portal_sessions (token_hash, user_id, account_id, csrf_token, created_at, expires_at)
		SELECT $1, id, account_id, $4, $5, $6 FROM portal_users WHERE id = $2 AND account_id = $3`,
		ps.TokenHash, ps.UserID, ps.AccountID, ps.CSRFToken, ps.CreatedAt, ps.ExpiresAt)
	if err != nil {
		return storeErr("create session", err)
	}
	if tag.RowsAffected() == 0 {
		return metering.ErrNotFound
	}
	return nil
}

func (s *Store) SessionByHash(ctx context.Context, hash string) (identity.PortalSession, error) {
	var ps identity.PortalSession
	err := s.pool.QueryRow(ctx, `SELECT token_hash, user_id::text, account_id::text, csrf_token, created_at, expires_at
		FROM portal_sessions WHERE token_hash = $1`, hash).
		Scan(&ps.TokenHash, &ps.UserID, &ps.AccountID, &ps.CSRFToken, &ps.CreatedAt, &ps.ExpiresAt)
	if err != nil {
		return identity.PortalSession{}, storeErr("session", err)
	}
	ps.CreatedAt, ps.ExpiresAt = ps.CreatedAt.UTC(), ps.ExpiresAt.UTC()
	return ps, nil
}

func (s *Store) DeleteSession(ctx context.Context, hash string) error {
	if _, err := s.pool.Exec(ctx, `DELETE FROM portal_sessions WHERE token_hash = $1`, hash); err != nil {
		return storeErr("delete session", err)
	}
	return nil
}

func (s *Store) DeleteUserSessions(ctx context.Context, userID string) error {
	if !isUUID(userID) {
		return nil
	}
	if _, err := s.pool.Exec(ctx, `DELETE FROM portal_sessions WHERE user_id = $1`, userID); err != nil {
		return storeErr("delete sessions", err)
	}
	return nil
}

const insertPortalUser = `INSERT INTO portal_users (id, account_id, email, name, created_at, password_hash, invite_hash, invite_expires_at, email_verified)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`

func (s *Store) InviteUser(ctx context.Context, u identity.PortalUser, m notify.OutboxMail) error {
	if !isUUID(u.AccountID) {
		return metering.ErrNotFound
	}
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, insertPortalUser, u.ID, u.AccountID, u.Email, u.Name, u.CreatedAt, u.PasswordHash, u.InviteHash, u.InviteExpiresAt, u.EmailVerified); err != nil {
			return storeErr("invite user", err)
		}
		if err := insertMail(ctx, tx, m); err != nil {
			return storeErr("invite mail", err)
		}
		return nil
	})
}

func (s *Store) PortalUserByInvite(ctx context.Context, hash string) (identity.PortalUser, error) {
	if hash == "" {
		return identity.PortalUser{}, metering.ErrNotFound
	}
	return queryOne(ctx, s.pool, "invite", scanPortalUser, `SELECT `+portalUserColumns+` FROM portal_users WHERE invite_hash = $1`, hash)
}

func (s *Store) AcceptInvite(ctx context.Context, userID, passwordHash, name string) error {
	if !isUUID(userID) {
		return metering.ErrNotFound
	}
	tag, err := s.pool.Exec(ctx, `UPDATE portal_users SET password_hash = $2, name = $3, invite_hash = '', invite_expires_at = NULL
		WHERE id = $1 AND invite_hash <> ''`, userID, passwordHash, name)
	if err != nil {
		return storeErr("accept invite", err)
	}
	if tag.RowsAffected() == 0 {
		return metering.ErrNotFound
	}
	return nil
}

func (s *Store) AddPortalUser(ctx context.Context, u identity.PortalUser) error {
	if !isUUID(u.AccountID) {
		return metering.ErrNotFound
	}
	_, err := s.pool.Exec(ctx, insertPortalUser, u.ID, u.AccountID, u.Email, u.Name, u.CreatedAt, u.PasswordHash, u.InviteHash, u.InviteExpiresAt, u.EmailVerified)
	if err != nil {
		return storeErr("add portal user", err)
	}
	return nil
}

func (s *Store) PortalUsers(ctx context.Context, id string) ([]identity.PortalUser, error) {
	if !isUUID(id) {
		return []identity.PortalUser{}, nil
	}
	return queryAll(ctx, s.pool, "portal users", scanPortalUser, `SELECT `+portalUserColumns+` FROM portal_users
		WHERE account_id = $1 ORDER BY created_at, id`, id)
}
