// Package server is the jobs service's wiring: New builds it from a Config
// (store, JetStream queue, converter client, webhook sender, metrics,
// Service, readiness checks), Register puts its gRPC APIs on a server, Run
// runs the item workers, webhook fan-out and delivery and the sweeper, and
// Close releases what New opened. cmd/jobs and deploy/local both run it, so
// the end-to-end test drives the production wiring.
package server

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats.go"
	"google.golang.org/grpc"

	"github.com/ledgerlane/platform/pkg/cursor"
	"github.com/ledgerlane/platform/pkg/natsconn"
	"github.com/ledgerlane/platform/pkg/pg"
	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/pkg/rpc"
	"github.com/ledgerlane/platform/pkg/tracing"
	conversionv1 "github.com/ledgerlane/platform/proto/conversion/v1"
	meteringv1 "github.com/ledgerlane/platform/proto/metering/v1"
	"github.com/ledgerlane/platform/services/jobs"
	"github.com/ledgerlane/platform/services/jobs/accounting"
	"github.com/ledgerlane/platform/services/jobs/accounting/quickbooks"
	"github.com/ledgerlane/platform/services/jobs/accounting/xero"
	"github.com/ledgerlane/platform/services/jobs/convertclient"
	"github.com/ledgerlane/platform/services/jobs/grpcapi"
	"github.com/ledgerlane/platform/services/jobs/memory"
	"github.com/ledgerlane/platform/services/jobs/meteringclient"
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
	// MeteringAddr is the metering service's gRPC address, which gives
	// back the units of items failed by an outage (docs/jobs.md). Empty:
	// those units stay counted.
	MeteringAddr string
	// Keys seals item data and webhook secrets. Nil: every batch and webhook
	// route answers batch-unavailable and no worker starts.
	Keys *jobs.Keyring
	// Workers is the number of item workers (default 4).
	Workers int
	// StreamReplicas is how many JetStream nodes keep the work and event
	// streams (default 1; 3 on a 3-node NATS cluster, so the queue survives
	// a node).
	StreamReplicas int
	// AllowPrivate permits webhook URLs on loopback and private addresses
	// (local development only).
	AllowPrivate bool
	// Clock defaults to time.Now.
	Clock jobs.Clock
	// Log defaults to discarding.
	Log *slog.Logger
	// Accounting configures accounting-platform connections.
	Accounting AccountingConfig
	// RetrySchedule is when webhook delivery attempts are due, as offsets
	// from a delivery's creation (WEBHOOK_RETRY_SCHEDULE); empty:
	// jobs.RetrySchedule. New refuses one that jobs.ValidateRetrySchedule
	// rejects.
	RetrySchedule []time.Duration
}

// AccountingConfig names the accounting platforms this deployment offers
// (docs/accounting.md). A platform without configuration is not offered.
type AccountingConfig struct {
	// RedirectURL is the public OAuth callback, GET /v1/connections/callback
	// on the edge, as registered with every platform.
	RedirectURL string
	// CursorKey signs list cursors (connections, and webhook deliveries);
	// the same on every replica (random per process when empty).
	CursorKey []byte
	// QuickBooks and Xero are the real platforms' apps; nil: not offered.
	QuickBooks *quickbooks.Config
	Xero       *xero.Config
	// SandboxURL is the local sandbox platform's base URL (empty: not
	// offered), with its client credentials.
	SandboxURL, SandboxClientID, SandboxClientSecret string
	// RefreshInterval is how often tokens near expiry are refreshed
	// (default 1 minute).
	RefreshInterval time.Duration
}

