-- +goose Up

-- A grant's settings change through PATCH /v1/finance-grants/{id}
-- (docs/privacy.md, "Changing a grant"): a compare-and-swap on version, like
-- every versioned finance write, with the last keyed write's fingerprint
-- (finance.WriteMark) so a retry whose answer was lost is answered as a
-- replay. updated_at is NULL until the first change.
ALTER TABLE grants ADD COLUMN version bigint NOT NULL DEFAULT 1;
ALTER TABLE grants ADD COLUMN updated_at timestamptz;
ALTER TABLE grants ADD COLUMN last_write jsonb;

-- +goose Down
ALTER TABLE grants DROP COLUMN last_write;
ALTER TABLE grants DROP COLUMN updated_at;
ALTER TABLE grants DROP COLUMN version;
