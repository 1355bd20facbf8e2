-- +goose Up

-- Budget alert thresholds (budgets/thresholds.go): percentages of a group's
-- allocation, ascending; '{}' sends no alerts. Budgets made before them get
-- the default every new budget gets.
ALTER TABLE budgets ADD COLUMN alert_thresholds integer[] NOT NULL DEFAULT '{80,100}';

-- The budget.threshold_reached alerts sent: one row per (grant, budget,
-- group, period, threshold). The primary key is what makes an alert go out
-- once across replicas and restarts: a check claims the row with
-- INSERT ... ON CONFLICT DO NOTHING before it publishes, and deletes it only
-- when the publish failed.
CREATE TABLE budget_threshold_alerts (
    grant_id     uuid NOT NULL,
    budget_id    uuid NOT NULL REFERENCES budgets (id) ON DELETE CASCADE,
    group_id     text NOT NULL,
    period_start date NOT NULL,
    threshold    integer NOT NULL,
    user_id      uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    period_end   date NOT NULL,
    created_at   timestamptz NOT NULL,
    PRIMARY KEY (grant_id, budget_id, group_id, period_start, threshold)
);

-- +goose Down
DROP TABLE budget_threshold_alerts;
ALTER TABLE budgets DROP COLUMN alert_thresholds;
