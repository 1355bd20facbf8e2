package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ledgerlane/platform/services/metering"
	"github.com/ledgerlane/platform/services/metering/billing"
)

// The Store's part behind billing.Store: plan changes, the limits history,
// credit, invoices and their collection, payment methods and payments.
var _ billing.Store = (*Store)(nil)

func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

func (s *Store) AccountsDueForClose(ctx context.Context, due time.Time, afterID string, limit int) ([]string, error) {
	if afterID == "" {
		afterID = "00000000-0000-0000-0000-000000000000"
	}
	if !isUUID(afterID) {
		return nil, fmt.Errorf("accounts due for close: bad cursor %q", afterID)
	}
	// Both arms read accounts_next_close_idx (migration 00009): the
	// accounts not looked at yet, and those whose period has ended.
	rows, err := s.pool.Query(ctx, `
		SELECT id::text FROM accounts
		WHERE (next_close_at IS NULL OR next_close_at <= $1) AND id > $2
		ORDER BY id LIMIT $3`, due, afterID, limit)
	if err != nil {
		return nil, storeErr("accounts due for close", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, storeErr("accounts due for close", err)
	}
	return ids, nil
}

func (s *Store) SetNextClose(ctx context.Context, id string, at time.Time) error {
	if !isUUID(id) {
		return metering.ErrNotFound
	}
	tag, err := s.pool.Exec(ctx, `UPDATE accounts SET next_close_at = $2 WHERE id = $1`, id, at)
	if err != nil {
		return storeErr("set next close", err)
	}
	if tag.RowsAffected() == 0 {
		return metering.ErrNotFound
	}
	return nil
}

// lockAccount locks the account's row for the transaction and returns its
// plan; ErrNotFound when there is none.
func lockAccount(ctx context.Context, tx pgx.Tx, id string) (plan string, err error) {
	if !isUUID(id) {
		return "", metering.ErrNotFound
	}
	err = tx.QueryRow(ctx, `SELECT plan_id FROM accounts WHERE id = $1 FOR UPDATE`, id).Scan(&plan)
	if err != nil {
		return "", storeErr("lock account", err)
	}
	return plan, nil
}

func insertChange(ctx context.Context, tx pgx.Tx, ch billing.PlanChange) error {
	_, err := tx.Exec(ctx, `
		INSERT INTO plan_changes (id, account_id, kind, from_plan, to_plan, requested_at, effective_at, charge_cents, used_at_change)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		ch.ID, ch.AccountID, ch.Kind, ch.FromPlan, ch.ToPlan, ch.RequestedAt, ch.EffectiveAt, ch.ChargeCents, ch.UsedAtChange)
	if err != nil {
		return storeErr("record plan change", err)
	}
	return nil
}

func cancelScheduled(ctx context.Context, tx pgx.Tx, id string, at time.Time) error {
	_, err := tx.Exec(ctx, `
		UPDATE plan_changes SET canceled_at = $2
		WHERE account_id = $1 AND kind = 'downgrade' AND canceled_at IS NULL AND effective_at > $2`, id, at)
	if err != nil {
		return storeErr("cancel downgrade", err)
	}
	return nil
}

func (s *Store) Upgrade(ctx context.Context, ch billing.PlanChange, anchor time.Time) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		plan, err := lockAccount(ctx, tx, ch.AccountID)
		if err != nil {
			return err
		}
		if plan != ch.FromPlan {
			return metering.ErrConflict
		}
		_, err = tx.Exec(ctx, `
			UPDATE accounts SET plan_id = $2, billing_anchor = $3, scheduled_plan_id = NULL, scheduled_at = NULL
			WHERE id = $1`, ch.AccountID, ch.ToPlan, anchor)
		if err != nil {
			return storeErr("upgrade", err)
		}
		if err := cancelScheduled(ctx, tx, ch.AccountID, ch.RequestedAt); err != nil {
			return err
		}
		return insertChange(ctx, tx, ch)
	})
}

func (s *Store) ScheduleDowngrade(ctx context.Context, ch billing.PlanChange) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		plan, err := lockAccount(ctx, tx, ch.AccountID)
		if err != nil {
			return err
		}
		if plan != ch.FromPlan {
			return metering.ErrConflict
		}
		_, err = tx.Exec(ctx, `UPDATE accounts SET scheduled_plan_id = $2, scheduled_at = $3 WHERE id = $1`,
			ch.AccountID, ch.ToPlan, ch.EffectiveAt)
		if err != nil {
			return storeErr("schedule downgrade", err)
		}
		if err := cancelScheduled(ctx, tx, ch.AccountID, ch.RequestedAt); err != nil {
			return err
		}
		return insertChange(ctx, tx, ch)
	})
}

func (s *Store) CancelDowngrade(ctx context.Context, id string, at time.Time) (billing.PlanChange, error) {
	var out billing.PlanChange
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := lockAccount(ctx, tx, id); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `
			UPDATE accounts SET scheduled_plan_id = NULL, scheduled_at = NULL
			WHERE id = $1 AND scheduled_at > $2`, id, at)
		if err != nil {
			return storeErr("cancel downgrade", err)
		}
		if tag.RowsAffected() == 0 {
			return metering.ErrNotFound
		}
		rows, err := tx.Query(ctx, `
			UPDATE plan_changes SET canceled_at = $2
			WHERE account_id = $1 AND kind = 'downgrade' AND canceled_at IS NULL AND effective_at > $2
			RETURNING `+changeColumns, id, at)
		if err != nil {
			return storeErr("cancel downgrade", err)
		}
		changes, err := pgx.CollectRows(rows, scanChange)
		if err != nil {
			return storeErr("cancel downgrade", err)
		}
		if len(changes) > 0 {
			out = changes[len(changes)-1]
		}
		return nil
	})
	return out, err
}

const changeColumns = `id::text, account_id::text, kind, from_plan, to_plan, requested_at, effective_at,
	charge_cents, used_at_change, canceled_at`

func scanChange(row pgx.CollectableRow) (billing.PlanChange, error) {
	var c billing.PlanChange
	err := row.Scan(&c.ID, &c.AccountID, &c.Kind, &c.FromPlan, &c.ToPlan, &c.RequestedAt, &c.EffectiveAt,
		&c.ChargeCents, &c.UsedAtChange, &c.CanceledAt)
	c.RequestedAt, c.EffectiveAt, c.CanceledAt = c.RequestedAt.UTC(), c.EffectiveAt.UTC(), utcPtr(c.CanceledAt)
	return c, err
}

func (s *Store) PlanChanges(ctx context.Context, id string) ([]billing.PlanChange, error) {
	if !isUUID(id) {
		return []billing.PlanChange{}, nil
	}
	return queryAll(ctx, s.pool, "plan changes", scanChange, `SELECT `+changeColumns+` FROM plan_changes
		WHERE account_id = $1 AND canceled_at IS NULL ORDER BY effective_at, requested_at, id`, id)
}

func (s *Store) LimitChanges(ctx context.Context, id string) ([]billing.LimitChange, error) {
	if !isUUID(id) {
		return []billing.LimitChange{}, nil
	}
	rows, err := s.pool.Query(ctx, `SELECT account_id::text, at, hard_stop, overage_cap_cents FROM limit_changes
		WHERE account_id = $1 ORDER BY at, seq`, id)
	if err != nil {
		return nil, storeErr("limit changes", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (billing.LimitChange, error) {
		var l billing.LimitChange
		err := row.Scan(&l.AccountID, &l.At, &l.HardStop, &l.OverageCapCents)
		l.At = l.At.UTC()
		return l, err
	})
	if err != nil {
		return nil, storeErr("limit changes", err)
	}
	return out, nil
}

func (s *Store) GrantCredit(ctx context.Context, id string, cents int64) error {
	if !isUUID(id) {
		return metering.ErrNotFound
	}
	tag, err := s.pool.Exec(ctx, `UPDATE accounts SET credit_cents = credit_cents + $2 WHERE id = $1`, id, cents)
	if err != nil {
		return storeErr("grant credit", err)
	}
	if tag.RowsAffected() == 0 {
		return metering.ErrNotFound
	}
	return nil
}

const invoiceColumns = `id::text, account_id::text, period_start, period_end, plan_id, currency, lines,
	subtotal_cents, credit_cents, total_cents, overage_cap_cents, created_at,
	collection_state, collection_attempts, next_attempt_at, coalesce(payment_id::text, ''), collection_error`

func scanInvoice(row pgx.CollectableRow) (billing.Invoice, error) {
	var inv billing.Invoice
	var currency string
	var lines []byte
	err := row.Scan(&inv.ID, &inv.AccountID, &inv.PeriodStart, &inv.PeriodEnd, &inv.PlanID, &currency, &lines,
		&inv.SubtotalCents, &inv.CreditCents, &inv.TotalCents, &inv.OverageCapCents, &inv.CreatedAt,
		&inv.Collection.State, &inv.Collection.Attempts, &inv.Collection.NextAttemptAt, &inv.Collection.PaymentID, &inv.Collection.LastError)
	if err != nil {
		return inv, err
	}
	if t := inv.Collection.NextAttemptAt; t != nil {
		u := t.UTC()
		inv.Collection.NextAttemptAt = &u
	}
	inv.Currency = metering.Currency(currency)
	inv.PeriodStart, inv.PeriodEnd, inv.CreatedAt = inv.PeriodStart.UTC(), inv.PeriodEnd.UTC(), inv.CreatedAt.UTC()
	if err := json.Unmarshal(lines, &inv.Lines); err != nil {
		return inv, fmt.Errorf("invoice lines: %w", err)
	}
	return inv, nil
}

func (s *Store) CreateInvoice(ctx context.Context, inv billing.Invoice) (billing.Invoice, bool, error) {
	if !isUUID(inv.AccountID) {
		return billing.Invoice{}, false, metering.ErrNotFound
	}
	lines := inv.Lines
	if lines == nil {
		lines = []billing.InvoiceLine{}
	}
	body, err := json.Marshal(lines)
	if err != nil {
		return billing.Invoice{}, false, err
	}
	created := false
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		// The account's row lock orders concurrent closers: the second
		// finds the first one's invoice.
		var credit int64
		err := tx.QueryRow(ctx, `SELECT credit_cents FROM accounts WHERE id = $1 FOR UPDATE`, inv.AccountID).Scan(&credit)
		if err != nil {
			return storeErr("create invoice", err)
		}
		rows, err := tx.Query(ctx, `SELECT `+invoiceColumns+` FROM invoices WHERE account_id = $1 AND period_start = $2`,
			inv.AccountID, inv.PeriodStart)
		if err != nil {
			return storeErr("create invoice", err)
		}
		existing, err := pgx.CollectRows(rows, scanInvoice)
		if err != nil {
			return storeErr("create invoice", err)
		}
		if len(existing) > 0 {
			inv = existing[0]
			return nil
		}
		inv.Collection.State = collectionState(inv.Collection.State)
		inv.CreditCents = min(credit, max(0, inv.SubtotalCents))
		inv.TotalCents = inv.SubtotalCents - inv.CreditCents
		if _, err := tx.Exec(ctx, `UPDATE accounts SET credit_cents = credit_cents - $2 WHERE id = $1`, inv.AccountID, inv.CreditCents); err != nil {
			return storeErr("create invoice", err)
		}
		_, err = tx.Exec(ctx, `
			INSERT INTO invoices (id, account_id, period_start, period_end, plan_id, currency, lines,
				subtotal_cents, credit_cents, total_cents, overage_cap_cents, created_at,
				collection_state, collection_attempts, next_attempt_at, payment_id, collection_error)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, NULLIF($16, '')::uuid, $17)`,
			inv.ID, inv.AccountID, inv.PeriodStart, inv.PeriodEnd, inv.PlanID, string(inv.Currency), body,
			inv.SubtotalCents, inv.CreditCents, inv.TotalCents, inv.OverageCapCents, inv.CreatedAt,
			collectionState(inv.Collection.State), inv.Collection.Attempts, inv.Collection.NextAttemptAt, inv.Collection.PaymentID, inv.Collection.LastError)
		if err != nil {
			return storeErr("create invoice", err)
		}
		created = true
		return nil
	})
	if err != nil {
		return billing.Invoice{}, false, err
	}
	return inv, created, nil
}

func (s *Store) Invoices(ctx context.Context, id string) ([]billing.Invoice, error) {
	if !isUUID(id) {
		return []billing.Invoice{}, nil
	}
	return queryAll(ctx, s.pool, "invoices", scanInvoice, `SELECT `+invoiceColumns+` FROM invoices WHERE account_id = $1 ORDER BY period_start`, id)
}

// collectionState defaults an invoice made without one to open.
func collectionState(s string) string {
	if s == "" {
		return billing.CollectionOpen
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

func (s *Store) RecordCollection(ctx context.Context, invoiceID string, attempt int, c billing.InvoiceCollection) (bool, error) {
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

func (s *Store) DueCollections(ctx context.Context, now time.Time, limit int) ([]billing.Invoice, error) {
	return queryAll(ctx, s.pool, "due collections", scanInvoice, `SELECT `+invoiceColumns+` FROM invoices
		WHERE collection_state = 'collecting' AND next_attempt_at IS NOT NULL AND next_attempt_at <= $1
		ORDER BY next_attempt_at, id LIMIT $2`, now, limit)
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

func (s *Store) AddPaymentMethod(ctx context.Context, m billing.PaymentMethod) error {
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

func scanMethod(row pgx.CollectableRow) (billing.PaymentMethod, error) {
	var m billing.PaymentMethod
	err := row.Scan(&m.ID, &m.AccountID, &m.Type, &m.Scheme, &m.Brand, &m.Last4, &m.HolderName, &m.ProcessorRef,
		&m.IsDefault, &m.CreatedAt, &m.RemovedAt)
	m.CreatedAt, m.RemovedAt = m.CreatedAt.UTC(), utcPtr(m.RemovedAt)
	return m, err
}

func (s *Store) PaymentMethods(ctx context.Context, accountID string) ([]billing.PaymentMethod, error) {
	if !isUUID(accountID) {
		return []billing.PaymentMethod{}, nil
	}
	return queryAll(ctx, s.pool, "payment methods", scanMethod, `SELECT `+methodColumns+` FROM payment_methods
		WHERE account_id = $1 AND removed_at IS NULL ORDER BY created_at, id`, accountID)
}

func (s *Store) GetPaymentMethod(ctx context.Context, id string) (billing.PaymentMethod, error) {
	if !isUUID(id) {
		return billing.PaymentMethod{}, metering.ErrNotFound
	}
	return queryOne(ctx, s.pool, "payment method", scanMethod, `SELECT `+methodColumns+` FROM payment_methods WHERE id = $1`, id)
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

func (s *Store) CreatePayment(ctx context.Context, p billing.Payment) error {
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

func scanPayment(row pgx.CollectableRow) (billing.Payment, error) {
	var p billing.Payment
	var cur string
	err := row.Scan(&p.ID, &p.AccountID, &p.MethodID, &p.MethodType, &p.Scheme, &p.Purpose, &p.InvoiceID, &p.RetryOf,
		&p.PeriodStart, &p.AmountCents, &cur, &p.FirstDebit, &p.State, &p.ProcessorRef, &p.CreatedAt, &p.SettleBy,
		&p.ResolvedAt, &p.FailureReason)
	p.Currency = metering.Currency(cur)
	p.PeriodStart, p.CreatedAt, p.SettleBy, p.ResolvedAt = p.PeriodStart.UTC(), p.CreatedAt.UTC(), p.SettleBy.UTC(), utcPtr(p.ResolvedAt)
	return p, err
}

func (s *Store) GetPayment(ctx context.Context, id string) (billing.Payment, error) {
	if !isUUID(id) {
		return billing.Payment{}, metering.ErrNotFound
	}
	return queryOne(ctx, s.pool, "payment", scanPayment, `SELECT `+paymentColumns+` FROM payments WHERE id = $1`, id)
}

func (s *Store) Payments(ctx context.Context, accountID string) ([]billing.Payment, error) {
	if !isUUID(accountID) {
		return []billing.Payment{}, nil
	}
	return queryAll(ctx, s.pool, "payments", scanPayment, `SELECT `+paymentColumns+` FROM payments WHERE account_id = $1 ORDER BY created_at, id`, accountID)
}

func (s *Store) DuePayments(ctx context.Context, now time.Time, limit int) ([]billing.Payment, error) {
	return queryAll(ctx, s.pool, "due payments", scanPayment, `SELECT `+paymentColumns+` FROM payments
		WHERE state = 'pending' AND settle_by <= $1 ORDER BY settle_by, id LIMIT $2`, now, limit)
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
