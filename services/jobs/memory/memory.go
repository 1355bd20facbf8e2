// Package memory is an in-process jobs.Store for the local stack and tests.
package memory

import (
	"bytes"
	"context"
	"maps"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/ledgerlane/platform/services/jobs"
)

// Store implements jobs.Store in memory. Values are copied in and out so
// callers never share slices with the store.
type Store struct {
	mu         sync.Mutex
	jobs       map[string]*jobs.Job
	meta       map[string]*jobMeta    // by job id: outbox and progress
	items      map[string][]jobs.Item // by job id, in index order
	endpoints  map[string]*jobs.Endpoint
	deliveries map[string]*jobs.Delivery
	attempts   map[string][]jobs.AttemptRecord // by delivery id
}

var _ jobs.Store = (*Store)(nil)

// New returns an empty Store.
func New() *Store {
	return &Store{
		jobs:       map[string]*jobs.Job{},
		meta:       map[string]*jobMeta{},
		items:      map[string][]jobs.Item{},
		endpoints:  map[string]*jobs.Endpoint{},
		deliveries: map[string]*jobs.Delivery{},
		attempts:   map[string][]jobs.AttemptRecord{},
	}
}

// jobMeta is what the store keeps about a job beyond jobs.Job: its enqueue
// intent (the outbox), when a publisher or resumer may next claim it, and its
// last progress.
type jobMeta struct {
	enqueued     bool
	enqueueAfter time.Time
	checkAfter   time.Time
	progressAt   time.Time
}

// cloneJob copies j; it holds no slices, so a copy of the value is enough.
func cloneJob(j jobs.Job) jobs.Job { return j }

func cloneItem(it jobs.Item) jobs.Item {
	it.Input, it.Result = bytes.Clone(it.Input), bytes.Clone(it.Result)
	return it
}

func cloneEndpoint(e jobs.Endpoint) jobs.Endpoint {
	e.Secret, e.PrevSecret = bytes.Clone(e.Secret), bytes.Clone(e.PrevSecret)
	e.EventTypes = slices.Clone(e.EventTypes)
	if e.EventTypes == nil {
		e.EventTypes = []string{}
	}
	return e
}

func cloneDelivery(d jobs.Delivery) jobs.Delivery {
	d.Body = bytes.Clone(d.Body)
	return d
}

func (s *Store) CreateJob(_ context.Context, j jobs.Job, items []jobs.Item) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.jobs[j.ID]; ok {
		return jobs.ErrConflict
	}
	if j.IdempotencyKey != "" {
		if _, err := s.byKey(j.AccountID, j.IdempotencyKey); err == nil {
			return jobs.ErrConflict
		}
	}
	cp := cloneJob(j)
	s.jobs[j.ID] = &cp
	s.meta[j.ID] = &jobMeta{enqueueAfter: j.CreatedAt.Add(jobs.EnqueueLease), progressAt: j.CreatedAt}
	its := make([]jobs.Item, len(items))
	for i, it := range items {
		its[i] = cloneItem(it)
	}
	sort.Slice(its, func(a, b int) bool { return its[a].Index < its[b].Index })
	s.items[j.ID] = its
	return nil
}

func (s *Store) JobByIdempotencyKey(_ context.Context, accountID, key string) (jobs.Job, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.byKey(accountID, key)
}

// byKey scans the account's jobs: a deleted job takes its key with it.
func (s *Store) byKey(accountID, key string) (jobs.Job, error) {
	for _, j := range s.jobs {
		if j.AccountID == accountID && j.IdempotencyKey == key {
			return cloneJob(*j), nil
		}
	}
	return jobs.Job{}, jobs.ErrNotFound
}

func (s *Store) GetJob(_ context.Context, accountID, id string) (jobs.Job, error) {
	return get(s, s.jobs, id, func(j *jobs.Job) bool { return j.AccountID == accountID }, cloneJob)
}

func (s *Store) JobByID(_ context.Context, id string) (jobs.Job, error) {
	return get(s, s.jobs, id, anyOwner, cloneJob)
}

