// Package server is the finance service's wiring: New builds it from a
// Config (store, cursor codec, Service, readiness checks), Register puts its
// gRPC APIs on a server, Run does its background work and Close releases
// what New opened. cmd/finance and deploy/local both run it, so the
// end-to-end test drives the production wiring.
package server

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats.go"
	"google.golang.org/grpc"

	"github.com/ledgerlane/platform/pkg/cursor"
	"github.com/ledgerlane/platform/pkg/eventbus"
	"github.com/ledgerlane/platform/pkg/natsconn"
	"github.com/ledgerlane/platform/pkg/pg"
	"github.com/ledgerlane/platform/pkg/rpc"
	conversionv1 "github.com/ledgerlane/platform/proto/conversion/v1"
	"github.com/ledgerlane/platform/services/finance"
	"github.com/ledgerlane/platform/services/finance/banksync"
	"github.com/ledgerlane/platform/services/finance/budgets"
	"github.com/ledgerlane/platform/services/finance/debt"
	"github.com/ledgerlane/platform/services/finance/events"
	"github.com/ledgerlane/platform/services/finance/grpcapi"
	"github.com/ledgerlane/platform/services/finance/imports"
	"github.com/ledgerlane/platform/services/finance/insights"
	"github.com/ledgerlane/platform/services/finance/memory"
	"github.com/ledgerlane/platform/services/finance/networth"
	"github.com/ledgerlane/platform/services/finance/postgres"
	"github.com/ledgerlane/platform/services/finance/recurring"
	"github.com/ledgerlane/platform/services/finance/sandbox"
	"github.com/ledgerlane/platform/services/finance/sandboxlink"
	"github.com/ledgerlane/platform/services/finance/seed"
	"github.com/ledgerlane/platform/services/finance/statementclient"
	"github.com/ledgerlane/platform/services/finance/stores"
)

// Config is what the finance service runs on.
type Config struct {
	// DatabaseURL is the PostgreSQL holding the service's tables, in schema
	// Schema (migrated by New). Empty: an in-memory store, which only the
	// local stack uses.
	DatabaseURL string
	// Schema defaults to "finance".
	Schema string
	// CursorSecret signs pagination cursors; required, and the same on
	// every replica.
	CursorSecret []byte
	// Clock defaults to time.Now.
	Clock finance.Clock
	// Log defaults to discarding.
	Log *slog.Logger
	// ConverterAddr is the converter's gRPC address, which statement
	// imports (POST /v1/imports) ask to read files. Empty: imports answer
	// 501 not-implemented.
	ConverterAddr string
	// SnapshotInterval is how often Run's daily net-worth snapshot job
	// looks for users without today's snapshot: zero is
	// networth.DefaultSnapshotInterval, negative turns the job off (tests
	// then call the networth service's SnapshotDue).
	SnapshotInterval time.Duration
	// RecurringInterval is how often Run's recurring detection job looks
	// for users a sync marked due: zero is
	// recurring.DefaultInterval, negative turns the job off (tests
	// then call Recurring().DetectDue).
	RecurringInterval time.Duration
	// NATSURL is NATS with JetStream, on which the finance events for
	// webhooks travel to jobs (pkg/eventbus, docs/webhooks.md). Empty:
	// Events is used, else no events are published.
	NATSURL string
	// StreamReplicas is how many JetStream nodes keep the events stream.
	StreamReplicas int
	// Events publishes the events when there is no NATSURL: the in-process
	// path (tests, tools); nil publishes none.
	Events events.Publisher
	// SandboxSyncInterval, when positive, has New start the sandbox
	// aggregator over the connections linked through the finance sandbox
	// (docs/finance-sandbox.md), ticking at this interval on Clock, so
	// linked connections get new rows outside the local stack (cmd/finance:
	// SANDBOX_SYNC_INTERVAL). It has no demo connections and records no
	// prices or rates: a deployment's markets are not the demo's. Zero: no
	// aggregator unless UseSandbox is called (the local stack's, with the
	// demo's connections).
	SandboxSyncInterval time.Duration
}

// Server is the finance service, wired.
type Server struct {
	svc    *finance.Service
	svcs   grpcapi.Services
	store  stores.Store
	pool   *pgxpool.Pool    // nil on the in-memory store
	conv   *grpc.ClientConn // the converter, for statement imports; nil without one
	nc     *nats.Conn       // the finance events' NATS; nil without one
	checks []rpc.Check
	clock  finance.Clock
	log    *slog.Logger
	// snapshotEvery is the snapshot job's interval; negative: off.
	snapshotEvery time.Duration
	// recurringEvery is the recurring detection job's interval; negative: off.
	recurringEvery time.Duration
	// relay publishes the finance events' outbox; nil when no events are
	// published.
	relay *events.Relay

	mu           sync.Mutex
	sandbox      *sandbox.Aggregator
	sandboxEvery time.Duration
	sandboxSet   chan struct{} // closed by UseSandbox
	// hook checks the budget thresholds after writes (hook.go).
	hook *thresholdHook
}

