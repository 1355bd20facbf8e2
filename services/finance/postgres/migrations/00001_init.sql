-- +goose Up

CREATE TABLE users (
    id         uuid PRIMARY KEY,
    name       text,
    created_at timestamptz NOT NULL
);

-- A grant is a user's consent for one client: what it may see and whether it
-- may write. Field ids and excluded rows are lists because they are read
-- whole with the grant on every request.
CREATE TABLE grants (
    id                    uuid PRIMARY KEY,
    user_id               uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    redacted_fields       text[] NOT NULL DEFAULT '{}',
    excluded_account_ids  uuid[] NOT NULL DEFAULT '{}',
    excluded_category_ids uuid[] NOT NULL DEFAULT '{}',
    writes_enabled        boolean NOT NULL DEFAULT false,
    created_at            timestamptz NOT NULL
);
CREATE INDEX grants_user_idx ON grants (user_id);

CREATE TABLE connections (
    id                   uuid PRIMARY KEY,
    user_id              uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    provider             text NOT NULL,
    source_aggregator    text,
    institution          text,
    institution_logo_url text,
    status               text NOT NULL,
    last_synced_at       timestamptz,
    error_code           text,
    error_message        text,
    created_at           timestamptz NOT NULL,
    updated_at           timestamptz NOT NULL
);
CREATE INDEX connections_user_order_idx ON connections (user_id, created_at, id);

CREATE TABLE accounts (
    id                         uuid PRIMARY KEY,
    user_id                    uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    connection_id              uuid NOT NULL REFERENCES connections (id) ON DELETE CASCADE,
    name                       text,
    nickname                   text,
    type                       text,
    subtype                    text,
    mask                       text,
    currency                   text NOT NULL,
    balance                    numeric NOT NULL,
    balance_currency           text NOT NULL,
    available_balance          numeric,
    available_balance_currency text,
    balance_as_of              timestamptz,
    is_hidden                  boolean NOT NULL DEFAULT false,
    provider                   text,
    -- Only set when the account's bank differs from its connection's.
    institution_name           text,
    institution_logo_url       text,
    created_at                 timestamptz NOT NULL,
    updated_at                 timestamptz NOT NULL
);
CREATE INDEX accounts_user_idx ON accounts (user_id, created_at, id);
CREATE INDEX accounts_connection_idx ON accounts (connection_id);

-- System categories have no user_id and are shared by everyone.
CREATE TABLE categories (
    id         uuid PRIMARY KEY,
    user_id    uuid REFERENCES users (id) ON DELETE CASCADE,
    parent_id  uuid REFERENCES categories (id),
    name       text NOT NULL,
    icon       text,
    color      text,
    type_tag   text,
    sort_order integer NOT NULL DEFAULT 0,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
);
CREATE INDEX categories_user_idx ON categories (user_id);

CREATE TABLE recurring_rules (
    id                      uuid PRIMARY KEY,
    user_id                 uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    account_id              uuid REFERENCES accounts (id) ON DELETE CASCADE,
    category_id             uuid REFERENCES categories (id) ON DELETE SET NULL,
    merchant                text,
    display_name            text,
    expected_amount         numeric NOT NULL,
    expected_currency       text NOT NULL,
    frequency               text NOT NULL,
    stream_type             text NOT NULL,
    next_expected_date      date NOT NULL,
    last_seen_date          date,
    logo_url                text,
    is_active               boolean NOT NULL DEFAULT true,
    created_at              timestamptz NOT NULL,
    updated_at              timestamptz NOT NULL
);
CREATE INDEX recurring_rules_user_idx ON recurring_rules (user_id, next_expected_date, id);

CREATE TABLE transactions (
    id                        uuid PRIMARY KEY,
    user_id                   uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    account_id                uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    category_id               uuid REFERENCES categories (id) ON DELETE SET NULL,
    amount                    numeric NOT NULL,
    currency                  text NOT NULL,
    merchant                  text,
    display_name              text,
    description               text,
    date                      date NOT NULL,
    posted_at                 timestamptz,
    is_pending                boolean NOT NULL DEFAULT false,
    source                    text NOT NULL CHECK (source IN ('bank_sync', 'manual', 'import')),
    payment_channel           text,
    -- Not a foreign key: both legs of a transfer arrive in one batch.
    transfer_pair_id          uuid,
    recurring_rule_id         uuid REFERENCES recurring_rules (id) ON DELETE SET NULL,
    external_ref              text,
    tags                      text[] NOT NULL DEFAULT '{}',
    check_number              text,
    memo                      text,
    location_street           text,
    location_city             text,
    location_state            text,
    location_postal_code      text,
    location_country          text,
    -- Bank-recorded values, captured when a user edit takes a field over.
    provider_amount           numeric,
    provider_currency         text,
    provider_merchant_name    text,
    provider_transaction_date date,
    provider_description      text,
    provider_memo             text,
    owned_by_user             text[] NOT NULL DEFAULT '{}',
    version                   bigint NOT NULL DEFAULT 1,
    split_parent_id           uuid REFERENCES transactions (id) ON DELETE CASCADE
                              DEFERRABLE INITIALLY DEFERRED, -- a parent and its slices may share a batch
    created_at                timestamptz NOT NULL,
    updated_at                timestamptz NOT NULL,
    search                    tsvector GENERATED ALWAYS AS (
        to_tsvector('simple'::regconfig,
            coalesce(merchant, '') || ' ' || coalesce(display_name, '') || ' ' ||
            coalesce(description, '') || ' ' || coalesce(memo, ''))
    ) STORED
);
-- The keyset order of every transaction listing.
CREATE INDEX transactions_user_date_id_idx ON transactions (user_id, date DESC, id DESC);
CREATE INDEX transactions_account_idx ON transactions (account_id, date DESC, id DESC);
CREATE INDEX transactions_category_idx ON transactions (category_id);
CREATE INDEX transactions_split_parent_idx ON transactions (split_parent_id) WHERE split_parent_id IS NOT NULL;
CREATE INDEX transactions_search_idx ON transactions USING gin (search);

-- +goose Down
DROP TABLE transactions;
DROP TABLE recurring_rules;
DROP TABLE categories;
DROP TABLE accounts;
DROP TABLE connections;
DROP TABLE grants;
DROP TABLE users;
