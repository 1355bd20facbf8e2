-- +goose Up

-- Endpoints a developer can operate (docs/webhooks.md): a note, the event
-- types an endpoint receives (empty: every type, those added later
-- included), and the secret a rotation replaced, which still signs until
-- prev_secret_until (sealed like secret, with the same associated data).
ALTER TABLE endpoints
    ADD COLUMN description       text NOT NULL DEFAULT '',
    ADD COLUMN event_types       text[] NOT NULL DEFAULT '{}',
    ADD COLUMN prev_secret       bytea,
    ADD COLUMN prev_secret_until timestamptz;

-- A delivery names its event (event_id, the same on every endpoint's
-- delivery of one event and on resends; NULL on rows from before, whose id
-- the service derives from the job) and how it came to be: an event's
-- fan-out (once per job, endpoint and event, as before), a resend of an
-- earlier delivery, or a test event, which has no job.
ALTER TABLE deliveries
    ALTER COLUMN job_id DROP NOT NULL,
    ADD COLUMN event_id  uuid,
    ADD COLUMN origin    text NOT NULL DEFAULT 'event' CHECK (origin IN ('event', 'resend', 'test')),
    ADD COLUMN resend_of uuid,
    DROP CONSTRAINT deliveries_job_id_endpoint_id_event_key;
CREATE UNIQUE INDEX deliveries_event_once_idx ON deliveries (job_id, endpoint_id, event) WHERE origin = 'event';
-- The deliveries page of an endpoint, newest first; and the count of its
-- pending resends and tests (CreateManualDelivery).
CREATE INDEX deliveries_endpoint_idx ON deliveries (endpoint_id, created_at DESC, id DESC);
CREATE INDEX deliveries_manual_pending_idx ON deliveries (endpoint_id) WHERE origin <> 'event' AND status = 'pending';

-- Each attempt of a delivery: when, the receiver's status code (NULL when no
-- answer came) or the failure's class, and how long it took. The receiver's
-- response body is never stored. Rows go with their delivery (the sweeper
-- drops finished deliveries after 7 days).
CREATE TABLE delivery_attempts (
    delivery_id     uuid NOT NULL REFERENCES deliveries (id) ON DELETE CASCADE,
    n               integer NOT NULL CHECK (n >= 1),
    at              timestamptz NOT NULL,
    succeeded       boolean NOT NULL,
    status_code     integer,
    failure         text,
    duration_us     bigint NOT NULL,
    next_attempt_at timestamptz,
    PRIMARY KEY (delivery_id, n)
);

-- +goose Down
DROP TABLE delivery_attempts;
DROP INDEX deliveries_manual_pending_idx;
DROP INDEX deliveries_endpoint_idx;
DROP INDEX deliveries_event_once_idx;
DELETE FROM deliveries WHERE origin <> 'event';
ALTER TABLE deliveries
    DROP COLUMN event_id,
    DROP COLUMN origin,
    DROP COLUMN resend_of,
    ALTER COLUMN job_id SET NOT NULL,
    ADD CONSTRAINT deliveries_job_id_endpoint_id_event_key UNIQUE (job_id, endpoint_id, event);
ALTER TABLE endpoints
    DROP COLUMN description,
    DROP COLUMN event_types,
    DROP COLUMN prev_secret,
    DROP COLUMN prev_secret_until;
