package memory

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"sort"
	"sync"
	"time"

	"github.com/ledgerlane/platform/services/jobs/accounting"
)

// Accounting implements accounting.Store in memory, beside Store.
type Accounting struct {
	mu     sync.Mutex
	conns  map[string]*accounting.Connection
	pushed map[string]map[string]string // connection id → entry id → platform id
}

var _ accounting.Store = (*Accounting)(nil)

// NewAccounting returns an empty accounting store.
func NewAccounting() *Accounting {
	return &Accounting{conns: map[string]*accounting.Connection{}, pushed: map[string]map[string]string{}}
}

func cloneConn(c accounting.Connection) accounting.Connection {
	c.Verifier, c.Tokens = bytes.Clone(c.Verifier), bytes.Clone(c.Tokens)
	return c
}

// ErrExists is returned for a connection id that is taken.
var ErrExists = errors.New("memory: connection exists")

func (s *Accounting) CreateConnection(_ context.Context, c accounting.Connection) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.conns[c.ID]; ok {
		return ErrExists
	}
	cp := cloneConn(c)
	s.conns[c.ID] = &cp
	return nil
}

func (s *Accounting) GetConnection(_ context.Context, accountID, id string) (accounting.Connection, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.conns[id]
	if !ok || c.AccountID != accountID {
		return accounting.Connection{}, accounting.ErrNotFound
	}
	return cloneConn(*c), nil
}

func (s *Accounting) ListConnections(_ context.Context, accountID, mode string, after *accounting.Position, limit int) ([]accounting.Connection, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []accounting.Connection
	for _, c := range s.conns {
		if c.AccountID != accountID || cmp.Or(c.Mode, "live") != mode {
			continue
		}
		if after != nil && !before(c.CreatedAt, c.ID, after.CreatedAt, after.ID) {
			continue
		}
		out = append(out, cloneConn(*c))
	}
	return newestFirst(out, func(c accounting.Connection) (time.Time, string) { return c.CreatedAt, c.ID }, limit), nil
}

// before reports whether (t, id) sorts before (t2, id2) ascending; the list
// is newest first, so "after a position" means "before it" ascending.
func before(t time.Time, id string, t2 time.Time, id2 string) bool {
	if !t.Equal(t2) {
		return t.Before(t2)
	}
	return id < id2
}

func (s *Accounting) UpdateConnection(_ context.Context, c accounting.Connection) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	old, ok := s.conns[c.ID]
	if !ok {
		return accounting.ErrNotFound
	}
	cp := cloneConn(c)
	// Identity and creation never change.
	cp.AccountID, cp.Platform, cp.CreatedAt = old.AccountID, old.Platform, old.CreatedAt
	s.conns[c.ID] = &cp
	return nil
}

func (s *Accounting) DeleteConnection(_ context.Context, accountID, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.conns[id]
	if !ok || c.AccountID != accountID {
		return accounting.ErrNotFound
	}
	delete(s.conns, id)
	delete(s.pushed, id)
	return nil
}

func (s *Accounting) ConsumeState(_ context.Context, stateHash string) (accounting.Connection, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if stateHash == "" {
		return accounting.Connection{}, accounting.ErrNotFound
	}
	for _, c := range s.conns {
		if c.StateHash == stateHash {
			c.StateHash = ""
			return cloneConn(*c), nil
		}
	}
	return accounting.Connection{}, accounting.ErrNotFound
}

func (s *Accounting) ExpirePending(_ context.Context, now time.Time, reason string, limit int) ([]accounting.Connection, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var due []*accounting.Connection
	for _, c := range s.conns {
		if c.Status == accounting.StatusPending && c.StateHash != "" && !c.StateExpiresAt.After(now) {
			due = append(due, c)
		}
	}
	sort.Slice(due, func(i, j int) bool {
		return before(due[i].StateExpiresAt, due[i].ID, due[j].StateExpiresAt, due[j].ID)
	})
	if len(due) > limit {
		due = due[:limit]
	}
	out := make([]accounting.Connection, 0, len(due))
	for _, c := range due {
		c.Status, c.StatusReason, c.UpdatedAt, c.StateHash, c.Verifier = accounting.StatusError, reason, now, "", nil
		out = append(out, cloneConn(*c))
	}
	return out, nil
}

func (s *Accounting) DueRefresh(_ context.Context, beforeT, now time.Time, limit int) ([]accounting.Connection, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []accounting.Connection
	for _, c := range s.conns {
		if c.Status == accounting.StatusActive && c.TokenExpiresAt.Before(beforeT) && !c.RefreshAfter.After(now) {
			out = append(out, cloneConn(*c))
		}
	}
	sort.Slice(out, func(i, j int) bool {
		return before(out[i].TokenExpiresAt, out[i].ID, out[j].TokenExpiresAt, out[j].ID)
	})
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

func (s *Accounting) ClaimRefresh(_ context.Context, id string, now, until time.Time) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.conns[id]
	if !ok {
		return false, nil
	}
	if c.RefreshAfter.After(now) {
		return false, nil
	}
	c.RefreshAfter = until
	return true, nil
}

func (s *Accounting) PushedEntries(_ context.Context, connectionID string, entryIDs []string) (map[string]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]string{}
	for _, id := range entryIDs {
		if pid, ok := s.pushed[connectionID][id]; ok {
			out[id] = pid
		}
	}
	return out, nil
}

func (s *Accounting) RecordPushed(_ context.Context, connectionID, entryID, platformID string, _ time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.conns[connectionID]; !ok {
		return accounting.ErrNotFound
	}
	m := s.pushed[connectionID]
	if m == nil {
		m = map[string]string{}
		s.pushed[connectionID] = m
	}
	if _, ok := m[entryID]; !ok {
		m[entryID] = platformID
	}
	return nil
}
