package postgres

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ledgerlane/platform/pkg/pg"
	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/services/finance"
)

// The change feed's reads (finance/sync.go; the stamps, tombstones and the
// category log are written by the triggers of migration 00016).

// feedLockKey is the first key of the per-user advisory lock the triggers
// take in shared mode (migration 00016); the second is hashtext(user id).
const feedLockKey = 1718974980

// feedLockWait bounds how long a read waits for the user's writers to
// commit before answering unavailable (a bank sync of a large history holds
// them for its whole transaction).
const feedLockWait = 5 * time.Second

// TransactionChanges implements finance.ChangeStore. It holds the user's
// feed lock in exclusive mode while it reads (see migration 00016): no
// writer of the user is in flight then, so every value it reads is
// committed and no later write can take a lower one.
func (s *Store) TransactionChanges(ctx context.Context, userID string, after int64, limit int, retention time.Duration) (finance.ChangeBatch, error) {
	var b finance.ChangeBatch
	if !isUUID(userID) {
		return b, nil
	}
	err := pg.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		b = finance.ChangeBatch{}
		if err := lockFeed(ctx, tx, userID); err != nil {
			return err
		}
		// The prune and the horizon in one round trip: the horizon is
		// raised over what this prunes, else read as it was.
		if err := tx.QueryRow(ctx, `
			WITH cutoff AS (SELECT now() - make_interval(secs => $2) AS at),
			t AS (DELETE FROM transaction_tombstones WHERE user_id = $1 AND deleted_at < (SELECT at FROM cutoff) RETURNING change_seq),
			l AS (DELETE FROM transaction_category_log WHERE user_id = $1 AND changed_at < (SELECT at FROM cutoff) RETURNING change_seq),
			m AS (SELECT max(change_seq) AS h FROM (SELECT change_seq FROM t UNION ALL SELECT change_seq FROM l) x),
			raised AS (INSERT INTO transaction_feed_horizons (user_id, horizon) SELECT $1, h FROM m WHERE h IS NOT NULL
				ON CONFLICT (user_id) DO UPDATE SET horizon = GREATEST(transaction_feed_horizons.horizon, excluded.horizon)
				RETURNING horizon)
			SELECT COALESCE((SELECT horizon FROM raised), (SELECT horizon FROM transaction_feed_horizons WHERE user_id = $1), 0)`,
			userID, retention.Seconds()).Scan(&b.Horizon); err != nil {
			return err
		}
		rows, err := queryChanges(ctx, tx, limit, `
			SELECT `+changeColumns+` FROM transactions t
			WHERE user_id = $1 AND change_seq > $2 ORDER BY change_seq LIMIT $3`, userID, after, limit)
		if err != nil {
			return err
		}
		dead, err := queryTombstones(ctx, tx, `WHERE user_id = $1 AND change_seq > $2 ORDER BY change_seq LIMIT $3`, userID, after, limit)
		if err != nil {
			return err
		}
		b.Changes = slices.Concat(rows, dead)
		slices.SortFunc(b.Changes, func(x, y finance.TxChange) int { return cmp.Compare(x.Seq, y.Seq) })
		if len(b.Changes) > limit {
			b.Changes = b.Changes[:limit]
		}
		return withCategoryLog(ctx, tx, b.Changes)
	})
	return b, storeErr("read transaction changes", err)
}

// lockFeed takes the user's feed lock in exclusive mode, trying again
// until feedLockWait: a try never waits in the lock's queue, so writers
// holding row locks are never stuck behind this read.
func lockFeed(ctx context.Context, tx pgx.Tx, userID string) error {
	deadline := time.Now().Add(feedLockWait)
	for wait := time.Millisecond; ; wait = min(2*wait, 50*time.Millisecond) {
		var ok bool
		if err := tx.QueryRow(ctx, `SELECT pg_try_advisory_xact_lock($1, hashtext($2))`, feedLockKey, userID).Scan(&ok); err != nil {
			return err
		}
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return problem.New(problem.Unavailable, "the user's transactions are being written; retry shortly").WithRetryAfter(1)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
	}
}

// changeColumns are a row's sequence values, then the transaction's
// columns. (The category log is read for the whole page in one query by
// the log's primary key, withCategoryLog: cheaper than a subquery per row.)
const changeColumns = `change_seq, created_seq, ` + transactionColumns

// prefixRow scans a row whose first columns precede the transaction's,
// into a buffer kept across rows.
type prefixRow struct {
	pgx.Row
	buf   []any
	first int
}

func (r *prefixRow) Scan(dest ...any) error {
	r.buf = append(r.buf[:r.first], dest...)
	return r.Row.Scan(r.buf...)
}

// queryChanges reads rows selected with changeColumns (up to limit).
func queryChanges(ctx context.Context, tx pgx.Tx, limit int, sql string, args ...any) ([]finance.TxChange, error) {
	rows, err := tx.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make([]finance.TxChange, 0, limit)
	var seq, created int64
	r := &prefixRow{Row: rows, buf: []any{&seq, &created}, first: 2}
	for rows.Next() {
		t, err := scanTransaction(r)
		if err != nil {
			return nil, err
		}
		out = append(out, finance.TxChange{Seq: seq, CreatedSeq: created, Tx: t})
	}
	return out, rows.Err()
}

