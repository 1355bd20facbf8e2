package memory

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ledgerlane/platform/pkg/memtable"
	"github.com/ledgerlane/platform/services/finance"
	"github.com/ledgerlane/platform/services/finance/networth"
)

// netWorthState holds FX rates and net-worth snapshots; its maps are made
// on first write, under the store's lock.
type netWorthState struct {
	fxRates     map[string]networth.FXRate           // by currency|date
	nwSnapshots map[string]networth.NetWorthSnapshot // by user|date
}

func cloneSnapshot(s networth.NetWorthSnapshot) networth.NetWorthSnapshot {
	s.Lines = slices.Clone(s.Lines)
	s.Date = finance.Day(s.Date)
	s.TakenAt = ts(s.TakenAt)
	return s
}

// PutFXRates implements networth.Store.
func (s *Store) PutFXRates(_ context.Context, rs []networth.FXRate) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range rs {
		r.Date = finance.Day(r.Date)
		s.fxRates[r.Currency+"|"+r.Date.Format(finance.DateLayout)] = r
	}
	return nil
}

// FXRatesUpTo implements networth.Store.
func (s *Store) FXRatesUpTo(_ context.Context, currencies []string, day time.Time) ([]networth.FXRate, error) {
	day = finance.Day(day)
	return memtable.Collect(&s.mu, &s.fxRates, func(r networth.FXRate) bool { return slices.Contains(currencies, r.Currency) && !r.Date.After(day) },
		memtable.Same, func(a, b networth.FXRate) int {
			return cmp.Or(strings.Compare(a.Currency, b.Currency), a.Date.Compare(b.Date))
		}), nil
}

// PutNetWorthSnapshot implements networth.Store.
func (s *Store) PutNetWorthSnapshot(_ context.Context, sn networth.NetWorthSnapshot) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := sn.UserID + "|" + finance.Day(sn.Date).Format(finance.DateLayout)
	if _, ok := s.nwSnapshots[k]; ok {
		return false, nil
	}
	s.nwSnapshots[k] = cloneSnapshot(sn)
	return true, nil
}

// ListNetWorthSnapshots implements networth.Store.
func (s *Store) ListNetWorthSnapshots(_ context.Context, userID string, from, to time.Time) ([]networth.NetWorthSnapshot, error) {
	from, to = finance.Day(from), finance.Day(to)
	keep := func(sn networth.NetWorthSnapshot) bool {
		return sn.UserID == userID && !sn.Date.Before(from) && !sn.Date.After(to)
	}
	return memtable.Collect(&s.mu, &s.nwSnapshots, keep, cloneSnapshot,
		func(a, b networth.NetWorthSnapshot) int { return a.Date.Compare(b.Date) }), nil
}

// UsersWithoutSnapshot implements networth.Store.
func (s *Store) UsersWithoutSnapshot(_ context.Context, day time.Time, after string, limit int) ([]string, error) {
	s.mu.RLock()
	var ids []string
	for id := range s.users {
		if id > after {
			ids = append(ids, id)
		}
	}
	s.mu.RUnlock()
	slices.Sort(ids)
	var out []string
	for _, id := range ids {
		snaps, err := s.ListNetWorthSnapshots(context.Background(), id, day, day)
		if err != nil {
			return nil, err
		}
		if len(snaps) == 0 {
			out = append(out, id)
			if limit > 0 && len(out) == limit {
				break
			}
		}
	}
	return out, nil
}

// BalanceFlows implements networth.Store.
func (s *Store) BalanceFlows(_ context.Context, userID string, after time.Time) ([]networth.BalanceFlow, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	after = finance.Day(after)
	type key struct {
		account, currency string
		date              time.Time
	}
	sums := map[key]networth.BalanceFlow{}
	for _, t := range s.transactions {
		d := finance.Day(t.Date)
		if t.UserID != userID || t.IsPending || t.SplitParentID != "" || !d.After(after) {
			continue
		}
		k := key{t.AccountID, t.Amount.Currency, d}
		f, ok := sums[k]
		if !ok {
			f = networth.BalanceFlow{AccountID: t.AccountID, Currency: t.Amount.Currency, Date: d}
		}
		f.Net = f.Net.Add(t.Amount.Amount)
		sums[k] = f
	}
	out := make([]networth.BalanceFlow, 0, len(sums))
	for _, f := range sums {
		out = append(out, f)
	}
	return out, nil
}

// FirstPostedDay implements networth.Store.
func (s *Store) FirstPostedDay(_ context.Context, userID string) (*time.Time, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var first *time.Time
	for _, t := range s.transactions {
		if t.UserID != userID || t.IsPending || t.SplitParentID != "" {
			continue
		}
		if d := finance.Day(t.Date); first == nil || d.Before(*first) {
			first = &d
		}
	}
	return first, nil
}

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
	if _, ok := s.holdings[h.ID]; ok {
		return fmt.Errorf("holding %q: %w", h.ID, finance.ErrAlreadyExists)
	}
	s.holdings[h.ID] = cloneHolding(h)
	return nil
}

// ListHoldings implements networth.Store.
func (s *Store) ListHoldings(_ context.Context, userID string, f networth.HoldingFilter, afterID string, limit int) ([]networth.Holding, error) {
	keep := func(h networth.Holding) bool {
		return h.UserID == userID && !slices.Contains(f.ExcludeAccountIDs, h.AccountID) &&
			(f.AccountID == "" || h.AccountID == f.AccountID) && (afterID == "" || h.ID > afterID)
	}
	return truncate(memtable.Collect(&s.mu, &s.holdings, keep, cloneHolding,
		func(a, b networth.Holding) int { return strings.Compare(a.ID, b.ID) }), limit), nil
}

// PutSecurityPrices implements networth.Store.
func (s *Store) PutSecurityPrices(_ context.Context, ps []networth.SecurityPrice) error {
	s.mu.Lock()
	defer s.mu.Unlock()
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
