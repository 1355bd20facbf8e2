package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/shopspring/decimal"

	"github.com/ledgerlane/platform/services/finance"
	"github.com/ledgerlane/platform/services/finance/debt"
)

// PutLiability implements finance.Store.
func (s *Store) PutLiability(ctx context.Context, l debt.Liability) error {
	if !isUUID(l.AccountID) || !isUUID(l.UserID) {
		return fmt.Errorf("liability %q: %w", l.AccountID, finance.ErrNotFound)
	}
	decPtr := func(d *decimal.Decimal) any {
		if d == nil {
			return nil
		}
		return numeric(*d)
	}
	tag, err := s.pool.Exec(ctx, `
		INSERT INTO liabilities (account_id, user_id, apr, promo_apr, promo_ends_on, min_payment_floor,
			min_payment_percent, created_at, updated_at)
		SELECT a.id, a.user_id, $3, $4, $5, $6, $7, $8, $9 FROM accounts a WHERE a.id = $1 AND a.user_id = $2
		ON CONFLICT (account_id) DO UPDATE SET apr = EXCLUDED.apr, promo_apr = EXCLUDED.promo_apr,
			promo_ends_on = EXCLUDED.promo_ends_on, min_payment_floor = EXCLUDED.min_payment_floor,
			min_payment_percent = EXCLUDED.min_payment_percent, updated_at = EXCLUDED.updated_at`,
		l.AccountID, l.UserID, decPtr(l.APR), decPtr(l.PromoAPR), dayPtr(l.PromoEndsOn),
		numeric(l.MinPaymentFloor), numeric(l.MinPaymentPercent), l.CreatedAt, l.UpdatedAt)
	if err != nil {
		return storeErr("put liability", err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("liability %q: %w", l.AccountID, finance.ErrNotFound)
	}
	return nil
}

// ListLiabilities implements finance.Store.
func (s *Store) ListLiabilities(ctx context.Context, userID string) ([]debt.Liability, error) {
	if !isUUID(userID) {
		return nil, nil
	}
	rows, err := s.pool.Query(ctx, `
		SELECT account_id::text, user_id::text, apr::text, promo_apr::text, promo_ends_on,
			min_payment_floor::text, min_payment_percent::text, created_at, updated_at
		FROM liabilities WHERE user_id = $1 ORDER BY account_id`, userID)
	if err != nil {
		return nil, storeErr("list liabilities", err)
	}
	defer rows.Close()
	var out []debt.Liability
	for rows.Next() {
		var (
			l              debt.Liability
			apr, promo     *string
			ends           *time.Time
			floor, percent string
		)
		if err := rows.Scan(&l.AccountID, &l.UserID, &apr, &promo, &ends, &floor, &percent, &l.CreatedAt, &l.UpdatedAt); err != nil {
			return nil, storeErr("list liabilities", err)
		}
		if l.APR, err = optDecimal(apr); err != nil {
			return nil, storeErr("list liabilities", err)
		}
		if l.PromoAPR, err = optDecimal(promo); err != nil {
			return nil, storeErr("list liabilities", err)
		}
		if ends != nil {
			d := finance.Day(*ends)
			l.PromoEndsOn = &d
		}
		if l.MinPaymentFloor, err = decimal.NewFromString(floor); err != nil {
			return nil, storeErr("list liabilities", err)
		}
		if l.MinPaymentPercent, err = decimal.NewFromString(percent); err != nil {
			return nil, storeErr("list liabilities", err)
		}
		out = append(out, l)
	}
	return out, storeErr("list liabilities", rows.Err())
}

func optDecimal(s *string) (*decimal.Decimal, error) {
	if s == nil {
		return nil, nil
	}
	d, err := decimal.NewFromString(*s)
	if err != nil {
		return nil, err
	}
	return &d, nil
}
