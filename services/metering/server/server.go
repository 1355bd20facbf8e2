// Package server is the metering service's wiring: New builds it from a
// Config (the store, the usage counters, then notify's, billing's payment
// standing, the root's, billing's and identity's Services in that order,
// and the readiness checks: README.md,
// "Packages and which imports which"), Register puts its gRPC APIs on a server, Run does the billing
// tick (BillingTick: each step reads only what is due, docs/billing.md) and
// Close releases what New opened.
// cmd/metering and deploy/local both run it, so the end-to-end test drives
// the production wiring.
package server

import (
	"context"
	"io"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"
	"google.golang.org/grpc"

	"github.com/ledgerlane/platform/pkg/clock"
	"github.com/ledgerlane/platform/pkg/logging"
	"github.com/ledgerlane/platform/pkg/periodic"
	"github.com/ledgerlane/platform/pkg/pg"
	"github.com/ledgerlane/platform/pkg/redisconn"
	"github.com/ledgerlane/platform/pkg/rpc"
	"github.com/ledgerlane/platform/services/metering"
	"github.com/ledgerlane/platform/services/metering/admission"
	"github.com/ledgerlane/platform/services/metering/billing"
	"github.com/ledgerlane/platform/services/metering/grpcapi"
	"github.com/ledgerlane/platform/services/metering/identity"
	"github.com/ledgerlane/platform/services/metering/memory"
	"github.com/ledgerlane/platform/services/metering/notify"
	"github.com/ledgerlane/platform/services/metering/postgres"
	"github.com/ledgerlane/platform/services/metering/redisthrottle"
)

// Config is what the metering service runs on. URLs may hold passwords:
// none of them is ever logged.
type Config struct {
	// DatabaseURL is the PostgreSQL holding the service's tables, in schema
	// Schema (migrated by New). Empty: an in-memory store, which only the
	// local stack uses.
	DatabaseURL string
	// Schema defaults to "metering".
	Schema string
	// RedisURL is the Redis holding the usage counters the gateway writes.
	// Empty: usage cannot be read (GET /v1/usage answers 503).
	RedisURL string
	// ThrottlePrefix starts the Redis keys of the portal and OAuth throttles
	// (default redisthrottle.DefaultPrefix). Every replica of one
	// deployment must use the same; the local stack takes one per stack so
	// test runs on a shared Redis (with fixed addresses and clocks) do not
	// lock each other out.
	ThrottlePrefix string
	// FinanceDirectory checks the user and grant of each finance credential
	// the Service issues (financedir over gRPC). Nil: finance credentials
	// are refused.
	FinanceDirectory metering.FinanceDirectory
	// Mailer sends usage alert e-mails from the outbox (smtpmail over
	// SMTP). Nil: alerts are still recorded and queued, and wait in the
	// outbox until a replica with a mailer sends them.
	Mailer notify.Mailer
	// BillingInterval is how often Run closes ended periods into invoices,
	// checks usage alerts and sends queued mail (default 1 minute; negative:
	// never, tests call the Service). It needs RedisURL.
	BillingInterval time.Duration
	// CloseGrace is how long after its end a period is invoiced (default
	// billing.DefaultCloseGrace).
	CloseGrace time.Duration
	// MailBackoff and MailBackoffMax: the outbox's first retry delay and the
	// longest (defaults notify.DefaultMailBackoff and DefaultMailBackoffMax).
	MailBackoff, MailBackoffMax time.Duration
	// PaymentProcessor moves payments (sandboxpay in the local stack; a
	// deployment's real adapter). Nil: payment methods cannot be added and
	// nothing is collected.
	PaymentProcessor billing.PaymentProcessor
	// Clock defaults to time.Now.
	Clock metering.Clock
	// Log defaults to discarding.
	Log *slog.Logger
}

// stores is what the service runs on: metering's Store and those of its
// subdomain packages, implemented by one value (memory or postgres).
type stores interface {
	metering.Store
	billing.Store
	notify.Store
	identity.Store
}

// Server is the metering service, wired.
type Server struct {
	svc      *metering.Service
	billing  *billing.Service
	identity *identity.Service
	notify   *notify.Service
	checks   []rpc.Check
	pool     *pgxpool.Pool // nil on the in-memory store
	redis    io.Closer     // nil without RedisURL
	cfg      Config
	// housekept is when BillingTick last ran the housekeeping (zero: never,
	// so a replica's first tick runs it).
	housekept time.Time
}

var _ rpc.Service = (*Server)(nil)

