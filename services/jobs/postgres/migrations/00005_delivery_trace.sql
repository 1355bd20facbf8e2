-- +goose Up
-- The W3C trace context (traceparent, tracestate) of the job.completed
-- fan-out that created a delivery: each attempt, retries after a restart
-- included, continues the job's trace. NULL when tracing was off.
ALTER TABLE deliveries ADD COLUMN traceparent text, ADD COLUMN tracestate text;

-- +goose Down
ALTER TABLE deliveries DROP COLUMN traceparent, DROP COLUMN tracestate;
