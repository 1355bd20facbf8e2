package postgres

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ledgerlane/platform/services/metering"
	"github.com/ledgerlane/platform/services/metering/notify"
)

var _ notify.Store = (*Store)(nil)

// Recipients are the account's portal users.
func (s *Store) Recipients(ctx context.Context, id string) ([]notify.Recipient, error) {
	if !isUUID(id) {
		return []notify.Recipient{}, nil
	}
	rows, err := s.pool.Query(ctx, `SELECT email, name FROM portal_users WHERE account_id = $1 ORDER BY created_at, id`, id)
	if err != nil {
		return nil, storeErr("recipients", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (notify.Recipient, error) {
		var r notify.Recipient
		return r, row.Scan(&r.Email, &r.Name)
	})
	if err != nil {
		return nil, storeErr("recipients", err)
	}
	return out, nil
}

// insertMail puts m in the outbox within tx: the alerts' mails, and the
// personal mails written with their token or invitation (tokens.go,
// portal.go).
func insertMail(ctx context.Context, tx pgx.Tx, m notify.OutboxMail) error {
	_, err := tx.Exec(ctx, `
		INSERT INTO mail_outbox (id, account_id, milestone, period_start, recipient, subject, body, created_at, next_attempt_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		m.ID, m.AccountID, m.Milestone, m.PeriodStart, m.To, m.Subject, m.Body, m.CreatedAt, m.NextAttemptAt)
	return err
}

func (s *Store) EnqueueAlert(ctx context.Context, a notify.Alert, mails []notify.OutboxMail) (bool, error) {
	if !isUUID(a.AccountID) {
		return false, metering.ErrNotFound
	}
	created := false
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `
			INSERT INTO usage_alerts (account_id, period_start, milestone, created_at) VALUES ($1, $2, $3, $4)
			ON CONFLICT DO NOTHING`, a.AccountID, a.PeriodStart, a.Milestone, a.CreatedAt)
		if err != nil {
			return storeErr("enqueue alert", err)
		}
		if tag.RowsAffected() == 0 {
			return nil
		}
		for _, m := range mails {
			if err := insertMail(ctx, tx, m); err != nil {
				return storeErr("enqueue alert", err)
			}
		}
		created = true
		return nil
	})
	return created, err
}

func (s *Store) Alerts(ctx context.Context, id string) ([]notify.Alert, error) {
	if !isUUID(id) {
		return []notify.Alert{}, nil
	}
	rows, err := s.pool.Query(ctx, `SELECT account_id::text, period_start, milestone, created_at FROM usage_alerts
		WHERE account_id = $1 ORDER BY created_at, period_start, milestone`, id)
	if err != nil {
		return nil, storeErr("alerts", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (notify.Alert, error) {
		var a notify.Alert
		err := row.Scan(&a.AccountID, &a.PeriodStart, &a.Milestone, &a.CreatedAt)
		a.PeriodStart, a.CreatedAt = a.PeriodStart.UTC(), a.CreatedAt.UTC()
		return a, err
	})
	if err != nil {
		return nil, storeErr("alerts", err)
	}
	return out, nil
}

const mailColumns = `id::text, account_id::text, milestone, period_start, recipient, subject, body, created_at,
	next_attempt_at, attempts, sent_at, last_error`

func scanMail(row pgx.CollectableRow) (notify.OutboxMail, error) {
	var m notify.OutboxMail
	err := row.Scan(&m.ID, &m.AccountID, &m.Milestone, &m.PeriodStart, &m.To, &m.Subject, &m.Body, &m.CreatedAt,
		&m.NextAttemptAt, &m.Attempts, &m.SentAt, &m.LastError)
	m.PeriodStart, m.CreatedAt, m.NextAttemptAt, m.SentAt = m.PeriodStart.UTC(), m.CreatedAt.UTC(), m.NextAttemptAt.UTC(), utcPtr(m.SentAt)
	return m, err
}

func (s *Store) ClaimMail(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]notify.OutboxMail, error) {
	// SKIP LOCKED: concurrent senders claim disjoint mails.
	rows, err := s.pool.Query(ctx, `
		UPDATE mail_outbox SET next_attempt_at = $2, attempts = attempts + 1
		WHERE id IN (
			SELECT id FROM mail_outbox WHERE sent_at IS NULL AND next_attempt_at <= $1
			ORDER BY next_attempt_at, created_at, id LIMIT $3 FOR UPDATE SKIP LOCKED)
		RETURNING `+mailColumns, now, now.Add(lease), limit)
	if err != nil {
		return nil, storeErr("claim mail", err)
	}
	out, err := pgx.CollectRows(rows, scanMail)
	if err != nil {
		return nil, storeErr("claim mail", err)
	}
	slices.SortFunc(out, func(a, b notify.OutboxMail) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	return out, nil
}

func (s *Store) MarkMailSent(ctx context.Context, id string, at time.Time) error {
	if !isUUID(id) {
		return metering.ErrNotFound
	}
	tag, err := s.pool.Exec(ctx, `UPDATE mail_outbox SET sent_at = COALESCE(sent_at, $2) WHERE id = $1`, id, at)
	if err != nil {
		return storeErr("mark mail sent", err)
	}
	if tag.RowsAffected() == 0 {
		return metering.ErrNotFound
	}
	return nil
}

func (s *Store) RetryMail(ctx context.Context, id string, next time.Time, lastErr string) error {
	if !isUUID(id) {
		return metering.ErrNotFound
	}
	tag, err := s.pool.Exec(ctx, `UPDATE mail_outbox SET next_attempt_at = $2, last_error = $3 WHERE id = $1`, id, next, lastErr)
	if err != nil {
		return storeErr("retry mail", err)
	}
	if tag.RowsAffected() == 0 {
		return metering.ErrNotFound
	}
	return nil
}

func (s *Store) Outbox(ctx context.Context, id string) ([]notify.OutboxMail, error) {
	if !isUUID(id) {
		return []notify.OutboxMail{}, nil
	}
	return queryAll(ctx, s.pool, "outbox", scanMail, `SELECT `+mailColumns+` FROM mail_outbox WHERE account_id = $1 ORDER BY created_at, id`, id)
}
