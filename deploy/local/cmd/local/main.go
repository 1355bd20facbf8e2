// Command local is `make run`: the whole platform in one process on embedded
// defaults, or against real servers named by DATABASE_URL, REDIS_URL and
// NATS_URL. It prints the demo credentials and, when LOCAL_KEYS_FILE is set,
// writes them there as JSON.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/ledgerlane/platform/deploy/local"
	"github.com/ledgerlane/platform/pkg/config"
	"github.com/ledgerlane/platform/pkg/logging"
	"github.com/ledgerlane/platform/pkg/tracing"
)

// devCursorSecret signs cursors when CURSOR_SECRET is unset: `make run` is
// a development stack, and a key that outlives the process keeps the
// clients' feed cursors valid across restarts (README, "make run").
const devCursorSecret = "ledgerlane-local-development-cursor-key"

// Set by `make run` through -ldflags.
var (
	version   = "dev"
	commit    = "unknown"
	buildTime = ""
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "local:", err)
		os.Exit(1)
	}
}

func run() error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	log := logging.New("local", config.String("LOG_LEVEL", "info"))
	// Traces only when OTEL_* asks for them (pkg/tracing), before the
	// stack dials anything.
	stopTracing, err := tracing.Start(ctx, "ledgerlane-local", log)
	if err != nil {
		return err
	}
	defer stopTracing()
	demoUsage, err := config.Int("LOCAL_DEMO_USAGE", 0)
	if err != nil {
		return err
	}
	var loopback bool
	switch transport := config.String("LOCAL_GATEWAY_GRPC", "in-process"); transport {
	case "in-process":
	case "loopback":
		loopback = true
	default:
		return fmt.Errorf("LOCAL_GATEWAY_GRPC: %q is neither in-process nor loopback", transport)
	}
	st, err := local.Start(ctx, local.Config{
		HTTPAddr:    config.String("HTTP_ADDR", "127.0.0.1:8080"),
		DatabaseURL: config.String("DATABASE_URL", ""),
		RedisURL:    config.String("REDIS_URL", ""),
		NATSURL:     config.String("NATS_URL", ""),
		// A fixed development key, so the change feed's cursors
		// (docs/transactions-sync.md) survive a restart on DATABASE_URL;
		// production sets its own (cmd/finance requires it).
		CursorSecret: []byte(config.String("CURSOR_SECRET", devCursorSecret)),
		DemoPlan:     config.String("LOCAL_DEMO_PLAN", "starter"),
		DemoUsage:    int64(demoUsage),
		MailDir:      config.String("LOCAL_MAIL_DIR", ""),
		// Where the portal's mailed links lead: the gateway's own address
		// unless set (e.g. behind a tunnel).
		PortalPublicURL: config.String("PORTAL_PUBLIC_URL", ""),
		// The sandbox accounting platform (docs/accounting.md).
		AccountingSandboxAddr: config.String("SANDBOX_PLATFORM_ADDR", "127.0.0.1:0"),
		Version:               version,
		Commit:                commit,
		BuildTime:             parseTime(buildTime),
		Log:                   log,
		LoopbackGRPC:          loopback,
	})
	if err != nil {
		return err
	}
	if path := config.String("LOCAL_KEYS_FILE", ""); path != "" {
		if err := local.WriteKeysFile(path, st.Keys); err != nil {
			return fmt.Errorf("LOCAL_KEYS_FILE: %w", err)
		}
	}
	printBanner(st)
	<-ctx.Done()
	fmt.Fprintln(os.Stderr, "shutting down: finishing in-flight requests")
	return st.Close()
}

func printBanner(st *local.Stack) {
	w := tabwriter.NewWriter(os.Stdout, 0, 2, 2, ' ', 0)
	fmt.Fprintf(w, "\nLedgerlane is running at %s  (Ctrl-C stops it)\n\n", st.URL)
	fmt.Fprintln(w, "NAME\tCREDENTIAL\tSCOPES")
	for _, k := range st.Keys {
		fmt.Fprintf(w, "%s\t%s\t%s\n", k.Name, k.Key, strings.Join(k.Scopes, " "))
	}
	_ = w.Flush()
	fmt.Printf("\nPortal (sign up, keys, usage, billing): %s/portal/\n", st.URL)
	fmt.Printf("API description (OpenAPI 3):           %s/v1/openapi.json\n", st.URL)
	fmt.Printf("\nSandbox accounting platform: %s  (docs/accounting.md walks through connecting it)\n", st.AccountingSandbox.URL)
	fmt.Printf("\nTry:  curl -s %s/v1/health\n", st.URL)
	fmt.Printf("      curl -s -H \"Authorization: Bearer %s\" '%s/v1/transactions?page_size=3'\n\n", keyNamed(st, "finance-read"), st.URL)
}

func keyNamed(st *local.Stack, name string) string {
	for _, k := range st.Keys {
		if k.Name == name {
			return k.Key
		}
	}
	return ""
}

func parseTime(s string) time.Time {
	t, _ := time.Parse(time.RFC3339, s)
	return t
}
