package redisconn_test

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/ledgerlane/platform/pkg/redisconn"
)

func TestOpenChoosesTheClient(t *testing.T) {
	for _, tc := range []struct {
		url     string
		cluster bool
	}{
		{"redis://127.0.0.1:6379/0", false},
		{"rediss://user:pw@redis.example:6380", false},
		{"redis://10.0.0.1:6379?addr=10.0.0.2:6379&addr=10.0.0.3:6379", true},
	} {
		c, err := redisconn.Open(tc.url, &redisconn.Tuning{MaxRetries: 1})
		if err != nil {
			t.Fatalf("%s: %v", tc.url, err)
		}
		_, isCluster := c.(*redis.ClusterClient)
		if isCluster != tc.cluster || redisconn.IsCluster(tc.url) != tc.cluster {
			t.Errorf("%s: cluster client %v, want %v", tc.url, isCluster, tc.cluster)
		}
		_ = c.Close()
	}
	if _, err := redisconn.Open("http://nope", nil); err == nil {
		t.Error("an http URL was accepted")
	}
}

// TestClusterConnect: a cluster URL connects to a real Redis Cluster and
// routes keys of different hash tags to their nodes.
func TestClusterConnect(t *testing.T) {
	ctx := context.Background()
	c, err := redisconn.Connect(ctx, redisconn.TestClusterURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, k := range []string{"ll:{a}:x", "ll:{b}:x", "ll:{c}:x", "ll:{d}:x"} {
		if err := c.Set(ctx, k, "1", 0).Err(); err != nil {
			t.Fatalf("set %s: %v", k, err)
		}
	}
	n, err := c.(*redis.ClusterClient).DBSize(ctx).Result()
	if err != nil || n == 0 {
		t.Fatalf("dbsize %d, %v", n, err)
	}
}
