// Package redisconn connects to Redis with go-redis, or starts an embedded
// Redis-protocol server (miniredis) for the local stack and for tests, so the
// same client code runs in both.
package redisconn

import (
	"context"
	"fmt"
	neturl "net/url"
	"os"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

// Tuning overrides go-redis's timeouts and retries (zero fields keep its
// defaults); the gateway tightens them so that it fails open in
// milliseconds.
type Tuning struct {
	DialTimeout, ReadTimeout, WriteTimeout, PoolTimeout time.Duration
	MaxRetries                                          int
}

// Open builds a client for url without connecting. A URL that names more
// nodes with addr= parameters is a Redis Cluster, its seed nodes
// (redis://host1:6379?addr=host2:6379&addr=host3:6379, go-redis's cluster
// URL): every key the platform writes carries a hash tag, and every script
// touches keys of one tag only, so it runs unchanged on a cluster
// (TestAdmissionOnRedisCluster). Any other redis:// or rediss:// URL is one
// node.
func Open(url string, t *Tuning) (redis.UniversalClient, error) {
	if IsCluster(url) {
		opt, err := redis.ParseClusterURL(url)
		if err != nil {
			return nil, fmt.Errorf("redis: parse cluster url: %w", err)
		}
		if t != nil {
			opt.DialTimeout, opt.ReadTimeout, opt.WriteTimeout, opt.PoolTimeout = t.DialTimeout, t.ReadTimeout, t.WriteTimeout, t.PoolTimeout
			opt.MaxRetries = t.MaxRetries
		}
		return redis.NewClusterClient(opt), nil
	}
	opt, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("redis: parse url: %w", err)
	}
	if t != nil {
		opt.DialTimeout, opt.ReadTimeout, opt.WriteTimeout, opt.PoolTimeout = t.DialTimeout, t.ReadTimeout, t.WriteTimeout, t.PoolTimeout
		opt.MaxRetries = t.MaxRetries
	}
	return redis.NewClient(opt), nil
}

// IsCluster reports whether url names a Redis Cluster (addr= parameters).
func IsCluster(url string) bool {
	u, err := neturl.Parse(url)
	return err == nil && len(u.Query()["addr"]) > 0
}

// Connect opens url (Open) and pings it.
func Connect(ctx context.Context, url string) (redis.UniversalClient, error) {
	c, err := Open(url, nil)
	if err != nil {
		return nil, err
	}
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
		c, err := connectNode(ctx, url)
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
	c, err := connectNode(ctx, e.URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// connectNode connects to one node: tests reach into *redis.Client.
func connectNode(ctx context.Context, url string) (*redis.Client, error) {
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
