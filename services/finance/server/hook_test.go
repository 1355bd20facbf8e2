package server

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ledgerlane/platform/services/finance"
)

// recorder is both ends of the hook: the checker and the notifier it
// passes announcements on to.
type recorder struct {
	finance.Notifier
	checks, announced atomic.Int64
	// held, when set, holds every check until it is closed.
	held chan struct{}
	// afterLast is what announced read when the last check began.
	afterLast atomic.Int64
}

func (r *recorder) AfterWrite(context.Context, string) {
	r.afterLast.Store(r.announced.Load())
	if r.held != nil {
		<-r.held
	}
	r.checks.Add(1)
}

func (r *recorder) Written(context.Context, string) { r.announced.Add(1) }

func TestThresholdHook(t *testing.T) {
	t.Run("announced at once, a burst makes at most two checks", func(t *testing.T) {
		r := &recorder{held: make(chan struct{})}
		h := &thresholdHook{Notifier: r, budgets: r}
		for i := range 10 {
			h.Written(context.Background(), "u1")
			if got := r.announced.Load(); got != int64(i+1) {
				t.Fatalf("after write %d: %d announced; the announcement must not wait for the check", i+1, got)
			}
		}
		close(r.held)
		h.wait()
		if n := r.checks.Load(); n < 1 || n > 2 {
			t.Fatalf("%d checks for a burst of 10 writes, want 1 or 2", n)
		}
		// The last check began after the last write was announced (it
		// saw all ten), so no write went unchecked.
		if got := r.afterLast.Load(); got != 10 {
			t.Fatalf("the last check began after %d announcements, want 10", got)
		}
		if len(h.again) != 0 {
			t.Fatalf("workers left: %v", h.again)
		}
	})
	t.Run("users apart, concurrent writes", func(t *testing.T) {
		r := &recorder{}
		h := &thresholdHook{Notifier: r, budgets: r}
		var wg sync.WaitGroup
		for u := range 4 {
			for range 25 {
				wg.Go(func() { h.Written(context.Background(), fmt.Sprint("u", u)) })
			}
		}
		wg.Wait()
		h.wait()
		if n := r.announced.Load(); n != 100 {
			t.Fatalf("%d announced, want 100", n)
		}
		if n := r.checks.Load(); n < 4 || n > 100 {
			t.Fatalf("%d checks for 4 users", n)
		}
		if len(h.again) != 0 {
			t.Fatalf("workers left: %v", h.again)
		}
	})
}
