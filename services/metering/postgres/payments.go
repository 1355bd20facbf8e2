package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ledgerlane/platform/services/metering"
)

func (s *Store) AddPaymentMethod(ctx context.Context, m metering.PaymentMethod) error {
	if !isUUID(m.AccountID) {
		return metering.ErrNotFound
	}
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := lockAccount(ctx, tx, m.AccountID); err != nil {
			return err
		}
		if m.IsDefault {
			if _, err := tx.Exec(ctx, `UPDATE payment_methods SET is_default = false WHERE account_id = $1 AND is_default`, m.AccountID); err != nil {
				return storeErr("add payment method", err)
			}
		}
		_, err := tx.Exec(ctx, `
			INSERT INTO payment_methods (id, account_id, type, scheme, brand, last4, holder_name, processor_ref, is_default, created_at, removed_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
			m.ID, m.AccountID, m.Type, m.Scheme, m.Brand, m.Last4, m.HolderName, m.ProcessorRef, m.IsDefault, m.CreatedAt, m.RemovedAt)
		if err != nil {
			return storeErr("add payment method", err)
		}
		return nil
	})
}

const methodColumns = `id::text, account_id::text, type, scheme, brand, last4, holder_name, processor_ref, is_default, created_at, removed_at`

func scanMethod(row pgx.CollectableRow) (metering.PaymentMethod, error) {
	var m metering.PaymentMethod
	err := row.Scan(&m.ID, &m.AccountID, &m.Type, &m.Scheme, &m.Brand, &m.Last4, &m.HolderName, &m.ProcessorRef,
		&m.IsDefault, &m.CreatedAt, &m.RemovedAt)
	m.CreatedAt, m.RemovedAt = m.CreatedAt.UTC(), utcPtr(m.RemovedAt)
	return m, err
}

func (s *Store) PaymentMethods(ctx context.Context, accountID string) ([]metering.PaymentMethod, error) {
	if !isUUID(accountID) {
		return []metering.PaymentMethod{}, nil
	}
	rows, err := s.pool.Query(ctx, `SELECT `+methodColumns+` FROM payment_methods
		WHERE account_id = $1 AND removed_at IS NULL ORDER BY created_at, id`, accountID)
	if err != nil {
		return nil, storeErr("payment methods", err)
	}
	out, err := pgx.CollectRows(rows, scanMethod)
	if err != nil {
		return nil, storeErr("payment methods", err)
	}
	return out, nil
}

func (s *Store) GetPaymentMethod(ctx context.Context, id string) (metering.PaymentMethod, error) {
	if !isUUID(id) {
		return metering.PaymentMethod{}, metering.ErrNotFound
	}
	rows, err := s.pool.Query(ctx, `SELECT `+methodColumns+` FROM payment_methods WHERE id = $1`, id)
	if err != nil {
		return metering.PaymentMethod{}, storeErr("payment method", err)
	}
	m, err := pgx.CollectExactlyOneRow(rows, scanMethod)
	if err != nil {
		return metering.PaymentMethod{}, storeErr("payment method", err)
	}
	return m, nil
}

func (s *Store) SetDefaultPaymentMethod(ctx context.Context, accountID, methodID string) error {
	if !isUUID(accountID) || !isUUID(methodID) {
		return metering.ErrNotFound
	}
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := lockAccount(ctx, tx, accountID); err != nil {
			return err
		}
		var exists bool
		err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM payment_methods WHERE id = $1 AND account_id = $2 AND removed_at IS NULL)`,
			methodID, accountID).Scan(&exists)
		if err != nil {
			return storeErr("set default payment method", err)
		}
		if !exists {
			return metering.ErrNotFound
		}
		if _, err := tx.Exec(ctx, `UPDATE payment_methods SET is_default = false WHERE account_id = $1 AND is_default AND id <> $2`, accountID, methodID); err != nil {
			return storeErr("set default payment method", err)
		}
		if _, err := tx.Exec(ctx, `UPDATE payment_methods SET is_default = true WHERE id = $1`, methodID); err != nil {
			return storeErr("set default payment method", err)
		}
		return nil
	})
}

func (s *Store) RemovePaymentMethod(ctx context.Context, accountID, methodID string, at time.Time) error {
	if !isUUID(accountID) || !isUUID(methodID) {
		return metering.ErrNotFound
	}
	tag, err := s.pool.Exec(ctx, `UPDATE payment_methods SET is_default = false, removed_at = $3
		WHERE id = $1 AND account_id = $2 AND removed_at IS NULL`, methodID, accountID, at)
	if err != nil {
		return storeErr("remove payment method", err)
	}
	if tag.RowsAffected() == 0 {
		return metering.ErrNotFound
	}
	return nil
}

