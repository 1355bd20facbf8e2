package reqlog

import (
	"context"
	"sync"
	"time"
)

// Memory is a Store in this process: one ring of Keep entries per account.
// Without Redis a replica sees only its own requests.
type Memory struct {
	mu   sync.Mutex
	logs map[string][]Entry // oldest first; trimmed to Keep when twice as long
	// daily counts by account, then "2006-01-02", then field (dailyFields).
	daily map[string]map[string]map[string]int64
}

// NewMemory returns an empty Memory.
func NewMemory() *Memory {
	return &Memory{logs: map[string][]Entry{}, daily: map[string]map[string]map[string]int64{}}
}

// Append implements Store.
func (m *Memory) Append(_ context.Context, es []Entry) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, e := range es {
		l := append(m.logs[e.AccountID], e)
		if len(l) > 2*Keep { // amortized: one copy per Keep appends
			l = append(l[:0:0], l[len(l)-Keep:]...)
		}
		m.logs[e.AccountID] = l
		m.count(e)
	}
	return nil
}

// count adds e to its day's counters, dropping days older than DailyKeep.
func (m *Memory) count(e Entry) {
	acct := m.daily[e.AccountID]
	if acct == nil {
		acct = map[string]map[string]int64{}
		m.daily[e.AccountID] = acct
	}
	key := dayKey(e.Time)
	day := acct[key]
	if day == nil {
		day = map[string]int64{}
		acct[key] = day
		oldest := dayKey(e.Time.AddDate(0, 0, -DailyKeep))
		for k := range acct {
			if k < oldest {
				delete(acct, k)
			}
		}
	}
	for _, f := range dailyFields(e) {
		day[f]++
	}
}

// Daily implements Store.
func (m *Memory) Daily(_ context.Context, accountID string, to time.Time, n int) ([]Day, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Day
	for _, date := range days(to, n) {
		d := newDay(date)
		for f, c := range m.daily[accountID][dayKey(date)] {
			d.addField(f, c)
		}
		out = append(out, d)
	}
	return out, nil
}

// Recent implements Store.
func (m *Memory) Recent(_ context.Context, accountID string, q Query) ([]Entry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	l := m.logs[accountID]
	l = l[max(len(l)-Keep, 0):]
	out := []Entry{}
	for i := len(l) - 1; i >= 0 && len(out) < q.Limit; i-- {
		if q.matches(l[i]) {
			out = append(out, l[i])
		}
	}
	return out, nil
}

func (q Query) matches(e Entry) bool {
	return (q.RequestID == "" || e.RequestID == q.RequestID) && (q.Mode == "" || e.Mode == q.Mode)
}
