-- +goose Up
-- Test OAuth clients (docs/portal.md, "Test OAuth clients"). Only the
-- SHA-256 of a client secret is kept, as for credentials.
CREATE TABLE oauth_clients (
    id          uuid PRIMARY KEY,
    account_id  uuid NOT NULL REFERENCES accounts (id),
    name        text NOT NULL,
    client_id   text NOT NULL UNIQUE,
    secret_hash text NOT NULL UNIQUE,
    scopes      text[] NOT NULL,
    created_at  timestamptz NOT NULL,
    revoked_at  timestamptz
);
CREATE INDEX oauth_clients_account_idx ON oauth_clients (account_id, created_at, id);

-- Client-credentials access tokens are credentials that expire and belong
-- to the client that obtained them (revoking the client revokes them).
ALTER TABLE credentials
    ADD COLUMN expires_at timestamptz,
    ADD COLUMN oauth_client_id uuid REFERENCES oauth_clients (id);
CREATE INDEX credentials_oauth_client_idx ON credentials (oauth_client_id) WHERE oauth_client_id IS NOT NULL;

-- +goose Down
ALTER TABLE credentials DROP COLUMN oauth_client_id, DROP COLUMN expires_at;
DROP TABLE oauth_clients;