func (s *Store) Items(_ context.Context, jobID string) ([]jobs.Item, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	its, ok := s.items[jobID]
	if !ok {
		return nil, jobs.ErrNotFound
	}
	out := make([]jobs.Item, len(its))
	for i, it := range its {
		out[i] = cloneItem(it)
	}
	return out, nil
}

func (s *Store) find(jobID string, index int) *jobs.Item {
	its := s.items[jobID]
	i, ok := slices.BinarySearchFunc(its, index, func(it jobs.Item, idx int) int { return it.Index - idx })
	if !ok {
		return nil
	}
	return &its[i]
}

func (s *Store) Item(_ context.Context, jobID string, index int) (jobs.Item, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	it := s.find(jobID, index)
	if it == nil {
		return jobs.Item{}, jobs.ErrNotFound
	}
	return cloneItem(*it), nil
}

func (s *Store) StartJob(_ context.Context, jobID string, now time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	j, ok := s.jobs[jobID]
	if !ok {
		return jobs.ErrNotFound
	}
	if j.Status == jobs.JobQueued {
		j.Status, j.StartedAt = jobs.JobRunning, now
		s.meta[jobID].progressAt = now
	}
	return nil
}

func (s *Store) CompleteItem(_ context.Context, jobID string, index int, status string, result []byte, now time.Time) (jobs.Job, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	j, ok := s.jobs[jobID]
	it := s.find(jobID, index)
	if !ok || it == nil {
		return jobs.Job{}, false, jobs.ErrNotFound
	}
	if it.Status != jobs.ItemPending {
		return cloneJob(*j), false, nil
	}
	it.Status, it.Input, it.Result = status, nil, bytes.Clone(result)
	if status == jobs.ItemOK {
		j.Succeeded++
	} else {
		j.Failed++
	}
	j.Pending--
	s.meta[jobID].progressAt = now
	if j.StartedAt.IsZero() {
		j.StartedAt = now
	}
	j.Status = jobs.JobRunning
	if j.Pending == 0 {
		j.Status, j.CompletedAt, j.ExpiresAt = jobs.JobCompleted, now, now.Add(j.TTL)
	}
	return cloneJob(*j), true, nil
}

func (s *Store) ClaimUnenqueued(_ context.Context, now time.Time, lease time.Duration, limit int) ([]jobs.Job, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.claim(limit, func(j *jobs.Job, m *jobMeta) bool {
		if m.enqueued || m.enqueueAfter.After(now) {
			return false
		}
		m.enqueueAfter = now.Add(lease)
		return true
	}), nil
}

func (s *Store) MarkEnqueued(_ context.Context, jobID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m, ok := s.meta[jobID]; ok {
		m.enqueued = true
	}
	return nil
}

func (s *Store) OutboxBacklog(context.Context) (jobs.OutboxBacklog, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b jobs.OutboxBacklog
	for id, m := range s.meta {
		if m.enqueued {
			continue
		}
		b.Open++
		if c := s.jobs[id].CreatedAt; b.Oldest.IsZero() || c.Before(b.Oldest) {
			b.Oldest = c
		}
	}
	return b, nil
}

func (s *Store) ClaimStalled(_ context.Context, now time.Time, stalledFor, lease time.Duration, limit int) ([]jobs.Job, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.claim(limit, func(j *jobs.Job, m *jobMeta) bool {
		if !m.enqueued || j.Status == jobs.JobCompleted || m.progressAt.After(now.Add(-stalledFor)) || m.checkAfter.After(now) {
			return false
		}
		m.checkAfter = now.Add(lease)
		return true
	}), nil
}

