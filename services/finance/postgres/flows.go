package postgres

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/ledgerlane/platform/services/finance"
)

// The flow totals are kept by triggers (migration 00011): per day in
// transaction_day_totals, per month in transaction_month_totals. A range
// reads whole months from the second and the days before and after them
// from the first, so a year is about a dozen months' totals plus two
// partial months' days.

const uncategorized = "00000000-0000-0000-0000-000000000000"

// flowWhere appends q's conditions (not its dates) to sql.
func flowWhere(sql *strings.Builder, args *[]any, q finance.FlowQuery) bool {
	add := func(cond string, v any) {
		*args = append(*args, v)
		sql.WriteString(" AND " + strings.ReplaceAll(cond, "?", "$"+strconv.Itoa(len(*args))))
	}
	if q.AccountIDs != nil {
		ids := uuids(q.AccountIDs)
		if len(ids) == 0 {
			return false
		}
		add("account_id = ANY(?::uuid[])", ids)
	}
	if q.Currency != "" {
		add("currency = ?", q.Currency)
	}
	if q.CountedOnly {
		sql.WriteString(" AND counted")
	}
	if q.CategoryIDs != nil {
		ids := make([]string, 0, len(q.CategoryIDs))
		for _, id := range q.CategoryIDs {
			if id == "" {
				ids = append(ids, uncategorized)
			} else if isUUID(id) {
				ids = append(ids, id)
			}
		}
		if len(ids) == 0 {
			return false
		}
		add("category_id = ANY(?::uuid[])", ids)
	}
	if ids := uuids(q.ExcludeAccountIDs); len(ids) > 0 {
		add("account_id <> ALL(?::uuid[])", ids)
	}
	if ids := uuids(q.ExcludeCategoryIDs); len(ids) > 0 {
		add("category_id <> ALL(?::uuid[])", ids)
	}
	return true
}

// fullMonths is the whole calendar months within [from, to]: [start, end),
// both the 1st of a month; start == end when there are none, and then
// both are the day after to.
func fullMonths(from, to time.Time) (time.Time, time.Time) {
	from, to = finance.Day(from), finance.Day(to)
	start := time.Date(from.Year(), from.Month(), 1, 0, 0, 0, 0, time.UTC)
	if !start.Equal(from) {
		start = start.AddDate(0, 1, 0)
	}
	after := to.AddDate(0, 0, 1)
	end := time.Date(after.Year(), after.Month(), 1, 0, 0, 0, 0, time.UTC)
	if !start.Before(end) {
		return after, after
	}
	return start, end
}

