package redisconn

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestClusterURL starts a 3-node Redis Cluster (three masters, no replicas)
// of redis-server processes on free loopback ports, stopped with the test,
// and returns its cluster URL (Open). Without redis-server and redis-cli on
// PATH the test is skipped with the reason.
func TestClusterURL(t testing.TB) string {
	t.Helper()
	server, err1 := exec.LookPath("redis-server")
	cli, err2 := exec.LookPath("redis-cli")
	if err1 != nil || err2 != nil {
		t.Skip("redis-server and redis-cli are needed for a Redis Cluster (Debian: redis-server, redis-tools)")
	}
	dir := t.TempDir()
	var addrs []string
	for range 3 {
		lis, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := lis.Addr().(*net.TCPAddr).Port
		_ = lis.Close()
		p := strconv.Itoa(port)
		cmd := exec.Command(server, "--port", p, "--bind", "127.0.0.1", "--cluster-enabled", "yes",
			"--cluster-config-file", "nodes-"+p+".conf", "--dir", dir, "--save", "", "--appendonly", "no")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		addrs = append(addrs, "127.0.0.1:"+p)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, a := range addrs {
		c := redis.NewClient(&redis.Options{Addr: a})
		for c.Ping(ctx).Err() != nil {
			if ctx.Err() != nil {
				t.Fatalf("redis node %s did not start", a)
			}
			time.Sleep(50 * time.Millisecond)
		}
		_ = c.Close()
	}
	args := append([]string{"--cluster", "create"}, addrs...)
	if out, err := exec.CommandContext(ctx, cli, append(args, "--cluster-replicas", "0", "--cluster-yes")...).CombinedOutput(); err != nil {
		t.Fatalf("redis-cli --cluster create: %v: %s", err, out)
	}
	for _, a := range addrs { // every node must know every slot's owner
		c := redis.NewClient(&redis.Options{Addr: a})
		for {
			info, _ := c.ClusterInfo(ctx).Result()
			if strings.Contains(info, "cluster_state:ok") {
				break
			}
			if ctx.Err() != nil {
				t.Fatalf("redis cluster node %s: %q", a, info)
			}
			time.Sleep(50 * time.Millisecond)
		}
		_ = c.Close()
	}
	return fmt.Sprintf("redis://%s?addr=%s&addr=%s", addrs[0], addrs[1], addrs[2])
}
