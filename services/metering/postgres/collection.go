package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ledgerlane/platform/services/metering"
)

// collectionState defaults an invoice made without one to open.
func collectionState(s string) string {
	if s == "" {
		return metering.CollectionOpen
	}
	return s
}

func (s *Store) ClaimCollection(ctx context.Context, invoiceID string, attempt int, now, leaseUntil time.Time) (bool, error) {
	if !isUUID(invoiceID) {
		return false, metering.ErrNotFound
	}
	tag, err := s.pool.Exec(ctx, `
		UPDATE invoices SET collection_attempts = $2, next_attempt_at = $4
		WHERE id = $1 AND collection_state = 'collecting' AND collection_attempts = $2 - 1
		  AND next_attempt_at IS NOT NULL AND next_attempt_at <= $3`, invoiceID, attempt, now, leaseUntil)
	if err != nil {
		return false, storeErr("claim collection", err)
	}
	if tag.RowsAffected() == 1 {
		return true, nil
	}
	return false, s.invoiceExists(ctx, invoiceID)
}

// invoiceExists answers ErrNotFound for an unknown invoice, else nil.
func (s *Store) invoiceExists(ctx context.Context, id string) error {
	var one int
	if err := s.pool.QueryRow(ctx, `SELECT 1 FROM invoices WHERE id = $1`, id).Scan(&one); err != nil {
		return storeErr("invoice", err)
	}
	return nil
}

func (s *Store) RecordCollection(ctx context.Context, invoiceID string, attempt int, c metering.InvoiceCollection) (bool, error) {
	if !isUUID(invoiceID) {
		return false, metering.ErrNotFound
	}
	tag, err := s.pool.Exec(ctx, `
		UPDATE invoices SET collection_state = $3, collection_attempts = $4, next_attempt_at = $5,
			payment_id = NULLIF($6, '')::uuid, collection_error = $7
		WHERE id = $1 AND collection_state = 'collecting' AND collection_attempts = $2`,
		invoiceID, attempt, collectionState(c.State), c.Attempts, c.NextAttemptAt, c.PaymentID, c.LastError)
	if err != nil {
		return false, storeErr("record collection", err)
	}
	if tag.RowsAffected() == 1 {
		return true, nil
	}
	return false, s.invoiceExists(ctx, invoiceID)
}

func (s *Store) DueCollections(ctx context.Context, now time.Time, limit int) ([]metering.Invoice, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+invoiceColumns+` FROM invoices
		WHERE collection_state = 'collecting' AND next_attempt_at IS NOT NULL AND next_attempt_at <= $1
		ORDER BY next_attempt_at, id LIMIT $2`, now, limit)
	if err != nil {
		return nil, storeErr("due collections", err)
	}
	out, err := pgx.CollectRows(rows, scanInvoice)
	if err != nil {
		return nil, storeErr("due collections", err)
	}
	return out, nil
}

func (s *Store) ReopenCollections(ctx context.Context, accountID string, now time.Time) (int, error) {
	if !isUUID(accountID) {
		return 0, nil
	}
	tag, err := s.pool.Exec(ctx, `
		UPDATE invoices SET collection_state = 'collecting', next_attempt_at = $2
		WHERE account_id = $1 AND collection_state = 'open'`, accountID, now)
	if err != nil {
		return 0, storeErr("reopen collections", err)
	}
	return int(tag.RowsAffected()), nil
}

func (s *Store) ResolveCollection(ctx context.Context, invoiceID, paymentID, state string) (bool, error) {
	if !isUUID(invoiceID) || !isUUID(paymentID) {
		return false, metering.ErrNotFound
	}
	tag, err := s.pool.Exec(ctx, `
		UPDATE invoices SET collection_state = $3, payment_id = $2, next_attempt_at = NULL
		WHERE id = $1 AND (
			($3 = 'paid' AND collection_state IN ('collecting', 'failed')) OR
			($3 = 'failed' AND collection_state = 'collecting' AND payment_id = $2))`, invoiceID, paymentID, state)
	if err != nil {
		return false, storeErr("resolve collection", err)
	}
	if tag.RowsAffected() == 1 {
		return true, nil
	}
	return false, s.invoiceExists(ctx, invoiceID)
}
