package rpc

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
)

// stubService is a Service whose background work and Close can be made to
// hang, as a worker stuck in a call or a pool waiting for a connection does.
type stubService struct {
	stuckRun, stuckClose bool
	release              chan struct{} // ends what hangs, at the test's end
	closed               atomic.Bool
}

func (s *stubService) Register(grpc.ServiceRegistrar) {}
func (s *stubService) Checks() []Check                { return nil }
func (s *stubService) Run(ctx context.Context) error {
	if s.stuckRun {
		<-s.release
		return nil
	}
	<-ctx.Done()
	return nil
}

func (s *stubService) Close() error {
	if s.stuckClose {
		<-s.release
	}
	s.closed.Store(true)
	return nil
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string { b.mu.Lock(); defer b.mu.Unlock(); return b.b.String() }

// TestServeServiceShutdownIsBounded (issue 28, item 4): after the signal a
// service process returns on its own within its grace whatever hangs: a
// prompt service closes at once; background work that ignores the signal is
// abandoned (and Close skipped: it would release what the work still uses);
// a Close that hangs is abandoned. The log says which.
func TestServeServiceShutdownIsBounded(t *testing.T) {
	const grace = 400 * time.Millisecond
	for _, tc := range []struct {
		name                 string
		stuckRun, stuckClose bool
		closed               bool
		logged               string
	}{
		{name: "prompt", closed: true},
		{name: "background work ignores the signal", stuckRun: true, logged: "background work did not stop in time"},
		{name: "close hangs", stuckClose: true, logged: "Close did not finish in time"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			svc := &stubService{stuckRun: tc.stuckRun, stuckClose: tc.stuckClose, release: make(chan struct{})}
			t.Cleanup(func() { close(svc.release) })
			lis, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			var logs syncBuffer
			log := slog.New(slog.NewTextHandler(&logs, nil))
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- ServeService(ctx, log, svc, lis, grace) }()
			// Serving: a connection is accepted.
			conn, err := net.Dial("tcp", lis.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			conn.Close()
			cancel()
			// A liveness bound, far above the grace: a hang fails here
			// instead of at the test binary's timeout.
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("ServeService: %v", err)
				}
			case <-time.After(10 * grace):
				t.Fatalf("ServeService did not return within %s of the signal (grace %s)", 10*grace, grace)
			}
			if got := svc.closed.Load(); got != tc.closed {
				t.Errorf("closed %v, want %v", got, tc.closed)
			}
			if tc.logged != "" && !strings.Contains(logs.String(), tc.logged) {
				t.Errorf("log lacks %q:\n%s", tc.logged, logs.String())
			}
		})
	}
}
