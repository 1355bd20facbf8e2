-- +goose Up
-- Billing settings of POST /v1/portal/billing/limits. The cap is in minor
-- units of the billing currency; NULL means no cap.
ALTER TABLE accounts
    ADD COLUMN hard_stop boolean NOT NULL DEFAULT false,
    ADD COLUMN overage_cap_cents bigint CHECK (overage_cap_cents > 0);

-- +goose Down
ALTER TABLE accounts DROP COLUMN hard_stop, DROP COLUMN overage_cap_cents;
