-- +goose Up

-- Bank sync upserts by (account, provider transaction id). Unique, so two
-- syncs racing to insert one provider row cannot both succeed.
CREATE UNIQUE INDEX transactions_account_external_ref_idx ON transactions (account_id, external_ref)
    WHERE external_ref IS NOT NULL;

-- Keyset pages under a single filter: each leads with user_id and the filter
-- column and ends in the listing order, so a page of 50 is an index range
-- scan however many rows the user has.
CREATE INDEX transactions_user_account_date_idx ON transactions (user_id, account_id, date DESC, id DESC);
CREATE INDEX transactions_user_category_date_idx ON transactions (user_id, category_id, date DESC, id DESC);
CREATE INDEX transactions_user_pending_date_idx ON transactions (user_id, is_pending, date DESC, id DESC);
CREATE INDEX transactions_user_source_date_idx ON transactions (user_id, source, date DESC, id DESC);
CREATE INDEX transactions_user_uncategorized_date_idx ON transactions (user_id, date DESC, id DESC)
    WHERE category_id IS NULL;

-- +goose Down
DROP INDEX transactions_user_uncategorized_date_idx;
DROP INDEX transactions_user_source_date_idx;
DROP INDEX transactions_user_pending_date_idx;
DROP INDEX transactions_user_category_date_idx;
DROP INDEX transactions_user_account_date_idx;
DROP INDEX transactions_account_external_ref_idx;
