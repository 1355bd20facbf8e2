package rpc

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/ledgerlane/platform/pkg/principal"
)

func TestHealthFollowsChecksButLivenessDoesNot(t *testing.T) {
	var dbUp atomic.Bool
	s := NewServer(slog.New(slog.DiscardHandler), []Check{{Name: "postgresql", Probe: func(context.Context) error {
		if !dbUp.Load() {
			return errors.New("dial tcp: connection refused")
		}
		return nil
	}}})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, s, lis, time.Second) }()
	t.Cleanup(func() { cancel(); <-done })

	conn, err := Dial(lis.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	hc := healthpb.NewHealthClient(conn)

	_, err = hc.Check(context.Background(), &healthpb.HealthCheckRequest{})
	if status.Code(err) != codes.Unavailable || status.Convert(err).Message() != "postgresql unreachable" {
		t.Fatalf("readiness with the database down: %v", err)
	}
	resp, err := hc.Check(context.Background(), &healthpb.HealthCheckRequest{Service: LivenessService})
	if err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("liveness must not depend on the database: %v %v", resp, err)
	}
	dbUp.Store(true)
	resp, err = hc.Check(context.Background(), &healthpb.HealthCheckRequest{})
	if err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("readiness with the database up: %v %v", resp, err)
	}
}

func TestPanicBecomesInternalProblem(t *testing.T) {
	h := recoverUnary(slog.New(slog.DiscardHandler))
	_, err := h(context.Background(), nil, &grpc.UnaryServerInfo{FullMethod: "/x"}, func(context.Context, any) (any, error) { panic("boom") })
	if status.Code(err) != codes.Internal || status.Convert(err).Message() == "boom" {
		t.Fatalf("got %v", err)
	}
}

// TestDialListBalancesOverEveryAddress: a comma-separated address list spreads
// calls round robin over every listed server, and keeps serving from the
// others while one is gone (two replicas on one machine, as the fault suite
// runs them).
func TestDialListBalancesOverEveryAddress(t *testing.T) {
	var addrs []string
	stops := map[string]context.CancelFunc{}
	for _, name := range []string{"a", "b"} {
		// Each server's readiness fails with its own name, so the answer
		// tells which server took the call.
		s := NewServer(slog.New(slog.DiscardHandler), []Check{{Name: name, Probe: func(context.Context) error { return errors.New("down") }}})
		lis, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- Serve(ctx, s, lis, time.Second) }()
		stop := func() { cancel(); <-done }
		t.Cleanup(func() { cancel() })
		addrs = append(addrs, lis.Addr().String())
		stops[name] = stop
	}
	conn, err := Dial(addrs[0] + "," + addrs[1])
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	hc := healthpb.NewHealthClient(conn)
	ask := func(n int) map[string]int {
		seen := map[string]int{}
		for range n {
			_, err := hc.Check(context.Background(), &healthpb.HealthCheckRequest{}, grpc.WaitForReady(true))
			seen[status.Convert(err).Message()]++
		}
		return seen
	}
	deadline := time.Now().Add(10 * time.Second)
	for seen := ask(10); seen["a unreachable"] == 0 || seen["b unreachable"] == 0; seen = ask(10) {
		if time.Now().After(deadline) {
			t.Fatalf("calls did not reach both servers: %v", seen)
		}
	}
	stops["a"]()
	deadline = time.Now().Add(10 * time.Second)
	for seen := ask(10); seen["b unreachable"] != 10; seen = ask(10) {
		if time.Now().After(deadline) {
			t.Fatalf("with a gone, calls did not all go to b: %v", seen)
		}
	}
}

// FuzzDial: no address, list or not, makes Dial panic; it connects lazily,
// so nothing is dialled here.
func FuzzDial(f *testing.F) {
	for _, s := range []string{"jobs:9004", "127.0.0.1:1,127.0.0.1:2", ",", " , ,", "dns:///x:1", "unix:/tmp/s", "a://b,c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, addr string) {
		conn, err := Dial(addr)
		if err == nil {
			conn.Close()
		}
	})
}

// TestCallLog: a successful call is logged at debug, a refused one at info
// and an internal error at error, each with the caller's request id; a level
// the logger leaves off writes nothing (and costs no metadata read).
func TestCallLog(t *testing.T) {
	md := metadata.Pairs(principal.Principal{AccountID: "acct_1", RequestID: "req_1"}.Pairs()...)
	ctx := metadata.NewIncomingContext(context.Background(), md)
	tests := []struct {
		name    string
		level   slog.Level
		err     error
		want    string // the level logged, "" for no line
		allocsZ bool   // nothing logged: the interceptor itself allocates nothing
	}{
		{"success at debug", slog.LevelDebug, nil, "DEBUG", false},
		{"success at info", slog.LevelInfo, nil, "", true},
		{"refusal at info", slog.LevelInfo, status.Error(codes.InvalidArgument, "bad"), "INFO", false},
		{"refusal at warn", slog.LevelWarn, status.Error(codes.InvalidArgument, "bad"), "", false},
		{"internal at warn", slog.LevelWarn, status.Error(codes.Internal, "boom"), "ERROR", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			log := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: tt.level}))
			call := logUnary(log)
			h := func(context.Context, any) (any, error) { return nil, tt.err }
			info := &grpc.UnaryServerInfo{FullMethod: "/x.v1.X/Y"}
			if _, err := call(ctx, nil, info, h); err != tt.err {
				t.Fatalf("error %v, want %v", err, tt.err)
			}
			line := buf.String()
			switch {
			case tt.want == "" && line != "":
				t.Fatalf("logged %q, want nothing", line)
			case tt.want != "" && (!strings.Contains(line, `"level":"`+tt.want+`"`) || !strings.Contains(line, `"request_id":"req_1"`) ||
				!strings.Contains(line, `"account_id":"acct_1"`) || !strings.Contains(line, `"method":"/x.v1.X/Y"`)):
				t.Fatalf("logged %q, want a %s line with the caller", line, tt.want)
			}
			if tt.allocsZ {
				if n := testing.AllocsPerRun(50, func() { _, _ = call(ctx, nil, info, h) }); n > 0 {
					t.Errorf("%.0f allocations per call with nothing to log", n)
				}
			}
		})
	}
}
