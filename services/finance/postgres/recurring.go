package postgres

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/ledgerlane/platform/pkg/pg"
	"github.com/ledgerlane/platform/services/finance"
	"github.com/ledgerlane/platform/services/finance/recurring"
)

const ruleColumns = `id, user_id, account_id, category_id, merchant, display_name, expected_amount,
	expected_currency, frequency, stream_type, next_expected_date, last_seen_date, logo_url, is_active,
	created_at, updated_at, status, occurrences`

func ruleArgs(r recurring.Rule) []any {
	return []any{r.ID, r.UserID, nullStr(r.AccountID), nullStr(r.CategoryID), nullStr(r.Merchant), nullStr(r.DisplayName),
		numeric(r.ExpectedAmount.Amount), r.ExpectedAmount.Currency, r.Frequency, r.StreamType,
		finance.Day(r.NextExpectedDate), dayPtr(r.LastSeenDate), nullStr(r.LogoURL), r.IsActive, r.CreatedAt, r.UpdatedAt,
		nullStr(r.Status), r.Occurrences}
}

// SaveRecurringStreams implements recurring.Store: one database transaction
// holding the user's row lock, so detections of one user (a sync on each
// replica) apply one after the other. Only rows whose link changes are
// written; the notes (new streams) are stored in the outbox in the same
// transaction.
func (s *Store) SaveRecurringStreams(ctx context.Context, userID string, rules []recurring.Rule, members map[string][]string, notes ...finance.Note) error {
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
		if err != nil {
			return err
		}
		return insertNotes(ctx, tx, notes)
	})
	return storeErr("save recurring streams", err)
}

// markRecurringDue upserts the user's mark in db (the pool, or a sync's
// transaction): the earlier due time stays, the generation goes up, a
// claim in force stays.
func markRecurringDue(ctx context.Context, db execer, userID string, at time.Time) error {
	_, err := db.Exec(ctx, `
		INSERT INTO recurring_due (user_id, due_at) VALUES ($1, $2)
		ON CONFLICT (user_id) DO UPDATE SET due_at = LEAST(recurring_due.due_at, EXCLUDED.due_at),
			generation = recurring_due.generation + 1`, userID, at)
	return err
}

// MarkRecurringDue implements recurring.Store.
func (s *Store) MarkRecurringDue(ctx context.Context, userID string, at time.Time) error {
	if !isUUID(userID) {
		return fmt.Errorf("postgres: mark recurring due: user %q: %w", userID, finance.ErrNotFound)
	}
	return storeErr("mark recurring due", markRecurringDue(ctx, s.pool, userID, at))
}

// RecurringDue implements recurring.Store.
func (s *Store) RecurringDue(ctx context.Context, userID string) (recurring.Mark, bool, error) {
	m := recurring.Mark{UserID: userID}
	if !isUUID(userID) {
		return m, false, nil
	}
	err := s.pool.QueryRow(ctx, `SELECT due_at, generation FROM recurring_due WHERE user_id = $1`, userID).
		Scan(&m.DueAt, &m.Generation)
	if errors.Is(err, pgx.ErrNoRows) {
		return m, false, nil
	}
	if err != nil {
		return m, false, storeErr("recurring due", err)
	}
	return m, true, nil
}

// ClaimRecurringDue implements recurring.Store in one statement, so the
// claim is not held open during detection: the lease (claimed_until) keeps
// other replicas off the user, and SKIP LOCKED lets a replica pass over
// rows another replica is claiming, or a sync is marking, this instant
// instead of waiting for them.
func (s *Store) ClaimRecurringDue(ctx context.Context, now, leaseUntil time.Time, limit int) ([]recurring.Mark, error) {
	if limit <= 0 {
		limit = math.MaxInt32
	}
	rows, err := s.pool.Query(ctx, `
		UPDATE recurring_due d SET claimed_until = $2
		FROM (SELECT user_id FROM recurring_due
			WHERE due_at <= $1 AND (claimed_until IS NULL OR claimed_until <= $1)
			ORDER BY due_at, user_id LIMIT $3
			FOR UPDATE SKIP LOCKED) c
		WHERE d.user_id = c.user_id
		RETURNING d.user_id::text, d.due_at, d.generation`, now, leaseUntil, limit)
	if err != nil {
		return nil, storeErr("claim recurring due", err)
	}
	marks, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (recurring.Mark, error) {
		var m recurring.Mark
		err := r.Scan(&m.UserID, &m.DueAt, &m.Generation)
		return m, err
	})
	if err != nil {
		return nil, storeErr("claim recurring due", err)
	}
	// RETURNING keeps no order.
	slices.SortFunc(marks, func(a, b recurring.Mark) int {
		return cmp.Or(a.DueAt.Compare(b.DueAt), cmp.Compare(a.UserID, b.UserID))
	})
	return marks, nil
}

