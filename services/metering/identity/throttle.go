package identity

import (
	"context"
	"slices"
	"sync"
	"time"
)

// Throttle counts attempts per subject (an address, a client id, a user id)
// within a sliding window: once max attempts fall within the last window,
// the subject is refused until the oldest of those leaves the window.
// Times come from the caller (the Service's clock), never from the store,
// so tests with a fake clock behave as production does.
//
// Throttles count in this process (MemThrottle) unless Config.Throttles
// makes them elsewhere (redisthrottle: in Redis, shared by every replica).
type Throttle interface {
	// Blocked is how long attempts for key are still refused (0: not).
	Blocked(ctx context.Context, key string, now time.Time) time.Duration
	// Fail counts one attempt for key at now.
	Fail(ctx context.Context, key string, now time.Time)
	// Clear forgets key's attempts (after a success).
	Clear(ctx context.Context, key string)
}

// ThrottleFactory makes the Throttle of kind ("signin", "signup",
// "clientauth", "reset", "verify", "invite") with its limit.
type ThrottleFactory func(kind string, max int, window time.Duration) Throttle

// MemThrottle is a Throttle in this process: each replica counts on its own.
// Used when metering has no Redis, and as the Redis throttle's fallback.
type MemThrottle struct {
	mu       sync.Mutex
	failures map[string][]time.Time
	max      int
	window   time.Duration
}

// NewMemThrottle returns a MemThrottle of max attempts within window.
func NewMemThrottle(max int, window time.Duration) *MemThrottle {
	return &MemThrottle{max: max, window: window}
}

func (t *MemThrottle) recent(key string, now time.Time) []time.Time {
	f := slices.DeleteFunc(t.failures[key], func(at time.Time) bool { return !now.Before(at.Add(t.window)) })
	if len(f) == 0 {
		delete(t.failures, key)
	} else {
		t.failures[key] = f
	}
	return f
}

func (t *MemThrottle) Blocked(_ context.Context, key string, now time.Time) time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	f := t.recent(key, now)
	if len(f) < t.max {
		return 0
	}
	return f[len(f)-t.max].Add(t.window).Sub(now)
}

func (t *MemThrottle) Fail(_ context.Context, key string, now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.failures == nil {
		t.failures = map[string][]time.Time{}
	}
	if len(t.failures) > 100_000 { // bound memory under a spray of addresses
		for k := range t.failures {
			t.recent(k, now)
		}
	}
	t.failures[key] = append(t.recent(key, now), now)
}

func (t *MemThrottle) Clear(_ context.Context, key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.failures, key)
}
