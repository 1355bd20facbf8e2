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
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"sync"
	"time"

	"google.golang.org/grpc"

	"github.com/ledgerlane/platform/gateway"
	"github.com/ledgerlane/platform/gateway/portal"
	gatewayserver "github.com/ledgerlane/platform/gateway/server"
	"github.com/ledgerlane/platform/pkg/natsconn"
	"github.com/ledgerlane/platform/pkg/redisconn"
	"github.com/ledgerlane/platform/pkg/rpc"
	converterserver "github.com/ledgerlane/platform/services/converter/server"
	financesandbox "github.com/ledgerlane/platform/services/finance/sandbox" // finance sandbox aggregator
	financeseed "github.com/ledgerlane/platform/services/finance/seed"
	financeserver "github.com/ledgerlane/platform/services/finance/server"
	"github.com/ledgerlane/platform/services/jobs"
	"github.com/ledgerlane/platform/services/jobs/accounting/sandboxplatform"
	jobsserver "github.com/ledgerlane/platform/services/jobs/server"
	"github.com/ledgerlane/platform/services/metering"
	"github.com/ledgerlane/platform/services/metering/admission"
	"github.com/ledgerlane/platform/services/metering/financedir"
	"github.com/ledgerlane/platform/services/metering/mailsink"
	"github.com/ledgerlane/platform/services/metering/sandboxpay"
	meteringserver "github.com/ledgerlane/platform/services/metering/server"
	"github.com/ledgerlane/platform/services/metering/smtpmail"
)

// PortalSessionCookie is the portal's session cookie (gateway/portal).
const PortalSessionCookie = portal.SessionCookie

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
	// Now is the clock every service, the seed and the sandboxes run on
	// (default time.Now). Tests pin it (local_test.go, docs/testing.md):
	// the demo data is laid out relative to it.
	Now func() time.Time
	// Finance sandbox aggregator: SandboxInterval is its tick (0 means
	// 30s; negative starts no ticker, and only Stack.Sandbox.SyncNow syncs).
	SandboxInterval time.Duration
	// PortalPublicURL (PORTAL_PUBLIC_URL) is the root of the links the
	// portal mails; default the gateway's own address (Stack.URL).
	PortalPublicURL string
	// RecurringInterval is the finance recurring detection job's tick (0
	// means finance.DefaultRecurringInterval, 2s; negative starts no job,
	// and tests run it with Stack.Finance.Recurring().DetectDue).
	RecurringInterval time.Duration
	// PortalSecureCookies marks the portal's cookies Secure although make
	// run serves plain HTTP on loopback (docs/portal.md); tests set it.
	PortalSecureCookies bool
	// MailDir (LOCAL_MAIL_DIR), when set, receives every usage alert e-mail
	// the in-process SMTP server gets, one .eml file each.
	MailDir string
	// BillingInterval is how often metering closes periods, checks usage
	// alerts and sends mail (0 means 2s).
	BillingInterval time.Duration
	// AccountingSandboxAddr is where the sandbox accounting platform listens
	// (SANDBOX_PLATFORM_ADDR; default 127.0.0.1:0, a free port).
	AccountingSandboxAddr string
	// LoopbackGRPC makes the gateway (and metering's finance directory)
	// call the services over their loopback gRPC ports, as separately run
	// binaries do, instead of in process (rpc.InProcess), which is the
	// default (LOCAL_GATEWAY_GRPC=loopback).
	LoopbackGRPC bool
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
	// Now is the stack's clock (Config.Now): tests derive the dates they
	// assert on from it, never from the wall clock.
	Now func() time.Time
	// Sandbox is the finance sandbox aggregator syncing the demo user's
	// bank connections; tests call its SyncNow.
	Sandbox *financesandbox.Aggregator
	// Mail is the in-process SMTP server receiving usage alert e-mails,
	// and Metering the metering service's wiring (tests use both).
	Mail     *mailsink.Sink
	Metering *meteringserver.Server
	// Finance is the finance service's wiring (tests run its jobs).
	Finance *financeserver.Server
	// AccountingSandbox is the sandbox accounting platform the jobs
	// service's "sandbox" connections talk to (docs/accounting.md).
	AccountingSandbox *sandboxplatform.Server
	// httpLis is the gateway's listener, opened before the services so the
	// OAuth callback URL is known when jobs is built.
	httpLis net.Listener

	keys    *jobs.Keyring // seals batch items and kept answers
	keySpec string        // keys, as JOB_ENCRYPTION_KEY would give them

	gatewayServer *gatewayserver.Server
	listeners     map[string]net.Listener
	inProcess     map[string]*rpc.InProcess // by service name; nil with LoopbackGRPC
	cancel        context.CancelFunc
	wg            sync.WaitGroup
	errMu         sync.Mutex
	err           error
	closers       []func()
	closeOnce     sync.Once
}