// claim returns up to limit jobs, oldest first, for which take (which
// updates the claim) says yes.
func (s *Store) claim(limit int, take func(*jobs.Job, *jobMeta) bool) []jobs.Job {
	all := make([]*jobs.Job, 0, len(s.jobs))
	for _, j := range s.jobs {
		all = append(all, j)
	}
	sort.Slice(all, func(a, b int) bool {
		return before(all[a].CreatedAt, all[a].ID, all[b].CreatedAt, all[b].ID)
	})
	out := []jobs.Job{}
	for _, j := range all {
		if len(out) == limit {
			break
		}
		if take(j, s.meta[j.ID]) {
			out = append(out, cloneJob(*j))
		}
	}
	return out
}

func (s *Store) PendingIndexes(_ context.Context, jobID string) ([]int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	its, ok := s.items[jobID]
	if !ok {
		return nil, jobs.ErrNotFound
	}
	out := []int{}
	for _, it := range its {
		if it.Status == jobs.ItemPending {
			out = append(out, it.Index)
		}
	}
	return out, nil
}

func (s *Store) DeleteJob(_ context.Context, accountID, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	j, ok := s.jobs[id]
	if !ok || j.AccountID != accountID {
		return jobs.ErrNotFound
	}
	delete(s.jobs, id)
	delete(s.items, id)
	delete(s.meta, id)
	return nil
}

func (s *Store) SweepExpired(_ context.Context, now time.Time) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for id, j := range s.jobs {
		expired := j.Status == jobs.JobCompleted && !j.ExpiresAt.After(now)
		stuck := j.Status != jobs.JobCompleted && !j.CreatedAt.After(now.Add(-jobs.MaxTTL))
		if expired || stuck {
			delete(s.jobs, id)
			delete(s.items, id)
			delete(s.meta, id)
			n++
		}
	}
	for id, d := range s.deliveries {
		if d.Status != jobs.DeliveryPending && !d.CreatedAt.After(now.Add(-jobs.DeliveryRetention)) {
			delete(s.deliveries, id)
			delete(s.attempts, id)
		}
	}
	return n, nil
}

func (s *Store) CreateEndpoint(_ context.Context, e jobs.Endpoint) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.endpoints[e.ID]; ok {
		return jobs.ErrConflict
	}
	e = cloneEndpoint(e)
	s.endpoints[e.ID] = &e
	return nil
}

func (s *Store) ListEndpoints(_ context.Context, accountID string) ([]jobs.Endpoint, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []jobs.Endpoint{}
	for _, e := range s.endpoints {
		if e.AccountID == accountID {
			out = append(out, cloneEndpoint(*e))
		}
	}
	sort.Slice(out, func(a, b int) bool {
		return before(out[a].CreatedAt, out[a].ID, out[b].CreatedAt, out[b].ID)
	})
	return out, nil
}

func (s *Store) EndpointByID(_ context.Context, id string) (jobs.Endpoint, error) {
	return get(s, s.endpoints, id, anyOwner, cloneEndpoint)
}

func (s *Store) DeleteEndpoint(_ context.Context, accountID, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.endpoints[id]
	if !ok || e.AccountID != accountID {
		return jobs.ErrNotFound
	}
	delete(s.endpoints, id)
	return nil
}

func (s *Store) CreateDelivery(_ context.Context, d jobs.Delivery) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, have := range s.deliveries {
		if have.EndpointID != d.EndpointID {
			continue
		}
		if isEvent(*have) && isEvent(d) && (d.JobID != "" && have.JobID == d.JobID && have.Event == d.Event ||
			d.JobID == "" && have.JobID == "" && have.EventID == d.EventID) {
			return false, nil
		}
		if d.CoalesceKey != "" && s.absorbs(have, d.EndpointID, d.CoalesceKey) {
			return false, nil
		}
	}
	d = cloneDelivery(d)
	if d.Origin == "" {
		d.Origin = jobs.OriginEvent // as the column's default
	}
	d.Absorbing = d.CoalesceKey != ""
	s.deliveries[d.ID] = &d
	return true, nil
}

// absorbs reports whether d is a pending delivery to endpointID absorbing
// events with key.
func (s *Store) absorbs(d *jobs.Delivery, endpointID, key string) bool {
	return d.EndpointID == endpointID && d.CoalesceKey == key && d.Absorbing && d.Status == jobs.DeliveryPending
}

