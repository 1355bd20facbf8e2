package memory

import (
	"context"
	"slices"
	"time"

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
	if s.fxRates == nil {
		s.fxRates = map[string]networth.FXRate{}
	}
	for _, r := range rs {
		r.Date = finance.Day(r.Date)
		s.fxRates[r.Currency+"|"+r.Date.Format(finance.DateLayout)] = r
	}
	return nil
}

// FXRatesUpTo implements networth.Store.
func (s *Store) FXRatesUpTo(_ context.Context, currencies []string, day time.Time) ([]networth.FXRate, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	day = finance.Day(day)
	var out []networth.FXRate
	for _, r := range s.fxRates {
		if slices.Contains(currencies, r.Currency) && !r.Date.After(day) {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b networth.FXRate) int {
		if a.Currency != b.Currency {
			if a.Currency < b.Currency {
				return -1
			}
			return 1
		}
		return a.Date.Compare(b.Date)
	})
	return out, nil
}

// PutNetWorthSnapshot implements networth.Store.
func (s *Store) PutNetWorthSnapshot(_ context.Context, sn networth.NetWorthSnapshot) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.nwSnapshots == nil {
		s.nwSnapshots = map[string]networth.NetWorthSnapshot{}
	}
	k := sn.UserID + "|" + finance.Day(sn.Date).Format(finance.DateLayout)
	if _, ok := s.nwSnapshots[k]; ok {
		return false, nil
	}
	s.nwSnapshots[k] = cloneSnapshot(sn)
	return true, nil
}

// ListNetWorthSnapshots implements networth.Store.
func (s *Store) ListNetWorthSnapshots(_ context.Context, userID string, from, to time.Time) ([]networth.NetWorthSnapshot, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	from, to = finance.Day(from), finance.Day(to)
	var out []networth.NetWorthSnapshot
	for _, sn := range s.nwSnapshots {
		if sn.UserID != userID || sn.Date.Before(from) || sn.Date.After(to) {
			continue
		}
		out = append(out, cloneSnapshot(sn))
	}
	slices.SortFunc(out, func(a, b networth.NetWorthSnapshot) int { return a.Date.Compare(b.Date) })
	return out, nil
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
