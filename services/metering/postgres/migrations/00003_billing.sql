-- +goose Up
-- Plan changes, invoices, billing limits history, portal users and usage
-- alert e-mails (docs/billing.md).
ALTER TABLE accounts
    ADD COLUMN scheduled_plan_id text,
    ADD COLUMN scheduled_at      timestamptz,
    ADD COLUMN credit_cents      bigint NOT NULL DEFAULT 0 CHECK (credit_cents >= 0),
    ADD CONSTRAINT accounts_scheduled_check CHECK ((scheduled_plan_id IS NULL) = (scheduled_at IS NULL));

CREATE TABLE plan_changes (
    id             uuid PRIMARY KEY,
    account_id     uuid NOT NULL REFERENCES accounts (id),
    kind           text NOT NULL CHECK (kind IN ('upgrade', 'downgrade')),
    from_plan      text NOT NULL,
    to_plan        text NOT NULL,
    requested_at   timestamptz NOT NULL,
    effective_at   timestamptz NOT NULL,
    charge_cents   bigint NOT NULL DEFAULT 0,
    used_at_change bigint NOT NULL DEFAULT 0,
    canceled_at    timestamptz
);
CREATE INDEX plan_changes_account_idx ON plan_changes (account_id, effective_at, requested_at);

-- The hard stop and cap in force from each change on: an invoice clamps
-- overage to the cap in force at its period's end.
CREATE TABLE limit_changes (
    account_id        uuid NOT NULL REFERENCES accounts (id),
    seq               bigserial,
    at                timestamptz NOT NULL,
    hard_stop         boolean NOT NULL,
    overage_cap_cents bigint,
    PRIMARY KEY (account_id, seq)
);
-- Limits set before this history existed count from the account's creation.
INSERT INTO limit_changes (account_id, at, hard_stop, overage_cap_cents)
SELECT id, created_at, hard_stop, overage_cap_cents FROM accounts
WHERE hard_stop OR overage_cap_cents IS NOT NULL;

-- Exactly one invoice per account and period, whatever number of closers.
CREATE TABLE invoices (
    id                uuid PRIMARY KEY,
    account_id        uuid NOT NULL REFERENCES accounts (id),
    period_start      timestamptz NOT NULL,
    period_end        timestamptz NOT NULL,
    plan_id           text NOT NULL,
    currency          text NOT NULL,
    lines             jsonb NOT NULL,
    subtotal_cents    bigint NOT NULL,
    credit_cents      bigint NOT NULL,
    total_cents       bigint NOT NULL,
    overage_cap_cents bigint,
    created_at        timestamptz NOT NULL,
    UNIQUE (account_id, period_start)
);

CREATE TABLE portal_users (
    id         uuid PRIMARY KEY,
    account_id uuid NOT NULL REFERENCES accounts (id),
    email      text NOT NULL,
    name       text NOT NULL,
    created_at timestamptz NOT NULL,
    UNIQUE (account_id, email)
);

-- One alert per account, period and milestone, whatever number of replicas.
CREATE TABLE usage_alerts (
    account_id   uuid NOT NULL REFERENCES accounts (id),
    period_start timestamptz NOT NULL,
    milestone    text NOT NULL,
    created_at   timestamptz NOT NULL,
    PRIMARY KEY (account_id, period_start, milestone)
);

-- The outbox: a mail stays until the mail server took it.
CREATE TABLE mail_outbox (
    id              uuid PRIMARY KEY,
    account_id      uuid NOT NULL REFERENCES accounts (id),
    milestone       text NOT NULL,
    period_start    timestamptz NOT NULL,
    recipient       text NOT NULL,
    subject         text NOT NULL,
    body            text NOT NULL,
    created_at      timestamptz NOT NULL,
    next_attempt_at timestamptz NOT NULL,
    attempts        integer NOT NULL DEFAULT 0,
    sent_at         timestamptz,
    last_error      text NOT NULL DEFAULT ''
);
CREATE INDEX mail_outbox_due_idx ON mail_outbox (next_attempt_at) WHERE sent_at IS NULL;
CREATE INDEX mail_outbox_account_idx ON mail_outbox (account_id, created_at);

-- +goose Down
DROP TABLE mail_outbox;
DROP TABLE usage_alerts;
DROP TABLE portal_users;
DROP TABLE invoices;
DROP TABLE limit_changes;
DROP TABLE plan_changes;
ALTER TABLE accounts DROP CONSTRAINT accounts_scheduled_check,
    DROP COLUMN scheduled_plan_id, DROP COLUMN scheduled_at, DROP COLUMN credit_cents;