func (s *Store) ClaimDue(_ context.Context, now time.Time, lease time.Duration, limit int) ([]jobs.Delivery, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var due []*jobs.Delivery
	for _, d := range s.deliveries {
		if d.Status == jobs.DeliveryPending && !d.NextAttemptAt.After(now) {
			due = append(due, d)
		}
	}
	sort.Slice(due, func(a, b int) bool {
		return before(due[a].NextAttemptAt, due[a].ID, due[b].NextAttemptAt, due[b].ID)
	})
	if len(due) > limit {
		due = due[:limit]
	}
	out := make([]jobs.Delivery, len(due))
	for i, d := range due {
		out[i] = cloneDelivery(*d)
		d.NextAttemptAt = now.Add(lease)
		d.Absorbing = false
	}
	return out, nil
}

func (s *Store) RecordAttempt(_ context.Context, deliveryID string, a jobs.Attempt) (disabled bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok := s.deliveries[deliveryID]
	if !ok {
		return false, jobs.ErrNotFound
	}
	if d.Status != jobs.DeliveryPending {
		return false, nil
	}
	e := s.endpoints[d.EndpointID]
	if !a.Abandoned {
		s.attempts[d.ID] = append(s.attempts[d.ID], jobs.AttemptRecord{N: d.Attempts + 1, At: a.At, Succeeded: a.Succeeded,
			StatusCode: a.StatusCode, Failure: a.Failure, Duration: a.Duration, NextAttemptAt: a.NextAttemptAt})
	}
	switch {
	case a.Abandoned:
		d.Status = jobs.DeliveryAbandoned
		return false, nil
	case a.Succeeded:
		d.Attempts++
		d.Status = jobs.DeliverySucceeded
		if e != nil {
			e.ConsecutiveFailures = 0
		}
	case a.Exhausted:
		d.Attempts++
		d.Status = jobs.DeliveryFailed
		if e != nil {
			e.ConsecutiveFailures++
			if e.ConsecutiveFailures >= jobs.DisableAfter && e.Status == jobs.EndpointActive {
				e.Status = jobs.EndpointDisabled
				disabled = true
			}
		}
	default:
		d.Attempts++
		d.NextAttemptAt = a.NextAttemptAt
		if d.CoalesceKey != "" {
			d.Absorbing = !slices.ContainsFunc(slices.Collect(maps.Values(s.deliveries)), func(o *jobs.Delivery) bool {
				return o != d && s.absorbs(o, d.EndpointID, d.CoalesceKey)
			})
		}
	}
	return disabled, nil
}

func (s *Store) CountDisabledEndpoints(context.Context) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, e := range s.endpoints {
		if e.Status == jobs.EndpointDisabled {
			n++
		}
	}
	return n, nil
}

func (s *Store) Delivery(_ context.Context, id string) (jobs.Delivery, error) {
	return get(s, s.deliveries, id, anyOwner, cloneDelivery)
}

// isEvent reports whether d is an event's fan-out delivery (not a resend or
// test), of which an endpoint has one per job and event.
func isEvent(d jobs.Delivery) bool { return d.Origin == "" || d.Origin == jobs.OriginEvent }

// owned is the tenant's endpoint id, or nil.
func (s *Store) owned(accountID, id string) *jobs.Endpoint {
	if e, ok := s.endpoints[id]; ok && e.AccountID == accountID {
		return e
	}
	return nil
}

func (s *Store) UpdateEndpoint(_ context.Context, accountID, id string, u jobs.EndpointUpdate) (jobs.Endpoint, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.owned(accountID, id)
	if e == nil {
		return jobs.Endpoint{}, jobs.ErrNotFound
	}
	if u.URL != nil {
		e.URL = *u.URL
	}
	if u.Description != nil {
		e.Description = *u.Description
	}
	if u.EventTypes != nil {
		e.EventTypes = slices.Clone(*u.EventTypes)
	}
	return cloneEndpoint(*e), nil
}