// Server is the jobs service, wired.
type Server struct {
	svc    *jobs.Service
	checks []rpc.Check
	pool   *pgxpool.Pool // nil on the in-memory store
	nc     *nats.Conn
	conv   *grpc.ClientConn
	met    *grpc.ClientConn // nil without a metering address
	acct   *accounting.Service
	// refreshEvery is the accounting refresher's interval.
	refreshEvery time.Duration
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
	if len(cfg.RetrySchedule) > 0 {
		if err := jobs.ValidateRetrySchedule(cfg.RetrySchedule); err != nil {
			return nil, fmt.Errorf("jobs: %w", err)
		}
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
	var acctStore accounting.Store = memory.NewAccounting()
	if cfg.DatabaseURL != "" {
		if s.pool, err = pg.Open(ctx, cfg.DatabaseURL, cfg.Schema, postgres.Migrations, cfg.Log); err != nil {
			return nil, err
		}
		store = postgres.New(s.pool)
		acctStore = postgres.NewAccounting(s.pool)
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
	converter := convertclient.New(conversionv1.NewConversionServiceClient(s.conv))
	var refunder jobs.Refunder // a nil interface, not a nil *Refunder
	if cfg.MeteringAddr != "" {
		if s.met, err = rpc.Dial(cfg.MeteringAddr); err != nil {
			return nil, err
		}
		refunder = meteringclient.New(meteringv1.NewUsageRefundServiceClient(s.met))
	} else {
		cfg.Log.Warn("jobs: no metering address: units of items failed by an outage stay counted")
	}
	var cursors *cursor.Codec // the delivery list's and the connection list's
	if len(cfg.Accounting.CursorKey) > 0 {
		cursors = cursor.New(cfg.Accounting.CursorKey)
	}
	s.svc = jobs.NewService(jobs.Config{
		Store:     store,
		Queue:     natsqueue.New(js, natsqueue.DefaultNames()).WithReplicas(cfg.StreamReplicas),
		Converter: converter,
		Webhooks:  webhook.NewClient(cfg.AllowPrivate),
		Metrics:   metrics.Prometheus{},
		Tracer:    tracing.Internal{},
		Keys:      cfg.Keys, Clock: cfg.Clock, Log: cfg.Log, Workers: cfg.Workers, AllowPrivate: cfg.AllowPrivate,
		Refunder: refunder, RetrySchedule: cfg.RetrySchedule, Cursors: cursors,
	})
	s.acct = newAccounting(cfg, acctStore, converter)
	s.refreshEvery = cfg.Accounting.RefreshInterval
	if s.refreshEvery <= 0 {
		s.refreshEvery = time.Minute
	}
	return s, nil
}

// newAccounting builds the accounting-connections service on the configured
// platforms. Tokens are sealed with the job key ring; without one the routes
// answer unavailable.
func newAccounting(cfg Config, store accounting.Store, conv jobs.Converter) *accounting.Service {
	a := cfg.Accounting
	platforms := map[string]accounting.Platform{}
	if a.QuickBooks != nil {
		qc := *a.QuickBooks
		qc.RedirectURL = cmp.Or(qc.RedirectURL, a.RedirectURL)
		platforms[accounting.QuickBooks] = quickbooks.New(qc)
	}
	if a.Xero != nil {
		xc := *a.Xero
		xc.RedirectURL = cmp.Or(xc.RedirectURL, a.RedirectURL)
		platforms[accounting.Xero] = xero.New(xc)
	}
	if a.SandboxURL != "" {
		platforms[accounting.Sandbox] = xero.NewSandbox(a.SandboxURL, a.SandboxClientID, a.SandboxClientSecret, a.RedirectURL, nil)
	}
	var keys accounting.Sealer // a nil *Keyring must stay a nil interface
	if cfg.Keys != nil {
		keys = cfg.Keys
	}
	var cursors *cursor.Codec
	if len(a.CursorKey) > 0 {
		cursors = cursor.New(a.CursorKey)
	}
	return accounting.NewService(accounting.Config{
		Store: store, Keys: keys, Platforms: platforms, Converter: statementCSV{conv}, Cursors: cursors, Metrics: metrics.Prometheus{},
		Clock: cfg.Clock, Log: cfg.Log.With("component", "accounting"),
	})
}

// statementCSV reads statements through the converter: any format it reads,
// to its CSV target, which accounting.ReadCSV reads back.
type statementCSV struct{ conv jobs.Converter }

func (c statementCSV) StatementCSV(ctx context.Context, caller accounting.Caller, from, message string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	out, err := c.conv.Convert(ctx, jobs.ConvertRequest{AccountID: caller.AccountID, Mode: caller.Mode, RequestID: caller.RequestID,
		From: from, To: "csv", Message: message, Options: jobs.Options{DateFormat: "ymd"}})
	if errors.Is(err, jobs.ErrConverterUnavailable) {
		return "", problem.New(problem.Unavailable, "the converter did not answer; retry shortly").WithRetryAfter(5)
	}
	if err != nil {
		return "", err
	}
	return strings.Join(out.Pages, ""), nil
}

// Accounting is the accounting-connections service the APIs serve.
func (s *Server) Accounting() *accounting.Service { return s.acct }

// Service is the jobs Service the APIs serve.
func (s *Server) Service() *jobs.Service { return s.svc }

// Register adds jobs.v1's JobService and WebhookService, and conversion.v1's
// AccountingConnectionService and AccountingCallbackService, to g.
func (s *Server) Register(g grpc.ServiceRegistrar) {
	grpcapi.Register(g, s.svc)
	grpcapi.RegisterAccounting(g, s.acct)
}

// Checks are the readiness checks: the database, when there is one, and
// NATS.
func (s *Server) Checks() []rpc.Check { return s.checks }

// Run sets the queue up and runs the item workers, the webhook fan-out and
// delivery and the sweeper until ctx ends (jobs.Service.Run), and the
// accounting token refresher and pending-connection sweep beside them. In-flight
// items are left unacknowledged and redelivered elsewhere.
func (s *Server) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = s.acct.RunRefresher(ctx, s.refreshEvery)
	}()
	swept := make(chan struct{})
	go func() {
		defer close(swept)
		s.acct.RunPendingSweep(ctx, s.refreshEvery)
	}()
	err := s.svc.Run(ctx)
	cancel()
	<-done
	<-swept
	return err
}

// Close closes the converter connection, NATS and the database pool.
func (s *Server) Close() error {
	var err error
	if s.conv != nil {
		err = s.conv.Close()
	}
	if s.met != nil {
		_ = s.met.Close()
	}
	if s.nc != nil {
		s.nc.Close()
	}
	if s.pool != nil {
		s.pool.Close()
	}
	return err
}
