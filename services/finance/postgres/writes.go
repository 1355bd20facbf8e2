package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/ledgerlane/platform/pkg/pg"
	"github.com/ledgerlane/platform/services/finance"
	"github.com/ledgerlane/platform/services/finance/banksync"
)

// execer is a pool or a transaction.
type execer interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// recordSync writes st, with its notes, on db: a transaction whenever st
// carries notes.
func recordSync(ctx context.Context, db execer, st banksync.ConnectionState) error {
	if !isUUID(st.ID) {
		return fmt.Errorf("connection %q: %w", st.ID, finance.ErrNotFound)
	}
	tag, err := db.Exec(ctx, `
		UPDATE connections SET status = $2, last_synced_at = COALESCE($3, last_synced_at), error_code = $4,
			error_message = $5, updated_at = $6
		WHERE id = $1`, st.ID, st.Status, st.LastSyncedAt, nullStr(st.ErrorCode), nullStr(st.ErrorMessage), st.UpdatedAt)
	if err == nil && tag.RowsAffected() == 0 {
		return fmt.Errorf("connection %s: %w", st.ID, finance.ErrNotFound)
	}
	if err != nil {
		return err
	}
	return insertNotes(ctx, db, st.Notes)
}

// CreateCustomCategory implements finance.Store. Locking the user's row
// serialises concurrent creates of one user, so the count stays true until
// the insert commits.
func (s *Store) CreateCustomCategory(ctx context.Context, c finance.Category, limit int) error {
	return storeErr("create custom category", pg.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		var n int
		if _, err := tx.Exec(ctx, `SELECT 1 FROM users WHERE id = $1 FOR UPDATE`, c.UserID); err != nil {
			return err
		}
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM categories WHERE user_id = $1`, c.UserID).Scan(&n); err != nil {
			return err
		}
		if n >= limit {
			return fmt.Errorf("categories of %s: %w", c.UserID, finance.ErrLimitReached)
		}
		_, err := tx.Exec(ctx, `
			INSERT INTO categories (id, user_id, parent_id, name, icon, color, type_tag, sort_order, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
			c.ID, c.UserID, nullStr(c.ParentID), c.Name, nullStr(c.Icon), nullStr(c.Color), nullStr(c.TypeTag),
			c.SortOrder, c.CreatedAt, c.UpdatedAt)
		return err
	}))
}

// GetCategory implements finance.Store.
func (s *Store) GetCategory(ctx context.Context, userID, id string) (finance.Category, error) {
	if !isUUID(id) || !isUUID(userID) {
		return finance.Category{}, fmt.Errorf("category %q: %w", id, finance.ErrNotFound)
	}
	var c finance.Category
	err := s.pool.QueryRow(ctx, `
		SELECT id::text, COALESCE(user_id::text, ''), COALESCE(parent_id::text, ''), name, COALESCE(icon, ''),
			COALESCE(color, ''), COALESCE(type_tag, ''), sort_order, created_at, updated_at
		FROM categories WHERE id = $1 AND (user_id IS NULL OR user_id = $2)`, id, userID).
		Scan(&c.ID, &c.UserID, &c.ParentID, &c.Name, &c.Icon, &c.Color, &c.TypeTag, &c.SortOrder, &c.CreatedAt, &c.UpdatedAt)
	return c, storeErr("get category", err)
}

// UpdateCategory implements finance.Store.
func (s *Store) UpdateCategory(ctx context.Context, c finance.Category) error {
	if !isUUID(c.ID) || !isUUID(c.UserID) {
		return fmt.Errorf("category %q: %w", c.ID, finance.ErrNotFound)
	}
	tag, err := s.pool.Exec(ctx, `
		UPDATE categories SET parent_id = $3, name = $4, icon = $5, color = $6, sort_order = $7, updated_at = $8
		WHERE id = $1 AND user_id = $2`,
		c.ID, c.UserID, nullStr(c.ParentID), c.Name, nullStr(c.Icon), nullStr(c.Color), c.SortOrder, c.UpdatedAt)
	if err == nil && tag.RowsAffected() == 0 {
		return fmt.Errorf("category %s: %w", c.ID, finance.ErrNotFound)
	}
	return storeErr("update category", err)
}

