package admission

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Journal holds usage counted while Redis was unreachable, per account, mode
// and window, until Flush adds it to the counters it would have drawn on,
// and the admissions whose callers got no decision, until Flush abandons
// them (Controller.Abandon: one whose script ran after all, its reply lost
// to a stall, would otherwise count the request a second time and keep its
// Idempotency-Key in flight). It lives in the memory of the process that
// served the requests.
type Journal struct {
	mu        sync.Mutex
	pending   map[string]*journalEntry
	abandoned []abandonedAttempt
}

// abandonedAttempt is an admission to abandon until (after which its
// attempt record, and so what there was to undo, has expired).
type abandonedAttempt struct {
	req   Request
	until time.Time
}

// maxAbandoned bounds the attempts a journal keeps: a gateway skips Redis
// for a moment after a failure, so only the requests in flight when Redis
// stalled get here, far fewer than this.
const maxAbandoned = 100_000

// Abandon records that r's admission gave its caller no decision (Admit
// returned an error) and the caller failed open; r.Attempt must be set.
func (j *Journal) Abandon(r Request) {
	if r.Attempt == "" {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if len(j.abandoned) < maxAbandoned {
		j.abandoned = append(j.abandoned, abandonedAttempt{req: r, until: time.Now().Add(AttemptTTL)})
	}
}

type journalEntry struct {
	req Request
	n   int64
}

// NewJournal returns an empty journal.
func NewJournal() *Journal { return &Journal{pending: map[string]*journalEntry{}} }

// Add records the usage request r stood for: its units (a batch's items),
// one for a plain request.
func (j *Journal) Add(r Request) {
	// Apart per credential and day too: Reconcile counts them in the day
	// field they would have been counted in.
	if r.At.IsZero() {
		r.At = time.Now()
	}
	k := fmt.Sprintf("%s|%v|%d|%s|%s", r.AccountID, r.Test, r.Limits.PeriodStart.Unix(), r.CredentialID, r.At.UTC().Format(dayLayout))
	j.mu.Lock()
	defer j.mu.Unlock()
	e, ok := j.pending[k]
	if !ok {
		e = &journalEntry{req: r}
		j.pending[k] = e
	}
	e.n += unitsOf(r)
}

// Abandons is how many abandonments are pending.
func (j *Journal) Abandons() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return len(j.abandoned)
}

// Size is how many units of usage are pending.
func (j *Journal) Size() int64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	var n int64
	for _, e := range j.pending {
		n += e.n
	}
	return n
}

// Flush abandons the pending attempts and writes pending usage through c;
// what fails stays for next time (an attempt until its record expired).
func (j *Journal) Flush(ctx context.Context, c *Controller) error {
	j.mu.Lock()
	entries, attempts := j.pending, j.abandoned
	j.pending, j.abandoned = map[string]*journalEntry{}, nil
	j.mu.Unlock()
	var firstErr error
	var retry []abandonedAttempt
	for _, a := range attempts {
		if _, err := c.Abandon(ctx, a.req); err != nil {
			if firstErr == nil {
				firstErr = err
			}
			if time.Now().Before(a.until) {
				retry = append(retry, a)
			}
		}
	}
	if len(retry) > 0 {
		j.mu.Lock()
		j.abandoned = append(j.abandoned, retry...)
		j.mu.Unlock()
	}
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
