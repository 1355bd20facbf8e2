// Command metering runs the metering service alone, as it runs on Kubernetes.
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
	"time"

	"google.golang.org/grpc"

	"github.com/ledgerlane/platform/pkg/config"
	"github.com/ledgerlane/platform/pkg/pg"
	"github.com/ledgerlane/platform/pkg/redisconn"
	"github.com/ledgerlane/platform/pkg/rpc"
	"github.com/ledgerlane/platform/services/metering"
	"github.com/ledgerlane/platform/services/metering/grpcapi"
	"github.com/ledgerlane/platform/services/metering/meter"
	"github.com/ledgerlane/platform/services/metering/postgres"
)

func main() {
	rpc.Main("metering", ":9003", setup)
}

func setup(ctx context.Context, log *slog.Logger) (*grpc.Server, func(), error) {
	// The URL may hold a password: it is never logged.
	dbURL := config.String("DATABASE_URL", "")
	if dbURL == "" {
		return nil, nil, errors.New("DATABASE_URL is required")
	}
	pool, err := pg.Open(ctx, dbURL, "metering", postgres.Migrations, log)
	if err != nil {
		return nil, nil, err
	}
	svc := metering.NewService(postgres.New(pool), time.Now, log)
	checks := []rpc.Check{{Name: "postgresql", Probe: pool.Ping}}
	cleanup := pool.Close
	// Usage counters live in Redis, written by the gateway.
	if url := config.String("REDIS_URL", ""); url != "" {
		rc, err := redisconn.Connect(ctx, url)
		if err != nil {
			pool.Close()
			return nil, nil, err
		}
		svc.UseMeter(meter.New(rc, time.Now))
		checks = append(checks, rpc.Check{Name: "redis", Probe: func(ctx context.Context) error { return rc.Ping(ctx).Err() }})
		cleanup = func() { _ = rc.Close(); pool.Close() }
	}
	srv := rpc.NewServer(log, checks)
	grpcapi.Register(srv, svc)
	return srv, cleanup, nil
}