// Start brings the whole stack up and seeds the demo account. Close stops it.
// Each service is built by its own server.New, as its cmd/<name> builds it,
// and served on its own loopback gRPC port, as on Kubernetes.
func Start(ctx context.Context, cfg Config) (_ *Stack, err error) {
	cfg = cfg.withDefaults()
	runCtx, cancel := context.WithCancel(context.Background())
	// One random key ring per start seals batch items (jobs) and the
	// answers kept for Idempotency-Key replays (gateway), as
	// JOB_ENCRYPTION_KEY does for the separate binaries.
	spec := randomKeySpec()
	keys, err := jobs.ParseKeyring(spec)
	if err != nil {
		cancel()
		return nil, err
	}
	s := &Stack{cancel: cancel, Now: cfg.Now, keys: keys, keySpec: spec}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	redisURL, natsURL, err := s.embedded(cfg)
	if err != nil {
		return nil, err
	}
	backends, err := s.listen(cfg)
	if err != nil {
		return nil, err
	}

	fin, err := financeserver.New(ctx, financeserver.Config{DatabaseURL: cfg.DatabaseURL, Schema: cfg.FinanceSchema,
		CursorSecret: cfg.CursorSecret, Clock: cfg.Now, Log: cfg.Log.With("component", "finance"),
		ConverterAddr: s.Addrs["converter"], RecurringInterval: cfg.RecurringInterval, NATSURL: natsURL})
	if err = s.serve(runCtx, cfg.Log, "finance", fin, err); err != nil {
		return nil, err
	}
	s.Finance = fin
	conv, err := converterserver.New(ctx, converterserver.Config{})
	if err = s.serve(runCtx, cfg.Log, "converter", conv, err); err != nil {
		return nil, err
	}
	// Jobs: an in-memory store whatever DatabaseURL says, a random job key
	// per start (so batches work without configuration) and private webhook
	// targets allowed, so a receiver on localhost gets deliveries. Its
	// accounting connections offer the sandbox platform, started here,
	// redirecting to the gateway's callback.
	if err := s.startAccountingSandbox(cfg); err != nil {
		return nil, err
	}
	jobsSrv, err := jobsserver.New(ctx, jobsserver.Config{NATSURL: natsURL, ConverterAddr: s.Addrs["converter"], MeteringAddr: s.Addrs["metering"],
		Keys: s.keys, AllowPrivate: true, Clock: cfg.Now, Log: cfg.Log.With("component", "jobs"),
		Accounting: jobsserver.AccountingConfig{
			RedirectURL: s.URL + "/v1/connections/callback", CursorKey: cfg.CursorSecret,
			SandboxURL: s.AccountingSandbox.URL, SandboxClientID: sandboxplatform.ClientID, SandboxClientSecret: sandboxplatform.ClientSecret,
		}})
	if err = s.serve(runCtx, cfg.Log, "jobs", jobsSrv, err); err != nil {
		return nil, err
	}
	// Metering checks finance credentials with the finance service over
	// gRPC, as meteringctl does in a cluster, and sends usage alerts over
	// SMTP to an in-process mail server.
	mailer, err := s.startMail(cfg)
	if err != nil {
		return nil, err
	}
	met, err := meteringserver.New(ctx, meteringserver.Config{DatabaseURL: cfg.DatabaseURL, Schema: cfg.MeteringSchema,
		RedisURL: redisURL, ThrottlePrefix: "ll:local-" + rand.Text() + ":", // one metering per stack: its throttles are its own
		FinanceDirectory: financedir.New(backends.Finance), Clock: cfg.Now, Log: cfg.Log.With("component", "metering"),
		Mailer: mailer, BillingInterval: cmp.Or(cfg.BillingInterval, 2*time.Second), MailBackoff: time.Second, MailBackoffMax: 5 * time.Second,
		PaymentProcessor: sandboxpay.New()})
	if err = s.serve(runCtx, cfg.Log, "metering", met, err); err != nil {
		return nil, err
	}
	s.Metering = met
	counters, err := s.startGateway(ctx, runCtx, cfg, backends, redisURL, natsURL)
	if err != nil {
		return nil, err
	}

	if err := s.seed(ctx, cfg, fin, met, counters); err != nil {
		return nil, fmt.Errorf("seed: %w", err)
	}
	// The finance sandbox aggregator makes bank activity for the demo user
	// on a ticker, which the finance service's Run drives.
	s.Sandbox = fin.UseSandbox(financesandbox.ForDemo(s.Demo), cmp.Or(cfg.SandboxInterval, 30*time.Second))
	if err := s.serveHTTP(runCtx, cfg.HTTPAddr); err != nil {
		return nil, err
	}
	return s, nil
}

