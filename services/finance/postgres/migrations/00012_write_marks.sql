-- +goose Up

-- The fingerprint of a row's last versioned write under an Idempotency-Key
-- (finance.WriteMark, services/finance/write_mark.go): {"key": hex SHA-256
-- of the key in its credential, user and grant scope, "content": hex
-- SHA-256 of the request's fields, "version": the version that write
-- produced}. A PATCH retried after its answer was lost finds it and is
-- answered as a replay instead of 409 version-conflict. NULL: the last
-- write had no key, or the row was never patched. Only hashes are kept.
ALTER TABLE transactions ADD COLUMN last_write jsonb;
ALTER TABLE goals ADD COLUMN last_write jsonb;
ALTER TABLE budgets ADD COLUMN last_write jsonb;

-- +goose Down
ALTER TABLE budgets DROP COLUMN last_write;
ALTER TABLE goals DROP COLUMN last_write;
ALTER TABLE transactions DROP COLUMN last_write;
