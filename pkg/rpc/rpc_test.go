package rpc

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
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