// listen opens a loopback listener per service (Addrs), on which services
// call each other as in a cluster, and the gateway's connection to each,
// before any service is built. The gateway's connections are in process
// (rpc.InProcess; serve registers each service on its own), which spares
// every request an HTTP/2 round trip over loopback; with cfg.LoopbackGRPC
// they dial the listeners like the rest.
func (s *Stack) listen(cfg Config) (gateway.Backends, error) {
	var b gateway.Backends
	s.Addrs, s.listeners = map[string]string{}, map[string]net.Listener{}
	if !cfg.LoopbackGRPC {
		s.inProcess = map[string]*rpc.InProcess{}
	}
	for name, dst := range map[string]*grpc.ClientConnInterface{
		"finance": &b.Finance, "converter": &b.Converter, "jobs": &b.Jobs, "metering": &b.Metering,
	} {
		lis, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return b, err
		}
		s.closers = append(s.closers, func() { _ = lis.Close() })
		s.listeners[name], s.Addrs[name] = lis, lis.Addr().String()
		if s.inProcess != nil {
			conn := rpc.NewInProcess(cfg.Log.With("component", name))
			s.inProcess[name], *dst = conn, conn
			continue
		}
		conn, err := rpc.Dial(s.Addrs[name])
		if err != nil {
			return b, err
		}
		s.closers = append(s.closers, func() { _ = conn.Close() })
		*dst = conn
	}
	return b, nil
}

// serve serves srv, built with err, on its loopback listener and runs its
// background work until Close, which then closes it.
func (s *Stack) serve(runCtx context.Context, log *slog.Logger, name string, srv rpc.Service, err error) error {
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	s.closers = append(s.closers, func() { _ = srv.Close() })
	g, lis := rpc.NewServiceServer(log.With("component", name), srv), s.listeners[name]
	if conn := s.inProcess[name]; conn != nil {
		conn.Register(srv)
	}
	s.run(func() error { return rpc.Serve(runCtx, g, lis, 10*time.Second) })
	s.run(func() error { return srv.Run(runCtx) })
	return nil
}

// startGateway builds the gateway (gateway/server, as cmd/gateway does) on
// the services' connections, with Redis and NATS in its readiness, and runs
// its usage reconciler. It returns the usage counters on the gateway's
// Redis.
func (s *Stack) startGateway(ctx, runCtx context.Context, cfg Config, b gateway.Backends, redisURL, natsURL string) (*admission.Controller, error) {
	conns := map[string]grpc.ClientConnInterface{"finance": b.Finance, "converter": b.Converter, "metering": b.Metering, "jobs": b.Jobs}
	srv, err := gatewayserver.New(ctx, gatewayserver.Config{
		Dial: func(name, _ string) (grpc.ClientConnInterface, error) { return conns[name], nil },
		// The services share one process and the race detector's pace:
		// go-redis's own defaults instead of the deployed edge's 250 ms.
		RedisURL: redisURL, RedisTimeout: 3 * time.Second, NATSURL: natsURL, SealKey: s.keySpec,
		Version: cfg.Version, Commit: cfg.Commit, BuildTime: cfg.BuildTime,
		Log: cfg.Log.With("component", "gateway"), Now: cfg.Now, ReconcileEvery: 2 * time.Second,
		PortalSecureCookies: cfg.PortalSecureCookies, PortalPublicURL: cmp.Or(cfg.PortalPublicURL, s.URL),
		ShutdownGrace: 10 * time.Second,
	})
	if err != nil {
		return nil, err
	}
	s.closers = append(s.closers, func() { _ = srv.Close() })
	s.Gateway, s.gatewayServer = srv.Gateway, srv
	if err := srv.Redis().Ping(ctx).Err(); err != nil {
		return nil, fmt.Errorf("redis: ping: %w", err)
	}
	s.run(func() error { return srv.Run(runCtx) })
	return admission.New(srv.Redis(), cfg.Now), nil
}

