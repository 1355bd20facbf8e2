package natsqueue_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ledgerlane/platform/pkg/natsconn"
	"github.com/ledgerlane/platform/services/jobs/natsqueue"
)

// TestStreamReplicas: NATS_STREAM_REPLICAS reaches the streams: on a 3-node
// JetStream cluster both jobs streams are kept on three nodes (a leader and
// two followers), so the queue survives the loss of a node; on one server
// the default of one replica works and three are refused, not silently
// reduced.
func TestStreamReplicas(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	nc, js, err := natsconn.Connect(natsconn.TestClusterURL(t, 3), "replicas-test")
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	q := natsqueue.New(js, natsqueue.NamesWithPrefix("r3")).WithReplicas(3)
	// The cluster elects its JetStream meta leader after it forms; until
	// then an API request gets no answer, so each attempt has its own limit.
	for {
		attempt, done := context.WithTimeout(ctx, 2*time.Second)
		err = q.Setup(attempt)
		done()
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("setup on the cluster: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	for _, name := range []string{q.Names().WorkStream, q.Names().EventStream} {
		var followers int
		for { // followers join the stream's group shortly after it is made
			s, err := js.Stream(ctx, name)
			if err != nil {
				t.Fatal(err)
			}
			info, err := s.Info(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if info.Config.Replicas != 3 {
				t.Fatalf("%s: %d replicas configured, want 3", name, info.Config.Replicas)
			}
			if info.Cluster != nil {
				followers = len(info.Cluster.Replicas)
			}
			if followers == 2 || ctx.Err() != nil {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if followers != 2 {
			t.Fatalf("%s: %d followers, want 2", name, followers)
		}
	}

	single, sjs, err := natsconn.Connect(natsconn.TestURL(t), "replicas-test")
	if err != nil {
		t.Fatal(err)
	}
	defer single.Close()
	if err := natsqueue.New(sjs, natsqueue.NamesWithPrefix("r1")).Setup(ctx); err != nil {
		t.Fatalf("one replica on one server: %v", err)
	}
	err = natsqueue.New(sjs, natsqueue.NamesWithPrefix("r3")).WithReplicas(3).Setup(ctx)
	if err == nil || !strings.Contains(strings.ToLower(err.Error()), "replica") {
		t.Fatalf("three replicas on one server: want a refusal naming replicas, got %v", err)
	}
}
