// Command finance serves the finance.v1 gRPC services on PostgreSQL. It is
// the Kubernetes deployment of the finance service; the local stack embeds
// the same packages instead.
//
// Environment:
//
//	GRPC_ADDR      listen address (default :9001)
//	DATABASE_URL   PostgreSQL URL (required); tables live in schema "finance"
//	CURSOR_SECRET  key that signs pagination cursors (required; shared by replicas)
//	LOG_LEVEL      debug, info, warn or error (default info)
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/ledgerlane/platform/pkg/config"
	"github.com/ledgerlane/platform/pkg/cursor"
	"github.com/ledgerlane/platform/pkg/logging"
	"github.com/ledgerlane/platform/pkg/pg"
	"github.com/ledgerlane/platform/pkg/rpc"
	"github.com/ledgerlane/platform/services/finance"
	"github.com/ledgerlane/platform/services/finance/grpcapi"
	"github.com/ledgerlane/platform/services/finance/postgres"
)

func main() {
	log := logging.New("finance", config.String("LOG_LEVEL", "info"))
	if err := run(log); err != nil {
		log.Error("finance stopped", "err", err)
		os.Exit(1)
	}
}

func run(log *slog.Logger) error {
	addr := config.String("GRPC_ADDR", ":9001")
	dbURL := os.Getenv("DATABASE_URL")
	secret := os.Getenv("CURSOR_SECRET")
	if dbURL == "" {
		return errors.New("DATABASE_URL is required")
	}
	if secret == "" {
		return errors.New("CURSOR_SECRET is required")
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()

	pool, err := pg.Open(ctx, dbURL, "finance", postgres.Migrations, log)
	if err != nil {
		return err // pgx keeps the password out of its connection errors
	}
	defer pool.Close()

	svc := finance.NewService(postgres.New(pool), cursor.New([]byte(secret)), time.Now, log)
	srv := rpc.NewServer(log, []rpc.Check{{Name: "postgresql", Probe: pool.Ping}})
	grpcapi.Register(srv, svc)

	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen %s: %w", addr, err)
	}
	log.Info("finance listening", "addr", lis.Addr().String())
	if err := rpc.Serve(ctx, srv, lis, 20*time.Second); err != nil {
		return err
	}
	log.Info("finance stopped")
	return nil
}
