package periodic

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}
func (b *syncBuffer) String() string { b.mu.Lock(); defer b.mu.Unlock(); return b.b.String() }

// TestLoop: passes run every interval until the context ends and never
// overlap; the first comes after one interval; a failed pass is logged and
// the loop goes on; a pass failing because of the shutdown is not logged,
// and none starts after it.
func TestLoop(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var logs syncBuffer
	var passes, running, overlapped atomic.Int32
	first := make(chan time.Time, 1)
	const every = 20 * time.Millisecond
	began := time.Now()
	done := make(chan struct{})
	go func() {
		defer close(done)
		Task{Name: "test pass", Every: every, Log: slog.New(slog.NewTextHandler(&logs, nil)),
			Run: func(ctx context.Context) error {
				if running.Add(1) > 1 {
					overlapped.Add(1)
				}
				defer running.Add(-1)
				n := passes.Add(1)
				if n == 1 {
					first <- time.Now()
				}
				time.Sleep(30 * time.Millisecond) // outlasts the interval
				switch {
				case n == 2:
					return errors.New("disk full")
				case n >= 4:
					cancel()
					return ctx.Err()
				}
				return nil
			}}.Loop(ctx)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the loop did not return after its context ended")
	}
	if got := passes.Load(); got != 4 {
		t.Fatalf("%d passes, want 4 (the fourth ends the context)", got)
	}
	if overlapped.Load() != 0 {
		t.Fatal("passes overlapped")
	}
	if at := (<-first).Sub(began); at < every {
		t.Fatalf("first pass %s after the start, before one interval", at)
	}
	if got := strings.Count(logs.String(), "test pass"); got != 1 || !strings.Contains(logs.String(), "disk full") {
		t.Fatalf("want exactly the failed pass logged:\n%s", logs.String())
	}
}

// TestLoopAtStart: with AtStart the first pass does not wait for the
// interval (an hour here).
func TestLoopAtStart(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan struct{}, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		Task{Name: "at start", Every: time.Hour, AtStart: true, Run: func(context.Context) error { ran <- struct{}{}; return nil }}.Loop(ctx)
	}()
	select {
	case <-ran:
	case <-time.After(10 * time.Second):
		t.Fatal("no pass at start")
	}
	cancel()
	<-done
}
