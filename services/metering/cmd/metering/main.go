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
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/ledgerlane/platform/pkg/config"
	"github.com/ledgerlane/platform/pkg/logging"
	"github.com/ledgerlane/platform/pkg/pg"
	"github.com/ledgerlane/platform/pkg/rpc"
	"github.com/ledgerlane/platform/services/metering"
	"github.com/ledgerlane/platform/services/metering/grpcapi"
	"github.com/ledgerlane/platform/services/metering/postgres"
)

// grace bounds the drain on SIGTERM; it stays under Kubernetes' default 30 s
// termination grace period so in-flight calls finish before SIGKILL.
const grace = 20 * time.Second

func main() {
	log := logging.New("metering", config.String("LOG_LEVEL", "info"))
	if err := run(log); err != nil {
		log.Error("exit", "err", err)
		os.Exit(1)
	}
}

func run(log *slog.Logger) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	// The URL may hold a password: it is never logged.
	dbURL := config.String("DATABASE_URL", "")
	if dbURL == "" {
		return errors.New("DATABASE_URL is required")
	}
	pool, err := pg.Open(ctx, dbURL, "metering", postgres.Migrations, log)
	if err != nil {
		return err
	}
	defer pool.Close()

	svc := metering.NewService(postgres.New(pool), time.Now, log)
	srv := rpc.NewServer(log, []rpc.Check{{Name: "postgresql", Probe: pool.Ping}})
	grpcapi.Register(srv, svc)

	lis, err := net.Listen("tcp", config.String("GRPC_ADDR", ":9003"))
	if err != nil {
		return err
	}
	log.Info("listening", "addr", lis.Addr().String())
	if err := rpc.Serve(ctx, srv, lis, grace); err != nil {
		return err
	}
	log.Info("stopped")
	return nil
}
