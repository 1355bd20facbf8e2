// Package server builds the edge from its configuration, as each service's
// server package builds that service: the four backends' connections,
// Redis (rate buckets, usage counters, kept answers), the NATS readiness
// probe, the portal's public URL and the sealer of kept answers. cmd/gateway
// and deploy/local both build the gateway here; cmd/gateway reads the
// environment into a Config, deploy/local fills one for its in-process
// stack.
package server

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/redis/go-redis/v9"
	"google.golang.org/grpc"

	"github.com/ledgerlane/platform/gateway"
	"github.com/ledgerlane/platform/pkg/natsconn"
	"github.com/ledgerlane/platform/pkg/redisconn"
	"github.com/ledgerlane/platform/pkg/rpc"
	"github.com/ledgerlane/platform/pkg/seal"
	"github.com/ledgerlane/platform/pkg/tracing"
)

// Config is the edge's configuration: addresses, URLs and named choices.
type Config struct {
	// The backends' gRPC addresses (host:port, or a comma-separated list of
	// them; pkg/rpc.Dial).
	FinanceAddr, ConverterAddr, MeteringAddr, JobsAddr string
	// Dial opens the connection to a backend (name is "finance",
	// "converter", "metering" or "jobs"). Nil: pkg/rpc.Dial, gRPC over the
	// network. The local stack dials its services in process.
	Dial func(name, addr string) (grpc.ClientConnInterface, error)
	// RedisURL: rate buckets, usage counters and kept answers. Empty turns
	// limits, quotas and idempotency off (logged); every real deployment
	// sets it.
	RedisURL string
	// RedisTimeout bounds each Redis call (dial, read, write, pool wait;
	// one retry): past it the edge fails open. Default 250 ms.
	RedisTimeout time.Duration
	// NATSURL, when set, is probed by /v1/ready.
	NATSURL string
	// SealKey seals the answers kept in Redis for Idempotency-Key replays
	// (the jobs service's key ring format, JOB_ENCRYPTION_KEY). Required
	// with RedisURL: a converted statement or a webhook's one-time secret
	// is never at rest in the clear.
	SealKey string
	// PortalPublicURL is the gateway's public root; required (the portal
	// mails links that start with it).
	PortalPublicURL     string
	PortalSecureCookies bool
	// CredentialTTL bounds how long a resolved key is trusted (default 5 s).
	CredentialTTL time.Duration
	DocsURL       string
	// Build identity for /v1/version.
	Version, Commit string
	BuildTime       time.Time
	// ReconcileEvery is how often Run flushes usage journalled while Redis
	// was out (default 5 s).
	ReconcileEvery time.Duration
	// ShutdownGrace bounds the drain of in-flight requests (default 20 s).
	ShutdownGrace time.Duration
	Log           *slog.Logger
	// Now defaults to time.Now.
	Now func() time.Time
}

// Server is a built edge.
type Server struct {
	*gateway.Gateway
	cfg     Config
	redis   redis.UniversalClient
	closers []func() error
}

