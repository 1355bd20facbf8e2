-- +goose Up

-- A webhook endpoint belongs to the mode of the credential that registered
-- it: test credentials see and delete test endpoints only, and an endpoint
-- receives the events of its mode's jobs only (docs/security.md, "Test mode
-- is a sandbox"). Endpoints registered before modes were live ones' or
-- test ones' alike; they become live, the mode that could reach them all.
ALTER TABLE endpoints ADD COLUMN mode text NOT NULL DEFAULT 'live' CHECK (mode IN ('live', 'test'));

-- +goose Down
ALTER TABLE endpoints DROP COLUMN mode;
