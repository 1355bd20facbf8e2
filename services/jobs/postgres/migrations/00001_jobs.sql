-- +goose Up
CREATE TABLE jobs (
    id              uuid PRIMARY KEY,
    account_id      uuid NOT NULL,
    mode            text NOT NULL,
    status          text NOT NULL CHECK (status IN ('queued', 'running', 'completed')),
    from_format     text NOT NULL,
    to_format       text NOT NULL,
    options         bytea,
    item_count      integer NOT NULL,
    succeeded_count integer NOT NULL DEFAULT 0,
    failed_count    integer NOT NULL DEFAULT 0,
    pending_count   integer NOT NULL,
    ttl_seconds     integer NOT NULL CHECK (ttl_seconds BETWEEN 1 AND 86400),
    created_at      timestamptz NOT NULL,
    started_at      timestamptz,
    completed_at    timestamptz,
    expires_at      timestamptz NOT NULL
);

-- The sweeper scans by expiry.
CREATE INDEX jobs_expires_at_idx ON jobs (expires_at);

-- input and result are AES-256-GCM blobs (see jobs.Keyring); never plaintext.
CREATE TABLE items (
    job_id uuid NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    idx    integer NOT NULL,
    status text NOT NULL CHECK (status IN ('pending', 'ok', 'failed')),
    input  bytea,
    result bytea,
    PRIMARY KEY (job_id, idx)
);

CREATE TABLE endpoints (
    id                   uuid PRIMARY KEY,
    account_id           uuid NOT NULL,
    url                  text NOT NULL,
    secret               bytea NOT NULL,
    status               text NOT NULL CHECK (status IN ('active', 'disabled')),
    consecutive_failures integer NOT NULL DEFAULT 0,
    created_at           timestamptz NOT NULL
);

CREATE INDEX endpoints_account_idx ON endpoints (account_id, created_at, id);

-- No foreign keys to jobs or endpoints: a delivery outlives an early purge of
-- its job, and an endpoint's deletion abandons its pending deliveries.
CREATE TABLE deliveries (
    id              uuid PRIMARY KEY,
    account_id      uuid NOT NULL,
    endpoint_id     uuid NOT NULL,
    job_id          uuid NOT NULL,
    event           text NOT NULL,
    body            bytea NOT NULL,
    status          text NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed', 'abandoned')),
    attempts        integer NOT NULL DEFAULT 0,
    next_attempt_at timestamptz NOT NULL,
    created_at      timestamptz NOT NULL,
    UNIQUE (job_id, endpoint_id, event)
);

CREATE INDEX deliveries_due_idx ON deliveries (next_attempt_at) WHERE status = 'pending';

-- +goose Down
DROP TABLE deliveries;
DROP TABLE endpoints;
DROP TABLE items;
DROP TABLE jobs;
