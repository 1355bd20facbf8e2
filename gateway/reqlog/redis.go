package reqlog

import (
	"context"
	"fmt"
	"strconv"
	"strings"
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

// dailyKey names an account's counts of t's UTC day; the hash tag keeps an
// account's keys in one cluster slot.
func dailyKey(accountID string, t time.Time) string {
	return "reqdaily:{" + accountID + "}:" + dayKey(t)
}

// Daily implements Store: one pipeline of HGETALLs.
func (r *Redis) Daily(ctx context.Context, accountID string, to time.Time, n int) ([]Day, error) {
	dates := days(to, n)
	cmds := make([]*redis.MapStringStringCmd, len(dates))
	_, err := r.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, d := range dates {
			cmds[i] = p.HGetAll(ctx, dailyKey(accountID, d))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("request counts: %w", err)
	}
	out := make([]Day, len(dates))
	for i, d := range dates {
		out[i] = newDay(d)
		for f, v := range cmds[i].Val() {
			out[i].addField(f, atoi64(v))
		}
	}
	return out, nil
}

// Append implements Store: one pipeline for the whole batch, each entry one
// field (encode), each account's expiry renewed once.
func (r *Redis) Append(ctx context.Context, es []Entry) error {
	_, err := r.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		var buf []byte
		renewed := map[string]bool{}
		type counter struct{ key, field string }
		counts := map[counter]int64{}
		for _, e := range es {
			dk := dailyKey(e.AccountID, e.Time)
			for _, f := range dailyFields(e) {
				counts[counter{dk, f}]++
			}
			k := streamKey(e.AccountID)
			buf = encode(buf[:0], e)
			p.XAdd(ctx, &redis.XAddArgs{Stream: k, MaxLen: Keep, Approx: true, Values: []any{"e", string(buf)}})
			if !renewed[k] {
				renewed[k] = true
				p.Expire(ctx, k, streamTTL)
			}
		}
		// A batch's counts are summed first: one HINCRBY per counter.
		for c, n := range counts {
			p.HIncrBy(ctx, c.key, c.field, n)
			if !renewed[c.key] {
				renewed[c.key] = true
				p.Expire(ctx, c.key, (DailyKeep+1)*24*time.Hour)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("request log: %w", err)
	}
	return nil
}

// sep separates an entry's members in its stream field: no member holds it
// (ids, modes, methods, route patterns and problem slugs are printable).
const sep = '\x1f'

// encode appends e's members, without its account (the stream's key).
func encode(b []byte, e Entry) []byte {
	b = strconv.AppendInt(b, e.Time.UnixMilli(), 10)
	for _, s := range []string{e.CredentialID, e.Mode, e.Method, e.Route} {
		b = append(append(b, sep), s...)
	}
	b = strconv.AppendInt(append(b, sep), int64(e.Status), 10)
	b = strconv.AppendInt(append(b, sep), e.DurationMS, 10)
	b = append(append(b, sep), e.RequestID...)
	return append(append(b, sep), e.Problem...)
}

// decode reads what encode wrote; ok is false for anything else.
func decode(accountID, s string) (Entry, bool) {
	f := strings.Split(s, string(sep))
	if len(f) != 9 {
		return Entry{}, false
	}
	ms, err1 := strconv.ParseInt(f[0], 10, 64)
	status, err2 := strconv.Atoi(f[5])
	took, err3 := strconv.ParseInt(f[6], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return Entry{}, false
	}
	return Entry{Time: time.UnixMilli(ms).UTC(), AccountID: accountID, CredentialID: f[1], Mode: f[2], Method: f[3], Route: f[4],
		Status: status, DurationMS: took, RequestID: f[7], Problem: f[8]}, true
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
		v, _ := m.Values["e"].(string)
		e, ok := decode(accountID, v)
		if ok && q.matches(e) {
			out = append(out, e)
			if len(out) == q.Limit {
				break
			}
		}
	}
	return out, nil
}
