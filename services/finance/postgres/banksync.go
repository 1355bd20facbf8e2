package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/ledgerlane/platform/pkg/pg"
	"github.com/ledgerlane/platform/services/finance"
	"github.com/ledgerlane/platform/services/finance/banksync"
)

// GetConnection implements banksync.Store.
func (s *Store) GetConnection(ctx context.Context, id string) (finance.Connection, error) {
	if !isUUID(id) {
		return finance.Connection{}, fmt.Errorf("connection %q: %w", id, finance.ErrNotFound)
	}
	var c finance.Connection
	err := s.pool.QueryRow(ctx, `
		SELECT id::text, user_id::text, provider, COALESCE(source_aggregator, ''), COALESCE(institution, ''),
			COALESCE(institution_logo_url, ''), status, last_synced_at, COALESCE(error_code, ''),
			COALESCE(error_message, ''), created_at, updated_at
		FROM connections WHERE id = $1`, id).
		Scan(&c.ID, &c.UserID, &c.Provider, &c.SourceAggregator, &c.Institution, &c.InstitutionLogoURL,
			&c.Status, &c.LastSyncedAt, &c.ErrorCode, &c.ErrorMessage, &c.CreatedAt, &c.UpdatedAt)
	return c, storeErr("get connection", err)
}

// RecordConnectionSync implements banksync.Store.
func (s *Store) RecordConnectionSync(ctx context.Context, st banksync.ConnectionState) error {
	if len(st.Notes) == 0 {
		return storeErr("record connection sync", recordSync(ctx, s.pool, st))
	}
	return storeErr("record connection sync", pg.InTx(ctx, s.pool, func(tx pgx.Tx) error { return recordSync(ctx, tx, st) }))
}

// TransactionsByExternalRef implements banksync.Store.
func (s *Store) TransactionsByExternalRef(ctx context.Context, userID string, accountIDs, refs []string) ([]finance.Transaction, error) {
	ids := uuids(accountIDs)
	if !isUUID(userID) || len(ids) == 0 || len(refs) == 0 {
		return nil, nil
	}
	rows, err := s.pool.Query(ctx, `SELECT `+transactionColumns+` FROM transactions
		WHERE user_id = $1 AND account_id = ANY($2::uuid[]) AND external_ref = ANY($3::text[]) ORDER BY id`,
		userID, ids, refs)
	if err != nil {
		return nil, storeErr("transactions by external ref", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (finance.Transaction, error) { return scanTransaction(r) })
	return out, storeErr("transactions by external ref", err)
}

// ApplySync implements banksync.Store in one database transaction.
func (s *Store) ApplySync(ctx context.Context, w banksync.Write) error {
	return storeErr("apply sync", pg.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		if len(w.Inserts) > 0 {
			b := &pgx.Batch{}
			for _, t := range w.Inserts {
				b.Queue(insertTransaction, insertArgs(t)...)
			}
			if err := tx.SendBatch(ctx, b).Close(); err != nil {
				return err
			}
		}
		for _, t := range w.Updates {
			if err := casUpdate(ctx, tx, t, t.Version-1); err != nil {
				return err
			}
		}
		if ids := uuids(w.Deletes); len(ids) > 0 {
			if _, err := tx.Exec(ctx, `DELETE FROM transactions WHERE user_id = $1 AND id = ANY($2::uuid[])`,
				w.UserID, ids); err != nil {
				return err
			}
		}
		if !w.RecurringDueAt.IsZero() {
			// In the sync's transaction: rows committed are rows marked.
			if err := markRecurringDue(ctx, tx, w.UserID, w.RecurringDueAt); err != nil {
				return err
			}
		}
		return recordSync(ctx, tx, w.Connection)
	}))
}
