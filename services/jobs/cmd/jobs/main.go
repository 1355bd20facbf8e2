// Command jobs runs the jobs service alone, as it runs on Kubernetes.
//
// Environment:
//
//	GRPC_ADDR              listen address (default :9004)
//	DATABASE_URL           PostgreSQL URL (required); the service owns schema "jobs"
//	NATS_URL               NATS with JetStream (default nats://nats:4222)
//	CONVERTER_ADDR         converter gRPC address (default converter:9002)
//	JOB_ENCRYPTION_KEY     "<id>:<base64 32 bytes>[,<id>:<base64>...]"; the first
//	                       key encrypts, all decrypt. Unset: batch routes answer
//	                       503 batch-unavailable.
//	WORKERS                item workers in this process (default 4)
//	WEBHOOK_ALLOW_PRIVATE  true allows webhook URLs on loopback/private addresses
//	                       (local development only; default false)
//	LOG_LEVEL              debug, info, warn or error (default info)
package main

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"google.golang.org/grpc"

	"github.com/ledgerlane/platform/pkg/config"
	"github.com/ledgerlane/platform/pkg/natsconn"
	"github.com/ledgerlane/platform/pkg/pg"
	"github.com/ledgerlane/platform/pkg/rpc"
	conversionv1 "github.com/ledgerlane/platform/proto/conversion/v1"
	"github.com/ledgerlane/platform/services/jobs"
	"github.com/ledgerlane/platform/services/jobs/convertclient"
	"github.com/ledgerlane/platform/services/jobs/grpcapi"
	"github.com/ledgerlane/platform/services/jobs/metrics"
	"github.com/ledgerlane/platform/services/jobs/natsqueue"
	"github.com/ledgerlane/platform/services/jobs/postgres"
	"github.com/ledgerlane/platform/services/jobs/webhook"
)

func main() {
	rpc.Main("jobs", ":9004", setup)
}

func setup(ctx context.Context, log *slog.Logger) (*grpc.Server, func(), error) {
	// URLs and the key may hold secrets: none of them is ever logged.
	dbURL := config.String("DATABASE_URL", "")
	if dbURL == "" {
		return nil, nil, errors.New("DATABASE_URL is required")
	}
	workers, err := config.Int("WORKERS", 4)
	if err != nil {
		return nil, nil, err
	}
	allowPrivate, err := config.Bool("WEBHOOK_ALLOW_PRIVATE", false)
	if err != nil {
		return nil, nil, err
	}
	var keys *jobs.Keyring
	if spec := config.String("JOB_ENCRYPTION_KEY", ""); spec != "" {
		if keys, err = jobs.ParseKeyring(spec); err != nil {
			return nil, nil, err
		}
	} else {
		log.Warn("JOB_ENCRYPTION_KEY is not set: batch and webhook routes answer batch-unavailable")
	}
	pool, err := pg.Open(ctx, dbURL, "jobs", postgres.Migrations, log)
	if err != nil {
		return nil, nil, err
	}
	nc, js, err := natsconn.Connect(config.String("NATS_URL", "nats://nats:4222"), "jobs")
	if err != nil {
		pool.Close()
		return nil, nil, err
	}
	conn, err := rpc.Dial(config.String("CONVERTER_ADDR", "converter:9002"))
	if err != nil {
		nc.Close()
		pool.Close()
		return nil, nil, err
	}
	svc := jobs.NewService(jobs.Config{
		Store:     postgres.New(pool),
		Queue:     natsqueue.New(js, natsqueue.DefaultNames()),
		Converter: convertclient.New(conversionv1.NewConversionServiceClient(conn)),
		Webhooks:  webhook.NewClient(allowPrivate),
		Metrics:   metrics.Prometheus{},
		Keys:      keys, Clock: time.Now, Log: log, Workers: workers, AllowPrivate: allowPrivate,
	})
	runCtx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := svc.Run(runCtx); err != nil {
			log.Error("jobs: background work stopped", "err", err)
		}
	})
	srv := rpc.NewServer(log, []rpc.Check{
		{Name: "postgresql", Probe: pool.Ping},
		{Name: "nats", Probe: func(ctx context.Context) error { return nc.FlushWithContext(ctx) }},
	})
	grpcapi.Register(srv, svc)
	cleanup := func() {
		// In-flight items are left unacknowledged and redelivered elsewhere.
		cancel()
		wg.Wait()
		_ = conn.Close()
		nc.Close()
		pool.Close()
	}
	return srv, cleanup, nil
}
