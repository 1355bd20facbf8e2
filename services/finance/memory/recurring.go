package memory

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/ledgerlane/platform/services/finance"
)

// SaveRecurringStreams implements finance.Store.
func (s *Store) SaveRecurringStreams(_ context.Context, userID string, rules []finance.RecurringRule, members map[string][]string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range rules {
		if old, ok := s.rules[r.ID]; ok && old.UserID != userID || r.UserID != userID {
			return fmt.Errorf("memory: rule %s is not user %s's", r.ID, userID)
		}
	}
	link := map[string]string{}
	for rule, ids := range members {
		for _, id := range ids {
			link[id] = rule
		}
	}
	for _, r := range rules {
		r.NextExpectedDate = finance.Day(r.NextExpectedDate)
		if r.LastSeenDate != nil {
			d := finance.Day(*r.LastSeenDate)
			r.LastSeenDate = &d
		}
		r.CreatedAt, r.UpdatedAt = ts(r.CreatedAt), ts(r.UpdatedAt)
		s.rules[r.ID] = r
	}
	for id, t := range s.transactions {
		if t.UserID != userID {
			continue
		}
		if want := link[id]; t.RecurringRuleID != want {
			t.RecurringRuleID = want
			s.transactions[id] = t
		}
	}
	return nil
}

// UsersWithoutSnapshot implements finance.Store.
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
