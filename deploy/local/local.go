// Package local runs the whole platform in one process: the gateway, the four
// services on loopback gRPC ports, NATS (embedded nats-server with JetStream)
// and Redis (embedded miniredis) unless real servers are named, in-memory
// stores unless DATABASE_URL is set, and a seeded demo account with keys.
// It is what `make run` starts and what the end-to-end test drives.
package local

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"google.golang.org/grpc"

	"github.com/ledgerlane/platform/gateway"
	"github.com/ledgerlane/platform/pkg/cursor"
	"github.com/ledgerlane/platform/pkg/natsconn"
	"github.com/ledgerlane/platform/pkg/pg"
	"github.com/ledgerlane/platform/pkg/redisconn"
	"github.com/ledgerlane/platform/pkg/rpc"
	conversionv1 "github.com/ledgerlane/platform/proto/conversion/v1"
	convertergrpc "github.com/ledgerlane/platform/services/converter/grpcapi"
	"github.com/ledgerlane/platform/services/finance"
	financegrpc "github.com/ledgerlane/platform/services/finance/grpcapi"
	financemem "github.com/ledgerlane/platform/services/finance/memory"
	financepg "github.com/ledgerlane/platform/services/finance/postgres"
	financesandbox "github.com/ledgerlane/platform/services/finance/sandbox" // finance sandbox aggregator
	financeseed "github.com/ledgerlane/platform/services/finance/seed"
	"github.com/ledgerlane/platform/services/jobs"
	jobsconv "github.com/ledgerlane/platform/services/jobs/convertclient"
	jobsgrpc "github.com/ledgerlane/platform/services/jobs/grpcapi"
	jobsmem "github.com/ledgerlane/platform/services/jobs/memory"
	jobsmetrics "github.com/ledgerlane/platform/services/jobs/metrics"
	jobsqueue "github.com/ledgerlane/platform/services/jobs/natsqueue"
	jobswebhook "github.com/ledgerlane/platform/services/jobs/webhook"
	"github.com/ledgerlane/platform/services/metering"
	meteringgrpc "github.com/ledgerlane/platform/services/metering/grpcapi"
	meteringmem "github.com/ledgerlane/platform/services/metering/memory"
	"github.com/ledgerlane/platform/services/metering/meter"
	meteringpg "github.com/ledgerlane/platform/services/metering/postgres"
)

// Config selects real servers where set; everything else is embedded.
type Config struct {
	HTTPAddr    string // default 127.0.0.1:8080; "127.0.0.1:0" picks a free port
	DatabaseURL string
	RedisURL    string
	NATSURL     string
	// CursorSecret signs pagination cursors; random per start when empty.
	CursorSecret []byte
	// Schemas name the PostgreSQL schemas of finance and metering (default
	// "finance" and "metering"); tests use throwaway ones.
	FinanceSchema  string
	MeteringSchema string
	// DemoPlan is the demo account's plan (default "starter").
	DemoPlan string
	// DemoUsage pre-counts live conversions in the demo account's current
	// window, so overage and spend caps can be tried without thousands of
	// requests.
	DemoUsage int64
	Version   string
	Commit    string
	BuildTime time.Time
	Log       *slog.Logger
	Now       func() time.Time
	// Finance sandbox aggregator: SandboxInterval is its tick (0 means
	// 30s; negative starts no ticker, and only Stack.Sandbox.SyncNow syncs).
	SandboxInterval time.Duration
}

// Stack is a running platform.
type Stack struct {
	// URL is the gateway's base address, e.g. http://127.0.0.1:8080.
	URL  string
	Keys []Key
	// Gateway is exposed for tests (usage reconciliation, metrics).
	Gateway *gateway.Gateway
	// Addrs are the services' loopback gRPC addresses, by service name.
	Addrs map[string]string
	// AccountID is the demo metering account.
	AccountID string
	Demo      financeseed.DemoData
	// Sandbox is the finance sandbox aggregator syncing the demo user's
	// bank connections; tests call its SyncNow.
	Sandbox *financesandbox.Aggregator

	cancel    context.CancelFunc
	wg        sync.WaitGroup
	errMu     sync.Mutex
	err       error
	closers   []func()
	closeOnce sync.Once
}

