-- +goose Up

-- The finance events' outbox (services/finance/events/outbox.go,
-- docs/webhooks.md "Transport"): an event waits here until the relay has
-- published it on NATS JetStream, so a failed publish is retried instead of
-- lost. The relay claims due rows FOR UPDATE SKIP LOCKED (one pass per row
-- across replicas), marks them sent, and deletes sent rows after a day.
CREATE TABLE finance_outbox (
    seq             bigserial PRIMARY KEY,
    id              uuid NOT NULL UNIQUE,
    type            text NOT NULL,
    account_id      text NOT NULL,
    mode            text NOT NULL,
    coalesce_key    text NOT NULL DEFAULT '',
    body            bytea NOT NULL,
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
