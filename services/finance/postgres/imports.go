package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/ledgerlane/platform/pkg/pg"
	"github.com/ledgerlane/platform/services/finance"
	"github.com/ledgerlane/platform/services/finance/imports"
)

// ImportClaims implements imports.Store.
func (s *Store) ImportClaims(ctx context.Context, accountID string, keys, transactionIDs []string) ([]imports.ImportClaim, error) {
	if !isUUID(accountID) {
		return nil, nil
	}
	rows, err := s.pool.Query(ctx, `
		SELECT account_id::text, import_key, transaction_id::text FROM import_claims
		WHERE account_id = $1 AND (import_key = ANY($2::text[]) OR transaction_id = ANY($3::uuid[]))
		ORDER BY import_key`, accountID, list(keys), uuids(transactionIDs))
	if err != nil {
		return nil, storeErr("import claims", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (imports.ImportClaim, error) {
		var c imports.ImportClaim
		err := r.Scan(&c.AccountID, &c.Key, &c.TransactionID)
		return c, err
	})
	return out, storeErr("import claims", err)
}

// ApplyImport implements imports.Store in one database transaction: one
// statement claims every free key (ON CONFLICT DO NOTHING waits for a
// concurrent import holding the same key and then skips it), then the rows
// of the keys it claimed are inserted. Keys are claimed in key order, so two
// imports never wait on each other in a cycle.
func (s *Store) ApplyImport(ctx context.Context, w imports.ImportWrite) ([]bool, error) {
	keys := make([]string, len(w.Rows))
	ids := make([]string, len(w.Rows))
	for i, r := range w.Rows {
		keys[i] = r.Key
		ids[i] = r.MatchID
		if r.Insert != nil {
			ids[i] = r.Insert.ID
		}
	}
	claimed := make([]bool, len(w.Rows))
	err := pg.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		clear(claimed) // InTx may run this again
		if err := insertNotes(ctx, tx, w.Notes); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `
			INSERT INTO import_claims (account_id, import_key, transaction_id)
			SELECT $1, k, t FROM unnest($2::text[], $3::uuid[]) AS u (k, t) ORDER BY k
			ON CONFLICT (account_id, import_key) DO NOTHING
			RETURNING import_key`, w.AccountID, keys, ids)
		if err != nil {
			return err
		}
		won, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return err
		}
		mine := make(map[string]bool, len(won))
		for _, k := range won {
			mine[k] = true
		}
		b := &pgx.Batch{}
		for i, r := range w.Rows {
			if !mine[r.Key] {
				continue
			}
			claimed[i] = true
			if r.Insert != nil {
				b.Queue(insertTransaction, insertArgs(*r.Insert)...)
			}
		}
		if b.Len() == 0 {
			return nil
		}
		return tx.SendBatch(ctx, b).Close()
	})
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23503" { // foreign_key_violation at commit
		// A matched row was deleted (a bank sync withdrew it) meanwhile.
		return nil, fmt.Errorf("postgres: apply import: matched row gone: %w", finance.ErrNotFound)
	}
	if err != nil {
		return nil, storeErr("apply import", err)
	}
	return claimed, nil
}
