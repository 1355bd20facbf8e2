// Command gateway runs the public HTTP edge alone, as it runs on Kubernetes:
// it dials the four services by address and serves /v1 and the portal.
// PORTAL_PUBLIC_URL (required) is its public root, where the portal's mailed
// links lead.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/ledgerlane/platform/gateway"
	"github.com/ledgerlane/platform/gateway/server"
	"github.com/ledgerlane/platform/pkg/config"
	"github.com/ledgerlane/platform/pkg/logging"
	"github.com/ledgerlane/platform/pkg/tracing"
)

// Set with -ldflags "-X main.version=… -X main.commit=… -X main.buildTime=…".
var (
	version   = "dev"
	commit    = "unknown"
	buildTime = ""
)

func main() {
	log := logging.New("gateway", config.String("LOG_LEVEL", "info"))
	if err := run(log); err != nil {
		log.Error("exit", "err", err)
		os.Exit(1)
	}
}

func run(log *slog.Logger) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	// Traces only when OTEL_* asks for them (pkg/tracing); before the
	// backends are dialled, so their clients carry the trace.
	stopTracing, err := tracing.Start(ctx, "gateway", log)
	if err != nil {
		return err
	}
	defer stopTracing()
	cfg, err := configFromEnv(log)
	if err != nil {
		return err
	}
	srv, err := server.New(ctx, cfg)
	if err != nil {
		return err
	}
	defer srv.Close()
	go func() { _ = srv.Run(ctx) }()
	if addr := config.String("METRICS_ADDR", ":9090"); addr != "" {
		mlis, err := net.Listen("tcp", addr)
		if err != nil {
			return fmt.Errorf("METRICS_ADDR: %w", err)
		}
		mux := http.NewServeMux()
		mux.Handle("/metrics", srv.Metrics())
		go func() { _ = gateway.Serve(ctx, mlis, mux, time.Second) }()
	}
	lis, err := net.Listen("tcp", config.String("HTTP_ADDR", ":8080"))
	if err != nil {
		return err
	}
	log.Info("listening", "addr", lis.Addr().String(), "version", version)
	return srv.Serve(ctx, lis)
}

// configFromEnv reads the gateway's environment (deploy/k8s/README.md).
func configFromEnv(log *slog.Logger) (server.Config, error) {
	ttl, err := config.Duration("CREDENTIAL_TTL", 5*time.Second)
	if err != nil {
		return server.Config{}, err
	}
	grace, err := config.Duration("SHUTDOWN_GRACE", 20*time.Second)
	if err != nil {
		return server.Config{}, err
	}
	// The portal's cookies are Secure unless told otherwise: a deployed
	// gateway sits behind TLS (docs/portal.md).
	secureCookies, err := config.Bool("PORTAL_SECURE_COOKIES", true)
	if err != nil {
		return server.Config{}, err
	}
	bt, _ := time.Parse(time.RFC3339, buildTime)
	return server.Config{
		FinanceAddr:   config.String("FINANCE_ADDR", "finance:9001"),
		ConverterAddr: config.String("CONVERTER_ADDR", "converter:9002"),
		MeteringAddr:  config.String("METERING_ADDR", "metering:9003"),
		JobsAddr:      config.String("JOBS_ADDR", "jobs:9004"),
		RedisURL:      config.String("REDIS_URL", ""), NATSURL: config.String("NATS_URL", ""),
		SealKey:         config.String("JOB_ENCRYPTION_KEY", ""),
		PortalPublicURL: config.String("PORTAL_PUBLIC_URL", ""), PortalSecureCookies: secureCookies,
		CredentialTTL: ttl, DocsURL: config.String("DOCS_URL", ""), ShutdownGrace: grace,
		Version: version, Commit: commit, BuildTime: bt, Log: log,
	}, nil
}
