package reqlog

import (
	"context"
	"sync"
)

// Memory is a Store in this process: one ring of Keep entries per account.
// Without Redis a replica sees only its own requests.
type Memory struct {
	mu   sync.Mutex
	logs map[string][]Entry // oldest first; trimmed to Keep when twice as long
}

// NewMemory returns an empty Memory.
func NewMemory() *Memory { return &Memory{logs: map[string][]Entry{}} }

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
	}
	return nil
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
