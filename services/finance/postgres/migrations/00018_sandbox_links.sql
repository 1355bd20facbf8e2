-- +goose Up

-- The finance sandbox's links (finance/sandboxlink, docs/finance-sandbox.md):
-- one attempt of a test-mode user to link a pretend institution. No
-- credential, password or MFA code is ever stored; a link holds its state
-- and, once linked, the connection and grant it made.
CREATE TABLE sandbox_links (
    id               uuid PRIMARY KEY,
    owner_account_id uuid NOT NULL,
    user_id          uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    institution_id   text NOT NULL,
    status           text NOT NULL CHECK (status IN ('mfa_required', 'linked', 'failed')),
    error_code       text,
    mfa_attempts     integer NOT NULL DEFAULT 0,
    writes_enabled   boolean NOT NULL DEFAULT false,
    connection_id    uuid REFERENCES connections (id) ON DELETE SET NULL,
    grant_id         uuid REFERENCES grants (id) ON DELETE SET NULL,
    version          bigint NOT NULL,
    created_at       timestamptz NOT NULL,
    updated_at       timestamptz NOT NULL,
    expires_at       timestamptz
);
CREATE INDEX sandbox_links_owner ON sandbox_links (owner_account_id, created_at, id);
CREATE INDEX sandbox_links_user ON sandbox_links (user_id);
-- The aggregator lists the linked ones on every tick.
CREATE INDEX sandbox_links_linked ON sandbox_links (connection_id) WHERE status = 'linked';

-- An account's sandbox users are its test-mode users: listed and counted
-- (the per-account limit) by owner.
CREATE INDEX users_owner_mode ON users (owner_account_id, mode);

-- +goose Down
DROP INDEX users_owner_mode;
DROP TABLE sandbox_links;
