-- +goose Up
-- When a request last authenticated with the credential (to the minute:
-- metering.LastUsedGranularity), shown in the portal's key listings.
ALTER TABLE credentials ADD COLUMN last_used_at timestamptz;

-- +goose Down
ALTER TABLE credentials DROP COLUMN last_used_at;
