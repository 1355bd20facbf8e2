-- +goose Up
-- Payment methods and payments (docs/billing.md, "Payment methods"). Only
-- the last four characters of a card or account number are kept; the
-- processor holds the rest behind processor_ref.
CREATE TABLE payment_methods (
    id            uuid PRIMARY KEY,
    account_id    uuid NOT NULL REFERENCES accounts (id),
    type          text NOT NULL CHECK (type IN ('card', 'direct_debit')),
    scheme        text NOT NULL CHECK (scheme IN ('card', 'ach', 'sepa', 'bacs')),
    brand         text NOT NULL,
    last4         text NOT NULL,
    holder_name   text NOT NULL,
    processor_ref text NOT NULL,
    is_default    boolean NOT NULL DEFAULT false,
    created_at    timestamptz NOT NULL,
    removed_at    timestamptz,
    CHECK ((type = 'card') = (scheme = 'card')),
    CHECK (NOT (is_default AND removed_at IS NOT NULL))
);
-- At most one default per account, whatever the number of writers.
CREATE UNIQUE INDEX payment_methods_one_default ON payment_methods (account_id) WHERE is_default;
CREATE INDEX payment_methods_account_idx ON payment_methods (account_id, created_at);

CREATE TABLE payments (
    id             uuid PRIMARY KEY,
    account_id     uuid NOT NULL REFERENCES accounts (id),
    method_id      uuid NOT NULL REFERENCES payment_methods (id),
    method_type    text NOT NULL,
    scheme         text NOT NULL,
    purpose        text NOT NULL CHECK (purpose IN ('upgrade', 'invoice', 'retry')),
    invoice_id     uuid REFERENCES invoices (id),
    retry_of       uuid REFERENCES payments (id),
    period_start   timestamptz NOT NULL,
    amount_cents   bigint NOT NULL CHECK (amount_cents > 0),
    currency       text NOT NULL,
    first_debit    boolean NOT NULL,
    state          text NOT NULL CHECK (state IN ('pending', 'settled', 'failed')),
    processor_ref  text NOT NULL,
    created_at     timestamptz NOT NULL,
    settle_by      timestamptz NOT NULL,
    resolved_at    timestamptz,
    failure_reason text NOT NULL DEFAULT '',
    CHECK ((state = 'pending') = (resolved_at IS NULL))
);
CREATE INDEX payments_account_idx ON payments (account_id, created_at);
-- The settlement step's scan.
CREATE INDEX payments_due_idx ON payments (settle_by) WHERE state = 'pending';

-- +goose Down
DROP TABLE payments;
DROP TABLE payment_methods;
