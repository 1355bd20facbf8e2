-- +goose Up

-- Every user belongs to one metering account (the tenant): only credentials
-- of that account may act for the user. The account lives in the metering
-- service's schema, so there is no foreign key. Users stored before this
-- migration have no owner, and no credential can use them.
ALTER TABLE users ADD COLUMN owner_account_id uuid;

-- +goose Down
ALTER TABLE users DROP COLUMN owner_account_id;
