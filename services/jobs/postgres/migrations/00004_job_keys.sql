-- +goose Up
-- The Idempotency-Key a batch was submitted with (scoped to the credential),
-- stored in the submission's transaction: a retry after a lost answer finds
-- the committed job instead of creating another. Deleted with its job.
CREATE TABLE job_keys (
    account_id   uuid NOT NULL,
    key          text NOT NULL,
    job_id       uuid NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    request_hash text NOT NULL,
    PRIMARY KEY (account_id, key)
);

CREATE INDEX job_keys_job_idx ON job_keys (job_id);

-- +goose Down
DROP TABLE job_keys;
