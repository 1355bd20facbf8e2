-- +goose Up

-- The credential that submitted the batch: a refund of its failed items goes
-- back to the day and key its units were counted under (GET /v1/usage/daily,
-- docs/limits.md). Empty for jobs submitted before this column.
ALTER TABLE jobs ADD COLUMN credential_id text NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE jobs DROP COLUMN credential_id;
