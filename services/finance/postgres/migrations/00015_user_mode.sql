-- +goose Up

-- A finance user belongs to a mode: only credentials of that mode act for
-- it, so a test credential never reads live data (docs/security.md, "Test
-- mode is a sandbox"). Users from before modes are live.
ALTER TABLE users ADD COLUMN mode text NOT NULL DEFAULT 'live' CHECK (mode IN ('live', 'test'));

-- +goose Down
ALTER TABLE users DROP COLUMN mode;