func queryTombstones(ctx context.Context, tx pgx.Tx, where string, args ...any) ([]finance.TxChange, error) {
	rows, err := tx.Query(ctx, `
		SELECT id::text, user_id::text, account_id::text, COALESCE(category_id::text, ''), created_seq, change_seq
		FROM transaction_tombstones `+where, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (finance.TxChange, error) {
		ch := finance.TxChange{Deleted: true}
		err := r.Scan(&ch.Tx.ID, &ch.Tx.UserID, &ch.Tx.AccountID, &ch.Tx.CategoryID, &ch.CreatedSeq, &ch.Seq)
		return ch, err
	})
}

// withCategoryLog fills in the category log of each change of the page (in
// place: call it on the page itself, not on a part copied into it).
func withCategoryLog(ctx context.Context, tx pgx.Tx, changes []finance.TxChange) error {
	if len(changes) == 0 {
		return nil
	}
	ids := make([]string, len(changes))
	at := make(map[string]int, len(changes))
	for i, ch := range changes {
		ids[i], at[ch.Tx.ID] = ch.Tx.ID, i
	}
	rows, err := tx.Query(ctx, `
		SELECT transaction_id::text, change_seq, COALESCE(old_category_id::text, '')
		FROM transaction_category_log WHERE transaction_id = ANY($1::uuid[]) ORDER BY transaction_id, change_seq`, ids)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var c finance.CategoryChange
		if err := rows.Scan(&id, &c.Seq, &c.Old); err != nil {
			return err
		}
		i := at[id]
		changes[i].CategoryLog = append(changes[i].CategoryLog, c)
	}
	return rows.Err()
}

// TransactionsAt implements finance.ChangeStore. It needs no lock: it
// judges rows by their history up to a position every value below which
// was committed when the position was handed out.
func (s *Store) TransactionsAt(ctx context.Context, userID string, at int64, accountIDs, categoryIDs []string, all bool, afterID string, limit int) ([]finance.TxChange, int64, error) {
	if !isUUID(userID) {
		return nil, 0, nil
	}
	var out []finance.TxChange
	var horizon int64
	err := pg.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, `SELECT COALESCE((SELECT horizon FROM transaction_feed_horizons WHERE user_id = $1), 0)`,
			userID).Scan(&horizon); err != nil {
			return err
		}
		rows, err := queryChanges(ctx, tx, limit, `
			SELECT `+changeColumns+` FROM transactions t
			WHERE user_id = $1 AND id > $2 AND ($3 OR change_seq > $4 OR account_id = ANY($5::uuid[]) OR category_id = ANY($6::uuid[]))
			ORDER BY id LIMIT $7`, userID, uuidOrZero(afterID), all, at, list(uuids(accountIDs)), list(uuids(categoryIDs)), limit)
		if err != nil {
			return err
		}
		dead, err := queryTombstones(ctx, tx, `WHERE user_id = $1 AND id > $2 AND change_seq > $3 ORDER BY id LIMIT $4`,
			userID, uuidOrZero(afterID), at, limit)
		if err != nil {
			return err
		}
		out = slices.Concat(rows, dead)
		slices.SortFunc(out, func(x, y finance.TxChange) int { return strings.Compare(x.Tx.ID, y.Tx.ID) })
		if len(out) > limit {
			out = out[:limit]
		}
		return withCategoryLog(ctx, tx, out)
	})
	return out, horizon, storeErr("read transactions at a position", err)
}

// UpdateGrant implements finance.ChangeStore: a compare-and-swap on the
// version, telling a missing grant from another version in the same
// statement, with the notes in the same transaction.
func (s *Store) UpdateGrant(ctx context.Context, g finance.Grant, expectedVersion int64, notes ...finance.Note) error {
	if !isUUID(g.ID) || !isUUID(g.UserID) {
		return fmt.Errorf("grant %q: %w", g.ID, finance.ErrNotFound)
	}
	var updated, exists bool
	err := pg.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, `
			WITH u AS (
				UPDATE grants SET redacted_fields = $3, excluded_account_ids = $4, excluded_category_ids = $5, writes_enabled = $6,
					version = $7, updated_at = $8, last_write = $9
				WHERE id = $1 AND user_id = $2 AND version = $10 RETURNING 1)
			SELECT EXISTS (SELECT 1 FROM u), EXISTS (SELECT 1 FROM grants WHERE id = $1 AND user_id = $2)`,
			g.ID, g.UserID, list(g.RedactedFields), list(g.ExcludedAccountIDs), list(g.ExcludedCategoryIDs), g.WritesEnabled,
			g.Version, nullTime(g.UpdatedAt), markArg(g.LastWrite), expectedVersion).Scan(&updated, &exists); err != nil || !updated {
			return err
		}
		return insertNotes(ctx, tx, notes)
	})
	switch {
	case err != nil:
		return storeErr("update grant", err)
	case updated:
		return nil
	case !exists:
		return fmt.Errorf("grant %s: %w", g.ID, finance.ErrNotFound)
	}
	return fmt.Errorf("grant %s: %w", g.ID, finance.ErrVersionConflict)
}
