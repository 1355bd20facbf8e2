-- +goose Up

-- Investment positions; prices live in security_prices.
CREATE TABLE holdings (
    id                 uuid PRIMARY KEY,
    user_id            uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    account_id         uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    asset_type         text NOT NULL,
    ticker             text NOT NULL DEFAULT '',
    name               text NOT NULL DEFAULT '',
    quantity           numeric NOT NULL,
    cost_basis         numeric,
    cost_basis_method  text NOT NULL,
    currency           text NOT NULL,
    data_source        text NOT NULL,
    retirement_subtype text NOT NULL DEFAULT '',
    notes              text NOT NULL DEFAULT '',
    acquired_at        timestamptz,
    created_at         timestamptz NOT NULL,
    updated_at         timestamptz NOT NULL
);
CREATE INDEX holdings_user_idx ON holdings (user_id, id);
CREATE INDEX holdings_user_account_idx ON holdings (user_id, account_id, id);

-- The daily price table the aggregator fills: one close per ticker,
-- currency and day.
CREATE TABLE security_prices (
    ticker     text NOT NULL,
    currency   text NOT NULL,
    price_date date NOT NULL,
    price      numeric NOT NULL,
    source     text NOT NULL,
    PRIMARY KEY (ticker, currency, price_date)
);

-- +goose Down
DROP TABLE security_prices;
DROP TABLE holdings;
