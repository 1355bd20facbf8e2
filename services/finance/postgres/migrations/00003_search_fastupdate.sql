-- +goose Up

-- GIN's fast update queues new entries in a pending list that every search
-- then scans linearly until vacuum merges it; after a bulk sync that made
-- searches several times slower. Transactions are written far less often
-- than searched, so entries go straight into the index.
ALTER INDEX transactions_search_idx SET (fastupdate = off);

-- +goose Down
ALTER INDEX transactions_search_idx RESET (fastupdate);