// New builds the edge. It connects lazily (grpc.NewClient; Redis parsed,
// not pinged), so the edge starts before its backends and /v1/ready says
// which of them answer.
func New(ctx context.Context, cfg Config) (_ *Server, err error) {
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.PortalPublicURL == "" {
		return nil, errors.New("PORTAL_PUBLIC_URL is required: the gateway's public root (e.g. https://api.example.com), where the portal's mailed links lead")
	}
	s := &Server{cfg: cfg}
	defer func() {
		if err != nil {
			_ = s.Close()
		}
	}()
	dial := cfg.Dial
	if dial == nil {
		dial = func(_, addr string) (grpc.ClientConnInterface, error) {
			conn, err := rpc.Dial(addr)
			if err != nil {
				return nil, err
			}
			s.closers = append(s.closers, conn.Close)
			return conn, nil
		}
	}
	var b gateway.Backends
	for _, d := range []struct {
		name, setting, addr string
		dst                 *grpc.ClientConnInterface
	}{
		{"finance", "FINANCE_ADDR", cfg.FinanceAddr, &b.Finance},
		{"converter", "CONVERTER_ADDR", cfg.ConverterAddr, &b.Converter},
		{"metering", "METERING_ADDR", cfg.MeteringAddr, &b.Metering},
		{"jobs", "JOBS_ADDR", cfg.JobsAddr, &b.Jobs},
	} {
		if *d.dst, err = dial(d.name, d.addr); err != nil {
			return nil, fmt.Errorf("%s: %w", d.setting, err)
		}
	}
	var checks []gateway.Check
	var sealer *seal.Keyring
	if cfg.RedisURL != "" {
		// Tight timeouts: when Redis is slow or gone the edge fails open,
		// and should decide that in milliseconds, not after dial retries.
		d := cmp.Or(cfg.RedisTimeout, 250*time.Millisecond)
		rc, err := redisconn.Open(cfg.RedisURL, &redisconn.Tuning{DialTimeout: d, ReadTimeout: d, WriteTimeout: d, PoolTimeout: d, MaxRetries: 1})
		if err != nil {
			return nil, fmt.Errorf("REDIS_URL: %w", err)
		}
		s.redis = rc
		s.closers = append(s.closers, rc.Close)
		checks = append(checks, gateway.Check{Name: "redis", Probe: func(ctx context.Context) error { return rc.Ping(ctx).Err() }})
		if cfg.SealKey == "" {
			return nil, errors.New("JOB_ENCRYPTION_KEY is required with REDIS_URL: it seals the answers kept for Idempotency-Key replays (the jobs service's key ring)")
		}
		if sealer, err = seal.ParseKeyring("JOB_ENCRYPTION_KEY", cfg.SealKey); err != nil {
			return nil, err
		}
	} else {
		cfg.Log.Warn("REDIS_URL is not set: no rate limits, quotas or idempotency")
	}
	if cfg.NATSURL != "" {
		nc, _, err := natsconn.Connect(cfg.NATSURL, "gateway")
		if err != nil {
			return nil, err
		}
		s.closers = append(s.closers, func() error { nc.Close(); return nil })
		checks = append(checks, gateway.Check{Name: "nats", Probe: func(ctx context.Context) error { return nc.FlushWithContext(ctx) }})
	}
	gc := gateway.Config{
		Backends: b, Checks: checks, Version: cfg.Version, Commit: cfg.Commit, BuildTime: cfg.BuildTime,
		CredentialTTL: cfg.CredentialTTL, DocsURL: cfg.DocsURL, Log: cfg.Log, Now: cfg.Now,
		PortalSecureCookies: cfg.PortalSecureCookies, PortalPublicURL: cfg.PortalPublicURL,
	}
	if s.redis != nil {
		// Set only when there is one: a nil client in the interface would
		// read as limits on.
		gc.Redis, gc.Sealer = s.redis, sealer
	}
	if s.Gateway, err = gateway.New(gc); err != nil {
		return nil, err
	}
	return s, nil
}

// Redis is the edge's Redis client (nil without REDIS_URL): the local
// stack seeds usage through it.
func (s *Server) Redis() redis.UniversalClient { return s.redis }

// Run does the edge's background work until ctx ends: flushing usage
// journalled while Redis was out, and the request log's buffer.
func (s *Server) Run(ctx context.Context) error {
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.RunRequestLog(ctx)
	}()
	s.RunReconciler(ctx, cmp.Or(s.cfg.ReconcileEvery, 5*time.Second))
	<-done
	return nil
}

// Serve serves the edge (its HTTP handler behind the tracing span when
// tracing is on) on lis until ctx ends, then drains within ShutdownGrace.
func (s *Server) Serve(ctx context.Context, lis net.Listener) error {
	return gateway.Serve(ctx, lis, s.HTTPHandler(), cmp.Or(s.cfg.ShutdownGrace, 20*time.Second))
}

// HTTPHandler is the edge's handler behind the HTTP server span (pkg/tracing;
// the bare handler when tracing is off).
func (s *Server) HTTPHandler() http.Handler { return tracing.HTTPHandler(s.Handler(), "gateway") }

// Close releases the connections New opened, in reverse order.
func (s *Server) Close() error {
	var errs []error
	for i := len(s.closers) - 1; i >= 0; i-- {
		errs = append(errs, s.closers[i]())
	}
	s.closers = nil
	return errors.Join(errs...)
}
