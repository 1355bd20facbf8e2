// Command jobs runs the jobs service alone, as it runs on Kubernetes; the
// local stack runs the same wiring (services/jobs/server) in one process with
// the others.
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

	"github.com/ledgerlane/platform/pkg/config"
	"github.com/ledgerlane/platform/pkg/rpc"
	"github.com/ledgerlane/platform/services/jobs"
	"github.com/ledgerlane/platform/services/jobs/server"
)

func main() {
	rpc.Main("jobs", ":9004", setup)
}

func setup(ctx context.Context, log *slog.Logger) (rpc.Service, error) {
	// URLs and the key may hold secrets: none of them is ever logged.
	cfg := server.Config{
		DatabaseURL:   config.String("DATABASE_URL", ""),
		NATSURL:       config.String("NATS_URL", "nats://nats:4222"),
		ConverterAddr: config.String("CONVERTER_ADDR", "converter:9002"),
		Log:           log,
	}
	if cfg.DatabaseURL == "" {
		return nil, errors.New("DATABASE_URL is required")
	}
	var err error
	if cfg.Workers, err = config.Int("WORKERS", 4); err != nil {
		return nil, err
	}
	if cfg.AllowPrivate, err = config.Bool("WEBHOOK_ALLOW_PRIVATE", false); err != nil {
		return nil, err
	}
	if spec := config.String("JOB_ENCRYPTION_KEY", ""); spec != "" {
		if cfg.Keys, err = jobs.ParseKeyring(spec); err != nil {
			return nil, err
		}
	} else {
		log.Warn("JOB_ENCRYPTION_KEY is not set: batch and webhook routes answer batch-unavailable")
	}
	return server.New(ctx, cfg)
}
