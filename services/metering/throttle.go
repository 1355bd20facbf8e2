package metering

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Throttle counts attempts per subject (an address, a client id, a user id)
// within a sliding window: once max attempts fall within the last window,
// the subject is refused until the oldest of those leaves the window.
// Times come from the caller (the Service's clock), never from the store,
// so tests with a fake clock behave as production does.
type Throttle interface {
	// Blocked is how long attempts for key are still refused (0: not).
	Blocked(ctx context.Context, key string, now time.Time) time.Duration
	// Fail counts one attempt for key at now.
	Fail(ctx context.Context, key string, now time.Time)
	// Clear forgets key's attempts (after a success).
	Clear(ctx context.Context, key string)
}

// memThrottle is a Throttle in this process: each replica counts on its own.
// Used when metering has no Redis, and as the Redis throttle's fallback.
type memThrottle struct {
	mu       sync.Mutex
	failures map[string][]time.Time
	max      int
	window   time.Duration
}

func newMemThrottle(max int, window time.Duration) *memThrottle {
	return &memThrottle{max: max, window: window}
}

func (t *memThrottle) recent(key string, now time.Time) []time.Time {
	f := slices.DeleteFunc(t.failures[key], func(at time.Time) bool { return !now.Before(at.Add(t.window)) })
	if len(f) == 0 {
		delete(t.failures, key)
	} else {
		t.failures[key] = f
	}
	return f
}

func (t *memThrottle) Blocked(_ context.Context, key string, now time.Time) time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	f := t.recent(key, now)
	if len(f) < t.max {
		return 0
	}
	return f[len(f)-t.max].Add(t.window).Sub(now)
}

func (t *memThrottle) Fail(_ context.Context, key string, now time.Time) {
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

func (t *memThrottle) Clear(_ context.Context, key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.failures, key)
}

// throttleScript keeps one subject's attempts as a sorted set scored by the
// attempt's time in microseconds of the service clock, so every replica
// shares one count and the window follows the caller's clock exactly as
// memThrottle's does. The key's TTL is only garbage collection.
//
// KEYS[1] the subject's set; ARGV: op ("blocked"|"fail"), now µs, window µs,
// max, member (unique per attempt). Returns the wait in µs (blocked) or 0.
var throttleScript = redis.NewScript(`
local key, op = KEYS[1], ARGV[1]
local now, window, max = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
-- an attempt at 'at' counts while now < at + window
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
if op == 'fail' then
  redis.call('ZADD', key, now, ARGV[5])
  -- only the newest max attempts decide the wait: keep no more
  redis.call('ZREMRANGEBYRANK', key, 0, -(max + 1))
  redis.call('PEXPIRE', key, math.ceil(window / 1000) + 60000)
  return 0
end
local n = redis.call('ZCARD', key)
if n < max then return 0 end
local oldest = redis.call('ZRANGE', key, n - max, n - max, 'WITHSCORES')
return tonumber(oldest[2]) + window - now
`)

// redisThrottle is a Throttle shared by every metering replica through Redis.
// When Redis fails it counts in this process instead (and logs), so an
// outage weakens the limit to per replica rather than lifting it or
// refusing every sign-in.
type redisThrottle struct {
	rdb      redis.UniversalClient
	prefix   string // e.g. "ll:"
	kind     string // e.g. "signin"
	max      int
	window   time.Duration
	log      *slog.Logger
	fallback *memThrottle
}

// redisKey names key's set. The subject is hashed (no address in clear in
// key names) and the whole name is one hash tag, so the script's single key
// lives on one Redis Cluster slot.
func (t *redisThrottle) redisKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return t.prefix + "{throttle:" + t.kind + ":" + hex.EncodeToString(sum[:]) + "}:n"
}

func (t *redisThrottle) Blocked(ctx context.Context, key string, now time.Time) time.Duration {
	wait, err := throttleScript.Run(ctx, t.rdb, []string{t.redisKey(key)},
		"blocked", now.UnixMicro(), t.window.Microseconds(), t.max, "").Int64()
	if err != nil {
		t.log.WarnContext(ctx, "throttle: redis failed, counting in this process", "kind", t.kind, "err", err)
		return t.fallback.Blocked(ctx, key, now)
	}
	// While Redis was down the fallback may have counted attempts: they still count.
	return max(time.Duration(wait)*time.Microsecond, t.fallback.Blocked(ctx, key, now))
}

func (t *redisThrottle) Fail(ctx context.Context, key string, now time.Time) {
	var b [8]byte
	_, _ = rand.Read(b[:])
	member := strconv.FormatInt(now.UnixMicro(), 10) + ":" + hex.EncodeToString(b[:])
	err := throttleScript.Run(ctx, t.rdb, []string{t.redisKey(key)},
		"fail", now.UnixMicro(), t.window.Microseconds(), t.max, member).Err()
	if err != nil {
		t.log.WarnContext(ctx, "throttle: redis failed, counting in this process", "kind", t.kind, "err", err)
		t.fallback.Fail(ctx, key, now)
	}
}

func (t *redisThrottle) Clear(ctx context.Context, key string) {
	t.fallback.Clear(ctx, key)
	if err := t.rdb.Del(ctx, t.redisKey(key)).Err(); err != nil {
		t.log.WarnContext(ctx, "throttle: redis failed to clear", "kind", t.kind, "err", err)
	}
}

// newRedisThrottle returns a Throttle of kind in rdb under prefix.
func newRedisThrottle(rdb redis.UniversalClient, prefix, kind string, max int, window time.Duration, log *slog.Logger) *redisThrottle {
	return &redisThrottle{rdb: rdb, prefix: prefix, kind: kind, max: max, window: window, log: log,
		fallback: newMemThrottle(max, window)}
}

// DefaultThrottlePrefix starts the Redis keys of the portal throttles.
const DefaultThrottlePrefix = "ll:"

// UseRedisThrottles makes the sign-in, sign-up, OAuth client, password reset
// and verification mail throttles shared by every replica on rdb, under key
// prefix (empty: DefaultThrottlePrefix). Without it each process counts on
// its own. Call before serving.
func (s *Service) UseRedisThrottles(rdb redis.UniversalClient, prefix string) {
	if rdb == nil {
		return
	}
	if prefix == "" {
		prefix = DefaultThrottlePrefix
	}
	s.signins = newRedisThrottle(rdb, prefix, "signin", SignInFailures, SignInWindow, s.log)
	s.signups = newRedisThrottle(rdb, prefix, "signup", SignUps, SignUpWindow, s.log)
	s.clientAuths = newRedisThrottle(rdb, prefix, "clientauth", ClientAuthFailures, ClientAuthWindow, s.log)
	s.resets = newRedisThrottle(rdb, prefix, "reset", ResetRequests, ResetWindow, s.log)
	s.verifies = newRedisThrottle(rdb, prefix, "verify", VerifyMails, VerifyWindow, s.log)
	s.invites = newRedisThrottle(rdb, prefix, "invite", Invites, InviteWindow, s.log)
}
