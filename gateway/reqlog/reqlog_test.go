package reqlog

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

// stores runs f against the memory store, miniredis, and the real Redis of
// TEST_REDIS_URL when set.
func stores(t *testing.T, f func(t *testing.T, s Store)) {
	t.Run("memory", func(t *testing.T) { f(t, NewMemory()) })
	t.Run("miniredis", func(t *testing.T) {
		mr := miniredis.RunT(t)
		c := redis.NewClient(&redis.Options{Addr: mr.Addr()})
		t.Cleanup(func() { c.Close() })
		f(t, NewRedis(c))
	})
	t.Run("redis", func(t *testing.T) {
		u := os.Getenv("TEST_REDIS_URL")
		if u == "" {
			t.Skip("TEST_REDIS_URL is not set: skipping the real Redis run")
		}
		opt, err := redis.ParseURL(u)
		if err != nil {
			t.Fatal(err)
		}
		c := redis.NewClient(opt)
		t.Cleanup(func() { c.Close() })
		f(t, NewRedis(c))
	})
}

func entry(acct string, i int) Entry {
	mode := "live"
	if i%3 == 0 {
		mode = "test"
	}
	return Entry{Time: time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Millisecond), AccountID: acct,
		CredentialID: "cred", Mode: mode, Method: "POST", Route: "/v1/convert", Status: 200, DurationMS: int64(i), RequestID: fmt.Sprintf("req-%d", i)}
}

func TestStores(t *testing.T) {
	stores(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		acct := fmt.Sprintf("acct-%d", time.Now().UnixNano())
		var batch []Entry
		for i := range Keep + 200 {
			batch = append(batch, entry(acct, i))
		}
		batch = append(batch, entry(acct+"-other", 1))
		if err := s.Append(ctx, batch); err != nil {
			t.Fatal(err)
		}
		got, err := s.Recent(ctx, acct, Query{Limit: 3})
		if err != nil || len(got) != 3 || got[0].RequestID != fmt.Sprintf("req-%d", Keep+199) || got[2].RequestID != fmt.Sprintf("req-%d", Keep+197) {
			t.Fatalf("newest three: %v %v", got, err)
		}
		if got[0] != batch[Keep+199] {
			t.Fatalf("round trip: %+v, want %+v", got[0], batch[Keep+199])
		}
		one, err := s.Recent(ctx, acct, Query{Limit: 50, RequestID: "req-1100"})
		if err != nil || len(one) != 1 || one[0].DurationMS != 1100 {
			t.Fatalf("by request id: %v %v", one, err)
		}
		tests, err := s.Recent(ctx, acct, Query{Limit: 10, Mode: "test"})
		if err != nil || len(tests) != 10 {
			t.Fatalf("test mode: %v %v", tests, err)
		}
		for _, e := range tests {
			if e.Mode != "test" {
				t.Fatalf("a live entry among test ones: %+v", e)
			}
		}
		all, err := s.Recent(ctx, acct, Query{Limit: 2 * Keep})
		if err != nil || len(all) < Keep || len(all) > Keep+200 {
			t.Fatalf("capped at about %d: %d %v", Keep, len(all), err)
		}
		if other, _ := s.Recent(ctx, acct+"-other", Query{Limit: 50}); len(other) != 1 {
			t.Fatalf("another account's log: %v", other)
		}
		if none, err := s.Recent(ctx, "nobody", Query{Limit: 50}); err != nil || len(none) != 0 {
			t.Fatalf("an account without requests: %v %v", none, err)
		}
	})
}

type failing struct{ Store }

func (failing) Append(context.Context, []Entry) error { return fmt.Errorf("down") }

// TestLog: Record never blocks and drops beyond its bound; a read flushes
// this replica's buffer first; a failed write drops its batch and counts it.
func TestLog(t *testing.T) {
	l := New(NewMemory(), nil)
	for i := range maxPending + 5 {
		l.Record(entry("a", i))
	}
	if l.Dropped() != 5 {
		t.Fatalf("dropped %d, want 5", l.Dropped())
	}
	got, err := l.Recent(context.Background(), "a", Query{})
	if err != nil || len(got) != 50 || got[0].RequestID != fmt.Sprintf("req-%d", maxPending-1) {
		t.Fatalf("after a read: %d %v", len(got), err)
	}
	f := New(failing{NewMemory()}, nil)
	f.Record(entry("a", 1))
	if err := f.Flush(context.Background()); err == nil || f.Dropped() != 1 {
		t.Fatalf("a failed flush: %v, dropped %d", err, f.Dropped())
	}
}

