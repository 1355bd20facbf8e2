// Command converter runs the converter service alone, as it runs on
// Kubernetes; the local stack runs the same wiring (services/converter/server)
// in one process with the others.
//
// Environment: GRPC_ADDR (default :9002), LOG_LEVEL (default info).
package main

import (
	"context"
	"log/slog"

	"github.com/ledgerlane/platform/pkg/rpc"
	"github.com/ledgerlane/platform/services/converter/server"
)

func main() {
	rpc.Main("converter", ":9002", func(ctx context.Context, _ *slog.Logger) (rpc.Service, error) {
		return server.New(ctx, server.Config{})
	})
}
