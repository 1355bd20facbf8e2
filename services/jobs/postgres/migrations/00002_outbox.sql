-- +goose Up
-- The enqueue intent of a job (the outbox of submission): false from the
-- transaction that stores the job until its items are in the work queue.
-- Jobs stored before this migration were enqueued when they were created.
ALTER TABLE jobs ADD COLUMN enqueued boolean NOT NULL DEFAULT true;
-- When a publisher may claim the open intent (a lease across replicas).
ALTER TABLE jobs ADD COLUMN enqueue_after timestamptz;
-- The last progress (creation, start, an item completed; NULL reads as
-- created_at, as a replica of the previous version writes it) and when the
-- resumer may next check the job's pending items against the queue.
ALTER TABLE jobs ADD COLUMN progress_at timestamptz;
ALTER TABLE jobs ADD COLUMN check_after timestamptz;

CREATE INDEX jobs_unenqueued_idx ON jobs (created_at) WHERE NOT enqueued;
CREATE INDEX jobs_unfinished_idx ON jobs (created_at) WHERE status <> 'completed';

-- +goose Down
DROP INDEX jobs_unfinished_idx;
DROP INDEX jobs_unenqueued_idx;
ALTER TABLE jobs DROP COLUMN check_after;
ALTER TABLE jobs DROP COLUMN progress_at;
ALTER TABLE jobs DROP COLUMN enqueue_after;
ALTER TABLE jobs DROP COLUMN enqueued;
