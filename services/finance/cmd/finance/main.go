// Command finance serves the finance.v1 gRPC services on PostgreSQL. It is
// the Kubernetes deployment of the finance service; the local stack runs the
// same wiring (services/finance/server) in one process with the others.
//
// Environment:
//
//	GRPC_ADDR      listen address (default :9001)
//	DATABASE_URL   PostgreSQL URL (required); tables live in schema "finance"
//	CURSOR_SECRET  key that signs pagination cursors (required; shared by replicas)
//	CONVERTER_ADDR converter gRPC address, which reads imported statements (default converter:9002)
//	NATS_URL       NATS with JetStream, on which the webhook events travel to jobs (empty: none are published)
//	SANDBOX_SYNC_INTERVAL  how often the finance sandbox aggregator syncs the connections linked through
//	               the sandbox (e.g. 30s; default 0: off). Set it on one replica only: each replica running it
//	               adds its own rows (docs/finance-sandbox.md)
//	LOG_LEVEL      debug, info, warn or error (default info)
package main

import (
	"context"
	"errors"
	"log/slog"

	"github.com/ledgerlane/platform/pkg/config"
	"github.com/ledgerlane/platform/pkg/rpc"
	"github.com/ledgerlane/platform/services/finance/server"
)

func main() {
	rpc.Main("finance", ":9001", setup)
}

func setup(ctx context.Context, log *slog.Logger) (rpc.Service, error) {
	cfg := server.Config{
		DatabaseURL:  config.String("DATABASE_URL", ""),
		CursorSecret: []byte(config.String("CURSOR_SECRET", "")),
		// Statement imports (POST /v1/imports) have the converter read files.
		ConverterAddr: config.String("CONVERTER_ADDR", "converter:9002"),
		// The webhook events (docs/webhooks.md) go to jobs over JetStream.
		NATSURL: config.String("NATS_URL", ""),
		Log:     log,
	}
	// Linked sandbox connections get new rows, as under make run.
	every, err := config.Duration("SANDBOX_SYNC_INTERVAL", 0)
	if err != nil {
		return nil, err
	}
	cfg.SandboxSyncInterval = every
	if cfg.DatabaseURL == "" {
		return nil, errors.New("DATABASE_URL is required")
	}
	if len(cfg.CursorSecret) == 0 {
		return nil, errors.New("CURSOR_SECRET is required")
	}
	return server.New(ctx, cfg)
}