func nullUUID(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func (s *Store) CreatePayment(ctx context.Context, p metering.Payment) error {
	if !isUUID(p.AccountID) || !isUUID(p.MethodID) {
		return metering.ErrNotFound
	}
	tag, err := s.pool.Exec(ctx, `
		INSERT INTO payments (id, account_id, method_id, method_type, scheme, purpose, invoice_id, retry_of, period_start,
			amount_cents, currency, first_debit, state, processor_ref, created_at, settle_by, resolved_at, failure_reason)
		SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18
		WHERE EXISTS (SELECT 1 FROM payment_methods WHERE id = $3 AND account_id = $2)`,
		p.ID, p.AccountID, p.MethodID, p.MethodType, p.Scheme, p.Purpose, nullUUID(p.InvoiceID), nullUUID(p.RetryOf), p.PeriodStart,
		p.AmountCents, string(p.Currency), p.FirstDebit, p.State, p.ProcessorRef, p.CreatedAt, p.SettleBy, p.ResolvedAt, p.FailureReason)
	if err != nil {
		return storeErr("create payment", err)
	}
	if tag.RowsAffected() == 0 {
		return metering.ErrNotFound
	}
	return nil
}

const paymentColumns = `id::text, account_id::text, method_id::text, method_type, scheme, purpose, coalesce(invoice_id::text, ''),
	coalesce(retry_of::text, ''), period_start, amount_cents, currency, first_debit, state, processor_ref, created_at, settle_by,
	resolved_at, failure_reason`

func scanPayment(row pgx.CollectableRow) (metering.Payment, error) {
	var p metering.Payment
	var cur string
	err := row.Scan(&p.ID, &p.AccountID, &p.MethodID, &p.MethodType, &p.Scheme, &p.Purpose, &p.InvoiceID, &p.RetryOf,
		&p.PeriodStart, &p.AmountCents, &cur, &p.FirstDebit, &p.State, &p.ProcessorRef, &p.CreatedAt, &p.SettleBy,
		&p.ResolvedAt, &p.FailureReason)
	p.Currency = metering.Currency(cur)
	p.PeriodStart, p.CreatedAt, p.SettleBy, p.ResolvedAt = p.PeriodStart.UTC(), p.CreatedAt.UTC(), p.SettleBy.UTC(), utcPtr(p.ResolvedAt)
	return p, err
}

func (s *Store) GetPayment(ctx context.Context, id string) (metering.Payment, error) {
	if !isUUID(id) {
		return metering.Payment{}, metering.ErrNotFound
	}
	rows, err := s.pool.Query(ctx, `SELECT `+paymentColumns+` FROM payments WHERE id = $1`, id)
	if err != nil {
		return metering.Payment{}, storeErr("payment", err)
	}
	p, err := pgx.CollectExactlyOneRow(rows, scanPayment)
	if err != nil {
		return metering.Payment{}, storeErr("payment", err)
	}
	return p, nil
}

func (s *Store) Payments(ctx context.Context, accountID string) ([]metering.Payment, error) {
	if !isUUID(accountID) {
		return []metering.Payment{}, nil
	}
	rows, err := s.pool.Query(ctx, `SELECT `+paymentColumns+` FROM payments WHERE account_id = $1 ORDER BY created_at, id`, accountID)
	if err != nil {
		return nil, storeErr("payments", err)
	}
	out, err := pgx.CollectRows(rows, scanPayment)
	if err != nil {
		return nil, storeErr("payments", err)
	}
	return out, nil
}

func (s *Store) DuePayments(ctx context.Context, now time.Time, limit int) ([]metering.Payment, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+paymentColumns+` FROM payments
		WHERE state = 'pending' AND settle_by <= $1 ORDER BY settle_by, id LIMIT $2`, now, limit)
	if err != nil {
		return nil, storeErr("due payments", err)
	}
	out, err := pgx.CollectRows(rows, scanPayment)
	if err != nil {
		return nil, storeErr("due payments", err)
	}
	return out, nil
}

// ResolvePayment's WHERE state = 'pending' makes it idempotent across
// replicas: of two concurrent resolutions one updates the row, the other
// finds it resolved.
func (s *Store) ResolvePayment(ctx context.Context, id, state, reason string, at time.Time) (bool, error) {
	if !isUUID(id) {
		return false, metering.ErrNotFound
	}
	tag, err := s.pool.Exec(ctx, `UPDATE payments SET state = $2, failure_reason = $3, resolved_at = $4
		WHERE id = $1 AND state = 'pending'`, id, state, reason, at)
	if err != nil {
		return false, storeErr("resolve payment", err)
	}
	if tag.RowsAffected() == 1 {
		return true, nil
	}
	if _, err := s.GetPayment(ctx, id); err != nil {
		return false, err
	}
	return false, nil
}

func (s *Store) DelayPayment(ctx context.Context, id string, settleBy time.Time) error {
	if !isUUID(id) {
		return metering.ErrNotFound
	}
	tag, err := s.pool.Exec(ctx, `UPDATE payments SET settle_by = $2 WHERE id = $1 AND state = 'pending'`, id, settleBy)
	if err != nil {
		return storeErr("delay payment", err)
	}
	if tag.RowsAffected() == 1 {
		return nil
	}
	if _, err := s.GetPayment(ctx, id); err != nil {
		return err
	}
	return metering.ErrConflict
}