func (s *Store) RotateSecret(_ context.Context, accountID, id string, secret []byte, prevUntil time.Time) (jobs.Endpoint, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.owned(accountID, id)
	if e == nil {
		return jobs.Endpoint{}, jobs.ErrNotFound
	}
	e.PrevSecret, e.PrevSecretUntil, e.Secret = e.Secret, prevUntil, bytes.Clone(secret)
	return cloneEndpoint(*e), nil
}

func (s *Store) EnableEndpoint(_ context.Context, accountID, id string) (jobs.Endpoint, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.owned(accountID, id)
	if e == nil {
		return jobs.Endpoint{}, jobs.ErrNotFound
	}
	e.Status, e.ConsecutiveFailures = jobs.EndpointActive, 0
	return cloneEndpoint(*e), nil
}

func (s *Store) ListDeliveries(_ context.Context, f jobs.DeliveryFilter, limit int) ([]jobs.Delivery, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []jobs.Delivery
	for _, d := range s.deliveries {
		if d.AccountID != f.AccountID || d.EndpointID != f.EndpointID || (f.Status != "" && d.Status != f.Status) {
			continue
		}
		if f.Before != nil && !before(d.CreatedAt, d.ID, f.Before.CreatedAt, f.Before.ID) {
			continue
		}
		out = append(out, cloneDelivery(*d))
	}
	return newestFirst(out, func(d jobs.Delivery) (time.Time, string) { return d.CreatedAt, d.ID }, limit), nil
}

func (s *Store) DeliveryAttempts(_ context.Context, deliveryID string) ([]jobs.AttemptRecord, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]jobs.AttemptRecord{}, s.attempts[deliveryID]...), nil
}

func (s *Store) CreateManualDelivery(_ context.Context, d jobs.Delivery, maxPending int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.deliveries[d.ID]; ok {
		return jobs.ErrConflict
	}
	n := 0
	for _, have := range s.deliveries {
		if have.EndpointID == d.EndpointID && !isEvent(*have) && have.Status == jobs.DeliveryPending {
			n++
		}
	}
	if n >= maxPending {
		return jobs.ErrLimit
	}
	d = cloneDelivery(d)
	s.deliveries[d.ID] = &d
	return nil
}

// Blobs returns every sealed blob the store holds (item inputs and results,
// endpoint secrets), so tests can prove a purge left nothing behind.
func (s *Store) Blobs(context.Context) ([][]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out [][]byte
	for _, its := range s.items {
		for _, it := range its {
			for _, b := range [][]byte{it.Input, it.Result} {
				if b != nil {
					out = append(out, bytes.Clone(b))
				}
			}
		}
	}
	for _, e := range s.endpoints {
		out = append(out, bytes.Clone(e.Secret))
		if e.PrevSecret != nil {
			out = append(out, bytes.Clone(e.PrevSecret))
		}
	}
	return out, nil
}

// get returns a copy (made by clone) of row id of m when mine says it is
// the caller's; another owner's row is as absent as a missing one
// (jobs.ErrNotFound).
func get[T any](s *Store, m map[string]*T, id string, mine func(*T) bool, clone func(T) T) (T, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := m[id]
	if !ok || !mine(v) {
		var zero T
		return zero, jobs.ErrNotFound
	}
	return clone(*v), nil
}

// anyOwner is get's test for rows read by id alone.
func anyOwner[T any](*T) bool { return true }

// newestFirst sorts rows newest first by key (creation time, then id) and
// keeps the first limit: the order of the keyset-paged lists.
func newestFirst[T any](rows []T, key func(T) (time.Time, string), limit int) []T {
	sort.Slice(rows, func(i, j int) bool {
		ti, idi := key(rows[i])
		tj, idj := key(rows[j])
		return before(tj, idj, ti, idi)
	})
	if len(rows) > limit {
		rows = rows[:limit]
	}
	return rows
}
