-- +goose Up

-- Recurring rules are detected from the transactions (recurring.go): the
-- stream's status (early, mature, stale) and its number of occurrences.
-- Rules written before detection ran have neither.
ALTER TABLE recurring_rules ADD COLUMN status text, ADD COLUMN occurrences integer NOT NULL DEFAULT 0;

-- Detection re-links a user's rows on every sync; this finds the rows that
-- point at a rule without reading the user's whole history.
CREATE INDEX transactions_recurring_rule_idx ON transactions (user_id, recurring_rule_id)
    WHERE recurring_rule_id IS NOT NULL;

-- +goose Down
DROP INDEX transactions_recurring_rule_idx;
ALTER TABLE recurring_rules DROP COLUMN occurrences, DROP COLUMN status;
