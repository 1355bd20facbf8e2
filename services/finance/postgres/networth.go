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

// CreateHolding implements networth.Store.
func (s *Store) CreateHolding(ctx context.Context, h networth.Holding) error {
	if !isUUID(h.AccountID) || !isUUID(h.UserID) {
		return fmt.Errorf("holding account %q: %w", h.AccountID, finance.ErrNotFound)
	}
	var basis any
	if h.CostBasis != nil {
		basis = numeric(*h.CostBasis)
	}
	tag, err := s.pool.Exec(ctx, `
		INSERT INTO holdings (id, user_id, account_id, asset_type, ticker, name, quantity, cost_basis,
			cost_basis_method, currency, data_source, retirement_subtype, notes, acquired_at, created_at, updated_at)
		SELECT $1, a.user_id, a.id, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16
		FROM accounts a WHERE a.id = $3 AND a.user_id = $2`,
		h.ID, h.UserID, h.AccountID, h.AssetType, h.Ticker, h.Name, numeric(h.Quantity), basis, h.CostBasisMethod,
		h.Currency, h.DataSource, h.RetirementSubtype, h.Notes, h.AcquiredAt, h.CreatedAt, h.UpdatedAt)
	if err != nil {
		return storeErr("create holding", err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("holding account %q: %w", h.AccountID, finance.ErrNotFound)
	}
	return nil
}

// ListHoldings implements networth.Store.
func (s *Store) ListHoldings(ctx context.Context, userID string, f networth.HoldingFilter, afterID string, limit int) ([]networth.Holding, error) {
	if !isUUID(userID) || (f.AccountID != "" && !isUUID(f.AccountID)) {
		return nil, nil
	}
	q := &query{args: []any{userID}}
	q.sql.WriteString(`SELECT id::text, user_id::text, account_id::text, asset_type, ticker, name, quantity::text,
		cost_basis::text, cost_basis_method, currency, data_source, retirement_subtype, notes, acquired_at,
		created_at, updated_at FROM holdings WHERE user_id = $1`)
	if f.AccountID != "" {
		q.where("account_id = %s", f.AccountID)
	}
	if len(f.ExcludeAccountIDs) > 0 {
		q.where("NOT (account_id = ANY(%s::uuid[]))", f.ExcludeAccountIDs)
	}
	if afterID != "" {
		q.where("id > %s", uuidOrZero(afterID))
	}
	q.sql.WriteString(" ORDER BY id")
	q.limit(limit)
	rows, err := s.pool.Query(ctx, q.sql.String(), q.args...)
	if err != nil {
		return nil, storeErr("list holdings", err)
	}
	defer rows.Close()
	var out []networth.Holding
	for rows.Next() {
		var (
			h        networth.Holding
			qty      string
			basis    *string
			acquired *time.Time
		)
		if err := rows.Scan(&h.ID, &h.UserID, &h.AccountID, &h.AssetType, &h.Ticker, &h.Name, &qty, &basis,
			&h.CostBasisMethod, &h.Currency, &h.DataSource, &h.RetirementSubtype, &h.Notes, &acquired,
			&h.CreatedAt, &h.UpdatedAt); err != nil {
			return nil, storeErr("list holdings", err)
		}
		if h.Quantity, err = decimal.NewFromString(qty); err != nil {
			return nil, storeErr("list holdings", err)
		}
		if h.CostBasis, err = optDecimal(basis); err != nil {
			return nil, storeErr("list holdings", err)
		}
		h.AcquiredAt = acquired
		out = append(out, h)
	}
	return out, storeErr("list holdings", rows.Err())
}

// PutSecurityPrices implements networth.Store.
func (s *Store) PutSecurityPrices(ctx context.Context, ps []networth.SecurityPrice) error {
	if len(ps) == 0 {
		return nil
	}
	return storeErr("put prices", pg.InTx(ctx, s.pool, func(dbtx pgx.Tx) error {
		b := &pgx.Batch{}
		for _, p := range ps {
			b.Queue(`INSERT INTO security_prices (ticker, currency, price_date, price, source)
				VALUES ($1, $2, $3, $4, $5)
				ON CONFLICT (ticker, currency, price_date) DO UPDATE SET price = EXCLUDED.price, source = EXCLUDED.source`,
				p.Ticker, p.Currency, finance.Day(p.Date), numeric(p.Price), p.Source)
		}
		return dbtx.SendBatch(ctx, b).Close()
	}))
}

// RecentSecurityPrices implements networth.Store: per (ticker, currency),
// the two latest rows on or before day, each pair read backwards through
// the primary key.
func (s *Store) RecentSecurityPrices(ctx context.Context, tickers []string, day time.Time) ([]networth.SecurityPrice, error) {
	if len(tickers) == 0 {
		return nil, nil
	}
	rows, err := s.pool.Query(ctx, `
		SELECT p.ticker, p.currency, p.price_date, p.price::text, p.source
		FROM (SELECT DISTINCT ticker, currency FROM security_prices WHERE ticker = ANY($1::text[])) k
		CROSS JOIN LATERAL (
			SELECT * FROM security_prices sp
			WHERE sp.ticker = k.ticker AND sp.currency = k.currency AND sp.price_date <= $2
			ORDER BY sp.price_date DESC LIMIT 2) p`, tickers, finance.Day(day))
	if err != nil {
		return nil, storeErr("recent prices", err)
	}
	defer rows.Close()
	var out []networth.SecurityPrice
	for rows.Next() {
		var (
			p     networth.SecurityPrice
			price string
		)
		if err := rows.Scan(&p.Ticker, &p.Currency, &p.Date, &price, &p.Source); err != nil {
			return nil, storeErr("recent prices", err)
		}
		if p.Price, err = decimal.NewFromString(price); err != nil {
			return nil, storeErr("recent prices", err)
		}
		p.Date = finance.Day(p.Date)
		out = append(out, p)
	}
	return out, storeErr("recent prices", rows.Err())
}
