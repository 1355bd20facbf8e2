package postgres

import (
	"context"
	"encoding/json"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/ledgerlane/platform/pkg/pg"
	"github.com/ledgerlane/platform/services/finance"
)

// PutFXRates implements finance.Store.
func (s *Store) PutFXRates(ctx context.Context, rs []finance.FXRate) error {
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

// FXRatesUpTo implements finance.Store.
func (s *Store) FXRatesUpTo(ctx context.Context, currencies []string, day time.Time) ([]finance.FXRate, error) {
	rows, err := s.pool.Query(ctx, `SELECT currency, rate_date, per_usd::text, source FROM fx_rates
		WHERE currency = ANY($1::text[]) AND rate_date <= $2 ORDER BY currency, rate_date`, currencies, finance.Day(day))
	if err != nil {
		return nil, storeErr("fx rates", err)
	}
	defer rows.Close()
	var out []finance.FXRate
	for rows.Next() {
		var (
			r    finance.FXRate
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

// PutNetWorthSnapshot implements finance.Store.
func (s *Store) PutNetWorthSnapshot(ctx context.Context, sn finance.NetWorthSnapshot) (bool, error) {
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

// ListNetWorthSnapshots implements finance.Store.
func (s *Store) ListNetWorthSnapshots(ctx context.Context, userID string, from, to time.Time) ([]finance.NetWorthSnapshot, error) {
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
	var out []finance.NetWorthSnapshot
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
			out = append(out, finance.NetWorthSnapshot{UserID: userID, Date: date, IsManual: manual, TakenAt: taken})
		}
		if a == nil {
			continue
		}
		amt, err := decimal.NewFromString(*a)
		if err != nil {
			return nil, storeErr("list snapshots: line amount", err)
		}
		sn := &out[len(out)-1]
		sn.Lines = append(sn.Lines, finance.NetWorthLine{Kind: deref(k), AssetType: deref(t), Liquidity: deref(l),
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
