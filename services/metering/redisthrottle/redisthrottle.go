// Package redisthrottle is identity's Throttle in Redis: one count per
// subject shared by every metering replica, kept by a Lua script
// (throttle.lua) as a sorted set per subject. When Redis fails a throttle
// counts in this process instead (and logs), so an outage weakens the
// limit to per replica rather than lifting it or refusing every sign-in.
package redisthrottle

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"log/slog"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ledgerlane/platform/services/metering/identity"
)

// throttle.lua keeps one subject's attempts as a sorted set scored by the
// attempt's time in microseconds of the service clock, so every replica
// shares one count and the window follows the caller's clock exactly as
// identity.MemThrottle's does. The key's TTL is only garbage collection.
//
// KEYS[1] the subject's set; ARGV: op ("blocked"|"fail"), now µs, window µs,
// max, member (unique per attempt). Returns the wait in µs (blocked) or 0.
//
//go:embed throttle.lua
var scriptSource string

var throttleScript = redis.NewScript(scriptSource)

// Throttle is an identity.Throttle shared by every metering replica through
// Redis.
type Throttle struct {
	rdb      redis.UniversalClient
	prefix   string // e.g. "ll:"
	kind     string // e.g. "signin"
	max      int
	window   time.Duration
	log      *slog.Logger
	fallback *identity.MemThrottle
}

// redisKey names key's set. The subject is hashed (no address in clear in
// key names) and the whole name is one hash tag, so the script's single key
// lives on one Redis Cluster slot.
func (t *Throttle) redisKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return t.prefix + "{throttle:" + t.kind + ":" + hex.EncodeToString(sum[:]) + "}:n"
}

func (t *Throttle) Blocked(ctx context.Context, key string, now time.Time) time.Duration {
	wait, err := throttleScript.Run(ctx, t.rdb, []string{t.redisKey(key)},
		"blocked", now.UnixMicro(), t.window.Microseconds(), t.max, "").Int64()
	if err != nil {
		t.log.WarnContext(ctx, "throttle: redis failed, counting in this process", "kind", t.kind, "err", err)
		return t.fallback.Blocked(ctx, key, now)
	}
	// While Redis was down the fallback may have counted attempts: they still count.
	return max(time.Duration(wait)*time.Microsecond, t.fallback.Blocked(ctx, key, now))
}

func (t *Throttle) Fail(ctx context.Context, key string, now time.Time) {
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

func (t *Throttle) Clear(ctx context.Context, key string) {
	t.fallback.Clear(ctx, key)
	if err := t.rdb.Del(ctx, t.redisKey(key)).Err(); err != nil {
		t.log.WarnContext(ctx, "throttle: redis failed to clear", "kind", t.kind, "err", err)
	}
}

// New returns the Throttle of kind in rdb under prefix.
func New(rdb redis.UniversalClient, prefix, kind string, max int, window time.Duration, log *slog.Logger) *Throttle {
	return &Throttle{rdb: rdb, prefix: prefix, kind: kind, max: max, window: window, log: log,
		fallback: identity.NewMemThrottle(max, window)}
}

// DefaultPrefix starts the Redis keys of the portal throttles.
const DefaultPrefix = "ll:"

// Kinds makes the sign-in, sign-up, OAuth client, password reset,
// verification mail and invitation throttles (identity.Config.Throttles)
// shared by every replica on rdb, under key prefix (empty:
// DefaultPrefix).
func Kinds(rdb redis.UniversalClient, prefix string, log *slog.Logger) identity.ThrottleFactory {
	if prefix == "" {
		prefix = DefaultPrefix
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return func(kind string, max int, window time.Duration) identity.Throttle {
		return New(rdb, prefix, kind, max, window, log)
	}
}
