package finance_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/ledgerlane/platform/services/finance"
)

// TestSnapshotJob moves the clock over several days: each day's first run
// takes one snapshot per user, later runs (and racing runs, as on several
// replicas) take none, and the history gets one point per day the job ran.
func TestSnapshotJob(t *testing.T) {
	var mu sync.Mutex
	clock := now
	e := newEnv(t, func() time.Time { mu.Lock(); defer mu.Unlock(); return clock })
	ctx := context.Background()
	for day := range 4 {
		if day > 0 {
			mu.Lock()
			clock = now.AddDate(0, 0, day).Add(-13 * time.Hour) // early morning of the next day
			mu.Unlock()
		}
		var wg sync.WaitGroup
		counts := make([]int, 4)
		for i := range counts { // four replicas at once
			wg.Add(1)
			go func() {
				defer wg.Done()
				n, err := e.nw.SnapshotDue(ctx)
				if err != nil {
					t.Error(err)
				}
				counts[i] = n
			}()
		}
		wg.Wait()
		if again, err := e.nw.SnapshotDue(ctx); err != nil || again != 0 {
			t.Fatalf("day %d: a second run took %d (%v)", day, again, err)
		}
		snaps, err := e.store.ListNetWorthSnapshots(ctx, e.demo.UserID, time.Time{}, finance.Day(clock))
		if err != nil {
			t.Fatal(err)
		}
		if len(snaps) != day+1 {
			t.Fatalf("day %d: %d snapshots (runs took %v)", day, len(snaps), counts)
		}
	}
	h, err := e.nw.GetNetWorthHistory(ctx, e.read, "30d", "USD")
	if err != nil {
		t.Fatal(err)
	}
	// 30 days: the four the job took are stored, the 26 before derived.
	if len(h.Points) != 30 || !h.Points[29].Date.Equal(finance.Day(now).AddDate(0, 0, 3)) {
		t.Fatalf("history: %+v", h.Points)
	}
	for i, p := range h.Points {
		if stored := !p.Date.Before(finance.Day(now)); p.Derived == stored {
			t.Fatalf("point %d (%s): derived %v", i, p.Date.Format(finance.DateLayout), p.Derived)
		}
	}
}

// TestRunSnapshots: the scheduled loop takes today's snapshot and stops
// with its context.
func TestRunSnapshots(t *testing.T) {
	e := newEnv(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); e.nw.RunSnapshots(ctx, time.Millisecond) }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		snaps, err := e.store.ListNetWorthSnapshots(context.Background(), e.demo.UserID, finance.Day(now), finance.Day(now))
		if err != nil {
			t.Fatal(err)
		}
		if len(snaps) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no snapshot taken")
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	<-done
}
