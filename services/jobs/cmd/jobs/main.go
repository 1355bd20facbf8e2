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
//	METERING_ADDR          metering gRPC address (default metering:9003), which
//	                       gives back the units of items failed by an outage
//	JOB_ENCRYPTION_KEY     "<id>:<base64 32 bytes>[,<id>:<base64>...]"; the first
//	                       key encrypts, all decrypt. Unset: batch routes answer
//	                       503 batch-unavailable.
//	WORKERS                item workers in this process (default 4)
//	NATS_STREAM_REPLICAS   JetStream nodes keeping each jobs stream (default 1;
//	                       3 on a 3-node NATS cluster)
//	WEBHOOK_ALLOW_PRIVATE  true allows webhook URLs on loopback/private addresses
//	                       (local development only; default false)
//	WEBHOOK_RETRY_SCHEDULE when webhook attempts are due after a delivery's creation,
//	                       comma-separated durations starting at 0s, strictly
//	                       increasing, at most 10, the last within 24h (default
//	                       0s,1m,5m,30m,2h; the fault suite shortens it)
//	LOG_LEVEL              debug, info, warn or error (default info)
//
// Accounting-platform connections (docs/accounting.md); a platform whose
// client id is unset is not offered:
//
//	ACCOUNTING_REDIRECT_URL   the public callback, https://<edge>/v1/connections/callback
//	CURSOR_SECRET             key signing connection-list cursors (same on every replica)
//	QUICKBOOKS_CLIENT_ID, QUICKBOOKS_CLIENT_SECRET
//	QUICKBOOKS_AUTH_URL, QUICKBOOKS_TOKEN_URL, QUICKBOOKS_REVOKE_URL, QUICKBOOKS_API_URL
//	                          Intuit's endpoints by default (QUICKBOOKS_API_URL
//	                          https://sandbox-quickbooks.api.intuit.com for development keys)
//	XERO_CLIENT_ID, XERO_CLIENT_SECRET
//	XERO_AUTH_URL, XERO_TOKEN_URL, XERO_REVOKE_URL, XERO_CONNECTIONS_URL, XERO_API_URL
//	                          Xero's endpoints by default
//	SANDBOX_PLATFORM_URL, SANDBOX_CLIENT_ID, SANDBOX_CLIENT_SECRET
//	                          a sandbox platform (services/jobs/accounting/sandboxplatform)
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/ledgerlane/platform/pkg/config"
	"github.com/ledgerlane/platform/pkg/rpc"
	"github.com/ledgerlane/platform/services/jobs"
	"github.com/ledgerlane/platform/services/jobs/accounting/quickbooks"
	"github.com/ledgerlane/platform/services/jobs/accounting/xero"
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
		MeteringAddr:  config.String("METERING_ADDR", "metering:9003"),
		Log:           log,
	}
	if cfg.DatabaseURL == "" {
		return nil, errors.New("DATABASE_URL is required")
	}
	var err error
	if cfg.StreamReplicas, err = config.Int("NATS_STREAM_REPLICAS", 1); err != nil {
		return nil, err
	}
	if cfg.Workers, err = config.Int("WORKERS", 4); err != nil {
		return nil, err
	}
	if cfg.AllowPrivate, err = config.Bool("WEBHOOK_ALLOW_PRIVATE", false); err != nil {
		return nil, err
	}
	if spec := config.String("WEBHOOK_RETRY_SCHEDULE", ""); spec != "" {
		if cfg.RetrySchedule, err = jobs.ParseRetrySchedule(spec); err != nil {
			return nil, fmt.Errorf("WEBHOOK_RETRY_SCHEDULE: %w", err)
		}
		// Once, at start: a schedule other than the spec's is a test
		// setting, and replicas whose schedules differ should be visible.
		log.Info("webhook retry schedule from WEBHOOK_RETRY_SCHEDULE", "schedule", spec)
	}
	if spec := config.String("JOB_ENCRYPTION_KEY", ""); spec != "" {
		if cfg.Keys, err = jobs.ParseKeyring(spec); err != nil {
			return nil, err
		}
	} else {
		log.Warn("JOB_ENCRYPTION_KEY is not set: batch and webhook routes answer batch-unavailable")
	}
	cfg.Accounting = server.AccountingConfig{
		RedirectURL:     config.String("ACCOUNTING_REDIRECT_URL", ""),
		CursorKey:       []byte(config.String("CURSOR_SECRET", "")),
		SandboxURL:      config.String("SANDBOX_PLATFORM_URL", ""),
		SandboxClientID: config.String("SANDBOX_CLIENT_ID", ""), SandboxClientSecret: config.String("SANDBOX_CLIENT_SECRET", ""),
	}
	if id := config.String("QUICKBOOKS_CLIENT_ID", ""); id != "" {
		cfg.Accounting.QuickBooks = &quickbooks.Config{ClientID: id, ClientSecret: config.String("QUICKBOOKS_CLIENT_SECRET", ""),
			AuthURL: config.String("QUICKBOOKS_AUTH_URL", ""), TokenURL: config.String("QUICKBOOKS_TOKEN_URL", ""),
			RevokeURL: config.String("QUICKBOOKS_REVOKE_URL", ""), APIURL: config.String("QUICKBOOKS_API_URL", "")}
	}
	if id := config.String("XERO_CLIENT_ID", ""); id != "" {
		cfg.Accounting.Xero = &xero.Config{ClientID: id, ClientSecret: config.String("XERO_CLIENT_SECRET", ""),
			AuthURL: config.String("XERO_AUTH_URL", ""), TokenURL: config.String("XERO_TOKEN_URL", ""),
			RevokeURL: config.String("XERO_REVOKE_URL", ""), ConnectionsURL: config.String("XERO_CONNECTIONS_URL", ""),
			APIURL: config.String("XERO_API_URL", "")}
	}
	if (cfg.Accounting.QuickBooks != nil || cfg.Accounting.Xero != nil || cfg.Accounting.SandboxURL != "") && cfg.Accounting.RedirectURL == "" {
		return nil, errors.New("ACCOUNTING_REDIRECT_URL is required when an accounting platform is configured")
	}
	return server.New(ctx, cfg)
}
