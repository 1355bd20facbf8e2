-- +goose Up
-- Portal sign-in (docs/portal.md): a password for portal users, and sessions
-- stored by the SHA-256 of their token.
ALTER TABLE portal_users ADD COLUMN password_hash text NOT NULL DEFAULT '',
    ADD COLUMN invite_hash text NOT NULL DEFAULT '',
    ADD COLUMN invite_expires_at timestamptz;
CREATE UNIQUE INDEX portal_users_invite ON portal_users (invite_hash) WHERE invite_hash <> '';
CREATE INDEX portal_users_login ON portal_users (email) WHERE password_hash <> '';

CREATE TABLE portal_sessions (
    token_hash text PRIMARY KEY,
    user_id    uuid NOT NULL REFERENCES portal_users (id) ON DELETE CASCADE,
    account_id uuid NOT NULL REFERENCES accounts (id),
    csrf_token text NOT NULL,
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL
);
CREATE INDEX portal_sessions_user ON portal_sessions (user_id);
CREATE INDEX portal_sessions_expiry ON portal_sessions (expires_at);

-- +goose Down
DROP TABLE portal_sessions;
DROP INDEX portal_users_invite;
DROP INDEX portal_users_login;
ALTER TABLE portal_users DROP COLUMN password_hash, DROP COLUMN invite_hash, DROP COLUMN invite_expires_at;
