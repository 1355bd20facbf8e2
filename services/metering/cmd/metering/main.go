// Command metering runs the metering service alone, as it runs on
// Kubernetes; the local stack runs the same wiring (services/metering/server)
// in one process with the others.
//
// Environment:
//
//	GRPC_ADDR     listen address (default :9003)
//	DATABASE_URL  PostgreSQL URL (required); the service owns schema "metering"
//	REDIS_URL     Redis holding the usage counters (needed for GET /v1/usage)
//	LOG_LEVEL     debug, info, warn or error (default info)
package main

import (
	"context"
	"errors"
	"log/slog"

	"github.com/ledgerlane/platform/pkg/config"
	"github.com/ledgerlane/platform/pkg/rpc"
	"github.com/ledgerlane/platform/services/metering/server"
)

func main() {
	rpc.Main("metering", ":9003", setup)
}

func setup(ctx context.Context, log *slog.Logger) (rpc.Service, error) {
	// The URLs may hold passwords: they are never logged.
	cfg := server.Config{
		DatabaseURL: config.String("DATABASE_URL", ""),
		// Usage counters live in Redis, written by the gateway.
		RedisURL: config.String("REDIS_URL", ""),
		Log:      log,
	}
	if cfg.DatabaseURL == "" {
		return nil, errors.New("DATABASE_URL is required")
	}
	return server.New(ctx, cfg)
}
