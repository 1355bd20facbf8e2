package gateway_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ledgerlane/platform/gateway"
)

// TestServeFinishesInFlightRequests: once shutdown starts, a request already
// being handled still gets its full answer, and new connections are refused.
func TestServeFinishesInFlightRequests(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	entered, release := make(chan struct{}), make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		close(entered)
		<-release
		_, _ = io.WriteString(w, "finished")
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- gateway.Serve(ctx, lis, h, 5*time.Second) }()

	url := "http://" + lis.Addr().String()
	got := make(chan string, 1)
	go func() {
		resp, err := http.Get(url)
		if err != nil {
			got <- "error: " + err.Error()
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		got <- string(b)
	}()
	<-entered
	cancel() // SIGTERM arrives while the request is in flight
	// Wait until the listener is closed before letting the handler finish.
	deadline := time.Now().Add(2 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", lis.Addr().String(), 100*time.Millisecond)
		if err != nil {
			break
		}
		c.Close()
		if time.Now().After(deadline) {
			t.Fatal("listener still accepting after shutdown began")
		}
		time.Sleep(10 * time.Millisecond)
	}
	close(release)
	if body := <-got; body != "finished" {
		t.Fatalf("in-flight request got %q", body)
	}
	if err := <-done; err != nil {
		t.Fatalf("Serve: %v", err)
	}
}

// TestServeDoesNotWaitForSilentConnections (issue 28): a connection that
// never sent a request (a client's spare, a probe) does not hold the
// shutdown: Serve returns once the in-flight request has its answer, and
// the silent connection is closed. (http.Server.Shutdown alone counts such a
// connection idle only after five seconds.)
func TestServeDoesNotWaitForSilentConnections(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	entered, release := make(chan struct{}), make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		close(entered)
		<-release
		_, _ = io.WriteString(w, "finished")
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- gateway.Serve(ctx, lis, h, 20*time.Second) }()
	silent, err := net.Dial("tcp", lis.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	got := make(chan string, 1)
	go func() {
		resp, err := http.Get("http://" + lis.Addr().String())
		if err != nil {
			got <- err.Error()
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		got <- string(b)
	}()
	<-entered
	cancel()
	close(release)
	if body := <-got; body != "finished" {
		t.Fatalf("in-flight request got %q", body)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Serve: %v", err)
		}
	case <-time.After(4 * time.Second): // below the five seconds the silent connection used to cost
		t.Fatal("Serve still waiting for a connection that never sent a request")
	}
	_ = silent.SetReadDeadline(time.Now().Add(time.Second))
	if _, err := silent.Read(make([]byte, 1)); err == nil {
		t.Fatal("the silent connection is still open")
	}
}

// TestSlowBodyIsCutOff (issue 27, 5): a client that sends a small route's
// headers and then trickles (here: withholds) its body does not hold the
// connection for the server's two-minute read timeout: the body's own
// deadline (bodyReadDeadline of the route's limit) ends it.
func TestSlowBodyIsCutOff(t *testing.T) {
	defer gateway.SetBodyReadGraceForTest(200 * time.Millisecond)()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h := newHarnessWith(t, harnessOpts{}).gw.Handler()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = gateway.Serve(ctx, lis, h, time.Second) }()
	c, err := net.Dial("tcp", lis.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, _ = io.WriteString(c, "POST /v1/convert?to=camt.053 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "+keyConvert+
		"\r\nContent-Type: text/plain\r\nContent-Length: 100\r\n\r\n:20:")
	_ = c.SetReadDeadline(time.Now().Add(30 * time.Second)) // far below the two minutes, far above the deadline
	b, err := io.ReadAll(c)
	if !strings.Contains(string(b), "400 Bad Request") || !strings.Contains(string(b), "did not arrive within") {
		t.Fatalf("answer %q (%v)", b, err)
	}
}
