package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ledgerlane/platform/pkg/pg"
	"github.com/ledgerlane/platform/services/finance"
)

const ruleColumns = `id, user_id, account_id, category_id, merchant, display_name, expected_amount,
	expected_currency, frequency, stream_type, next_expected_date, last_seen_date, logo_url, is_active,
	created_at, updated_at, status, occurrences`

func ruleArgs(r finance.RecurringRule) []any {
	return []any{r.ID, r.UserID, nullStr(r.AccountID), nullStr(r.CategoryID), nullStr(r.Merchant), nullStr(r.DisplayName),
		numeric(r.ExpectedAmount.Amount), r.ExpectedAmount.Currency, r.Frequency, r.StreamType,
		finance.Day(r.NextExpectedDate), dayPtr(r.LastSeenDate), nullStr(r.LogoURL), r.IsActive, r.CreatedAt, r.UpdatedAt,
		nullStr(r.Status), r.Occurrences}
}

// SaveRecurringStreams implements finance.Store: one database transaction
// holding the user's row lock, so detections of one user (a sync on each
// replica) apply one after the other. Only rows whose link changes are
// written.
func (s *Store) SaveRecurringStreams(ctx context.Context, userID string, rules []finance.RecurringRule, members map[string][]string) error {
	var ids, links []string
	for rule, txs := range members {
		for _, id := range txs {
			ids, links = append(ids, id), append(links, rule)
		}
	}
	err := pg.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT 1 FROM users WHERE id = $1 FOR UPDATE`, userID); err != nil {
			return err
		}
		b := &pgx.Batch{}
		for _, r := range rules {
			b.Queue(`INSERT INTO recurring_rules (`+ruleColumns+`)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)
				ON CONFLICT (id) DO UPDATE SET account_id = EXCLUDED.account_id, category_id = EXCLUDED.category_id,
					merchant = EXCLUDED.merchant, display_name = EXCLUDED.display_name,
					expected_amount = EXCLUDED.expected_amount, expected_currency = EXCLUDED.expected_currency,
					frequency = EXCLUDED.frequency, stream_type = EXCLUDED.stream_type,
					next_expected_date = EXCLUDED.next_expected_date, last_seen_date = EXCLUDED.last_seen_date,
					logo_url = EXCLUDED.logo_url, is_active = EXCLUDED.is_active, updated_at = EXCLUDED.updated_at,
					status = EXCLUDED.status, occurrences = EXCLUDED.occurrences
				WHERE recurring_rules.user_id = EXCLUDED.user_id`, ruleArgs(r)...)
		}
		if err := tx.SendBatch(ctx, b).Close(); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `
			UPDATE transactions SET recurring_rule_id = NULL
			WHERE user_id = $1 AND recurring_rule_id IS NOT NULL AND id <> ALL($2::uuid[])`, userID, ids); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `
			UPDATE transactions t SET recurring_rule_id = v.rule
			FROM unnest($2::uuid[], $3::uuid[]) AS v(id, rule)
			WHERE t.id = v.id AND t.user_id = $1 AND t.recurring_rule_id IS DISTINCT FROM v.rule`, userID, ids, links)
		return err
	})
	return wrap(err, "save recurring streams")
}

// UsersWithoutSnapshot implements finance.Store: an anti-join on the
// snapshots' primary key, by user id.
func (s *Store) UsersWithoutSnapshot(ctx context.Context, day time.Time, after string, limit int) ([]string, error) {
	q := `SELECT u.id::text FROM users u
		WHERE NOT EXISTS (SELECT 1 FROM net_worth_snapshots n WHERE n.user_id = u.id AND n.snapshot_date = $1)`
	args := []any{finance.Day(day)}
	if after != "" {
		q += ` AND u.id > $2`
		args = append(args, uuidOrZero(after))
	}
	q += ` ORDER BY u.id`
	if limit > 0 {
		q += fmt.Sprintf(` LIMIT %d`, limit)
	}
	rows, err := s.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, wrap(err, "users without snapshot")
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	return ids, wrap(err, "users without snapshot")
}
