package memory

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/ledgerlane/platform/pkg/memtable"
	"github.com/ledgerlane/platform/services/finance"
	"github.com/ledgerlane/platform/services/finance/recurring"
)

// SaveRecurringStreams implements recurring.Store.
func (s *Store) SaveRecurringStreams(_ context.Context, userID string, rules []recurring.Rule, members map[string][]string, notes ...finance.Note) error {
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
			s.putTx(t)
		}
	}
	s.appendNotes(notes)
	return nil
}

// recurringDue is one user's mark (recurring.Mark) and the end of
// the claim on it, if any.
type recurringDue struct {
	mark         recurring.Mark
	claimedUntil time.Time
}

// markRecurringDue marks userID due; the caller holds s.mu.
func (s *Store) markRecurringDue(userID string, at time.Time) {
	at = ts(at)
	d, ok := s.recurringDue[userID]
	if !ok {
		s.recurringDue[userID] = recurringDue{mark: recurring.Mark{UserID: userID, DueAt: at, Generation: 1}}
		return
	}
	if at.Before(d.mark.DueAt) {
		d.mark.DueAt = at
	}
	d.mark.Generation++
	s.recurringDue[userID] = d
}

// MarkRecurringDue implements recurring.Store.
func (s *Store) MarkRecurringDue(_ context.Context, userID string, at time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.users[userID]; !ok {
		return fmt.Errorf("user %s: %w", userID, finance.ErrNotFound)
	}
	s.markRecurringDue(userID, at)
	return nil
}

// RecurringDue implements recurring.Store.
func (s *Store) RecurringDue(_ context.Context, userID string) (recurring.Mark, bool, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	d, ok := s.recurringDue[userID]
	return d.mark, ok, nil
}

// ClaimRecurringDue implements recurring.Store.
func (s *Store) ClaimRecurringDue(_ context.Context, now, leaseUntil time.Time, limit int) ([]recurring.Mark, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var free []recurring.Mark
	for _, d := range s.recurringDue {
		if !d.mark.DueAt.After(now) && !d.claimedUntil.After(now) {
			free = append(free, d.mark)
		}
	}
	slices.SortFunc(free, func(a, b recurring.Mark) int {
		return cmp.Or(a.DueAt.Compare(b.DueAt), cmp.Compare(a.UserID, b.UserID))
	})
	if limit > 0 && len(free) > limit {
		free = free[:limit]
	}
	for _, m := range free {
		d := s.recurringDue[m.UserID]
		d.claimedUntil = ts(leaseUntil)
		s.recurringDue[m.UserID] = d
	}
	return free, nil
}

// ClearRecurringDue implements recurring.Store.
func (s *Store) ClearRecurringDue(_ context.Context, m recurring.Mark, now time.Time) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if last, ok := s.recurringRuns[m.UserID]; !ok || now.After(last) {
		s.recurringRuns[m.UserID] = ts(now)
	}
	d, ok := s.recurringDue[m.UserID]
	switch {
	case !ok:
		return false, nil
	case d.mark.Generation == m.Generation:
		delete(s.recurringDue, m.UserID)
		return true, nil
	}
	d.mark.DueAt, d.claimedUntil = ts(now), time.Time{}
	s.recurringDue[m.UserID] = d
	return false, nil
}

// RecurringLastRun implements recurring.Store.
func (s *Store) RecurringLastRun(_ context.Context, userID string) (*time.Time, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if at, ok := s.recurringRuns[userID]; ok {
		return &at, nil
	}
	return nil, nil
}

// ReleaseRecurringDue implements recurring.Store.
func (s *Store) ReleaseRecurringDue(_ context.Context, userID string, retryAt time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if d, ok := s.recurringDue[userID]; ok {
		d.claimedUntil = ts(retryAt)
		s.recurringDue[userID] = d
	}
	return nil
}

// CreateRecurringRule implements recurring.Store.
func (s *Store) CreateRecurringRule(_ context.Context, r recurring.Rule) error {
	r.NextExpectedDate = finance.Day(r.NextExpectedDate)
	if r.LastSeenDate != nil {
		d := finance.Day(*r.LastSeenDate)
		r.LastSeenDate = &d
	}
	r.CreatedAt, r.UpdatedAt = ts(r.CreatedAt), ts(r.UpdatedAt)
	return put(s, s.rules, r.ID, r)
}

// ListRecurringRules implements recurring.Store.
func (s *Store) ListRecurringRules(_ context.Context, userID string) ([]recurring.Rule, error) {
	clone := func(r recurring.Rule) recurring.Rule { r.LastSeenDate = copyPtr(r.LastSeenDate); return r }
	return memtable.Collect(&s.mu, &s.rules, func(r recurring.Rule) bool { return r.UserID == userID }, clone,
		func(a, b recurring.Rule) int {
			return cmp.Or(a.NextExpectedDate.Compare(b.NextExpectedDate), cmp.Compare(a.ID, b.ID))
		}), nil
}
