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
	"log/slog"
	"os"
	"time"

	"google.golang.org/grpc"

	"github.com/ledgerlane/platform/pkg/cursor"
	"github.com/ledgerlane/platform/pkg/pg"
	"github.com/ledgerlane/platform/pkg/rpc"
	"github.com/ledgerlane/platform/services/finance"
	"github.com/ledgerlane/platform/services/finance/grpcapi"
	"github.com/ledgerlane/platform/services/finance/postgres"
)

func main() {
	rpc.Main("finance", ":9001", setup)
}

func setup(ctx context.Context, log *slog.Logger) (*grpc.Server, func(), error) {
	dbURL := os.Getenv("DATABASE_URL")
	secret := os.Getenv("CURSOR_SECRET")
	if dbURL == "" {
		return nil, nil, errors.New("DATABASE_URL is required")
	}
	if secret == "" {
		return nil, nil, errors.New("CURSOR_SECRET is required")
	}
	pool, err := pg.Open(ctx, dbURL, "finance", postgres.Migrations, log)
	if err != nil {
		return nil, nil, err // pgx keeps the password out of its connection errors
	}
	svc := finance.NewService(postgres.New(pool), cursor.New([]byte(secret)), time.Now, log)
	srv := rpc.NewServer(log, []rpc.Check{{Name: "postgresql", Probe: pool.Ping}})
	grpcapi.Register(srv, svc)
	return srv, pool.Close, nil
}
