-- +goose Up
CREATE TABLE accounts (
    id               uuid PRIMARY KEY,
    name             text NOT NULL,
    plan_id          text NOT NULL,
    billing_currency text NOT NULL CHECK (billing_currency IN ('usd', 'eur', 'gbp')),
    billing_anchor   timestamptz NOT NULL,
    created_at       timestamptz NOT NULL
);

CREATE TABLE credentials (
    id              uuid PRIMARY KEY,
    account_id      uuid NOT NULL REFERENCES accounts (id),
    name            text NOT NULL,
    kind            text NOT NULL CHECK (kind IN ('ak', 'at')),
    surface         text NOT NULL CHECK (surface IN ('conversion', 'finance')),
    mode            text NOT NULL CHECK (mode IN ('live', 'test')),
    scopes          text[] NOT NULL,
    -- Hex SHA-256 of the secret; the secret itself is never stored.
    secret_hash     text NOT NULL,
    prefix          text NOT NULL,
    finance_user_id text NOT NULL DEFAULT '',
    grant_id        text NOT NULL DEFAULT '',
    created_at      timestamptz NOT NULL,
    revoked_at      timestamptz
);

-- Every authenticated request looks its credential up by hash.
CREATE UNIQUE INDEX credentials_secret_hash_key ON credentials (secret_hash);
CREATE INDEX credentials_account_id_idx ON credentials (account_id, created_at, id);

-- +goose Down
DROP TABLE credentials;
DROP TABLE accounts;
