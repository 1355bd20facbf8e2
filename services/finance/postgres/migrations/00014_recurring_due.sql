-- +goose Up

-- Users due for recurring detection (services/finance/recurring_job.go).
-- A bank sync that changed rows upserts its user's row in the sync's own
-- transaction; the detection job claims due users (claimed_until, a lease,
-- so replicas do not detect one user at once), detects, and deletes the row
-- only if generation is still the one it claimed: a sync during the
-- detection bumps it and the mark stays for the next run. due_at is the
-- earliest change not yet detected.
CREATE TABLE recurring_due (
    user_id       uuid PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    due_at        timestamptz NOT NULL,
    generation    bigint NOT NULL DEFAULT 1,
    claimed_until timestamptz
);

-- The job's claim reads the oldest due rows first.
CREATE INDEX recurring_due_due_at_idx ON recurring_due (due_at);

-- +goose Down
DROP TABLE recurring_due;
