// Package server is the jobs service's wiring: New builds it from a Config
// (store, JetStream queue, converter client, webhook sender, metrics,
// Service, readiness checks), Register puts its gRPC APIs on a server, Run
// runs the item workers, webhook fan-out and delivery and the sweeper, and
// Close releases what New opened. cmd/jobs and deploy/local both run it, so
// the end-to-end test drives the production wiring.
package server

import (
	"context"
	"errors"
	"log/slog"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats.go"
	"google.golang.org/grpc"

	"github.com/ledgerlane/platform/pkg/natsconn"
	"github.com/ledgerlane/platform/pkg/pg"
	"github.com/ledgerlane/platform/pkg/rpc"
	conversionv1 "github.com/ledgerlane/platform/proto/conversion/v1"
	"github.com/ledgerlane/platform/services/jobs"
	"github.com/ledgerlane/platform/services/jobs/convertclient"
	"github.com/ledgerlane/platform/services/jobs/grpcapi"
	"github.com/ledgerlane/platform/services/jobs/memory"
	"github.com/ledgerlane/platform/services/jobs/metrics"
	"github.com/ledgerlane/platform/services/jobs/natsqueue"
	"github.com/ledgerlane/platform/services/jobs/postgres"
	"github.com/ledgerlane/platform/services/jobs/webhook"
)

// Config is what the jobs service runs on. URLs and keys may hold secrets:
// none of them is ever logged.
type Config struct {
	// DatabaseURL is the PostgreSQL holding the service's tables, in schema
	// Schema (migrated by New). Empty: an in-memory store, which only the
	// local stack uses.
	DatabaseURL string
	// Schema defaults to "jobs".
	Schema string
	// NATSURL is NATS with JetStream, for the work queue and job events
	// (required).
	NATSURL string
	// ConverterAddr is the converter's gRPC address, which the workers call
	// (required).
	ConverterAddr string
	// Keys seals item data and webhook secrets. Nil: every batch and webhook
	// route answers batch-unavailable and no worker starts.
	Keys *jobs.Keyring
	// Workers is the number of item workers (default 4).
	Workers int
	// AllowPrivate permits webhook URLs on loopback and private addresses
	// (local development only).
	AllowPrivate bool
	// Clock defaults to time.Now.
	Clock jobs.Clock
	// Log defaults to discarding.
	Log *slog.Logger
}

// Server is the jobs service, wired.
type Server struct {
	svc    *jobs.Service
	checks []rpc.Check
	pool   *pgxpool.Pool // nil on the in-memory store
	nc     *nats.Conn
	conv   *grpc.ClientConn
}

var _ rpc.Service = (*Server)(nil)

// New opens the store (migrating its schema), connects to NATS and dials
// the converter, and builds the Service.
func New(ctx context.Context, cfg Config) (_ *Server, err error) {
	if cfg.NATSURL == "" {
		return nil, errors.New("jobs: a NATS URL is required")
	}
	if cfg.ConverterAddr == "" {
		return nil, errors.New("jobs: the converter's address is required")
	}
	if cfg.Schema == "" {
		cfg.Schema = "jobs"
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	s := &Server{}
	defer func() {
		if err != nil {
			_ = s.Close()
		}
	}()
	var store jobs.Store = memory.New()
	if cfg.DatabaseURL != "" {
		if s.pool, err = pg.Open(ctx, cfg.DatabaseURL, cfg.Schema, postgres.Migrations, cfg.Log); err != nil {
			return nil, err
		}
		store = postgres.New(s.pool)
		s.checks = append(s.checks, rpc.Check{Name: "postgresql", Probe: s.pool.Ping})
	}
	nc, js, err := natsconn.Connect(cfg.NATSURL, "jobs")
	if err != nil {
		return nil, err
	}
	s.nc = nc
	s.checks = append(s.checks, rpc.Check{Name: "nats", Probe: func(ctx context.Context) error { return nc.FlushWithContext(ctx) }})
	if s.conv, err = rpc.Dial(cfg.ConverterAddr); err != nil {
		return nil, err
	}
	s.svc = jobs.NewService(jobs.Config{
		Store:     store,
		Queue:     natsqueue.New(js, natsqueue.DefaultNames()),
		Converter: convertclient.New(conversionv1.NewConversionServiceClient(s.conv)),
		Webhooks:  webhook.NewClient(cfg.AllowPrivate),
		Metrics:   metrics.Prometheus{},
		Keys:      cfg.Keys, Clock: cfg.Clock, Log: cfg.Log, Workers: cfg.Workers, AllowPrivate: cfg.AllowPrivate,
	})
	return s, nil
}

// Service is the jobs Service the APIs serve.
func (s *Server) Service() *jobs.Service { return s.svc }

// Register adds jobs.v1's JobService and WebhookService to g.
func (s *Server) Register(g grpc.ServiceRegistrar) { grpcapi.Register(g, s.svc) }

// Checks are the readiness checks: the database, when there is one, and
// NATS.
func (s *Server) Checks() []rpc.Check { return s.checks }

// Run sets the queue up and runs the item workers, the webhook fan-out and
// delivery and the sweeper until ctx ends (jobs.Service.Run). In-flight
// items are left unacknowledged and redelivered elsewhere.
func (s *Server) Run(ctx context.Context) error { return s.svc.Run(ctx) }

// Close closes the converter connection, NATS and the database pool.
func (s *Server) Close() error {
	var err error
	if s.conv != nil {
		err = s.conv.Close()
	}
	if s.nc != nil {
		s.nc.Close()
	}
	if s.pool != nil {
		s.pool.Close()
	}
	return err
}
