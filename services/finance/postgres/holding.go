package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/ledgerlane/platform/pkg/pg"
	"github.com/ledgerlane/platform/services/finance"
	"github.com/ledgerlane/platform/services/finance/networth"
)

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
