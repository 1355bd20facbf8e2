package postgres

import (
	"context"
	"encoding/json"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ledgerlane/platform/pkg/pg"
	"github.com/ledgerlane/platform/services/finance"
	"github.com/ledgerlane/platform/services/finance/events"
)

var _ events.OutboxStore = (*Store)(nil)

// AppendNotes implements events.OutboxStore.
func (s *Store) AppendNotes(ctx context.Context, notes []finance.Note) error {
	return storeErr("append outbox", insertNotes(ctx, s.pool, notes))
}

// insertNotes queues notes on db: the pool, or the transaction of the write
// they announce.
func insertNotes(ctx context.Context, db execer, notes []finance.Note) error {
	for _, n := range notes {
		b, err := json.Marshal(n)
		if err != nil {
			return err
		}
		if _, err := db.Exec(ctx, `
			INSERT INTO finance_outbox (id, note, created_at, next_attempt_at) VALUES ($1, $2, $3, $3)
			ON CONFLICT (id) DO NOTHING`, n.ID, b, n.At); err != nil {
			return err
		}
	}
	return nil
}

// RelayNotes implements events.OutboxStore: the claim, the publishes and
// the marks are one transaction, whose row locks keep every other pass
// (SKIP LOCKED) off the claimed rows until it commits.
func (s *Store) RelayNotes(ctx context.Context, now time.Time, limit int, keep time.Duration,
	publish func(context.Context, events.OutboxNote) error, retry func(int) time.Duration) (int, error) {
	n := 0
	err := pg.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		n = 0
		rows, err := tx.Query(ctx, `
			SELECT seq, note, attempts FROM finance_outbox
			WHERE sent_at IS NULL AND next_attempt_at <= $1
			ORDER BY next_attempt_at, seq LIMIT $2 FOR UPDATE SKIP LOCKED`, now, limit)
		if err != nil {
			return err
		}
		type claimed struct {
			seq  int64
			note events.OutboxNote
		}
		list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (claimed, error) {
			var c claimed
			var raw []byte
			if err := r.Scan(&c.seq, &raw, &c.note.Attempts); err != nil {
				return c, err
			}
			return c, json.Unmarshal(raw, &c.note.Note)
		})
		if err != nil {
			return err
		}
		var sent []int64
		for _, c := range list {
			if err := ctx.Err(); err != nil {
				return err
			}
			if publish(ctx, c.note) != nil {
				if _, err := tx.Exec(ctx, `UPDATE finance_outbox SET attempts = attempts + 1, next_attempt_at = $2 WHERE seq = $1`,
					c.seq, now.Add(retry(c.note.Attempts+1))); err != nil {
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
