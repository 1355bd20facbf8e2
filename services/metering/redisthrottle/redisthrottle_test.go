package redisthrottle

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ledgerlane/platform/services/metering/identity"
)

// redisForTest is a client on TEST_REDIS_URL and a key prefix unique to this
// run (parallel stacks share that Redis), its keys deleted with the test;
// the test skips without it.
func redisForTest(t *testing.T) (redis.UniversalClient, string) {
	t.Helper()
	url := os.Getenv("TEST_REDIS_URL")
	if url == "" {
		t.Skip("TEST_REDIS_URL not set: the Redis throttle is not tested")
	}
	opt, err := redis.ParseURL(url)
	if err != nil {
		t.Fatalf("TEST_REDIS_URL: %v", err)
	}
	rdb := redis.NewClient(opt)
	var b [8]byte
	_, _ = rand.Read(b[:])
	prefix := "lltest-" + hex.EncodeToString(b[:]) + ":"
	t.Cleanup(func() {
		ctx := context.Background()
		iter := rdb.Scan(ctx, 0, prefix+"*", 100).Iterator()
		for iter.Next(ctx) {
			rdb.Del(ctx, iter.Val())
		}
		rdb.Close()
	})
	return rdb, prefix
}

// throttleStep is one action on a throttle, with the wait expected after it.
type throttleStep struct {
	advance time.Duration // move the clock first
	op      string        // "fail", "clear" or "" (only check)
	key     string        // "" means "a@example.com"
	want    time.Duration // Blocked(key) after the step
}

var throttleCases = []struct {
	name  string
	steps []throttleStep
}{
	{"under the limit is not blocked", []throttleStep{
		{op: "fail"}, {op: "fail"}, {op: "fail"}, {op: "fail"},
	}},
	{"the limit blocks until the oldest leaves the window", []throttleStep{
		{op: "fail"}, {advance: time.Minute, op: "fail"}, {op: "fail"}, {op: "fail"},
		{advance: time.Minute, op: "fail", want: 13 * time.Minute},
		{advance: 12 * time.Minute, want: time.Minute},
		{advance: time.Minute - time.Microsecond, want: time.Microsecond},
		// exactly window after the first: it no longer counts
		{advance: time.Microsecond, want: 0},
		// one more failure makes the limit again, until the second leaves
		{op: "fail", want: time.Minute},
	}},
	{"clear forgets the failures", []throttleStep{
		{op: "fail"}, {op: "fail"}, {op: "fail"}, {op: "fail"}, {op: "fail", want: 15 * time.Minute},
		{op: "clear"}, {op: "fail"},
	}},
	{"subjects are counted apart", []throttleStep{
		{op: "fail"}, {op: "fail"}, {op: "fail"}, {op: "fail"}, {op: "fail", want: 15 * time.Minute},
		{key: "b@example.com"}, {op: "fail", key: "b@example.com"},
		{op: "clear", key: "b@example.com", want: 0},
		{want: 15 * time.Minute},
	}},
	{"the whole window passed forgets everything", []throttleStep{
		{op: "fail"}, {op: "fail"}, {op: "fail"}, {op: "fail"}, {op: "fail", want: 15 * time.Minute},
		{advance: 15 * time.Minute, want: 0},
		{op: "fail"}, {op: "fail"}, {op: "fail"}, {op: "fail"},
	}},
}

func runThrottleCases(t *testing.T, newThrottle func(t *testing.T) identity.Throttle) {
	ctx := context.Background()
	for _, c := range throttleCases {
		t.Run(c.name, func(t *testing.T) {
			th := newThrottle(t)
			at := time.Date(2026, 5, 4, 12, 30, 0, 123456000, time.UTC)
			for i, s := range c.steps {
				at = at.Add(s.advance)
				key := s.key
				if key == "" {
					key = "a@example.com"
				}
				switch s.op {
				case "fail":
					th.Fail(ctx, key, at)
				case "clear":
					th.Clear(ctx, key)
				}
				if got := th.Blocked(ctx, key, at); got != s.want {
					t.Fatalf("step %d (%+v): Blocked = %v, want %v", i, s, got, s.want)
				}
			}
		})
	}
}

func TestMemThrottle(t *testing.T) {
	runThrottleCases(t, func(*testing.T) identity.Throttle {
		return identity.NewMemThrottle(identity.SignInFailures, identity.SignInWindow)
	})
}

func TestRedisThrottle(t *testing.T) {
	rdb, prefix := redisForTest(t)
	n := 0
	runThrottleCases(t, func(*testing.T) identity.Throttle {
		n++ // a kind per case: cases do not see each other's counts
		return New(rdb, prefix, "case"+string(rune('a'+n)), identity.SignInFailures, identity.SignInWindow, discard)
	})
}

var discard = slog.New(slog.DiscardHandler)

func TestRedisThrottleKeys(t *testing.T) {
	rdb, prefix := redisForTest(t)
	th := New(rdb, prefix, "signin", identity.SignInFailures, identity.SignInWindow, discard)
	key := th.redisKey("ann@example.com")
	if strings.Contains(key, "ann") || !strings.HasPrefix(key, prefix+"{throttle:signin:") || !strings.HasSuffix(key, "}:n") {
		t.Errorf("key %q: want the address hashed inside one hash tag", key)
	}
	ctx := context.Background()
	at := time.Now()
	for range 50 {
		th.Fail(ctx, "ann@example.com", at)
	}
	if n := rdb.ZCard(ctx, key).Val(); n != identity.SignInFailures {
		t.Errorf("set holds %d attempts, want only the newest %d", n, identity.SignInFailures)
	}
	if ttl := rdb.PTTL(ctx, key).Val(); ttl <= 0 || ttl > identity.SignInWindow+time.Minute {
		t.Errorf("TTL %v, want at most window + 1m", ttl)
	}
}

// A Redis that does not answer falls back to counting in the process.
func TestRedisThrottleFallsBack(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: 100 * time.Millisecond})
	defer rdb.Close()
	th := New(rdb, "x:", "signin", identity.SignInFailures, identity.SignInWindow, discard)
	ctx := context.Background()
	at := time.Now()
	for range identity.SignInFailures {
		th.Fail(ctx, "a", at)
	}
	if got := th.Blocked(ctx, "a", at); got != identity.SignInWindow {
		t.Errorf("Blocked with Redis down = %v, want %v", got, identity.SignInWindow)
	}
}
