package memory

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ledgerlane/platform/services/finance"
	"github.com/ledgerlane/platform/services/finance/networth"
)

// holdingState holds holdings and the price table; its maps are made on
// first write, under the store's lock.
type holdingState struct {
	holdings map[string]networth.Holding
	prices   map[string]networth.SecurityPrice // by ticker|currency|date
}

func priceKey(p networth.SecurityPrice) string {
	return p.Ticker + "|" + p.Currency + "|" + finance.Day(p.Date).Format(finance.DateLayout)
}

func cloneHolding(h networth.Holding) networth.Holding {
	h.CostBasis = copyPtr(h.CostBasis)
	h.AcquiredAt = tsPtr(h.AcquiredAt)
	h.CreatedAt, h.UpdatedAt = ts(h.CreatedAt), ts(h.UpdatedAt)
	return h
}

// CreateHolding implements networth.Store.
func (s *Store) CreateHolding(_ context.Context, h networth.Holding) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a, ok := s.accounts[h.AccountID]; !ok || a.UserID != h.UserID {
		return fmt.Errorf("holding account %q: %w", h.AccountID, finance.ErrNotFound)
	}
	if s.holdings == nil {
		s.holdings = map[string]networth.Holding{}
	}
	if _, ok := s.holdings[h.ID]; ok {
		return fmt.Errorf("holding %q: %w", h.ID, finance.ErrAlreadyExists)
	}
	s.holdings[h.ID] = cloneHolding(h)
	return nil
}

// ListHoldings implements networth.Store.
func (s *Store) ListHoldings(_ context.Context, userID string, f networth.HoldingFilter, afterID string, limit int) ([]networth.Holding, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []networth.Holding
	for _, h := range s.holdings {
		if h.UserID != userID || slices.Contains(f.ExcludeAccountIDs, h.AccountID) ||
			(f.AccountID != "" && h.AccountID != f.AccountID) || (afterID != "" && h.ID <= afterID) {
			continue
		}
		out = append(out, cloneHolding(h))
	}
	slices.SortFunc(out, func(a, b networth.Holding) int { return strings.Compare(a.ID, b.ID) })
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// PutSecurityPrices implements networth.Store.
func (s *Store) PutSecurityPrices(_ context.Context, ps []networth.SecurityPrice) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.prices == nil {
		s.prices = map[string]networth.SecurityPrice{}
	}
	for _, p := range ps {
		p.Date = finance.Day(p.Date)
		s.prices[priceKey(p)] = p
	}
	return nil
}

// RecentSecurityPrices implements networth.Store.
func (s *Store) RecentSecurityPrices(_ context.Context, tickers []string, day time.Time) ([]networth.SecurityPrice, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	day = finance.Day(day)
	by := map[string][]networth.SecurityPrice{}
	for _, p := range s.prices {
		if slices.Contains(tickers, p.Ticker) && !p.Date.After(day) {
			k := p.Ticker + "|" + p.Currency
			by[k] = append(by[k], p)
		}
	}
	var out []networth.SecurityPrice
	for _, ps := range by {
		slices.SortFunc(ps, func(a, b networth.SecurityPrice) int { return b.Date.Compare(a.Date) })
		out = append(out, ps[:min(2, len(ps))]...)
	}
	return out, nil
}
