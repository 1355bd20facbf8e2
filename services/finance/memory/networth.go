package memory

import (
	"context"
	"slices"
	"time"

	"github.com/ledgerlane/platform/services/finance"
)

// netWorthState holds FX rates and net-worth snapshots; its maps are made
// on first write, under the store's lock.
type netWorthState struct {
	fxRates     map[string]finance.FXRate           // by currency|date
	nwSnapshots map[string]finance.NetWorthSnapshot // by user|date
}

func cloneSnapshot(s finance.NetWorthSnapshot) finance.NetWorthSnapshot {
	s.Lines = slices.Clone(s.Lines)
	s.Date = finance.Day(s.Date)
	s.TakenAt = ts(s.TakenAt)
	return s
}

// PutFXRates implements finance.Store.
func (s *Store) PutFXRates(_ context.Context, rs []finance.FXRate) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fxRates == nil {
		s.fxRates = map[string]finance.FXRate{}
	}
	for _, r := range rs {
		r.Date = finance.Day(r.Date)
		s.fxRates[r.Currency+"|"+r.Date.Format(finance.DateLayout)] = r
	}
	return nil
}

// FXRatesUpTo implements finance.Store.
func (s *Store) FXRatesUpTo(_ context.Context, currencies []string, day time.Time) ([]finance.FXRate, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	day = finance.Day(day)
	var out []finance.FXRate
	for _, r := range s.fxRates {
		if slices.Contains(currencies, r.Currency) && !r.Date.After(day) {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b finance.FXRate) int {
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

// PutNetWorthSnapshot implements finance.Store.
func (s *Store) PutNetWorthSnapshot(_ context.Context, sn finance.NetWorthSnapshot) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.nwSnapshots == nil {
		s.nwSnapshots = map[string]finance.NetWorthSnapshot{}
	}
	k := sn.UserID + "|" + finance.Day(sn.Date).Format(finance.DateLayout)
	if _, ok := s.nwSnapshots[k]; ok {
		return false, nil
	}
	s.nwSnapshots[k] = cloneSnapshot(sn)
	return true, nil
}

// ListNetWorthSnapshots implements finance.Store.
func (s *Store) ListNetWorthSnapshots(_ context.Context, userID string, from, to time.Time) ([]finance.NetWorthSnapshot, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	from, to = finance.Day(from), finance.Day(to)
	var out []finance.NetWorthSnapshot
	for _, sn := range s.nwSnapshots {
		if sn.UserID != userID || sn.Date.Before(from) || sn.Date.After(to) {
			continue
		}
		out = append(out, cloneSnapshot(sn))
	}
	slices.SortFunc(out, func(a, b finance.NetWorthSnapshot) int { return a.Date.Compare(b.Date) })
	return out, nil
}
