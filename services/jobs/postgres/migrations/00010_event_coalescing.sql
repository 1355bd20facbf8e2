-- +goose Up

-- Events of no job (the finance events, docs/webhooks.md): a redelivered
-- event finds its fan-out's delivery by event id, as a job's event finds it
-- by job (deliveries_event_once_idx).
CREATE UNIQUE INDEX deliveries_event_id_once_idx ON deliveries (event_id, endpoint_id) WHERE origin = 'event' AND job_id IS NULL;

-- Coalescing: a delivery with a coalesce_key (transactions.sync_updates_available
-- of one finance user and grant) absorbs later events with that key to its
-- endpoint while it is pending and absorbing, that is not being sent (a claim
-- clears absorbing; a failed attempt with a retry left sets it again when no
-- newer delivery took over). The index makes "at most one absorbing" hold
-- across replicas: the fan-out's INSERT ... ON CONFLICT DO NOTHING loses.
ALTER TABLE deliveries
    ADD COLUMN coalesce_key text,
    ADD COLUMN absorbing    boolean NOT NULL DEFAULT false;
CREATE UNIQUE INDEX deliveries_coalesce_idx ON deliveries (endpoint_id, coalesce_key) WHERE status = 'pending' AND absorbing;

-- +goose Down
DROP INDEX deliveries_coalesce_idx;
ALTER TABLE deliveries
    DROP COLUMN coalesce_key,
    DROP COLUMN absorbing;
DROP INDEX deliveries_event_id_once_idx;
