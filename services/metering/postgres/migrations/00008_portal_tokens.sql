-- +goose Up
-- Single-use tokens mailed to portal users (docs/portal.md, "Password
-- reset", "E-mail verification"): only their SHA-256 is kept.
CREATE TABLE portal_tokens (
    token_hash text PRIMARY KEY,
    purpose    text NOT NULL CHECK (purpose IN ('reset', 'verify')),
    user_id    uuid NOT NULL REFERENCES portal_users (id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    used_at    timestamptz
);
CREATE INDEX portal_tokens_user ON portal_tokens (user_id);

-- People who could sign in before verification existed count as verified:
-- they signed up or joined by invitation under the old rules.
ALTER TABLE portal_users ADD COLUMN email_verified boolean NOT NULL DEFAULT false;
UPDATE portal_users SET email_verified = true WHERE password_hash <> '';

-- +goose Down
ALTER TABLE portal_users DROP COLUMN email_verified;
DROP TABLE portal_tokens;
