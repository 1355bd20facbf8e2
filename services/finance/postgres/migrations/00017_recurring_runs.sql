-- +goose Up

-- When recurring detection last finished for a user (GET /v1/sync-status
-- shows it as recurring_detection_last_run_at). Written by the same
-- statement that clears the user's due mark, so a finished detection is
-- recorded exactly when its mark goes.
CREATE TABLE recurring_runs (
    user_id     uuid PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    last_run_at timestamptz NOT NULL
);

-- +goose Down
DROP TABLE recurring_runs;
