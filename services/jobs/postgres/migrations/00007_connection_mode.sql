-- +goose Up

-- An accounting connection belongs to the mode of the key that created it:
-- only keys of that mode list, use or delete it (docs/accounting.md).
-- Connections from before modes become live.
ALTER TABLE accounting_connections ADD COLUMN mode text NOT NULL DEFAULT 'live' CHECK (mode IN ('live', 'test'));
DROP INDEX accounting_connections_list_idx;
CREATE INDEX accounting_connections_list_idx ON accounting_connections (account_id, mode, created_at DESC, id DESC);

-- +goose Down
DROP INDEX accounting_connections_list_idx;
CREATE INDEX accounting_connections_list_idx ON accounting_connections (account_id, created_at DESC, id DESC);
ALTER TABLE accounting_connections DROP COLUMN mode;
