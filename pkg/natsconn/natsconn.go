// Package natsconn connects to NATS with JetStream, or starts an embedded
// nats-server with JetStream in process for the local stack and for tests.
package natsconn

import (
	"fmt"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Connect dials url and opens its JetStream context.
func Connect(url, name string) (*nats.Conn, jetstream.JetStream, error) {
	nc, err := nats.Connect(url, nats.Name(name), nats.MaxReconnects(-1), nats.ReconnectWait(time.Second))
	if err != nil {
		return nil, nil, fmt.Errorf("nats: connect: %w", err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, nil, fmt.Errorf("nats: jetstream: %w", err)
	}
	return nc, js, nil
}

// Embedded is an in-process nats-server with JetStream on a free loopback port.
type Embedded struct {
	srv *server.Server
}

// StartEmbedded starts nats-server with JetStream storing under dir (a temporary
// folder when dir is empty).
func StartEmbedded(dir string) (*Embedded, error) {
	if dir == "" {
		d, err := os.MkdirTemp("", "ledgerlane-nats-")
		if err != nil {
			return nil, err
		}
		dir = d
	}
	srv, err := server.NewServer(&server.Options{
		Host:      "127.0.0.1",
		Port:      server.RANDOM_PORT,
		JetStream: true,
		StoreDir:  dir,
		NoLog:     true,
		NoSigs:    true,
	})
	if err != nil {
		return nil, fmt.Errorf("nats: embedded: %w", err)
	}
	srv.Start()
	if !srv.ReadyForConnections(10 * time.Second) {
		srv.Shutdown()
		return nil, fmt.Errorf("nats: embedded server not ready")
	}
	return &Embedded{srv: srv}, nil
}

// URL is the nats:// address of the embedded server.
func (e *Embedded) URL() string { return e.srv.ClientURL() }

// Close shuts the server down.
func (e *Embedded) Close() {
	e.srv.Shutdown()
	e.srv.WaitForShutdown()
}

// TestURL returns TEST_NATS_URL, or the URL of an embedded server that stops
// with the test.
func TestURL(t testing.TB) string {
	t.Helper()
	if url := os.Getenv("TEST_NATS_URL"); url != "" {
		return url
	}
	e, err := StartEmbedded(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return e.URL()
}

// TestClusterURL starts n embedded JetStream servers clustered with each
// other on free loopback ports, all stopping with the test, and returns
// their client URLs joined by commas (a NATS_URL). Streams with Replicas > 1
// need it: a single server refuses them.
func TestClusterURL(t testing.TB, n int) string {
	t.Helper()
	ports := make([]int, n)
	for i := range ports {
		lis, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ports[i] = lis.Addr().(*net.TCPAddr).Port
		_ = lis.Close() // a small race with other listeners; routes retry
	}
	var routes []string
	for _, p := range ports {
		routes = append(routes, fmt.Sprintf("nats://127.0.0.1:%d", p))
	}
	var urls []string
	for i, p := range ports {
		srv, err := server.NewServer(&server.Options{
			ServerName: fmt.Sprintf("n%d", i), Host: "127.0.0.1", Port: server.RANDOM_PORT,
			JetStream: true, StoreDir: t.TempDir(), NoLog: true, NoSigs: true,
			Cluster: server.ClusterOpts{Name: "test", Host: "127.0.0.1", Port: p},
			Routes:  server.RoutesFromStr(strings.Join(routes, ",")),
		})
		if err != nil {
			t.Fatal(err)
		}
		srv.Start()
		t.Cleanup(func() { srv.Shutdown(); srv.WaitForShutdown() })
		if !srv.ReadyForConnections(10 * time.Second) {
			t.Fatal("nats: clustered server not ready")
		}
		urls = append(urls, srv.ClientURL())
	}
	return strings.Join(urls, ",")
}
