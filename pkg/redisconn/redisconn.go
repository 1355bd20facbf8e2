// Package redisconn connects to Redis with go-redis, or starts an embedded
// Redis-protocol server (miniredis) for the local stack and for tests, so the
// same client code runs in both.
package redisconn

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

// Connect parses a redis:// URL and pings the server.
func Connect(ctx context.Context, url string) (*redis.Client, error) {
	opt, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("redis: parse url: %w", err)
	}
	c := redis.NewClient(opt)
	if err := c.Ping(ctx).Err(); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("redis: ping: %w", err)
	}
	return c, nil
}

// Embedded is an in-process Redis-protocol server on a free loopback port.
type Embedded struct {
	srv *miniredis.Miniredis
}

// StartEmbedded starts miniredis on 127.0.0.1 and a free port.
func StartEmbedded() (*Embedded, error) {
	m := miniredis.NewMiniRedis()
	if err := m.StartAddr("127.0.0.1:0"); err != nil {
		return nil, fmt.Errorf("redis: embedded: %w", err)
	}
	return &Embedded{srv: m}, nil
}

// URL is the redis:// address of the embedded server.
func (e *Embedded) URL() string { return "redis://" + e.srv.Addr() }

// Server exposes miniredis for tests that move its clock or stop it.
func (e *Embedded) Server() *miniredis.Miniredis { return e.srv }

// Close stops the server.
func (e *Embedded) Close() { e.srv.Close() }

// ForTest returns a client on TEST_REDIS_URL (flushing nothing: callers use
// their own key prefixes) or on an embedded server closed with the test.
func ForTest(t testing.TB) *redis.Client {
	t.Helper()
	ctx := context.Background()
	if url := os.Getenv("TEST_REDIS_URL"); url != "" {
		c, err := Connect(ctx, url)
		if err != nil {
			t.Fatalf("TEST_REDIS_URL: %v", err)
		}
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	e, err := StartEmbedded()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	c, err := Connect(ctx, e.URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}
