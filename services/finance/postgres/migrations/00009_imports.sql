-- +goose Up

-- Statement import (POST /v1/imports). Each accepted entry of an imported
-- file has a key, unique per account (a SHA-256 over booking date, amount,
-- currency, reference and ordinal: services/finance/import.go), claimed by
-- the transaction the import added or the bank-synced row it matched. The
-- primary key is the dedup: two imports of one file racing each other
-- cannot both claim a key, so neither can add a row twice.
--
-- transaction_id is checked at commit: an import claims a key first and
-- inserts its transaction only when the claim succeeded.
CREATE TABLE import_claims (
    account_id     uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    import_key     text NOT NULL,
    transaction_id uuid NOT NULL REFERENCES transactions (id) ON DELETE CASCADE
                   DEFERRABLE INITIALLY DEFERRED,
    PRIMARY KEY (account_id, import_key)
);
-- Which bank-synced rows earlier imports already matched.
CREATE INDEX import_claims_transaction_idx ON import_claims (transaction_id);

-- +goose Down
DROP TABLE import_claims;
