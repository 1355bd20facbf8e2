package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ledgerlane/platform/pkg/pg"
	"github.com/ledgerlane/platform/services/finance/events"
)

var _ events.OutboxStore = (*Store)(nil)

// AppendOutbox implements events.OutboxStore.
func (s *Store) AppendOutbox(ctx context.Context, evs []events.Event, at time.Time) error {
	b := &pgx.Batch{}
	for _, ev := range evs {
		b.Queue(`
			INSERT INTO finance_outbox (id, type, account_id, mode, coalesce_key, body, created_at, next_attempt_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $7) ON CONFLICT (id) DO NOTHING`,
			ev.ID, ev.Type, ev.AccountID, ev.Mode, ev.CoalesceKey, ev.Body, at)
	}
	return storeErr("append outbox", s.pool.SendBatch(ctx, b).Close())
}

// RelayOutbox implements events.OutboxStore: the claim, the publishes and
// the marks are one transaction, whose row locks keep every other pass
// (SKIP LOCKED) off the claimed rows until it commits.
func (s *Store) RelayOutbox(ctx context.Context, now time.Time, limit int, keep time.Duration,
	publish func(context.Context, events.OutboxEvent) error, retry func(int) time.Duration) (int, error) {
	n := 0
	err := pg.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		n = 0
		rows, err := tx.Query(ctx, `
			SELECT seq, id::text, type, account_id, mode, coalesce_key, body, created_at, attempts FROM finance_outbox
			WHERE sent_at IS NULL AND next_attempt_at <= $1
			ORDER BY next_attempt_at, seq LIMIT $2 FOR UPDATE SKIP LOCKED`, now, limit)
		if err != nil {
			return err
		}
		type claimed struct {
			seq int64
			ev  events.OutboxEvent
		}
		list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (claimed, error) {
			var c claimed
			err := r.Scan(&c.seq, &c.ev.ID, &c.ev.Type, &c.ev.AccountID, &c.ev.Mode, &c.ev.CoalesceKey, &c.ev.Body,
				&c.ev.CreatedAt, &c.ev.Attempts)
			return c, err
		})
		if err != nil {
			return err
		}
		var sent []int64
		for _, c := range list {
			if err := ctx.Err(); err != nil {
				return err
			}
			if publish(ctx, c.ev) != nil {
				if _, err := tx.Exec(ctx, `UPDATE finance_outbox SET attempts = attempts + 1, next_attempt_at = $2 WHERE seq = $1`,
					c.seq, now.Add(retry(c.ev.Attempts+1))); err != nil {
					return err
				}
				break
			}
			sent = append(sent, c.seq)
		}
		if len(sent) > 0 {
			if _, err := tx.Exec(ctx, `UPDATE finance_outbox SET sent_at = $2 WHERE seq = ANY($1)`, sent, now); err != nil {
				return err
			}
		}
		if _, err := tx.Exec(ctx, `DELETE FROM finance_outbox WHERE sent_at < $1`, now.Add(-keep)); err != nil {
			return err
		}
		n = len(sent)
		return nil
	})
	return n, storeErr("relay outbox", err)
}
