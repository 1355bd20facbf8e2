package admission

import (
	"context"
	"fmt"
	"sync"
)

// Journal holds usage counted while Redis was unreachable, per account, mode
// and window, until Flush adds it to the counters it would have drawn on.
// It lives in the memory of the process that served the requests.
type Journal struct {
	mu      sync.Mutex
	pending map[string]*journalEntry
}

type journalEntry struct {
	req Request
	n   int64
}

// NewJournal returns an empty journal.
func NewJournal() *Journal { return &Journal{pending: map[string]*journalEntry{}} }

// Add records one request r stood for.
func (j *Journal) Add(r Request) {
	k := fmt.Sprintf("%s|%v|%d", r.AccountID, r.Test, r.Limits.PeriodStart.Unix())
	j.mu.Lock()
	defer j.mu.Unlock()
	e, ok := j.pending[k]
	if !ok {
		e = &journalEntry{req: r}
		j.pending[k] = e
	}
	e.n++
}

// Size is how many requests are pending.
func (j *Journal) Size() int64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	var n int64
	for _, e := range j.pending {
		n += e.n
	}
	return n
}

// Flush writes pending usage through c; entries that fail stay for next time.
func (j *Journal) Flush(ctx context.Context, c *Controller) error {
	j.mu.Lock()
	entries := j.pending
	j.pending = map[string]*journalEntry{}
	j.mu.Unlock()
	var firstErr error
	for k, e := range entries {
		if err := c.Reconcile(ctx, e.req, e.n); err != nil {
			if firstErr == nil {
				firstErr = err
			}
			j.mu.Lock()
			if cur, ok := j.pending[k]; ok {
				cur.n += e.n
			} else {
				j.pending[k] = e
			}
			j.mu.Unlock()
		}
	}
	return firstErr
}