// ClearRecurringDue implements recurring.Store in two statements, each on a
// fresh snapshot (read committed): the delete matches only the claimed
// generation (a sync upserting the mark at that moment holds its row lock;
// the delete waits, re-checks the bumped generation and misses); the update
// then sees the committed re-mark and frees it for the next run. No other
// replica can claim the user in between: the lease still holds.
func (s *Store) ClearRecurringDue(ctx context.Context, m recurring.Mark, now time.Time) (bool, error) {
	if !isUUID(m.UserID) {
		return false, nil
	}
	// The run is recorded in the same statement: a finished detection and
	// its time go together (GREATEST: a replica with an older clock does
	// not move it back).
	tag, err := s.pool.Exec(ctx, `WITH ran AS (
			INSERT INTO recurring_runs (user_id, last_run_at) SELECT id, $3 FROM users WHERE id = $1
			ON CONFLICT (user_id) DO UPDATE SET last_run_at = GREATEST(recurring_runs.last_run_at, EXCLUDED.last_run_at))
		DELETE FROM recurring_due WHERE user_id = $1 AND generation = $2`, m.UserID, m.Generation, now)
	if err != nil {
		return false, storeErr("clear recurring due", err)
	}
	if tag.RowsAffected() > 0 {
		return true, nil
	}
	_, err = s.pool.Exec(ctx, `UPDATE recurring_due SET due_at = $2, claimed_until = NULL WHERE user_id = $1`, m.UserID, now)
	return false, storeErr("free recurring due", err)
}

// RecurringLastRun implements recurring.Store.
func (s *Store) RecurringLastRun(ctx context.Context, userID string) (*time.Time, error) {
	if !isUUID(userID) {
		return nil, nil
	}
	var at time.Time
	err := s.pool.QueryRow(ctx, `SELECT last_run_at FROM recurring_runs WHERE user_id = $1`, userID).Scan(&at)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, storeErr("recurring last run", err)
	}
	return &at, nil
}

// ReleaseRecurringDue implements recurring.Store.
func (s *Store) ReleaseRecurringDue(ctx context.Context, userID string, retryAt time.Time) error {
	if !isUUID(userID) {
		return nil
	}
	_, err := s.pool.Exec(ctx, `UPDATE recurring_due SET claimed_until = $2 WHERE user_id = $1`, userID, retryAt)
	return storeErr("release recurring due", err)
}

// CreateRecurringRule implements recurring.Store.
func (s *Store) CreateRecurringRule(ctx context.Context, r recurring.Rule) error {
	_, err := s.pool.Exec(ctx, `
		INSERT INTO recurring_rules (`+ruleColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)`, ruleArgs(r)...)
	return storeErr("create recurring rule", err)
}

// ListRecurringRules implements recurring.Store.
func (s *Store) ListRecurringRules(ctx context.Context, userID string) ([]recurring.Rule, error) {
	if !isUUID(userID) {
		return nil, nil
	}
	rows, err := s.pool.Query(ctx, `
		SELECT id::text, user_id::text, COALESCE(account_id::text, ''), COALESCE(category_id::text, ''),
			COALESCE(merchant, ''), COALESCE(display_name, ''), expected_amount::text, expected_currency, frequency,
			stream_type, next_expected_date, last_seen_date, COALESCE(logo_url, ''), is_active, created_at, updated_at,
			COALESCE(status, ''), occurrences
		FROM recurring_rules WHERE user_id = $1 ORDER BY next_expected_date, id`, userID)
	if err != nil {
		return nil, storeErr("list recurring rules", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (recurring.Rule, error) {
		var (
			r      recurring.Rule
			amount string
		)
		err := row.Scan(&r.ID, &r.UserID, &r.AccountID, &r.CategoryID, &r.Merchant, &r.DisplayName, &amount,
			&r.ExpectedAmount.Currency, &r.Frequency, &r.StreamType, &r.NextExpectedDate, &r.LastSeenDate,
			&r.LogoURL, &r.IsActive, &r.CreatedAt, &r.UpdatedAt, &r.Status, &r.Occurrences)
		if err != nil {
			return r, err
		}
		r.ExpectedAmount.Amount, err = decimal.NewFromString(amount)
		return r, err
	})
	return out, storeErr("list recurring rules", err)
}