// Start brings the whole stack up and seeds the demo account. Close stops it.
func Start(ctx context.Context, cfg Config) (_ *Stack, err error) {
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.FinanceSchema == "" {
		cfg.FinanceSchema = "finance"
	}
	if cfg.MeteringSchema == "" {
		cfg.MeteringSchema = "metering"
	}
	if cfg.HTTPAddr == "" {
		cfg.HTTPAddr = "127.0.0.1:8080"
	}
	if len(cfg.CursorSecret) == 0 {
		cfg.CursorSecret = make([]byte, 32)
		_, _ = rand.Read(cfg.CursorSecret)
	}
	log := cfg.Log
	runCtx, cancel := context.WithCancel(context.Background())
	s := &Stack{cancel: cancel}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()

	// Redis and NATS: real when named, embedded otherwise (on free loopback
	// ports, so `make run` works beside real servers on their standard ports).
	redisURL := cfg.RedisURL
	if redisURL == "" {
		e, err := redisconn.StartEmbedded()
		if err != nil {
			return nil, err
		}
		s.closers = append(s.closers, e.Close)
		redisURL = e.URL()
		log.Info("embedded redis started", "url", redisURL)
	}
	rc, err := redisconn.Connect(ctx, redisURL)
	if err != nil {
		return nil, err
	}
	s.closers = append(s.closers, func() { _ = rc.Close() })

	natsURL := cfg.NATSURL
	if natsURL == "" {
		e, err := natsconn.StartEmbedded("")
		if err != nil {
			return nil, err
		}
		s.closers = append(s.closers, e.Close)
		natsURL = e.URL()
		log.Info("embedded nats started", "url", natsURL)
	}
	nc, js, err := natsconn.Connect(natsURL, "local")
	if err != nil {
		return nil, err
	}
	s.closers = append(s.closers, nc.Close)

	// Stores.
	var (
		meteringStore metering.Store
		financeStore  finance.Store
		financeChecks []rpc.Check
		meteringCheck []rpc.Check
	)
	if cfg.DatabaseURL != "" {
		mp, err := pg.Open(ctx, cfg.DatabaseURL, cfg.MeteringSchema, meteringpg.Migrations, log)
		if err != nil {
			return nil, err
		}
		s.closers = append(s.closers, mp.Close)
		fp, err := pg.Open(ctx, cfg.DatabaseURL, cfg.FinanceSchema, financepg.Migrations, log)
		if err != nil {
			return nil, err
		}
		s.closers = append(s.closers, fp.Close)
		meteringStore, financeStore = meteringpg.New(mp), financepg.New(fp)
		meteringCheck = []rpc.Check{poolCheck(mp)}
		financeChecks = []rpc.Check{poolCheck(fp)}
	} else {
		meteringStore, financeStore = meteringmem.New(), financemem.New()
	}
	meteringSvc := metering.NewService(meteringStore, metering.Clock(cfg.Now), log.With("service", "metering"))
	meteringSvc.UseMeter(meter.New(rc, cfg.Now))
	financeSvc := finance.NewService(financeStore, cursor.New(cfg.CursorSecret), finance.Clock(cfg.Now), log.With("service", "finance"))
	meteringSvc.UseFinanceDirectory(financeDirectory{svc: financeSvc})

	// Jobs: in-memory store, a random job key per start (so batches work
	// without configuration) and private webhook targets allowed, so a
	// receiver on localhost gets deliveries. Its converter client is
	// connected once the converter listens (below).
	jobsConv := &lateConn{}
	jobsSvc := jobs.NewService(jobs.Config{
		Store:     jobsmem.New(),
		Queue:     jobsqueue.New(js, jobsqueue.DefaultNames()),
		Converter: jobsconv.New(conversionv1.NewConversionServiceClient(jobsConv)),
		Webhooks:  jobswebhook.NewClient(true),
		Metrics:   jobsmetrics.Prometheus{},
		Keys:      jobs.NewRandomKeyring(), Clock: cfg.Now, Log: log.With("service", "jobs"), AllowPrivate: true,
	})

	// Services, each on its own loopback gRPC port as on Kubernetes.
	addrs := map[string]string{}
	for _, svc := range []struct {
		name     string
		checks   []rpc.Check
		register func(*grpc.Server)
	}{
		{"finance", financeChecks, func(g *grpc.Server) { financegrpc.Register(g, financeSvc) }},
		{"converter", nil, func(g *grpc.Server) { convertergrpc.Register(g) }},
		{"jobs", []rpc.Check{{Name: "nats", Probe: func(ctx context.Context) error { return nc.FlushWithContext(ctx) }}}, func(g *grpc.Server) { jobsgrpc.Register(g, jobsSvc) }},
		{"metering", meteringCheck, func(g *grpc.Server) { meteringgrpc.Register(g, meteringSvc) }},
	} {
		lis, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		srv := rpc.NewServer(log.With("service", svc.name), svc.checks)
		svc.register(srv)
		addrs[svc.name] = lis.Addr().String()
		s.run(func() error { return rpc.Serve(runCtx, srv, lis, 10*time.Second) })
	}

	var b gateway.Backends
	for name, dst := range map[string]*grpc.ClientConnInterface{
		"finance": &b.Finance, "converter": &b.Converter, "jobs": &b.Jobs, "metering": &b.Metering,
	} {
		conn, err := rpc.Dial(addrs[name])
		if err != nil {
			return nil, err
		}
		s.closers = append(s.closers, func() { _ = conn.Close() })
		*dst = conn
	}
	jobsConv.ClientConnInterface = b.Converter
	s.run(func() error { return jobsSvc.Run(runCtx) })
	g, err := gateway.New(gateway.Config{
		Backends: b,
		Checks: []gateway.Check{
			{Name: "redis", Probe: func(ctx context.Context) error { return rc.Ping(ctx).Err() }},
			{Name: "nats", Probe: func(ctx context.Context) error { return nc.FlushWithContext(ctx) }},
		},
		Version: cfg.Version, Commit: cfg.Commit, BuildTime: cfg.BuildTime,
		Log: log.With("service", "gateway"), Now: cfg.Now, Redis: rc,
	})
	if err != nil {
		return nil, err
	}
	s.Gateway = g
	s.run(func() error { g.RunReconciler(runCtx, 2*time.Second); return nil })

	if cfg.DemoPlan == "" {
		cfg.DemoPlan = metering.PlanStarter
	}
	demo, acct, keys, err := seed(ctx, financeStore, meteringSvc, cfg.DemoPlan, cfg.Now())
	if err != nil {
		return nil, fmt.Errorf("seed: %w", err)
	}
	s.Demo, s.Keys, s.Addrs, s.AccountID = demo, keys, addrs, acct.ID
	if cfg.DemoUsage > 0 {
		l, err := meteringSvc.Limits(ctx, acct.ID)
		if err != nil {
			return nil, err
		}
		if err := meter.New(rc, cfg.Now).Reconcile(ctx, meter.Request{AccountID: acct.ID, Metered: true, Limits: l}, cfg.DemoUsage); err != nil {
			return nil, err
		}
	}

	// Finance sandbox aggregator: makes bank activity for the demo user on
	// a ticker; stopped by Close through runCtx.
	s.Sandbox = financesandbox.New(financeSvc, financesandbox.ForDemo(demo), cfg.Now, log.With("service", "finance-sandbox"))
	if every := cmp.Or(cfg.SandboxInterval, 30*time.Second); every > 0 {
		s.run(func() error { s.Sandbox.Run(runCtx, every); return nil })
	}

	lis, err := net.Listen("tcp", cfg.HTTPAddr)
	if err != nil {
		return nil, err
	}
	s.URL = "http://" + lis.Addr().String()
	handler := g.Handler()
	s.run(func() error { return gateway.Serve(runCtx, lis, handler, 10*time.Second) })
	return s, nil
}

// lateConn lets the jobs service be built before the converter's address is
// known; it is set before the jobs workers start.
type lateConn struct{ grpc.ClientConnInterface }

func poolCheck(p *pgxpool.Pool) rpc.Check {
	return rpc.Check{Name: "postgresql", Probe: p.Ping}
}

func (s *Stack) run(f func() error) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if err := f(); err != nil {
			s.errMu.Lock()
			s.err = errors.Join(s.err, err)
			s.errMu.Unlock()
		}
	}()
}

// Close stops the gateway first (finishing in-flight requests), then the
// services, then the embedded servers. Calls after the first only return
// its result.
func (s *Stack) Close() error {
	s.closeOnce.Do(func() {
		s.cancel()
		s.wg.Wait()
		for i := len(s.closers) - 1; i >= 0; i-- {
			s.closers[i]()
		}
	})
	s.errMu.Lock()
	defer s.errMu.Unlock()
	return s.err
}

// WriteKeysFile writes keys as the JSON array [{name, key, scopes}] with
// owner-only permissions, since it holds live secrets.
func WriteKeysFile(path string, keys []Key) error {
	b, err := json.MarshalIndent(keys, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o600)
}
