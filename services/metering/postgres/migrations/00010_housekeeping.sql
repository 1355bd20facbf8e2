-- +goose Up
-- The hourly housekeeping (metering.Service.Housekeep) deletes expired rows
-- oldest first; portal_sessions already has its expiry index (00004).
CREATE INDEX portal_tokens_expiry ON portal_tokens (expires_at);
CREATE INDEX credentials_access_token_expiry ON credentials (expires_at) WHERE oauth_client_id IS NOT NULL;

-- +goose Down
DROP INDEX credentials_access_token_expiry;
DROP INDEX portal_tokens_expiry;