// startMail starts the in-process SMTP server and returns the SMTP client
// metering sends through (plain text on loopback).
func (s *Stack) startMail(cfg Config) (*smtpmail.Mailer, error) {
	sink, err := mailsink.Start("127.0.0.1:0", cfg.MailDir)
	if err != nil {
		return nil, fmt.Errorf("mail server: %w", err)
	}
	s.closers = append(s.closers, func() { _ = sink.Close() })
	s.Mail = sink
	cfg.Log.Info("in-process smtp server started", "addr", sink.Addr(), "mail_dir", cfg.MailDir)
	return smtpmail.New(smtpmail.Config{Addr: sink.Addr(), From: "billing@ledgerlane.local", TLS: smtpmail.TLSNone, Timeout: 5 * time.Second})
}

// startAccountingSandbox opens the gateway's listener (so its URL, the
// OAuth callback's base, is known) and starts the sandbox accounting
// platform.
func (s *Stack) startAccountingSandbox(cfg Config) error {
	lis, err := net.Listen("tcp", cfg.HTTPAddr)
	if err != nil {
		return err
	}
	s.httpLis, s.URL = lis, "http://"+lis.Addr().String()
	s.closers = append(s.closers, func() { _ = lis.Close() })
	sb, err := sandboxplatform.Start(cmp.Or(cfg.AccountingSandboxAddr, "127.0.0.1:0"), sandboxplatform.Config{Now: cfg.Now})
	if err != nil {
		return fmt.Errorf("accounting sandbox: %w", err)
	}
	s.AccountingSandbox = sb
	s.closers = append(s.closers, func() { _ = sb.Close() })
	cfg.Log.Info("sandbox accounting platform started", "url", sb.URL)
	return nil
}

// serveHTTP serves the gateway on the listener startAccountingSandbox
// opened (URL).
func (s *Stack) serveHTTP(runCtx context.Context, _ string) error {
	lis := s.httpLis
	s.run(func() error { return s.gatewayServer.Serve(runCtx, lis) })
	return nil
}

// withDefaults fills what cfg leaves unset.
func (cfg Config) withDefaults() Config {
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	cfg.FinanceSchema = cmp.Or(cfg.FinanceSchema, "finance")
	cfg.MeteringSchema = cmp.Or(cfg.MeteringSchema, "metering")
	cfg.HTTPAddr = cmp.Or(cfg.HTTPAddr, "127.0.0.1:8080")
	cfg.DemoPlan = cmp.Or(cfg.DemoPlan, metering.PlanStarter)
	if len(cfg.CursorSecret) == 0 {
		cfg.CursorSecret = make([]byte, 32)
		_, _ = rand.Read(cfg.CursorSecret)
	}
	return cfg
}

// embedded starts embedded Redis and NATS where cfg names no real server
// (on free loopback ports, so `make run` works beside real servers on their
// standard ports) and returns the URLs to use.
func (s *Stack) embedded(cfg Config) (redisURL, natsURL string, err error) {
	redisURL, natsURL = cfg.RedisURL, cfg.NATSURL
	if redisURL == "" {
		e, err := redisconn.StartEmbedded()
		if err != nil {
			return "", "", err
		}
		s.closers = append(s.closers, e.Close)
		redisURL = e.URL()
		cfg.Log.Info("embedded redis started", "url", redisURL)
	}
	if natsURL == "" {
		e, err := natsconn.StartEmbedded("")
		if err != nil {
			return "", "", err
		}
		s.closers = append(s.closers, e.Close)
		natsURL = e.URL()
		cfg.Log.Info("embedded nats started", "url", natsURL)
	}
	return redisURL, natsURL, nil
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

// randomKeySpec is a fresh one-key ring in JOB_ENCRYPTION_KEY's format: the
// local stack seals with it without configuration (what it sealed does not
// outlive the process, nor need to).
func randomKeySpec() string {
	var raw [32]byte
	_, _ = rand.Read(raw[:])
	return "local:" + base64.StdEncoding.EncodeToString(raw[:])
}
