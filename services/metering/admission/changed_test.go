package admission_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/ledgerlane/platform/services/metering/admission"
)

// changedAccounts reads the whole set as account → version.
func changedAccounts(t *testing.T, m *admission.Controller) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for cursor := uint64(0); ; {
		page, next, err := m.Changed(context.Background(), cursor, 100)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range page {
			out[c.AccountID] = c.Version
		}
		if next == 0 {
			return out
		}
		cursor = next
	}
}

// TestChangedMarks: a metered live request marks its account, admitted or
// refused (the mark is its own command beside the script: changed.go), and
// so does journalled live usage reconciled; test pool usage, unmetered
// requests and peeks do not. A check removes the
// mark only when no change came after it was read.
func TestChangedMarks(t *testing.T) {
	m, c := setup(t)
	m.ChangedKey = "ll:test:changed:" + uuid.NewString()
	ctx := context.Background()
	l := limits(c) // 5 included, overage allowed
	hard := l
	hard.HardStop = true
	ids := map[string]string{}
	for _, n := range []string{"live", "test", "unmetered", "refused", "peeked", "reconciled", "marked"} {
		ids[n] = uuid.NewString()
	}
	admit(t, m, admission.Request{AccountID: ids["live"], Metered: true, Limits: l})
	admit(t, m, admission.Request{AccountID: ids["live"], Metered: true, Limits: l, Units: 2})
	admit(t, m, admission.Request{AccountID: ids["test"], Metered: true, Test: true, Limits: l})
	admit(t, m, admission.Request{AccountID: ids["unmetered"], Limits: l})
	if d := admit(t, m, admission.Request{AccountID: ids["refused"], Metered: true, Limits: hard, Units: 6}); d.Outcome != admission.QuotaExceeded {
		t.Fatalf("refused: %+v", d)
	}
	if _, err := m.Usage(ctx, ids["peeked"], l); err != nil {
		t.Fatal(err)
	}
	if err := m.Reconcile(ctx, admission.Request{AccountID: ids["reconciled"], Metered: true, Limits: l}, 3); err != nil {
		t.Fatal(err)
	}
	if err := m.Reconcile(ctx, admission.Request{AccountID: ids["test"], Metered: true, Test: true, Limits: l}, 3); err != nil {
		t.Fatal(err)
	}
	if err := m.MarkChanged(ctx, ids["marked"]); err != nil {
		t.Fatal(err)
	}
	// Versions count changes; the first script call on a Redis may count
	// one twice (runMarked), so only their order is asserted.
	got := changedAccounts(t, m)
	want := []string{ids["live"], ids["refused"], ids["reconciled"], ids["marked"]}
	if len(got) != len(want) {
		t.Fatalf("marked %v, want %v", got, want)
	}
	for _, id := range want {
		if got[id] < 1 {
			t.Fatalf("account %s not marked (all: %v)", id, got)
		}
	}
	if got[ids["live"]] < 2 {
		t.Fatalf("two requests of one account: version %v", got[ids["live"]])
	}

	// A check that read the version before a third request came keeps the
	// mark; one that read the current version removes it.
	read := admission.Changed{AccountID: ids["live"], Version: got[ids["live"]]}
	admit(t, m, admission.Request{AccountID: ids["live"], Metered: true, Limits: l})
	if ok, err := m.Checked(ctx, read); err != nil || ok {
		t.Fatalf("Checked with a stale version = %v, %v", ok, err)
	}
	now := changedAccounts(t, m)[ids["live"]]
	if now <= read.Version {
		t.Fatalf("a third request left the version at %v", now)
	}
	if ok, err := m.Checked(ctx, admission.Changed{AccountID: ids["live"], Version: now}); err != nil || !ok {
		t.Fatalf("Checked with the current version = %v, %v", ok, err)
	}
	left := changedAccounts(t, m)
	keys := make([]string, 0, len(left))
	for id := range left {
		keys = append(keys, id)
	}
	slices.Sort(keys)
	wantLeft := []string{ids["refused"], ids["reconciled"], ids["marked"]}
	slices.Sort(wantLeft)
	if !slices.Equal(keys, wantLeft) {
		t.Fatalf("left %v, want %v", keys, wantLeft)
	}
}

// TestOrphanMarks: a mark nobody's store has is removed only once it has
// sat at one version for the wait, measured from when it was first seen;
// a change restarts the wait.
func TestOrphanMarks(t *testing.T) {
	m, _ := setup(t)
	m.ChangedKey = "ll:{test}:changed:" + uuid.NewString()
	ctx := context.Background()
	id := uuid.NewString()
	if err := m.MarkChanged(ctx, id); err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 5, 10, 12, 0, 0, 0, time.UTC)
	wait := 10 * time.Minute
	steps := []struct {
		at      time.Duration
		version float64
		mark    bool // mark the account again before this step
		removed bool
	}{
		{at: 0, version: 1},
		{at: wait - time.Second, version: 1},
		{at: wait + time.Second, version: 2, mark: true}, // changed: the wait starts again
		{at: 2 * wait, version: 2},
		{at: 2*wait + time.Second, version: 2, removed: true},
	}
	for i, st := range steps {
		if st.mark {
			if err := m.MarkChanged(ctx, id); err != nil {
				t.Fatal(err)
			}
		}
		removed, err := m.Orphan(ctx, admission.Changed{AccountID: id, Version: st.version}, t0.Add(st.at), wait)
		if err != nil || removed != st.removed {
			t.Fatalf("step %d: Orphan = %v, %v; want %v", i, removed, err, st.removed)
		}
	}
	if left := changedAccounts(t, m); len(left) != 0 {
		t.Fatalf("left %v", left)
	}
}
