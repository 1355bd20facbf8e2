// Command metering runs the metering service alone, as it runs on Kubernetes.
//
// Environment:
//
//	GRPC_ADDR     listen address (default :9003)
//	DATABASE_URL  PostgreSQL URL (required); the service owns schema "metering"
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
	"github.com/ledgerlane/platform/pkg/rpc"
	"github.com/ledgerlane/platform/services/metering"
	"github.com/ledgerlane/platform/services/metering/grpcapi"
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
	srv := rpc.NewServer(log, []rpc.Check{{Name: "postgresql", Probe: pool.Ping}})
	grpcapi.Register(srv, svc)
	return srv, pool.Close, nil
}
