-- +goose Up

-- Recurring detection groups rows by the merchant as the bank reported it
-- (finance.BudgetRow.Counterparty: a user's rename of one row does not take
-- it out of its stream), so the budget rows' covering index carries
-- provider_merchant_name too and the reads stay index-only. It is NULL on
-- every row the user did not rename, so the index barely grows.
DROP INDEX transactions_user_date_budget_idx;
CREATE INDEX transactions_user_date_budget_idx ON transactions (user_id, date)
    INCLUDE (id, account_id, category_id, merchant, provider_merchant_name, amount, currency, is_pending,
        transfer_pair_id, split_parent_id, has_slices);

-- +goose Down
DROP INDEX transactions_user_date_budget_idx;
CREATE INDEX transactions_user_date_budget_idx ON transactions (user_id, date)
    INCLUDE (id, account_id, category_id, merchant, amount, currency, is_pending, transfer_pair_id, split_parent_id, has_slices);
