package memory

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/ledgerlane/platform/services/finance"
)

// userRows is every row of the user, narrow (the caller holds s.mu).
func (s *Store) userRows(userID string) []finance.BudgetRow {
	var out []finance.BudgetRow
	for _, t := range s.transactions {
		if t.UserID == userID {
			out = append(out, finance.BudgetRow{ID: t.ID, AccountID: t.AccountID, CategoryID: t.CategoryID,
				Merchant: t.Merchant, Amount: t.Amount, Date: t.Date, IsPending: t.IsPending,
				TransferPairID: t.TransferPairID, SplitParentID: t.SplitParentID})
		}
	}
	return out
}

// SumFlows implements finance.Store by summing the rows (no scale here).
func (s *Store) SumFlows(_ context.Context, userID string, q finance.FlowQuery) ([]finance.FlowTotal, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return finance.SumFlowRows(s.userRows(userID), q), nil
}

// LastFlowDay implements finance.Store.
func (s *Store) LastFlowDay(_ context.Context, userID string, q finance.FlowQuery, inflow bool) (*time.Time, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return finance.LastFlowRow(s.userRows(userID), q, inflow), nil
}

// FlowVersion implements finance.Store: a digest of the counted columns of
// the user's rows dated in [from, to] and of whether each has slices, so it
// changes exactly when a figure read from them can.
func (s *Store) FlowVersion(_ context.Context, userID string, from, to time.Time) (string, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	rows := s.userRows(userID)
	sliced := finance.SlicedParents(rows)
	h := sha256.New()
	from, to = finance.Day(from), finance.Day(to)
	slices.SortFunc(rows, func(a, b finance.BudgetRow) int { return strings.Compare(a.ID, b.ID) })
	for _, r := range rows {
		if d := finance.Day(r.Date); d.Before(from) || d.After(to) {
			continue
		}
		fmt.Fprintf(h, "%s|%s|%s|%s|%s|%s|%s|%s|%t|%s\n", r.ID, r.AccountID, r.CategoryID, r.Merchant,
			r.Amount.Amount, r.Amount.Currency, r.Date.Format(time.DateOnly), r.TransferPairID, sliced[r.ID], r.SplitParentID)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// ListAnomalyCandidates implements finance.Store.
func (s *Store) ListAnomalyCandidates(_ context.Context, userID string, f finance.TransactionFilter, floors map[string]decimal.Decimal) ([]finance.BudgetRow, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	rows := s.userRows(userID)
	sliced := finance.SlicedParents(rows)
	var out []finance.BudgetRow
	for _, t := range s.transactions {
		if t.UserID != userID || !matches(t, f) || sliced[t.ID] {
			continue
		}
		floor, ok := floors[t.CategoryID]
		if !ok || !t.Amount.Amount.Neg().GreaterThan(floor) {
			continue
		}
		out = append(out, budgetRow(t))
	}
	return out, nil
}

// ListBudgetRows implements finance.Store.
func (s *Store) ListBudgetRows(_ context.Context, userID string, f finance.TransactionFilter) ([]finance.BudgetRow, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []finance.BudgetRow
	for _, t := range s.transactions {
		if t.UserID != userID || !matches(t, f) {
			continue
		}
		out = append(out, budgetRow(t))
	}
	return out, nil
}
