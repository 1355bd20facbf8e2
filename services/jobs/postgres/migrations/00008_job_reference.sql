-- +goose Up

-- The client's own reference for a batch (at most 128 characters, checked by
-- the service), echoed on the job and in its job.completed body: what lets a
-- client whose 202 was lost recognise the job (docs/jobs.md, "Submission").
ALTER TABLE jobs ADD COLUMN reference text NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE jobs DROP COLUMN reference;
