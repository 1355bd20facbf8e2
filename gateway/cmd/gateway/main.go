// Command gateway runs the public HTTP edge alone, as it runs on Kubernetes:
// it dials the four services by address and serves /v1 and the portal.
// PORTAL_PUBLIC_URL (required) is its public root, where the portal's mailed
// links lead.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
	"google.golang.org/grpc"

	"github.com/ledgerlane/platform/gateway"
	"github.com/ledgerlane/platform/pkg/config"
	"github.com/ledgerlane/platform/pkg/logging"
	"github.com/ledgerlane/platform/pkg/natsconn"
	"github.com/ledgerlane/platform/pkg/redisconn"
	"github.com/ledgerlane/platform/pkg/rpc"
	"github.com/ledgerlane/platform/pkg/seal"
	"github.com/ledgerlane/platform/pkg/tracing"
	"github.com/ledgerlane/platform/services/metering/admission"
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
	stopTracing, err := tracing.Setup(ctx, "gateway")
	if err != nil {
		return err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = stopTracing(sctx)
	}()

	ttl, err := config.Duration("CREDENTIAL_TTL", 5*time.Second)
	if err != nil {
		return err
	}
	grace, err := config.Duration("SHUTDOWN_GRACE", 20*time.Second)
	if err != nil {
		return err
	}
	// grpc.NewClient connects lazily, so the edge starts before its backends
	// and /v1/ready reports which of them answer.
	var b gateway.Backends
	for _, d := range []struct {
		env, def string
		dst      *grpc.ClientConnInterface
	}{
		{"FINANCE_ADDR", "finance:9001", &b.Finance},
		{"CONVERTER_ADDR", "converter:9002", &b.Converter},
		{"METERING_ADDR", "metering:9003", &b.Metering},
		{"JOBS_ADDR", "jobs:9004", &b.Jobs},
	} {
		conn, err := rpc.Dial(config.String(d.env, d.def))
		if err != nil {
			return fmt.Errorf("%s: %w", d.env, err)
		}
		defer conn.Close()
		*d.dst = conn
	}

	var checks []gateway.Check
	var rdb redis.UniversalClient
	if url := config.String("REDIS_URL", ""); url != "" {
		// Parsed, not pinged: the edge must start (and fail open) while Redis
		// is down; /v1/ready reports it.
		// Tight timeouts: when Redis is slow or gone the edge fails open, and
		// should decide that in milliseconds, not after dial retries. A URL
		// with addr= seed nodes is a Redis Cluster (pkg/redisconn).
		const d = 250 * time.Millisecond
		rc, err := redisconn.Open(url, &redisconn.Tuning{DialTimeout: d, ReadTimeout: d, WriteTimeout: d, PoolTimeout: d, MaxRetries: 1})
		if err != nil {
			return fmt.Errorf("REDIS_URL: %w", err)
		}
		defer rc.Close()
		rdb = rc
		checks = append(checks, gateway.Check{Name: "redis", Probe: func(ctx context.Context) error { return rc.Ping(ctx).Err() }})
	} else {
		log.Warn("REDIS_URL is not set: no rate limits, quotas or idempotency")
	}
	if url := config.String("NATS_URL", ""); url != "" {
		nc, _, err := natsconn.Connect(url, "gateway")
		if err != nil {
			return err
		}
		defer nc.Close()
		checks = append(checks, gateway.Check{Name: "nats", Probe: func(ctx context.Context) error { return nc.FlushWithContext(ctx) }})
	}

	// The portal's cookies are Secure unless told otherwise: a deployed
	// gateway sits behind TLS (docs/portal.md).
	secureCookies, err := config.Bool("PORTAL_SECURE_COOKIES", true)
	if err != nil {
		return err
	}
	// The portal mails links (password reset, invitations, verification):
	// they start with the public URL, so the gateway does not start without
	// one (docs/security.md).
	publicURL := config.String("PORTAL_PUBLIC_URL", "")
	if publicURL == "" {
		return errors.New("PORTAL_PUBLIC_URL is required: the gateway's public root (e.g. https://api.example.com), where the portal's mailed links lead")
	}
	// The answers kept in Redis for Idempotency-Key replays are sealed with
	// the jobs service's key ring: never at rest in the clear.
	var sealer admission.Sealer
	if rdb != nil {
		spec := config.String("JOB_ENCRYPTION_KEY", "")
		if spec == "" {
			return errors.New("JOB_ENCRYPTION_KEY is required with REDIS_URL: it seals the answers kept for Idempotency-Key replays (the jobs service's key ring)")
		}
		keys, err := seal.ParseKeyring("JOB_ENCRYPTION_KEY", spec)
		if err != nil {
			return err
		}
		sealer = keys
	}
	bt, _ := time.Parse(time.RFC3339, buildTime)
	g, err := gateway.New(gateway.Config{
		Backends: b, Checks: checks, Version: version, Commit: commit, BuildTime: bt,
		CredentialTTL: ttl, DocsURL: config.String("DOCS_URL", ""), Log: log, Redis: rdb,
		PortalSecureCookies: secureCookies, PortalPublicURL: publicURL, Sealer: sealer,
	})
	if err != nil {
		return err
	}
	go g.RunReconciler(ctx, 5*time.Second)
	if addr := config.String("METRICS_ADDR", ":9090"); addr != "" {
		mlis, err := net.Listen("tcp", addr)
		if err != nil {
			return fmt.Errorf("METRICS_ADDR: %w", err)
		}
		mux := http.NewServeMux()
		mux.Handle("/metrics", g.Metrics())
		go func() { _ = gateway.Serve(ctx, mlis, mux, time.Second) }()
	}
	lis, err := net.Listen("tcp", config.String("HTTP_ADDR", ":8080"))
	if err != nil {
		return err
	}
	log.Info("listening", "addr", lis.Addr().String(), "version", version)
	return gateway.Serve(ctx, lis, tracing.HTTPHandler(g.Handler(), "gateway"), grace)
}
