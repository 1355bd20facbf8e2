-- +goose Up
-- How each invoice's collection stands (docs/billing.md, "Collecting an
-- invoice"): open (no default payment method), collecting (an attempt due
-- at next_attempt_at, or the payment pending), paid, failed. Attempts are
-- claimed by a conditional update on collection_attempts, so one replica
-- makes each.
ALTER TABLE invoices
    ADD COLUMN collection_state    text NOT NULL DEFAULT 'open'
        CHECK (collection_state IN ('open', 'collecting', 'paid', 'failed')),
    ADD COLUMN collection_attempts integer NOT NULL DEFAULT 0 CHECK (collection_attempts >= 0),
    ADD COLUMN next_attempt_at     timestamptz,
    ADD COLUMN payment_id          uuid,
    ADD COLUMN collection_error    text NOT NULL DEFAULT '';

-- Invoices closed before this migration: the state of their newest invoice
-- or retry payment; those without one were either never owed (paid) or not
-- collected (a processor error, which used to be only logged, or no
-- default method): due now when the account has a default method, else open.
UPDATE invoices i SET collection_state = CASE p.state
        WHEN 'settled' THEN 'paid' WHEN 'failed' THEN 'failed' ELSE 'collecting' END,
    payment_id = p.id, collection_attempts = 1
FROM (SELECT DISTINCT ON (invoice_id) invoice_id, id, state FROM payments
      WHERE invoice_id IS NOT NULL ORDER BY invoice_id, created_at DESC) p
WHERE p.invoice_id = i.id;
UPDATE invoices SET collection_state = 'paid' WHERE payment_id IS NULL AND total_cents <= 0;
UPDATE invoices i SET collection_state = 'collecting', next_attempt_at = now()
WHERE payment_id IS NULL AND total_cents > 0
  AND EXISTS (SELECT 1 FROM payment_methods m WHERE m.account_id = i.account_id AND m.is_default);

-- The billing tick's scan.
CREATE INDEX invoices_collection_due_idx ON invoices (next_attempt_at)
    WHERE collection_state = 'collecting' AND next_attempt_at IS NOT NULL;

-- +goose Down
DROP INDEX invoices_collection_due_idx;
ALTER TABLE invoices DROP COLUMN collection_state, DROP COLUMN collection_attempts,
    DROP COLUMN next_attempt_at, DROP COLUMN payment_id, DROP COLUMN collection_error;
