-- +goose Up

-- The change feed, GET /v1/transactions/sync (finance/sync.go,
-- docs/transactions-sync.md). Every write of a transaction row takes the
-- next value of one sequence (change_seq; created_seq keeps the insert's);
-- a deleted row leaves a tombstone; a recategorisation leaves the old
-- category in the category log. Tombstones and log entries are kept 30
-- days (finance.SyncRetention); the horizon is the highest value pruned per
-- user, below which a cursor cannot be served.
--
-- Nothing is skipped when writes race a read: a value taken by a writer
-- that has not committed yet must not be passed by a reader that saw a
-- higher one. Every stamp first takes a transaction-scoped advisory lock
-- of the user in shared mode (held to commit), and the reader takes the
-- same lock in exclusive mode: while it holds it no writer of the user is
-- in flight, so every value it reads belongs to a committed write and
-- every later write takes a higher one. Writers share the lock, so they
-- never wait on each other for it; the reader only tries it (and tries
-- again), so it never queues ahead of writers that hold row locks, and no
-- deadlock can involve it.
CREATE SEQUENCE transaction_change_seq;

ALTER TABLE transactions ADD COLUMN change_seq bigint NOT NULL DEFAULT 0,
    ADD COLUMN created_seq bigint NOT NULL DEFAULT 0;
UPDATE transactions SET change_seq = nextval('transaction_change_seq');
UPDATE transactions SET created_seq = change_seq;
CREATE INDEX transactions_user_change_seq_idx ON transactions (user_id, change_seq);

-- No foreign keys: a tombstone outlives its row, and may outlive its
-- account or category.
CREATE TABLE transaction_tombstones (
    id          uuid PRIMARY KEY,
    user_id     uuid NOT NULL,
    account_id  uuid NOT NULL,
    category_id uuid,
    created_seq bigint NOT NULL,
    change_seq  bigint NOT NULL,
    deleted_at  timestamptz NOT NULL
);
CREATE INDEX transaction_tombstones_user_seq_idx ON transaction_tombstones (user_id, change_seq);
CREATE INDEX transaction_tombstones_user_at_idx ON transaction_tombstones (user_id, deleted_at);

CREATE TABLE transaction_category_log (
    transaction_id  uuid NOT NULL,
    change_seq      bigint NOT NULL,
    user_id         uuid NOT NULL,
    old_category_id uuid,
    changed_at      timestamptz NOT NULL,
    PRIMARY KEY (transaction_id, change_seq)
);
CREATE INDEX transaction_category_log_user_at_idx ON transaction_category_log (user_id, changed_at);

CREATE TABLE transaction_feed_horizons (
    user_id uuid PRIMARY KEY,
    horizon bigint NOT NULL
);

-- +goose StatementBegin
CREATE FUNCTION transactions_feed_stamp() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    o transactions;
BEGIN
    IF TG_OP = 'UPDATE' THEN
        -- An update that changes nothing a client sees (a parent's
        -- has_slices, a write of the same values) is no change.
        o := OLD;
        o.has_slices := NEW.has_slices;
        o.search := NEW.search;
        o.change_seq := NEW.change_seq;
        o.created_seq := NEW.created_seq;
        IF o IS NOT DISTINCT FROM NEW THEN
            RETURN NEW;
        END IF;
    END IF;
    -- The lock before the value: see the migration's comment.
    PERFORM pg_advisory_xact_lock_shared(1718974980, hashtext(NEW.user_id::text));
    NEW.change_seq := nextval('transaction_change_seq');
    IF TG_OP = 'INSERT' THEN
        NEW.created_seq := NEW.change_seq;
        DELETE FROM transaction_tombstones WHERE id = NEW.id;
        DELETE FROM transaction_category_log WHERE transaction_id = NEW.id;
    ELSE
        NEW.created_seq := OLD.created_seq;
        IF NEW.category_id IS DISTINCT FROM OLD.category_id THEN
            INSERT INTO transaction_category_log (transaction_id, change_seq, user_id, old_category_id, changed_at)
                VALUES (NEW.id, NEW.change_seq, NEW.user_id, OLD.category_id, now());
        END IF;
    END IF;
    RETURN NEW;
END $$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION transactions_feed_tombstone() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_xact_lock_shared(1718974980, hashtext(OLD.user_id::text));
    INSERT INTO transaction_tombstones (id, user_id, account_id, category_id, created_seq, change_seq, deleted_at)
        VALUES (OLD.id, OLD.user_id, OLD.account_id, OLD.category_id, OLD.created_seq,
                nextval('transaction_change_seq'), now())
        ON CONFLICT (id) DO UPDATE SET user_id = excluded.user_id, account_id = excluded.account_id,
            category_id = excluded.category_id, created_seq = excluded.created_seq,
            change_seq = excluded.change_seq, deleted_at = excluded.deleted_at;
    RETURN NULL;
END $$;
-- +goose StatementEnd

CREATE TRIGGER transactions_feed_stamp BEFORE INSERT OR UPDATE ON transactions
    FOR EACH ROW EXECUTE FUNCTION transactions_feed_stamp();
CREATE TRIGGER transactions_feed_tombstone AFTER DELETE ON transactions
    FOR EACH ROW EXECUTE FUNCTION transactions_feed_tombstone();

-- +goose Down
DROP TRIGGER transactions_feed_tombstone ON transactions;
DROP TRIGGER transactions_feed_stamp ON transactions;
DROP FUNCTION transactions_feed_tombstone();
DROP FUNCTION transactions_feed_stamp();
DROP TABLE transaction_feed_horizons;
DROP TABLE transaction_category_log;
DROP TABLE transaction_tombstones;
DROP INDEX transactions_user_change_seq_idx;
ALTER TABLE transactions DROP COLUMN created_seq, DROP COLUMN change_seq;
DROP SEQUENCE transaction_change_seq;