var _ rpc.Service = (*Server)(nil)

// New opens the store (migrating its schema) and builds the Service.
func New(ctx context.Context, cfg Config) (*Server, error) {
	if len(cfg.CursorSecret) == 0 {
		return nil, errors.New("finance: a cursor secret is required")
	}
	if cfg.Schema == "" {
		cfg.Schema = "finance"
	}
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	s := &Server{clock: cfg.Clock, log: cfg.Log, sandboxSet: make(chan struct{}), snapshotEvery: cfg.SnapshotInterval,
		recurringEvery: cfg.RecurringInterval}
	if cfg.DatabaseURL != "" {
		pool, err := pg.Open(ctx, cfg.DatabaseURL, cfg.Schema, postgres.Migrations, cfg.Log)
		if err != nil {
			return nil, err // pgx keeps the password out of its connection errors
		}
		s.pool, s.store = pool, postgres.New(pool)
		s.checks = []rpc.Check{{Name: "postgresql", Probe: pool.Ping}}
	} else {
		s.store = memory.New()
	}
	outbox, evs, err := s.useEvents(ctx, cfg)
	if err != nil {
		s.Close()
		return nil, err
	}
	var notifier finance.Notifier
	var alerts budgets.AlertPublisher
	hook := &thresholdHook{}
	s.hook = hook
	if evs != nil {
		// The budget thresholds are checked after every change the
		// events hear of (thresholdHook), and their alerts published by
		// the same events service.
		hook.Notifier, notifier, alerts = outbox, hook, evs
	}
	s.svc = finance.NewService(finance.Config{Store: s.store, Cursors: cursor.New(cfg.CursorSecret), Notifier: notifier,
		Clock: cfg.Clock, Log: cfg.Log})
	var parser imports.StatementParser // nil: imports answer not-implemented
	if cfg.ConverterAddr != "" {
		conv, err := rpc.Dial(cfg.ConverterAddr)
		if err != nil {
			if s.pool != nil {
				s.pool.Close()
			}
			return nil, err
		}
		s.conv = conv
		parser = statementclient.New(conversionv1.NewStatementServiceClient(conv))
	}
	s.svcs = grpcapi.Services{
		Finance:  s.svc,
		Debt:     debt.NewService(debt.Config{Kernel: s.svc, Store: s.store}),
		Insights: insights.NewService(insights.Config{Kernel: s.svc, Store: s.store}),
		Imports:  imports.NewService(imports.Config{Kernel: s.svc, Store: s.store, Parser: parser}),
		NetWorth: networth.NewService(networth.Config{Kernel: s.svc, Store: s.store}),
	}
	s.svcs.BankSync = banksync.NewService(banksync.Config{Kernel: s.svc, Store: s.store})
	s.svcs.Recurring = recurring.NewService(recurring.Config{Kernel: s.svc, Store: s.store})
	s.svcs.Budgets = budgets.NewService(budgets.Config{Kernel: s.svc, Recurring: s.svcs.Recurring, Store: s.store,
		Alerts: alerts})
	hook.budgets = s.svcs.Budgets // before anything is served, so no write sees it unset
	s.svcs.Sandbox = sandboxlink.NewService(sandboxlink.Config{Kernel: s.svc, Store: s.store, History: seed.SandboxHistory})
	if cfg.SandboxSyncInterval > 0 {
		s.useSandbox(nil, nil, cfg.SandboxSyncInterval)
	}
	return s, nil
}

// useEvents returns the finance events' outbox (the notifier) and service
// (the budget alerts' publisher): on NATS JetStream when cfg names a
// server, else through cfg.Events, else none (nil).
func (s *Server) useEvents(ctx context.Context, cfg Config) (*events.Outbox, *events.Service, error) {
	pub := cfg.Events
	if cfg.NATSURL != "" {
		nc, js, err := natsconn.Connect(cfg.NATSURL, "finance")
		if err != nil {
			return nil, nil, err
		}
		s.nc = nc
		bus := eventbus.NewPublisher(js, eventbus.DefaultNames(), cfg.StreamReplicas)
		if err := bus.Setup(ctx); err != nil {
			return nil, nil, err
		}
		pub = busPublisher{bus}
		s.checks = append(s.checks, rpc.Check{Name: "nats", Probe: func(context.Context) error {
			if !nc.IsConnected() {
				return errors.New("nats: not connected")
			}
			return nil
		}})
	}
	if pub == nil {
		return nil, nil, nil
	}
	// Changes are announced through the outbox in the store; the relay
	// (Run) publishes their events and retries a failed publish
	// (docs/webhooks.md, "Transport").
	log := cfg.Log.With("component", "finance-events")
	outbox := events.NewOutbox(s.store, cfg.Clock, log)
	svc := events.NewService(events.Config{Store: s.store, Publisher: pub, Clock: cfg.Clock, Log: log})
	s.relay = events.NewRelay(outbox, svc)
	return outbox, svc, nil
}

