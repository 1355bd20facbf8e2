package memtable

import (
	"cmp"
	"slices"
	"sync"
	"testing"
)

type row struct {
	id, owner string
	tags      []string
}

func TestFind(t *testing.T) {
	var mu sync.RWMutex
	m := map[string]row{"a": {id: "a", owner: "u1"}, "b": {id: "b", owner: "u2"}}
	mine := func(u string) func(row) bool { return func(r row) bool { return r.owner == u } }
	tests := []struct {
		id, user string
		want     bool
	}{
		{"a", "u1", true},
		{"a", "u2", false}, // another owner's row reads as missing
		{"c", "u1", false},
	}
	for _, tc := range tests {
		got, ok := Find(&mu, &m, tc.id, mine(tc.user))
		if ok != tc.want || (ok && got.id != tc.id) || (!ok && got.id != "") {
			t.Errorf("Find(%q, %q) = %+v, %v; want found=%v", tc.id, tc.user, got, ok, tc.want)
		}
	}
	if _, ok := Find(&mu, &m, "b", AnyOwner[row]); !ok {
		t.Error("AnyOwner refused a row")
	}
}

func TestCollect(t *testing.T) {
	var mu sync.RWMutex
	m := map[string]row{
		"c": {id: "c", owner: "u1", tags: []string{"x"}},
		"a": {id: "a", owner: "u1"},
		"b": {id: "b", owner: "u2"},
	}
	clone := func(r row) row { r.tags = slices.Clone(r.tags); return r }
	byID := func(a, b row) int { return cmp.Compare(a.id, b.id) }
	got := Collect(&mu, &m, func(r row) bool { return r.owner == "u1" }, clone, byID)
	if len(got) != 2 || got[0].id != "a" || got[1].id != "c" {
		t.Fatalf("Collect = %+v, want a, c", got)
	}
	got[1].tags[0] = "changed"
	if m["c"].tags[0] != "x" {
		t.Error("Collect shared a slice with the store")
	}
	if none := Collect(&mu, &m, func(row) bool { return false }, Same[row], byID); none == nil || len(none) != 0 {
		t.Errorf("Collect of nothing = %#v, want an empty, non-nil list", none)
	}
}

// TestMapMadeOnFirstWrite: a store that makes a map on its first write,
// under the lock, races with no read (run with -race).
func TestMapMadeOnFirstWrite(t *testing.T) {
	var mu sync.RWMutex
	var m map[string]row
	var wg sync.WaitGroup
	wg.Go(func() {
		mu.Lock()
		defer mu.Unlock()
		m = map[string]row{"a": {id: "a"}}
	})
	wg.Go(func() {
		Collect(&mu, &m, func(row) bool { return true }, Same[row], func(a, b row) int { return cmp.Compare(a.id, b.id) })
		Find(&mu, &m, "a", AnyOwner[row])
	})
	wg.Wait()
}