// FuzzDecode: any stream field decodes or is refused, never panics; what
// encode writes decodes to the same entry.
func FuzzDecode(f *testing.F) {
	f.Add("1764324000000\x1fcred\x1flive\x1fGET\x1f/v1/formats\x1f200\x1f3\x1freq-1\x1f", "cred", "/v1/jobs/{id}", "not-found", int64(17), 404)
	f.Fuzz(func(t *testing.T, raw, cred, route, prob string, took int64, status int) {
		_, _ = decode("a", raw)
		if strings.ContainsRune(cred+route+prob, sep) {
			return
		}
		e := Entry{Time: time.UnixMilli(took).UTC(), AccountID: "a", CredentialID: cred, Mode: "test", Method: "POST", Route: route,
			Status: status, DurationMS: took, RequestID: "r", Problem: prob}
		got, ok := decode("a", string(encode(nil, e)))
		if !ok || got != e {
			t.Fatalf("round trip: %+v, %v; want %+v", got, ok, e)
		}
	})
}

// BenchmarkRecord is the request path's cost: one entry into the buffer
// (flushed to the memory store every maxPending/2 entries, off the clock).
func BenchmarkRecord(b *testing.B) {
	l := New(NewMemory(), nil)
	e := entry("a", 1)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		l.Record(e)
		if i%(maxPending/2) == 0 {
			b.StopTimer()
			_ = l.Flush(context.Background())
			b.StartTimer()
		}
	}
}

// TestDaily: the counts of each UTC day by mode and status class, route and
// credential, oldest day first, a day without requests included; another
// account's are apart.
func TestDaily(t *testing.T) {
	stores(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		acct := fmt.Sprintf("acct-%d", time.Now().UnixNano())
		d0 := time.Date(2026, 11, 26, 23, 59, 0, 0, time.UTC)
		es := []Entry{
			{Time: d0, AccountID: acct, CredentialID: "k1", Mode: "live", Route: "/v1/convert", Status: 200},
			{Time: d0, AccountID: acct, CredentialID: "k1", Mode: "live", Route: "/v1/convert", Status: 422},
			{Time: d0.Add(time.Minute), AccountID: acct, CredentialID: "k2", Mode: "test", Route: "/v1/formats", Status: 200},
			{Time: d0.Add(2 * 24 * time.Hour), AccountID: acct, CredentialID: "k1", Mode: "live", Route: "/v1/convert", Status: 503},
			{Time: d0, AccountID: acct + "-other", CredentialID: "k9", Mode: "live", Route: "/v1/convert", Status: 200},
		}
		if err := s.Append(ctx, es); err != nil {
			t.Fatal(err)
		}
		got, err := s.Daily(ctx, acct, d0.Add(2*24*time.Hour), 4)
		if err != nil || len(got) != 4 {
			t.Fatalf("daily: %v %v", got, err)
		}
		want := []map[string]int64{{}, {"live/ok": 1, "live/client_error": 1}, {"test/ok": 1}, {"live/server_error": 1}}
		for i, w := range want {
			if !got[i].Date.Equal(d0.Truncate(24*time.Hour).AddDate(0, 0, i-1)) || fmt.Sprint(got[i].Counts) != fmt.Sprint(w) {
				t.Errorf("day %d: %v %v, want %v", i, got[i].Date, got[i].Counts, w)
			}
		}
		if r := got[1].Routes; r["/v1/convert live"] != 2 || len(r) != 1 {
			t.Errorf("routes of day 1: %v", r)
		}
		if k := got[2].Credentials; k["k2 test"] != 1 || len(k) != 1 {
			t.Errorf("credentials of day 2: %v", k)
		}
		// One key's and one route's own series, errors apart.
		if k := fmt.Sprint(got[1].ByCredential["k1"]); k != "map[live/client_error:1 live/ok:1]" {
			t.Errorf("k1's day 1: %v", k)
		}
		if r := fmt.Sprint(got[3].ByRoute["/v1/convert"]); r != "map[live/server_error:1]" || len(got[3].ByCredential["k2"]) != 0 {
			t.Errorf("/v1/convert's day 3: %v; k2's: %v", r, got[3].ByCredential["k2"])
		}
	})
}

// TestDailyFieldsBeforeClasses: route and credential fields written
// before they carried the status class count as their mode's ok.
func TestDailyFieldsBeforeClasses(t *testing.T) {
	d := newDay(time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC))
	for f, n := range map[string]int64{"r /v1/jobs/{id} live": 2, "r /v1/jobs/{id} live/client_error": 1, "k k1 test": 3, "m live/ok": 2, "x junk": 9, "r nospace": 1} {
		d.addField(f, n)
	}
	if got := fmt.Sprint(d.Routes, d.ByRoute, d.Credentials, d.ByCredential, d.Counts); got !=
		"map[/v1/jobs/{id} live:3] map[/v1/jobs/{id}:map[live/client_error:1 live/ok:2]] map[k1 test:3] map[k1:map[test/ok:3]] map[live/ok:2]" {
		t.Errorf("got %s", got)
	}
}