// New opens the store (migrating its schema) and Redis, and builds the
// Service.
func New(ctx context.Context, cfg Config) (_ *Server, err error) {
	if cfg.Schema == "" {
		cfg.Schema = "metering"
	}
	cfg.Clock, cfg.Log = clock.Or(cfg.Clock), logging.OrDiscard(cfg.Log)
	if cfg.BillingInterval == 0 {
		cfg.BillingInterval = time.Minute
	}
	s := &Server{cfg: cfg}
	defer func() {
		if err != nil {
			_ = s.Close()
		}
	}()
	var store stores = memory.New()
	if cfg.DatabaseURL != "" {
		if s.pool, err = pg.Open(ctx, cfg.DatabaseURL, cfg.Schema, postgres.Migrations, cfg.Log); err != nil {
			return nil, err
		}
		store = postgres.New(s.pool)
		s.checks = append(s.checks, rpc.Check{Name: "postgresql", Probe: s.pool.Ping})
	}
	var counters *admission.Controller
	var rc redis.UniversalClient
	if cfg.RedisURL != "" {
		if rc, err = redisconn.Connect(ctx, cfg.RedisURL); err != nil {
			return nil, err
		}
		s.redis = rc
		counters = admission.New(rc, cfg.Clock)
	}
	nc := notify.Config{Store: store, Clock: cfg.Clock, Log: cfg.Log}
	if counters != nil {
		nc.Changes = counters
	}
	if cfg.MailBackoff > 0 {
		nc.MailBackoff, nc.MailBackoffMax = cfg.MailBackoff, max(cfg.MailBackoff, cfg.MailBackoffMax)
	}
	s.notify = notify.NewService(nc)
	// The root reads the payment standing through billing.Standing (the
	// store alone), tells notify of changed limits, and billing reaches the
	// accounts through the root: calls run billing → root → notify.
	mc := metering.Config{Store: store, FinanceDirectory: cfg.FinanceDirectory,
		Payments: billing.NewStanding(store), Watcher: s.notify, Clock: cfg.Clock, Log: cfg.Log}
	bc := billing.Config{Store: store, PaymentProcessor: cfg.PaymentProcessor, Notices: s.notify, Clock: cfg.Clock, Log: cfg.Log}
	if counters != nil { // never a nil *admission.Controller in an interface
		mc.Counters, bc.Counters = counters, counters
	}
	s.svc = metering.NewService(mc)
	bc.Accounts = s.svc
	if cfg.CloseGrace > 0 {
		bc.CloseGrace = cfg.CloseGrace
	}
	s.billing = billing.NewService(bc)
	ic := identity.Config{Store: store, Accounts: s.svc, Clock: cfg.Clock, Log: cfg.Log}
	if rc != nil {
		ic.Throttles = redisthrottle.Kinds(rc, cfg.ThrottlePrefix, cfg.Log)
		s.checks = append(s.checks, rpc.Check{Name: "redis", Probe: func(ctx context.Context) error { return rc.Ping(ctx).Err() }})
	}
	s.identity = identity.NewService(ic)
	return s, nil
}

// Service is the metering Service the APIs serve.
func (s *Server) Service() *metering.Service { return s.svc }

// Billing is the Service of plan changes, invoices, collection and
// payments.
func (s *Server) Billing() *billing.Service { return s.billing }

// Identity is the Service of the portal's people, sessions, tokens and
// OAuth clients.
func (s *Server) Identity() *identity.Service { return s.identity }

// Notify is the Service of the usage alerts and the mail outbox.
func (s *Server) Notify() *notify.Service { return s.notify }

// Register adds metering.v1's CredentialService, UsageService and
// BillingService to g.
func (s *Server) Register(g grpc.ServiceRegistrar) {
	grpcapi.Register(g, grpcapi.Services{Metering: s.svc, Billing: s.billing, Identity: s.identity, Notify: s.notify})
}

// Checks are the readiness checks: the database, when there is one, and
// Redis, when configured.
func (s *Server) Checks() []rpc.Check { return s.checks }

// Run does the billing work every BillingInterval until ctx ends: it
// closes ended periods into invoices (collecting them), retries due
// invoice collections, settles due payments, queues usage alert e-mails,
// sends the outbox and, hourly, deletes expired sessions and tokens. Every replica runs it; the store makes each invoice and
// alert exactly once, claims each collection attempt for one replica and
// leases each mail to one sender.
func (s *Server) Run(ctx context.Context) error {
	if s.cfg.BillingInterval < 0 || s.cfg.RedisURL == "" {
		<-ctx.Done()
		return nil
	}
	periodic.Task{Name: "billing round", Every: s.cfg.BillingInterval, Log: s.cfg.Log,
		Run: func(ctx context.Context) error { s.BillingTick(ctx); return nil }}.Loop(ctx)
	return nil
}

// BillingTick runs one round of Run's work, logging what fails: the next
// round retries it.
func (s *Server) BillingTick(ctx context.Context) {
	log := s.cfg.Log
	// Settlement follows the clock: a direct debit whose date has come is
	// settled or failed here, once, whichever replica gets to it first. It
	// goes before the closing, so a collection started this round knows
	// what has settled (whether it is the account's first direct debit).
	if _, err := s.billing.SettleDue(ctx); err != nil && ctx.Err() == nil {
		log.WarnContext(ctx, "settling payments", "err", err)
	}
	if _, err := s.billing.CloseDue(ctx); err != nil && ctx.Err() == nil {
		log.WarnContext(ctx, "closing billing periods", "err", err)
	}
	// Invoice collections whose attempt is due (a processor error earlier,
	// or a closer that stopped mid-way): each attempt is claimed by one
	// replica.
	if _, err := s.billing.CollectDue(ctx); err != nil && ctx.Err() == nil {
		log.WarnContext(ctx, "collecting invoices", "err", err)
	}
	if _, err := s.notify.ScanAlerts(ctx, s.svc); err != nil && ctx.Err() == nil {
		log.WarnContext(ctx, "checking usage alerts", "err", err)
	}
	if s.cfg.Mailer != nil {
		if _, err := s.notify.DeliverMail(ctx, s.cfg.Mailer); err != nil && ctx.Err() == nil {
			log.WarnContext(ctx, "sending usage alert mail", "err", err)
		}
	}
	// Expired sessions and tokens, hourly: they only take space.
	if now := s.cfg.Clock(); now.Sub(s.housekept) >= identity.HousekeepingInterval {
		if _, err := s.identity.Housekeep(ctx); err != nil && ctx.Err() == nil {
			log.WarnContext(ctx, "housekeeping", "err", err)
		} else {
			s.housekept = now
		}
	}
}

// Close closes Redis and the database pool.
func (s *Server) Close() error {
	var err error
	if s.redis != nil {
		err = s.redis.Close()
	}
	if s.pool != nil {
		s.pool.Close()
	}
	return err
}
