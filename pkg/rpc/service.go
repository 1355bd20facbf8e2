package rpc

import (
	"context"
	"log/slog"

	"google.golang.org/grpc"
)

// Service is one service's wiring as its constructor returns it
// (services/<name>/server.New): cmd/<name> runs it through Main, and
// deploy/local runs the same value beside the others in one process.
type Service interface {
	// Register adds the service's gRPC APIs to s.
	Register(s grpc.ServiceRegistrar)
	// Checks are what the service's readiness (grpc.health.v1) follows:
	// its database, its queue.
	Checks() []Check
	// Run does the service's background work (workers, tickers) until ctx
	// ends; a service without any waits for ctx.
	Run(ctx context.Context) error
	// Close releases what the constructor opened, once Run has returned
	// and the server has stopped.
	Close() error
}

// NewServiceServer returns a server (NewServer) with svc's APIs registered
// and its health following svc's checks.
func NewServiceServer(log *slog.Logger, svc Service, opts ...grpc.ServerOption) *grpc.Server {
	s := NewServer(log, svc.Checks(), opts...)
	svc.Register(s)
	return s
}