// DeleteCategory implements finance.Store in one database transaction. The
// category row is locked first; a subcategory inserted concurrently holds a
// key-share lock on it, so the delete either sees the child or fails on the
// foreign key, which is reported the same way.
func (s *Store) DeleteCategory(ctx context.Context, userID, id, mergeInto string, at time.Time, notes ...finance.Note) ([]string, error) {
	if !isUUID(id) || !isUUID(userID) || (mergeInto != "" && !isUUID(mergeInto)) {
		return nil, fmt.Errorf("category %q: %w", id, finance.ErrNotFound)
	}
	var moved []string
	err := pg.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		var found bool
		err := tx.QueryRow(ctx, `SELECT true FROM categories WHERE id = $1 AND user_id = $2 FOR UPDATE`, id, userID).Scan(&found)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("category %s: %w", id, finance.ErrNotFound)
		} else if err != nil {
			return err
		}
		var children bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM categories WHERE parent_id = $1)`, id).Scan(&children); err != nil {
			return err
		}
		if children {
			return fmt.Errorf("category %s: %w", id, finance.ErrHasChildren)
		}
		if mergeInto != "" {
			err := tx.QueryRow(ctx, `SELECT true FROM categories WHERE id = $1 AND (user_id IS NULL OR user_id = $2) FOR SHARE`,
				mergeInto, userID).Scan(&found)
			if errors.Is(err, pgx.ErrNoRows) {
				return fmt.Errorf("category %s: %w", mergeInto, finance.ErrNotFound)
			} else if err != nil {
				return err
			}
		}
		rows, err := tx.Query(ctx, `
			UPDATE transactions SET category_id = $3, version = version + 1, updated_at = $4
			WHERE user_id = $1 AND category_id = $2
			RETURNING account_id::text`, userID, id, nullStr(mergeInto), at)
		if err != nil {
			return err
		}
		if moved, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
			return err
		}
		if len(moved) > 0 {
			if err := insertNotes(ctx, tx, finance.WithAccounts(notes, moved)); err != nil {
				return err
			}
		}
		if _, err := tx.Exec(ctx, `UPDATE recurring_rules SET category_id = $3 WHERE user_id = $1 AND category_id = $2`,
			userID, id, nullStr(mergeInto)); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `DELETE FROM categories WHERE id = $1`, id)
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "23503" { // a subcategory arrived meanwhile
			return fmt.Errorf("category %s: %w", id, finance.ErrHasChildren)
		}
		return err
	})
	return moved, storeErr("delete category", err)
}

const updateTransaction = `
	UPDATE transactions SET category_id = $4, amount = $5, currency = $6, merchant = $7, display_name = $8,
		description = $9, date = $10, posted_at = $11, is_pending = $12, payment_channel = $13, tags = $14,
		check_number = $15, memo = $16, location_street = $17, location_city = $18, location_state = $19,
		location_postal_code = $20, location_country = $21, provider_amount = $22, provider_currency = $23,
		provider_merchant_name = $24, provider_transaction_date = $25, provider_description = $26,
		provider_memo = $27, owned_by_user = $28, version = $29, updated_at = $30, last_write = $31
	WHERE id = $1 AND user_id = $2 AND version = $3`

func updateArgs(t finance.Transaction, expected int64) []any {
	var loc finance.Location
	if t.Location != nil {
		loc = *t.Location
	}
	provAmount, provCurrency := moneyArgs(t.ProviderAmount)
	return []any{t.ID, t.UserID, expected, nullStr(t.CategoryID), numeric(t.Amount.Amount), t.Amount.Currency,
		nullStr(t.Merchant), nullStr(t.DisplayName), nullStr(t.Description), finance.Day(t.Date), t.PostedAt,
		t.IsPending, nullStr(t.PaymentChannel), list(t.Tags), nullStr(t.CheckNumber), nullStr(t.Memo),
		nullStr(loc.Street), nullStr(loc.City), nullStr(loc.State), nullStr(loc.PostalCode), nullStr(loc.Country),
		provAmount, provCurrency, t.ProviderMerchantName, dayPtr(t.ProviderTransactionDate), t.ProviderDescription,
		t.ProviderMemo, list(t.OwnedByUser), t.Version, t.UpdatedAt, markArg(t.LastWrite)}
}

type querier interface {
	execer
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// casUpdate runs the compare-and-swap UPDATE; no row written means either
// no such row or another version, which one more read tells apart.
func casUpdate(ctx context.Context, db querier, t finance.Transaction, expected int64) error {
	if !isUUID(t.ID) || !isUUID(t.UserID) {
		return fmt.Errorf("transaction %q: %w", t.ID, finance.ErrNotFound)
	}
	tag, err := db.Exec(ctx, updateTransaction, updateArgs(t, expected)...)
	if err != nil || tag.RowsAffected() == 1 {
		return err
	}
	var exists bool
	if err := db.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM transactions WHERE id = $1 AND user_id = $2)`,
		t.ID, t.UserID).Scan(&exists); err != nil {
		return err
	}
	if exists {
		return fmt.Errorf("transaction %s: %w", t.ID, finance.ErrVersionConflict)
	}
	return fmt.Errorf("transaction %s: %w", t.ID, finance.ErrNotFound)
}