// busPublisher publishes finance events on the bus.
type busPublisher struct{ bus *eventbus.Publisher }

func (p busPublisher) Publish(ctx context.Context, ev events.Event) error {
	return p.bus.Publish(ctx, eventbus.Envelope{ID: ev.ID, Type: ev.Type, AccountID: ev.AccountID, Mode: ev.Mode,
		CoalesceKey: ev.CoalesceKey, Body: ev.Body})
}

// Recurring is the recurring service, whose detection job (DetectDue)
// tests run themselves when Config.RecurringInterval turns its ticker off.
func (s *Server) Recurring() *recurring.Service { return s.svcs.Recurring }

// Store is the services' store (the local stack seeds its demo user there).
func (s *Server) Store() stores.Store { return s.store }

// Register adds every finance.v1 service to g.
func (s *Server) Register(g grpc.ServiceRegistrar) { grpcapi.Register(g, s.svcs) }

// Checks are the readiness checks: the database, when there is one.
func (s *Server) Checks() []rpc.Check { return s.checks }

// UseSandbox makes Run drive the sandbox aggregator (the local stack's
// pretend bank) over conns and every connection linked through the finance
// sandbox every interval, from now on; a zero or negative
// interval starts no ticker, leaving syncs to the returned aggregator's
// SyncNow. It may be called once, before or after Run starts (the local
// stack knows the demo connections only once the services serve).
func (s *Server) UseSandbox(conns []sandbox.Connection, every time.Duration) *sandbox.Aggregator {
	return s.useSandbox(conns, s.svcs.NetWorth, every)
}

// Sandbox is the sandbox aggregator UseSandbox or Config.SandboxSyncInterval
// set, or nil.
func (s *Server) Sandbox() *sandbox.Aggregator {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sandbox
}

func (s *Server) useSandbox(conns []sandbox.Connection, markets sandbox.Markets, every time.Duration) *sandbox.Aggregator {
	a := sandbox.New(s.svcs.BankSync, markets, conns, s.linkedConnections, s.clock, s.log.With("component", "sandbox"))
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sandbox != nil {
		panic("finance server: UseSandbox called twice")
	}
	s.sandbox, s.sandboxEvery = a, every
	close(s.sandboxSet)
	return a
}

// linkedConnections adapts the finance sandbox's linked connections to the
// aggregator's work list.
func (s *Server) linkedConnections(ctx context.Context) ([]sandbox.Connection, error) {
	lcs, err := s.svcs.Sandbox.LinkedConnections(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]sandbox.Connection, 0, len(lcs))
	for _, lc := range lcs {
		c := sandbox.Connection{ID: lc.ConnectionID}
		for _, a := range lc.Accounts {
			c.Accounts = append(c.Accounts, sandbox.Account{ID: a.ID, Currency: a.Currency})
		}
		out = append(out, c)
	}
	return out, nil
}

// Run runs the finance events' relay (when events are published), the
// daily net-worth snapshot job and the recurring detection
// job (each unless its interval is negative) and the sandbox aggregator,
// once UseSandbox has set one with an interval, until ctx ends; it returns
// when all have stopped.
func (s *Server) Run(ctx context.Context) error {
	if s.relay != nil {
		done := make(chan struct{})
		go func() {
			defer close(done)
			s.relay.Run(ctx, events.RelayInterval)
		}()
		defer func() { <-done }()
	}
	if s.snapshotEvery >= 0 {
		done := make(chan struct{})
		go func() {
			defer close(done)
			s.svcs.NetWorth.RunSnapshots(ctx, s.snapshotEvery)
		}()
		defer func() { <-done }()
	}
	if s.recurringEvery >= 0 {
		done := make(chan struct{})
		go func() {
			defer close(done)
			s.svcs.Recurring.RunDetection(ctx, s.recurringEvery)
		}()
		defer func() { <-done }()
	}
	select {
	case <-ctx.Done():
		return nil
	case <-s.sandboxSet:
	}
	s.mu.Lock()
	a, every := s.sandbox, s.sandboxEvery
	s.mu.Unlock()
	if every > 0 {
		a.Run(ctx, every)
		return nil
	}
	<-ctx.Done()
	return nil
}

// WaitBudgetChecks returns when the budget threshold checks of every write
// announced before it have finished, so their alerts are published (tests;
// Close waits too).
func (s *Server) WaitBudgetChecks() { s.hook.wait() }

// Close closes the converter and NATS connections and the database pool.
func (s *Server) Close() error {
	s.hook.wait() // the checks of committed writes finish first (each is bounded)
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
