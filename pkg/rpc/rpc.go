// Package rpc is the gRPC plumbing shared by every service: a server with panic
// recovery, request logging and the standard health service, and client dials.
// Traffic between the gateway and the services stays inside the cluster; TLS
// between pods is the mesh's job (docs/operations.md).
package rpc

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"runtime/debug"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/ledgerlane/platform/pkg/principal"
	"github.com/ledgerlane/platform/pkg/problem"
)

// NewServer returns a gRPC server that recovers panics as internal problems,
// logs each call, and serves grpc.health.v1 as SERVING.
func NewServer(log *slog.Logger, opts ...grpc.ServerOption) *grpc.Server {
	opts = append(opts,
		grpc.ChainUnaryInterceptor(recoverUnary(log), logUnary(log)),
		grpc.MaxRecvMsgSize(32<<20), // batch requests are up to 16 MiB of JSON
		grpc.MaxSendMsgSize(64<<20),
	)
	s := grpc.NewServer(opts...)
	hs := health.NewServer()
	healthpb.RegisterHealthServer(s, hs)
	return s
}

func recoverUnary(log *slog.Logger) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (resp any, err error) {
		defer func() {
			if r := recover(); r != nil {
				log.Error("panic in handler", "method", info.FullMethod, "panic", r, "stack", string(debug.Stack()))
				err = problem.Error(problem.Internal, "")
			}
		}()
		return h(ctx, req)
	}
}

func logUnary(log *slog.Logger) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		start := time.Now()
		resp, err := h(ctx, req)
		p, _ := principal.FromIncoming(ctx)
		lvl := slog.LevelDebug
		if err != nil {
			lvl = slog.LevelInfo
			if st, _ := status.FromError(err); st != nil && st.Code().String() == "Internal" {
				lvl = slog.LevelError
			}
		}
		log.Log(ctx, lvl, "rpc", "method", info.FullMethod, "request_id", p.RequestID,
			"account_id", p.AccountID, "code", status.Code(err).String(), "duration", time.Since(start))
		return resp, err
	}
}

// Serve runs s on lis until ctx ends, then stops gracefully: in-flight calls
// finish, bounded by grace.
func Serve(ctx context.Context, s *grpc.Server, lis net.Listener, grace time.Duration) error {
	errc := make(chan error, 1)
	go func() { errc <- s.Serve(lis) }()
	select {
	case err := <-errc:
		if errors.Is(err, grpc.ErrServerStopped) {
			return nil
		}
		return err
	case <-ctx.Done():
	}
	done := make(chan struct{})
	go func() { s.GracefulStop(); close(done) }()
	select {
	case <-done:
	case <-time.After(grace):
		s.Stop()
	}
	return nil
}

// Dial opens a client connection to an in-cluster service address.
func Dial(addr string) (*grpc.ClientConn, error) {
	return grpc.NewClient(addr,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(64<<20), grpc.MaxCallSendMsgSize(32<<20)),
	)
}
