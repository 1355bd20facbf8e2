-- +goose Up
-- Accounting-platform connections (docs/accounting.md). Secrets are sealed
-- blobs (the jobs key ring): the PKCE verifier until the callback, the
-- platform's tokens once active. The OAuth state is kept only as its hash.
CREATE TABLE accounting_connections (
    id                 uuid PRIMARY KEY,
    account_id         text NOT NULL,
    platform           text NOT NULL,
    display_name       text NOT NULL,
    status             text NOT NULL,
    status_reason      text NOT NULL DEFAULT '',
    created_at         timestamptz NOT NULL,
    updated_at         timestamptz NOT NULL,
    connected_at       timestamptz,
    state_hash         text,
    state_expires_at   timestamptz,
    verifier           bytea,
    tokens             bytea,
    token_expires_at   timestamptz,
    platform_tenant_id text NOT NULL DEFAULT '',
    refresh_failures   integer NOT NULL DEFAULT 0,
    refresh_after      timestamptz
);
CREATE INDEX accounting_connections_list_idx ON accounting_connections (account_id, created_at DESC, id DESC);
CREATE UNIQUE INDEX accounting_connections_state_idx ON accounting_connections (state_hash) WHERE state_hash IS NOT NULL;
CREATE INDEX accounting_connections_refresh_idx ON accounting_connections (token_expires_at) WHERE status = 'active';

-- One row per statement entry booked through a connection: the de-duplication
-- of pushes. Only ids, never statement content.
CREATE TABLE accounting_pushed_entries (
    connection_id uuid NOT NULL REFERENCES accounting_connections (id) ON DELETE CASCADE,
    entry_id      text NOT NULL,
    platform_id   text NOT NULL,
    pushed_at     timestamptz NOT NULL,
    PRIMARY KEY (connection_id, entry_id)
);

-- +goose Down
DROP TABLE accounting_pushed_entries;
DROP TABLE accounting_connections;
