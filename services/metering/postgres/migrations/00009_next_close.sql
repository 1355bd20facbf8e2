-- +goose Up
-- The closing job reads only the accounts whose oldest period without an
-- invoice has ended (docs/billing.md, "What the tick costs"): next_close_at
-- is that period's end, set when the account is created and after each
-- close. Existing accounts keep NULL, which the job reads as "look now": the
-- first tick closes what they have due and records their next_close_at (a
-- lazy backfill: computing periods needs the plan history and the calendar
-- rules of the Go code).
ALTER TABLE accounts ADD COLUMN next_close_at timestamptz;
CREATE INDEX accounts_next_close_idx ON accounts (next_close_at);

-- +goose Down
DROP INDEX accounts_next_close_idx;
ALTER TABLE accounts DROP COLUMN next_close_at;