// SumFlows implements finance.Store.
func (s *Store) SumFlows(ctx context.Context, userID string, q finance.FlowQuery) ([]finance.FlowTotal, error) {
	if !isUUID(userID) || q.To.Before(q.From) {
		return nil, nil
	}
	from, to := finance.Day(q.From), finance.Day(q.To)
	start, end := fullMonths(from, to)
	args := []any{userID, from, start, end, to}
	var days, months strings.Builder
	days.WriteString(`SELECT date_trunc('month', day)::date AS month, account_id, category_id, currency, counted, net, n, n_in, n_out
		FROM transaction_day_totals WHERE user_id = $1 AND ((day >= $2 AND day < $3) OR (day >= $4 AND day <= $5))`)
	if !flowWhere(&days, &args, q) {
		return nil, nil
	}
	months.WriteString(` UNION ALL SELECT month, account_id, category_id, currency, counted, net, n, n_in, n_out
		FROM transaction_month_totals WHERE user_id = $1 AND month >= $3 AND month < $4`)
	flowWhere(&months, &args, q)
	month := "NULL::date"
	if q.ByMonth {
		month = "month"
	}
	sql := `SELECT ` + month + `, account_id::text, category_id::text, currency, counted, sum(net)::text, sum(n), sum(n_in), sum(n_out)
		FROM (` + days.String() + months.String() + `) t GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5`
	rows, err := s.pool.Query(ctx, sql, args...)
	if err != nil {
		return nil, storeErr("sum flows", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (finance.FlowTotal, error) {
		var (
			t   finance.FlowTotal
			m   *time.Time
			net string
		)
		if err := r.Scan(&m, &t.AccountID, &t.CategoryID, &t.Currency, &t.Counted, &net, &t.Rows, &t.Inflows, &t.Outflows); err != nil {
			return t, err
		}
		if m != nil {
			t.Month = *m
		}
		if t.CategoryID == uncategorized {
			t.CategoryID = ""
		}
		var err error
		t.Net, err = decimal.NewFromString(net)
		return t, err
	})
	return out, storeErr("sum flows", err)
}

// LastFlowDay implements finance.Store: the newest day total with a row of
// the sign asked, found backwards along an index.
func (s *Store) LastFlowDay(ctx context.Context, userID string, q finance.FlowQuery, inflow bool) (*time.Time, error) {
	if !isUUID(userID) {
		return nil, nil
	}
	args := []any{userID, finance.Day(q.From), finance.Day(q.To)}
	var sql strings.Builder
	sql.WriteString(`SELECT day FROM transaction_day_totals WHERE user_id = $1 AND day >= $2 AND day <= $3`)
	if inflow {
		sql.WriteString(" AND n_in > 0")
	} else {
		sql.WriteString(" AND n_out > 0")
	}
	if !flowWhere(&sql, &args, q) {
		return nil, nil
	}
	sql.WriteString(" ORDER BY day DESC LIMIT 1")
	var day time.Time
	err := s.pool.QueryRow(ctx, sql.String(), args...).Scan(&day)
	if err == pgx.ErrNoRows {
		return nil, nil
	}
	if err != nil {
		return nil, storeErr("last flow day", err)
	}
	return &day, nil
}

// FlowVersion implements finance.Store: the versions of the months the
// range touches, which the triggers bump on every write of a row dated in
// them.
func (s *Store) FlowVersion(ctx context.Context, userID string, from, to time.Time) (string, error) {
	if !isUUID(userID) {
		return "", nil
	}
	var v string
	err := s.pool.QueryRow(ctx, `SELECT COALESCE(string_agg(month::text || '=' || version::text, ',' ORDER BY month), '')
		FROM transaction_month_versions WHERE user_id = $1 AND month >= date_trunc('month', $2::date) AND month <= $3`,
		userID, finance.Day(from), finance.Day(to)).Scan(&v)
	return v, storeErr("flow version", err)
}

// ListAnomalyCandidates implements finance.Store: a join of the period's
// rows (an index-only scan of transactions_user_date_budget_idx) with the
// floors, so only the few rows above them leave the database.
func (s *Store) ListAnomalyCandidates(ctx context.Context, userID string, f finance.TransactionFilter, floors map[string]decimal.Decimal) ([]finance.BudgetRow, error) {
	cats, vals := make([]string, 0, len(floors)), make([]string, 0, len(floors))
	for c, v := range floors {
		if isUUID(c) {
			cats, vals = append(cats, c), append(vals, numeric(v))
		}
	}
	if !isUUID(userID) || len(cats) == 0 {
		return nil, nil
	}
	args := []any{userID, cats, vals}
	var sql strings.Builder
	sql.WriteString(`SELECT t.id::text, t.account_id::text, t.category_id::text, COALESCE(t.merchant, ''),
		COALESCE(t.provider_merchant_name, ''), t.amount::text,
		t.currency, t.date, t.is_pending, COALESCE(t.transfer_pair_id::text, ''), COALESCE(t.split_parent_id::text, '')
		FROM transactions t JOIN unnest($2::uuid[], $3::numeric[]) AS f(category_id, floor) ON t.category_id = f.category_id
		WHERE t.user_id = $1 AND NOT t.has_slices AND -t.amount > f.floor`)
	add := func(cond string, v any) {
		args = append(args, v)
		sql.WriteString(" AND " + strings.ReplaceAll(cond, "?", "$"+strconv.Itoa(len(args))))
	}
	if !f.StartDate.IsZero() {
		add("t.date >= ?", finance.Day(f.StartDate))
	}
	if !f.EndDate.IsZero() {
		add("t.date <= ?", finance.Day(f.EndDate))
	}
	if ids := uuids(f.ExcludeAccountIDs); len(ids) > 0 {
		add("t.account_id <> ALL(?::uuid[])", ids)
	}
	if ids := uuids(f.ExcludeCategoryIDs); len(ids) > 0 {
		add("t.category_id <> ALL(?::uuid[])", ids)
	}
	rows, err := s.pool.Query(ctx, sql.String(), args...)
	if err != nil {
		return nil, storeErr("list anomaly candidates", err)
	}
	out, err := pgx.CollectRows(rows, scanBudgetRow)
	return out, storeErr("list anomaly candidates", err)
}

// ListBudgetRows implements finance.Store: the listing's conditions, only
// the counted columns (transactions_user_date_budget_idx covers them).
func (s *Store) ListBudgetRows(ctx context.Context, userID string, f finance.TransactionFilter) ([]finance.BudgetRow, error) {
	q, ok := txQuery(`SELECT id::text, account_id::text, COALESCE(category_id::text, ''), COALESCE(merchant, ''),
		COALESCE(provider_merchant_name, ''), amount::text,
		currency, date, is_pending, COALESCE(transfer_pair_id::text, ''), COALESCE(split_parent_id::text, '')`, userID, f, nil, "")
	if !ok {
		return nil, nil
	}
	rows, err := s.pool.Query(ctx, q.sql.String(), q.args...)
	if err != nil {
		return nil, storeErr("list budget rows", err)
	}
	out, err := pgx.CollectRows(rows, scanBudgetRow)
	return out, storeErr("list budget rows", err)
}

func scanBudgetRow(r pgx.CollectableRow) (finance.BudgetRow, error) {
	var (
		b      finance.BudgetRow
		amount string
	)
	if err := r.Scan(&b.ID, &b.AccountID, &b.CategoryID, &b.Merchant, &b.BankMerchant, &amount, &b.Amount.Currency, &b.Date, &b.IsPending,
		&b.TransferPairID, &b.SplitParentID); err != nil {
		return b, err
	}
	var err error
	b.Amount.Amount, err = decimal.NewFromString(amount)
	return b, err
}
