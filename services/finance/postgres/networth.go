package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/ledgerlane/platform/pkg/pg"
	"github.com/ledgerlane/platform/services/finance"
	"github.com/ledgerlane/platform/services/finance/networth"
)

// PutFXRates implements networth.Store.
func (s *Store) PutFXRates(ctx context.Context, rs []networth.FXRate) error {
	if len(rs) == 0 {
		return nil
	}
	return storeErr("put fx rates", pg.InTx(ctx, s.pool, func(dbtx pgx.Tx) error {
		b := &pgx.Batch{}
		for _, r := range rs {
			b.Queue(`INSERT INTO fx_rates (currency, rate_date, per_usd, source) VALUES ($1, $2, $3, $4)
				ON CONFLICT (currency, rate_date) DO UPDATE SET per_usd = EXCLUDED.per_usd, source = EXCLUDED.source`,
				r.Currency, finance.Day(r.Date), numeric(r.PerUSD), r.Source)
		}
		return dbtx.SendBatch(ctx, b).Close()
	}))
}

// FXRatesUpTo implements networth.Store.
func (s *Store) FXRatesUpTo(ctx context.Context, currencies []string, day time.Time) ([]networth.FXRate, error) {
	rows, err := s.pool.Query(ctx, `SELECT currency, rate_date, per_usd::text, source FROM fx_rates
		WHERE currency = ANY($1::text[]) AND rate_date <= $2 ORDER BY currency, rate_date`, currencies, finance.Day(day))
	if err != nil {
		return nil, storeErr("fx rates", err)
	}
	defer rows.Close()
	var out []networth.FXRate
	for rows.Next() {
		var (
			r    networth.FXRate
			rate string
		)
		if err := rows.Scan(&r.Currency, &r.Date, &rate, &r.Source); err != nil {
			return nil, storeErr("fx rates", err)
		}
		if r.PerUSD, err = decimal.NewFromString(rate); err != nil {
			return nil, storeErr("fx rates", err)
		}
		r.Date = finance.Day(r.Date)
		out = append(out, r)
	}
	return out, storeErr("fx rates", rows.Err())
}

type snapshotLine struct {
	Kind      string `json:"k"`
	AssetType string `json:"t"`
	Liquidity string `json:"l"`
	Subtype   string `json:"r,omitempty"`
	Currency  string `json:"c"`
	Amount    string `json:"a"`
}

// PutNetWorthSnapshot implements networth.Store.
func (s *Store) PutNetWorthSnapshot(ctx context.Context, sn networth.NetWorthSnapshot) (bool, error) {
	if !isUUID(sn.UserID) {
		return false, finance.ErrNotFound
	}
	lines := make([]snapshotLine, 0, len(sn.Lines))
	for _, l := range sn.Lines {
		lines = append(lines, snapshotLine{l.Kind, l.AssetType, l.Liquidity, l.RetirementSubtype, l.Currency, l.Amount.String()})
	}
	raw, err := json.Marshal(lines)
	if err != nil {
		return false, storeErr("put snapshot", err)
	}
	tag, err := s.pool.Exec(ctx, `INSERT INTO net_worth_snapshots (user_id, snapshot_date, lines, is_manual, taken_at)
		VALUES ($1, $2, $3, $4, $5) ON CONFLICT (user_id, snapshot_date) DO NOTHING`,
		sn.UserID, finance.Day(sn.Date), raw, sn.IsManual, sn.TakenAt)
	if err != nil {
		return false, storeErr("put snapshot", err)
	}
	return tag.RowsAffected() == 1, nil
}

// ListNetWorthSnapshots implements networth.Store.
func (s *Store) ListNetWorthSnapshots(ctx context.Context, userID string, from, to time.Time) ([]networth.NetWorthSnapshot, error) {
	if !isUUID(userID) {
		return nil, nil
	}
	// The lines are unpacked by PostgreSQL (one row per line; a snapshot
	// without lines is one row of NULLs): five years of snapshots decoded by
	// encoding/json were most of a history read.
	rows, err := s.pool.Query(ctx, `SELECT s.snapshot_date, s.is_manual, s.taken_at, l.k, l.t, l.l, l.r, l.c, l.a
		FROM net_worth_snapshots s
		LEFT JOIN LATERAL jsonb_to_recordset(s.lines) AS l(k text, t text, l text, r text, c text, a text) ON true
		WHERE s.user_id = $1 AND s.snapshot_date BETWEEN $2 AND $3 ORDER BY s.snapshot_date`,
		userID, finance.Day(from), finance.Day(to))
	if err != nil {
		return nil, storeErr("list snapshots", err)
	}
	defer rows.Close()
	var out []networth.NetWorthSnapshot
	for rows.Next() {
		var (
			date, taken      time.Time
			manual           bool
			k, t, l, r, c, a *string
		)
		if err := rows.Scan(&date, &manual, &taken, &k, &t, &l, &r, &c, &a); err != nil {
			return nil, storeErr("list snapshots", err)
		}
		date = finance.Day(date)
		if n := len(out); n == 0 || !out[n-1].Date.Equal(date) {
			out = append(out, networth.NetWorthSnapshot{UserID: userID, Date: date, IsManual: manual, TakenAt: taken})
		}
		if a == nil {
			continue
		}
		amt, err := decimal.NewFromString(*a)
		if err != nil {
			return nil, storeErr("list snapshots: line amount", err)
		}
		sn := &out[len(out)-1]
		sn.Lines = append(sn.Lines, networth.NetWorthLine{Kind: deref(k), AssetType: deref(t), Liquidity: deref(l),
			RetirementSubtype: deref(r), Currency: deref(c), Amount: amt})
	}
	return out, storeErr("list snapshots", rows.Err())
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// UsersWithoutSnapshot implements networth.Store: an anti-join on the
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
		return nil, storeErr("users without snapshot", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	return ids, storeErr("users without snapshot", err)
}

// BalanceFlows implements networth.Store. One pass over the user's rows
// after the day, read from the covering index of budget rows
// (transactions_user_date_budget_idx: date, account, amount, currency,
// is_pending and split_parent_id are in it), summed here.
func (s *Store) BalanceFlows(ctx context.Context, userID string, after time.Time) ([]networth.BalanceFlow, error) {
	if !isUUID(userID) {
		return nil, nil
	}
	return pg.All(ctx, s.pool, storeErr, "balance flows", func(row pgx.CollectableRow) (networth.BalanceFlow, error) {
		var (
			f   networth.BalanceFlow
			net string
		)
		if err := row.Scan(&f.AccountID, &f.Currency, &f.Date, &net); err != nil {
			return f, err
		}
		f.Date = finance.Day(f.Date)
		var err error
		f.Net, err = decimal.NewFromString(net)
		return f, err
	}, `SELECT account_id::text, currency, date, sum(amount)::text
		FROM transactions WHERE user_id = $1 AND date > $2 AND NOT is_pending AND split_parent_id IS NULL
		GROUP BY account_id, currency, date`, userID, finance.Day(after))
}

// FirstPostedDay implements networth.Store.
func (s *Store) FirstPostedDay(ctx context.Context, userID string) (*time.Time, error) {
	if !isUUID(userID) {
		return nil, nil
	}
	var first *time.Time
	err := s.pool.QueryRow(ctx, `SELECT min(date) FROM transactions
		WHERE user_id = $1 AND NOT is_pending AND split_parent_id IS NULL`, userID).Scan(&first)
	if err != nil {
		return nil, storeErr("first posted day", err)
	}
	if first != nil {
		d := finance.Day(*first)
		first = &d
	}
	return first, nil
}
