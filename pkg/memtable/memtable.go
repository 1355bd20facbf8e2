// Package memtable holds the read shapes every in-memory store adapter
// repeats: one row by id, and the rows a predicate keeps, in order, both
// under the store's read lock. The map is passed by its address: stores
// make some maps on first write, under the lock, so even reading which map
// a field holds must wait for it. It knows nothing of any domain; the stores
// pass their own maps, ownership tests, copies and orders.
package memtable

import (
	"slices"
	"sync"
)

// Find returns row id of m when mine says it is the caller's; another
// owner's row is as absent as a missing one, so a store cannot leak that an
// id exists elsewhere.
func Find[T any](mu *sync.RWMutex, m *map[string]T, id string, mine func(T) bool) (T, bool) {
	mu.RLock()
	defer mu.RUnlock()
	v, ok := (*m)[id]
	if !ok || !mine(v) {
		var zero T
		return zero, false
	}
	return v, true
}

// Collect returns copies (made by clone, so callers never share the
// store's slices and pointers) of the rows of m that keep accepts, sorted by
// order. The result is never nil: an empty list reads as [] like a
// PostgreSQL adapter's.
func Collect[T any](mu *sync.RWMutex, m *map[string]T, keep func(T) bool, clone func(T) T, order func(a, b T) int) []T {
	mu.RLock()
	defer mu.RUnlock()
	out := []T{}
	for _, v := range *m {
		if keep(v) {
			out = append(out, clone(v))
		}
	}
	slices.SortFunc(out, order)
	return out
}

// AnyOwner is Find's test for rows read by id alone.
func AnyOwner[T any](T) bool { return true }

// Same is Collect's clone for values that hold nothing shared.
func Same[T any](v T) T { return v }
