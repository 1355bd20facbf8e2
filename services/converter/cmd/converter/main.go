// Command converter runs the converter service alone, as it runs on Kubernetes.
//
// Environment: GRPC_ADDR (default :9002), LOG_LEVEL (default info).
package main

import (
	"context"
	"log/slog"

	"google.golang.org/grpc"

	"github.com/ledgerlane/platform/pkg/rpc"
	"github.com/ledgerlane/platform/services/converter/grpcapi"
)

func main() {
	rpc.Main("converter", ":9002", func(_ context.Context, log *slog.Logger) (*grpc.Server, func(), error) {
		srv := rpc.NewServer(log, nil)
		grpcapi.Register(srv)
		return srv, nil, nil
	})
}
