-- +goose Up

-- The payoff terms of a debt account (one row per credit or loan account;
-- the account's id is the liability's id). Rates are percents a year.
CREATE TABLE liabilities (
    account_id          uuid PRIMARY KEY REFERENCES accounts (id) ON DELETE CASCADE,
    user_id             uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    apr                 numeric,
    promo_apr           numeric,
    promo_ends_on       date,
    min_payment_floor   numeric NOT NULL DEFAULT 0,
    min_payment_percent numeric NOT NULL DEFAULT 0,
    created_at          timestamptz NOT NULL,
    updated_at          timestamptz NOT NULL
);
CREATE INDEX liabilities_user_idx ON liabilities (user_id, account_id);

-- +goose Down
DROP TABLE liabilities;
