-- +goose Up

-- The finance events' outbox (services/finance/events/outbox.go,
-- docs/webhooks.md "Transport"): one row per committed change to announce
-- (a finance.Note, as JSON), stored by the write itself where it can (in its
-- own transaction) or right after it commits. The relay claims due rows
-- FOR UPDATE SKIP LOCKED (one pass per row across replicas), publishes the
-- note's events, marks the row sent, and deletes sent rows after a day; a
-- failed publish makes the row due again later.
CREATE TABLE finance_outbox (
    seq             bigserial PRIMARY KEY,
    id              uuid NOT NULL UNIQUE,
    note            jsonb NOT NULL,
    created_at      timestamptz NOT NULL,
    attempts        integer NOT NULL DEFAULT 0,
    next_attempt_at timestamptz NOT NULL,
    sent_at         timestamptz
);
-- The relay's claim: unsent rows by due time.
CREATE INDEX finance_outbox_due ON finance_outbox (next_attempt_at, seq) WHERE sent_at IS NULL;
-- The prune of sent rows.
CREATE INDEX finance_outbox_sent ON finance_outbox (sent_at) WHERE sent_at IS NOT NULL;

-- +goose Down
DROP TABLE finance_outbox;
