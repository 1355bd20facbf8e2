package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ledgerlane/platform/services/metering"
)

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

func insertChange(ctx context.Context, tx pgx.Tx, ch metering.PlanChange) error {
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

func (s *Store) Upgrade(ctx context.Context, ch metering.PlanChange, anchor time.Time) error {
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

func (s *Store) ScheduleDowngrade(ctx context.Context, ch metering.PlanChange) error {
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

func (s *Store) CancelDowngrade(ctx context.Context, id string, at time.Time) (metering.PlanChange, error) {
	var out metering.PlanChange
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

func (s *Store) ApplyDowngrade(ctx context.Context, id string, now time.Time) error {
	if !isUUID(id) {
		return metering.ErrNotFound
	}
	_, err := s.pool.Exec(ctx, `
		UPDATE accounts SET plan_id = scheduled_plan_id, scheduled_plan_id = NULL, scheduled_at = NULL
		WHERE id = $1 AND scheduled_at <= $2`, id, now)
	if err != nil {
		return storeErr("apply downgrade", err)
	}
	return nil
}

const changeColumns = `id::text, account_id::text, kind, from_plan, to_plan, requested_at, effective_at,
	charge_cents, used_at_change, canceled_at`

func scanChange(row pgx.CollectableRow) (metering.PlanChange, error) {
	var c metering.PlanChange
	err := row.Scan(&c.ID, &c.AccountID, &c.Kind, &c.FromPlan, &c.ToPlan, &c.RequestedAt, &c.EffectiveAt,
		&c.ChargeCents, &c.UsedAtChange, &c.CanceledAt)
	c.RequestedAt, c.EffectiveAt, c.CanceledAt = c.RequestedAt.UTC(), c.EffectiveAt.UTC(), utcPtr(c.CanceledAt)
	return c, err
}

func (s *Store) PlanChanges(ctx context.Context, id string) ([]metering.PlanChange, error) {
	if !isUUID(id) {
		return []metering.PlanChange{}, nil
	}
	rows, err := s.pool.Query(ctx, `SELECT `+changeColumns+` FROM plan_changes
		WHERE account_id = $1 AND canceled_at IS NULL ORDER BY effective_at, requested_at, id`, id)
	if err != nil {
		return nil, storeErr("plan changes", err)
	}
	out, err := pgx.CollectRows(rows, scanChange)
	if err != nil {
		return nil, storeErr("plan changes", err)
	}
	return out, nil
}

func (s *Store) LimitChanges(ctx context.Context, id string) ([]metering.LimitChange, error) {
	if !isUUID(id) {
		return []metering.LimitChange{}, nil
	}
	rows, err := s.pool.Query(ctx, `SELECT account_id::text, at, hard_stop, overage_cap_cents FROM limit_changes
		WHERE account_id = $1 ORDER BY at, seq`, id)
	if err != nil {
		return nil, storeErr("limit changes", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (metering.LimitChange, error) {
		var l metering.LimitChange
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

func scanInvoice(row pgx.CollectableRow) (metering.Invoice, error) {
	var inv metering.Invoice
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

func (s *Store) CreateInvoice(ctx context.Context, inv metering.Invoice) (metering.Invoice, bool, error) {
	if !isUUID(inv.AccountID) {
		return metering.Invoice{}, false, metering.ErrNotFound
	}
	lines := inv.Lines
	if lines == nil {
		lines = []metering.InvoiceLine{}
	}
	body, err := json.Marshal(lines)
	if err != nil {
		return metering.Invoice{}, false, err
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
		return metering.Invoice{}, false, err
	}
	return inv, created, nil
}

func (s *Store) Invoices(ctx context.Context, id string) ([]metering.Invoice, error) {
	if !isUUID(id) {
		return []metering.Invoice{}, nil
	}
	rows, err := s.pool.Query(ctx, `SELECT `+invoiceColumns+` FROM invoices WHERE account_id = $1 ORDER BY period_start`, id)
	if err != nil {
		return nil, storeErr("invoices", err)
	}
	out, err := pgx.CollectRows(rows, scanInvoice)
	if err != nil {
		return nil, storeErr("invoices", err)
	}
	return out, nil
}
