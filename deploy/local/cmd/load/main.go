// Command load is `make load`: it provisions accounts with keys in a
// Ledgerlane stack, drives a mix of requests at it for a bounded time and
// prints, per route, the rate, latency percentiles and statuses, and
// whether the usage the stack counted equals the 2xx answers received.
//
// Without -target it starts the whole stack in this process (as `make run`
// does, on REDIS_URL, NATS_URL and DATABASE_URL when set); with -target it
// drives a stack started elsewhere, provisioning through the metering
// database (-database-url, as meteringctl does) and reading the demo
// finance credentials from -keys-file. docs/load.md has the details.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/ledgerlane/platform/deploy/local"
	"github.com/ledgerlane/platform/deploy/local/load"
	"github.com/ledgerlane/platform/pkg/config"
	"github.com/ledgerlane/platform/pkg/logging"
	"github.com/ledgerlane/platform/pkg/pg"
	"github.com/ledgerlane/platform/services/metering"
	"github.com/ledgerlane/platform/services/metering/postgres"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	ok, err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	switch {
	case errors.Is(err, flag.ErrHelp):
		os.Exit(2)
	case err != nil:
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(1)
	case !ok:
		os.Exit(1)
	}
}

type options struct {
	target, mix, plan, samples, keysFile, databaseURL, schema, cpuProfile string
	rate, workers, accounts, batchItems                                   int
	duration                                                              time.Duration
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("load", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.target, "target", "", "gateway base URL of a running stack; empty starts the stack in this process")
	fs.IntVar(&o.rate, "rate", 200, "requests per second over the whole mix; 0 sends as fast as the workers can")
	fs.DurationVar(&o.duration, "duration", 10*time.Second, "how long to send")
	fs.IntVar(&o.workers, "workers", 32, "concurrent requests (one keep-alive connection each)")
	fs.IntVar(&o.accounts, "accounts", 100, "accounts to provision, each with one key")
	fs.StringVar(&o.plan, "plan", metering.PlanGrowth, "plan of the provisioned accounts")
	fs.StringVar(&o.mix, "mix", load.DefaultMix, "scenario=weight,... (scenarios: see docs/load.md)")
	fs.StringVar(&o.samples, "samples", "../shared/samples", "the shared samples folder the request bodies come from")
	fs.IntVar(&o.batchItems, "batch-items", 5, "items per batch submission")
	fs.StringVar(&o.keysFile, "keys-file", "", "with -target: the demo credentials as `make run` writes them to LOCAL_KEYS_FILE (finance scenarios need them)")
	fs.StringVar(&o.databaseURL, "database-url", os.Getenv("DATABASE_URL"), "with -target: the metering database to provision accounts in")
	fs.StringVar(&o.schema, "metering-schema", "metering", "with -target: metering's PostgreSQL schema")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "without -target: write a CPU profile of the stack and the tool under load here")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if o.accounts <= 0 || o.workers <= 0 || o.batchItems <= 0 || o.duration <= 0 || o.rate < 0 {
		return o, errors.New("-accounts, -workers, -batch-items and -duration must be positive and -rate at least 0")
	}
	if o.target != "" && o.cpuProfile != "" {
		return o, errors.New("-cpuprofile profiles the in-process stack: profile a separate binary through its own pprof")
	}
	return o, nil
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) (bool, error) {
	o, err := parseFlags(args, stderr)
	if err != nil {
		return false, err
	}
	mix, err := load.ParseMix(o.mix)
	if err != nil {
		return false, err
	}
	var id [4]byte
	_, _ = rand.Read(id[:])
	runID := hex.EncodeToString(id[:])
	log := logging.NewTo(stderr, "load", config.String("LOG_LEVEL", "warn"))

	cfg := load.Config{Rate: o.rate, Duration: o.duration, Workers: o.workers, Mix: mix, SamplesDir: o.samples,
		BatchItems: o.batchItems, UsageWait: 10 * time.Second}
	var svc *metering.Service
	if o.target == "" {
		st, err := local.Start(ctx, local.Config{
			HTTPAddr: "127.0.0.1:0", RedisURL: os.Getenv("REDIS_URL"), NATSURL: os.Getenv("NATS_URL"),
			DatabaseURL: os.Getenv("DATABASE_URL"),
			// The demo account carries the finance credentials' traffic:
			// the largest plan keeps its bucket out of the figures, and the
			// sandbox bank stays still so finance writes do not race it.
			DemoPlan: metering.PlanScale, SandboxInterval: -1, Log: log,
		})
		if err != nil {
			return false, fmt.Errorf("start the stack: %w", err)
		}
		defer st.Close()
		cfg.Target, svc = st.URL, st.Metering.Service()
		cfg.FinanceRead, cfg.FinanceWrite = keyNamed(st.Keys, "finance-read"), keyNamed(st.Keys, "finance-write")
	} else {
		cfg.Target = o.target
		if o.databaseURL == "" {
			return false, errors.New("-target needs -database-url (or DATABASE_URL): accounts are provisioned in the metering database, as meteringctl does")
		}
		pool, err := pg.Open(ctx, o.databaseURL, o.schema, postgres.Migrations, log)
		if err != nil {
			return false, fmt.Errorf("metering database: %w", err)
		}
		defer pool.Close()
		svc = metering.NewService(metering.Config{Store: postgres.New(pool), Clock: time.Now, Log: log})
		if o.keysFile != "" {
			keys, err := readKeys(o.keysFile)
			if err != nil {
				return false, err
			}
			cfg.FinanceRead, cfg.FinanceWrite = keyNamed(keys, "finance-read"), keyNamed(keys, "finance-write")
		}
		if cfg.FinanceRead == "" || cfg.FinanceWrite == "" {
			mix = withoutFinance(mix)
			if len(mix) == 0 {
				return false, errors.New("the mix has only finance scenarios and no -keys-file names the finance credentials")
			}
			cfg.Mix = mix
			fmt.Fprintln(stderr, "load: no finance credentials (-keys-file): finance scenarios left out")
		}
	}
	fmt.Fprintf(stderr, "load: provisioning %d %s accounts at %s\n", o.accounts, o.plan, cfg.Target)
	if cfg.Accounts, err = load.Provision(ctx, svc, o.accounts, o.plan, runID); err != nil {
		return false, fmt.Errorf("provision: %w", err)
	}
	if o.cpuProfile != "" {
		f, err := os.Create(o.cpuProfile)
		if err != nil {
			return false, err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return false, err
		}
		defer pprof.StopCPUProfile()
	}
	fmt.Fprintf(stderr, "load: sending for %s\n", o.duration)
	res, err := load.Run(ctx, cfg)
	if err != nil {
		return false, err
	}
	if err := res.Print(stdout); err != nil {
		return false, err
	}
	return res.OK(), nil
}

func withoutFinance(mix []load.Share) []load.Share {
	var out []load.Share
	for _, s := range mix {
		if s.Scenario != "finance-read" && s.Scenario != "finance-write" {
			out = append(out, s)
		}
	}
	return out
}

func readKeys(path string) ([]local.Key, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("-keys-file: %w", err)
	}
	var keys []local.Key
	if err := json.Unmarshal(b, &keys); err != nil {
		return nil, fmt.Errorf("-keys-file %s: %w", path, err)
	}
	return keys, nil
}

func keyNamed(keys []local.Key, name string) string {
	for _, k := range keys {
		if k.Name == name {
			return k.Key
		}
	}
	return ""
}
