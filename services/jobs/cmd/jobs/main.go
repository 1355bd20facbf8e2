// Command jobs runs the jobs service alone, as it runs on Kubernetes.
//
// Environment: GRPC_ADDR (default :9004), LOG_LEVEL (default info).
package main

import (
	"context"
	"log/slog"

	"google.golang.org/grpc"

	"github.com/ledgerlane/platform/pkg/rpc"
	"github.com/ledgerlane/platform/services/jobs/grpcapi"
)

func main() {
	rpc.Main("jobs", ":9004", func(_ context.Context, log *slog.Logger) (*grpc.Server, func(), error) {
		srv := rpc.NewServer(log, nil)
		grpcapi.Register(srv)
		return srv, nil, nil
	})
}
