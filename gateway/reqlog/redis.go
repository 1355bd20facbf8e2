package reqlog

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Redis is a Store shared by every replica: one stream per account,
// "reqlog:{account}", capped at about Keep entries and expiring 30 days
// after its last request.
type Redis struct{ c redis.UniversalClient }

// NewRedis returns a Redis store on c.
func NewRedis(c redis.UniversalClient) *Redis { return &Redis{c: c} }

const streamTTL = 30 * 24 * time.Hour

func streamKey(accountID string) string { return "reqlog:{" + accountID + "}" }

// Append implements Store: one pipeline for the whole batch.
func (r *Redis) Append(ctx context.Context, es []Entry) error {
	_, err := r.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, e := range es {
			k := streamKey(e.AccountID)
			p.XAdd(ctx, &redis.XAddArgs{Stream: k, MaxLen: Keep, Approx: true, Values: []any{
				"t", e.Time.UnixMilli(), "c", e.CredentialID, "m", e.Mode, "x", e.Method, "r", e.Route,
				"s", e.Status, "d", e.DurationMS, "i", e.RequestID, "p", e.Problem}})
			p.Expire(ctx, k, streamTTL)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("request log: %w", err)
	}
	return nil
}

// Recent implements Store. A request id or mode filter reads the whole
// stream (at most about Keep entries); a plain listing only what it needs.
func (r *Redis) Recent(ctx context.Context, accountID string, q Query) ([]Entry, error) {
	count := int64(q.Limit)
	if q.RequestID != "" || q.Mode != "" {
		count = 2 * Keep // MAXLEN ~ trims in whole nodes: a little over Keep
	}
	msgs, err := r.c.XRevRangeN(ctx, streamKey(accountID), "+", "-", count).Result()
	if err != nil {
		return nil, fmt.Errorf("request log: %w", err)
	}
	out := []Entry{}
	for _, m := range msgs {
		e := entryOf(accountID, m.Values)
		if q.matches(e) {
			out = append(out, e)
			if len(out) == q.Limit {
				break
			}
		}
	}
	return out, nil
}

func entryOf(accountID string, v map[string]any) Entry {
	str := func(k string) string { s, _ := v[k].(string); return s }
	num := func(k string) int64 { n, _ := strconv.ParseInt(str(k), 10, 64); return n }
	return Entry{Time: time.UnixMilli(num("t")).UTC(), AccountID: accountID, CredentialID: str("c"), Mode: str("m"),
		Method: str("x"), Route: str("r"), Status: int(num("s")), DurationMS: num("d"), RequestID: str("i"), Problem: str("p")}
}