// UpdateTransaction implements finance.Store.
// A deadlock of the flow-total triggers with a concurrent multi-row write
// (a sync, a category delete) is run again, as InTx does for those.
// With notes, the update and the notes are one transaction.
func (s *Store) UpdateTransaction(ctx context.Context, t finance.Transaction, expectedVersion int64, notes ...finance.Note) error {
	if len(notes) == 0 {
		err := pg.RetryConflicts(ctx, func() error { return casUpdate(ctx, s.pool, t, expectedVersion) })
		return storeErr("update transaction", err)
	}
	err := pg.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		if err := casUpdate(ctx, tx, t, expectedVersion); err != nil {
			return err
		}
		return insertNotes(ctx, tx, notes)
	})
	return storeErr("update transaction", err)
}

// IsSplitParent implements finance.Store.
func (s *Store) IsSplitParent(ctx context.Context, userID, id string) (bool, error) {
	if !isUUID(id) || !isUUID(userID) {
		return false, nil
	}
	var ok bool
	err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM transactions WHERE split_parent_id = $1 AND user_id = $2)`,
		id, userID).Scan(&ok)
	return ok, storeErr("is split parent", err)
}

// searchWindow is how many of the user's newest (filtered) rows a search
// reads in date order before it turns to the GIN index.
var searchWindow = 10000 // a variable only so a test can shrink it

// SearchTransactions implements finance.Store on the stored tsvector and its
// GIN index. Each term becomes a prefix lexeme ('term':*); the terms travel
// as one parameter, quoted, so nothing in them is read as tsquery syntax.
//
// PostgreSQL cannot estimate how many rows a prefix query matches (it
// assumes a fixed fraction), so left alone it picks one plan for common and
// rare words alike, and either plan is slow for the other kind. So a page
// is found in two steps. First the newest searchWindow rows (in the listing
// order, through the B-tree) are filtered: a common word fills the page
// after a few hundred rows, and a full page there is exactly the first page
// overall, since every later row is older. Otherwise the word is rare (under
// limit/searchWindow of the rows) and the page is read through the GIN index
// and sorted.
func (s *Store) SearchTransactions(ctx context.Context, userID string, terms []string, f finance.TransactionFilter, after *finance.TxPosition, limit int) ([]finance.Transaction, error) {
	if len(terms) == 0 {
		return nil, nil
	}
	parts := make([]string, len(terms))
	for i, t := range terms {
		parts[i] = "'" + strings.ReplaceAll(t, "'", "''") + "':*"
	}
	tsq := strings.Join(parts, " & ")
	if limit > 0 {
		window, ok := txQuery("SELECT *", userID, f, after, "")
		if !ok {
			return nil, nil
		}
		window.args = append(window.args, searchWindow, tsq, limit)
		n := len(window.args)
		sql := `SELECT ` + transactionColumns + ` FROM (` + window.sql.String() +
			` ORDER BY date DESC, id DESC LIMIT $` + strconv.Itoa(n-2) + `) transactions` +
			` WHERE search @@ to_tsquery('simple', $` + strconv.Itoa(n-1) + `)` +
			` ORDER BY date DESC, id DESC LIMIT $` + strconv.Itoa(n)
		rows, err := s.pool.Query(ctx, sql, window.args...)
		if err != nil {
			return nil, storeErr("search transactions", err)
		}
		out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (finance.Transaction, error) { return scanTransaction(r) })
		if err != nil || len(out) == limit {
			return out, storeErr("search transactions", err)
		}
	}
	page, ok := txQuery(`SELECT `+transactionColumns, userID, f, after, tsq)
	if !ok {
		return nil, nil
	}
	page.sql.WriteString(" ORDER BY date DESC, id DESC")
	page.limit(limit)
	var out []finance.Transaction
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		// Few matches: read them through the GIN index (bitmap scans only).
		if _, err := tx.Exec(ctx, `SET LOCAL enable_seqscan = off; SET LOCAL enable_indexscan = off; SET LOCAL enable_indexonlyscan = off`); err != nil {
			return err
		}
		var err error
		out, err = collectTransactions(ctx, tx, page)
		return err
	})
	return out, storeErr("search transactions", err)
}
