// Command metering runs the metering service alone, as it runs on
// Kubernetes; the local stack runs the same wiring (services/metering/server)
// in one process with the others.
//
// Environment:
//
//	GRPC_ADDR     listen address (default :9003)
//	DATABASE_URL  PostgreSQL URL (required); the service owns schema "metering"
//	REDIS_URL     Redis holding the usage counters (needed for GET /v1/usage,
//	              invoices and usage alerts)
//	SMTP_ADDR     host:port of the mail submission server for usage alerts
//	              (unset: alerts wait in the outbox)
//	SMTP_FROM     sender address (required with SMTP_ADDR)
//	SMTP_USERNAME, SMTP_PASSWORD  SMTP AUTH PLAIN credentials (optional)
//	SMTP_TLS      required (default), opportunistic or none
//	SMTP_TIMEOUT  per connection (default 10s)
//	BILLING_INTERVAL  how often invoices, settlement, alerts and mail run (default 1m)
//	PAYMENT_PROCESSOR sandbox, or unset: no payment methods, nothing collected
//	FINANCE_ADDR  the finance service (default finance:9001), whose directory
//	              confirms the user and grant of each finance credential the
//	              portal or an operator issues
//	LOG_LEVEL     debug, info, warn or error (default info)
package main

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/ledgerlane/platform/pkg/config"
	"github.com/ledgerlane/platform/pkg/rpc"
	"github.com/ledgerlane/platform/services/metering/financedir"
	"github.com/ledgerlane/platform/services/metering/sandboxpay"
	"github.com/ledgerlane/platform/services/metering/server"
	"github.com/ledgerlane/platform/services/metering/smtpmail"
)

func main() {
	rpc.Main("metering", ":9003", setup)
}

func setup(ctx context.Context, log *slog.Logger) (rpc.Service, error) {
	cfg, err := configFromEnv(log)
	if err != nil {
		return nil, err
	}
	return server.New(ctx, cfg)
}

// configFromEnv reads the Environment above into the service's wiring.
func configFromEnv(log *slog.Logger) (server.Config, error) {
	// The URLs may hold passwords: they are never logged.
	cfg := server.Config{
		DatabaseURL: config.String("DATABASE_URL", ""),
		// Usage counters live in Redis, written by the gateway.
		RedisURL: config.String("REDIS_URL", ""),
		Log:      log,
	}
	if cfg.DatabaseURL == "" {
		return cfg, errors.New("DATABASE_URL is required")
	}
	var err error
	if cfg.BillingInterval, err = config.Duration("BILLING_INTERVAL", time.Minute); err != nil {
		return cfg, err
	}
	switch pp := config.String("PAYMENT_PROCESSOR", ""); pp {
	case "sandbox":
		cfg.PaymentProcessor = sandboxpay.New()
	case "":
		log.Warn("PAYMENT_PROCESSOR is not set: payment methods cannot be added and nothing is collected")
	default:
		// Only the sandbox is built; a real adapter (docs/billing.md) is
		// named here when it is.
		return cfg, errors.New(`PAYMENT_PROCESSOR must be "sandbox" or unset`)
	}
	if addr := config.String("SMTP_ADDR", ""); addr != "" {
		timeout, err := config.Duration("SMTP_TIMEOUT", 10*time.Second)
		if err != nil {
			return cfg, err
		}
		m, err := smtpmail.New(smtpmail.Config{
			Addr: addr, From: config.String("SMTP_FROM", ""), Username: config.String("SMTP_USERNAME", ""),
			Password: config.String("SMTP_PASSWORD", ""), TLS: config.String("SMTP_TLS", smtpmail.TLSRequired), Timeout: timeout,
		})
		if err != nil {
			return cfg, err
		}
		cfg.Mailer = m
	} else {
		log.Warn("SMTP_ADDR is not set: usage alert e-mails wait in the outbox")
	}
	// Dialling is lazy: a finance service that is not up yet only fails the
	// issuing of finance credentials until it is. The connection lives as
	// long as the process.
	fin, err := rpc.Dial(config.String("FINANCE_ADDR", "finance:9001"))
	if err != nil {
		return cfg, err
	}
	cfg.FinanceDirectory = financedir.New(fin)
	return cfg, nil
}
