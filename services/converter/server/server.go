// Package server is the converter service's wiring: New builds it from a
// Config (the conversion engine), Register puts its gRPC APIs on a server,
// and Run and Close complete rpc.Service (it has no background work and
// holds nothing to release). cmd/converter and deploy/local both run it.
package server

import (
	"context"

	"google.golang.org/grpc"

	"github.com/ledgerlane/platform/pkg/rpc"
	"github.com/ledgerlane/platform/services/converter/builtin"
	"github.com/ledgerlane/platform/services/converter/engine"
	"github.com/ledgerlane/platform/services/converter/grpcapi"
)

// Config is what the converter runs on.
type Config struct {
	// Engine converts; nil means builtin.Engine(), every shipped format.
	Engine *engine.Engine
}

// Server is the converter service, wired.
type Server struct {
	eng *engine.Engine
}

var _ rpc.Service = (*Server)(nil)

// New builds the converter from cfg.
func New(_ context.Context, cfg Config) (*Server, error) {
	if cfg.Engine == nil {
		cfg.Engine = builtin.Engine()
	}
	return &Server{eng: cfg.Engine}, nil
}

// Engine is the engine the APIs convert with.
func (s *Server) Engine() *engine.Engine { return s.eng }

// Register adds conversion.v1's services to g.
func (s *Server) Register(g grpc.ServiceRegistrar) { grpcapi.Register(g, s.eng) }

// Checks is empty: the converter depends on nothing it could lose.
func (s *Server) Checks() []rpc.Check { return nil }

// Run waits for ctx: the converter has no background work.
func (s *Server) Run(ctx context.Context) error {
	<-ctx.Done()
	return nil
}

// Close does nothing: the converter holds nothing to release.
func (s *Server) Close() error { return nil }
