-- +goose Up

-- Budgets: groups and items are one jsonb document, read and written whole
-- with the budget (items are addressed by id from goals' budget links).
CREATE TABLE budgets (
    id                      uuid PRIMARY KEY,
    user_id                 uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name                    text NOT NULL,
    method_type             text NOT NULL,
    period_type             text NOT NULL,
    period_anchor_day       integer,
    period_anchor_date      date,
    is_active               boolean NOT NULL,
    income_type             text,
    expected_monthly_income numeric,
    currency                text NOT NULL,
    enabled_features        text[] NOT NULL DEFAULT '{}',
    groups                  jsonb NOT NULL DEFAULT '[]',
    version                 bigint NOT NULL DEFAULT 1,
    created_at              timestamptz NOT NULL,
    updated_at              timestamptz NOT NULL,
    archived_at             timestamptz
);
CREATE INDEX budgets_user_idx ON budgets (user_id, created_at DESC, id DESC);
-- At most one active budget per user: two racing switches cannot both win.
CREATE UNIQUE INDEX budgets_one_active_idx ON budgets (user_id) WHERE is_active;

-- A closed period's progress as one grant saw it, frozen at its first read.
CREATE TABLE budget_progress_snapshots (
    budget_id    uuid NOT NULL REFERENCES budgets (id) ON DELETE CASCADE,
    grant_id     uuid NOT NULL,
    period_start date NOT NULL,
    user_id      uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    data         jsonb NOT NULL,
    created_at   timestamptz NOT NULL,
    PRIMARY KEY (budget_id, grant_id, period_start)
);

CREATE TABLE goals (
    id                  uuid PRIMARY KEY,
    user_id             uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name                text NOT NULL,
    description         text,
    goal_type           text NOT NULL,
    status              text NOT NULL,
    target_amount       numeric NOT NULL,
    current_amount      numeric NOT NULL DEFAULT 0,
    currency            text NOT NULL,
    target_date         date,
    funding_source_type text,
    tracking_mode       text NOT NULL,
    sort_order          integer NOT NULL DEFAULT 0,
    show_in_digest      boolean NOT NULL DEFAULT false,
    account_links       jsonb NOT NULL DEFAULT '[]',
    budget_links        jsonb NOT NULL DEFAULT '[]',
    spending_plan       jsonb NOT NULL DEFAULT '[]',
    version             bigint NOT NULL DEFAULT 1,
    created_at          timestamptz NOT NULL,
    updated_at          timestamptz NOT NULL,
    completed_at        timestamptz
);
CREATE INDEX goals_user_order_idx ON goals (user_id, sort_order, id);

-- Budget progress reads one period (and the anomaly look-back) of a user's
-- rows, only the columns it counts: a covering index makes that an
-- index-only range scan.
CREATE INDEX transactions_user_date_budget_idx ON transactions (user_id, date)
    INCLUDE (account_id, category_id, merchant, amount, currency, is_pending, transfer_pair_id, split_parent_id);

-- +goose Down
DROP INDEX transactions_user_date_budget_idx;
DROP TABLE goals;
DROP TABLE budget_progress_snapshots;
DROP TABLE budgets;
