-- +goose Up

-- Daily FX rates against the US dollar: per_usd units of currency buy one
-- USD. USD has no row (it is the quote currency).
CREATE TABLE fx_rates (
    currency  text NOT NULL,
    rate_date date NOT NULL,
    per_usd   numeric NOT NULL CHECK (per_usd > 0),
    source    text NOT NULL DEFAULT '',
    PRIMARY KEY (currency, rate_date)
);

-- One net-worth snapshot per user and day, in native currencies (lines as
-- JSON with decimal strings), converted only when read.
CREATE TABLE net_worth_snapshots (
    user_id       uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    snapshot_date date NOT NULL,
    lines         jsonb NOT NULL,
    is_manual     boolean NOT NULL DEFAULT false,
    taken_at      timestamptz NOT NULL,
    PRIMARY KEY (user_id, snapshot_date)
);

-- +goose Down
DROP TABLE net_worth_snapshots;
DROP TABLE fx_rates;
