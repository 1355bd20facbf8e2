// Command meteringctl is the operators' admin tool for accounts and
// credentials. It works on the database directly (DATABASE_URL, schema
// "metering"), so it is the one place an operator can grant usage:read.
//
//	meteringctl account create --name N --plan P --currency usd
//	meteringctl key issue --account ID --name N --surface conversion --mode live \
//	    [--kind ak] [--scopes convert,...] [--operator] \
//	    [--finance-user U --grant G --finance-addr HOST:PORT]
//	meteringctl key revoke --id ID
//	meteringctl key list --account ID
//	meteringctl plan change --account ID --plan P    (upgrade now, downgrade at period end)
//	meteringctl plan cancel --account ID             (cancel a scheduled downgrade)
//	meteringctl plan list --account ID
//	meteringctl invoice close --account ID           (invoice ended periods now)
//	meteringctl invoice list --account ID
//	meteringctl invoice collect-due                  (the due collection attempts, now)
//	meteringctl credit grant --account ID --cents N
//	meteringctl user add --account ID --email E --name N
//	meteringctl user list --account ID
//	meteringctl payment-method add --account ID --type card|direct_debit --holder N [details] [--default]
//	meteringctl payment-method list|default|remove --account ID [--id M]
//	meteringctl payment list --account ID
//	meteringctl payment retry --account ID --id P
//	meteringctl payment force --id P --outcome settle|fail|delay [--days N]   (sandbox only)
//	meteringctl payment settle-due                   (the settlement step, now)
//
// Payment methods need PAYMENT_PROCESSOR (sandbox, the only one built).
//
// Upgrades and invoices read the usage counters: they need REDIS_URL.
//
// A secret is printed once, by key issue, and never again.
//
// A finance credential is issued only once the finance service (its gRPC
// address in --finance-addr or FINANCE_ADDR) confirms that the finance user
// belongs to the account and the grant to the user.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/ledgerlane/platform/pkg/config"
	"github.com/ledgerlane/platform/pkg/logging"
	"github.com/ledgerlane/platform/pkg/pg"
	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/pkg/redisconn"
	"github.com/ledgerlane/platform/pkg/rpc"
	"github.com/ledgerlane/platform/services/metering"
	"github.com/ledgerlane/platform/services/metering/admission"
	"github.com/ledgerlane/platform/services/metering/billing"
	"github.com/ledgerlane/platform/services/metering/financedir"
	"github.com/ledgerlane/platform/services/metering/identity"
	"github.com/ledgerlane/platform/services/metering/notify"
	"github.com/ledgerlane/platform/services/metering/postgres"
	"github.com/ledgerlane/platform/services/metering/sandboxpay"
)

const usage = `usage:
  meteringctl account create --name N --plan free|starter|growth|scale --currency usd|eur|gbp
  meteringctl key issue --account ID --name N --surface conversion|finance --mode live|test
      [--kind ak|at] [--scopes s1,s2] [--operator]
      [--finance-user U --grant G --finance-addr HOST:PORT (default $FINANCE_ADDR)]
  meteringctl key revoke --id ID
  meteringctl key list --account ID
  meteringctl plan change --account ID --plan free|starter|growth|scale
  meteringctl plan cancel --account ID
  meteringctl plan list --account ID
  meteringctl invoice close --account ID
  meteringctl invoice list --account ID
  meteringctl invoice collect-due
  meteringctl credit grant --account ID --cents N
  meteringctl user add --account ID --email E --name N
  meteringctl user list --account ID
  meteringctl payment-method add --account ID --type card|direct_debit --holder N
      [--scheme ach|sepa|bacs] [--card-number C --exp-month M --exp-year Y]
      [--iban I] [--routing-number R] [--sort-code S] [--account-number A] [--default]
  meteringctl payment-method list --account ID
  meteringctl payment-method default --account ID --id M
  meteringctl payment-method remove --account ID --id M
  meteringctl payment list --account ID
  meteringctl payment retry --account ID --id P
  meteringctl payment force --id P --outcome settle|fail|delay [--days N]
  meteringctl payment settle-due
`

// errUsage marks a mistake on the command line (exit status 2).
var errUsage = errors.New("usage")

// services are the metering Service, the billing Service and the identity
// Service (the portal's people) on one store.
type services struct {
	*metering.Service
	*billingService
	people *identity.Service
}

// billingService is billing.Service, named apart so services can embed it
// beside metering.Service.
type billingService = billing.Service

// newServices returns the services on store, wired as server.New wires
// them: the metering Service of cfg (its Store and payment standing set),
// and billing with proc (nil: none) and cfg's counters, whose failed
// payments mail as in the service.
func newServices(store interface {
	metering.Store
	billing.Store
	identity.Store
	notify.Store
}, cfg metering.Config, proc billing.PaymentProcessor) *services {
	cfg.Store, cfg.Payments = store, billing.NewStanding(store)
	svc := metering.NewService(cfg)
	bc := billing.Config{Store: store, Accounts: svc, PaymentProcessor: proc, Clock: cfg.Clock, Log: cfg.Log,
		Notices: notify.NewService(notify.Config{Store: store, Clock: cfg.Clock, Log: cfg.Log})}
	if c, ok := cfg.Counters.(billing.Counters); ok { // admission.Controller is both
		bc.Counters = c
	}
	return &services{Service: svc, billingService: billing.NewService(bc),
		people: identity.NewService(identity.Config{Store: store, Accounts: svc, Clock: cfg.Clock, Log: cfg.Log})}
}

// opener connects to the service's store. run calls it only once the command
// line is valid, so mistakes never need a database.
type opener func(ctx context.Context, o openOptions) (svc *services, closeFn func(), err error)

// openOptions are what a command needs beyond the database.
type openOptions struct {
	// FinanceAddr is the finance service's gRPC address, which checks the
	// user and grant of finance credentials; empty: none are issued.
	FinanceAddr string
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr, openPostgres)
	stop()
	switch {
	case errors.Is(err, errUsage):
		os.Exit(2)
	case err != nil:
		fmt.Fprintln(os.Stderr, "meteringctl:", describe(err))
		os.Exit(1)
	}
}

func openPostgres(ctx context.Context, o openOptions) (*services, func(), error) {
	log := logging.New("meteringctl", config.String("LOG_LEVEL", "warn"))
	url := config.String("DATABASE_URL", "")
	if url == "" {
		return nil, nil, errors.New("DATABASE_URL is required")
	}
	pool, err := pg.Open(ctx, url, "metering", postgres.Migrations, log)
	if err != nil {
		return nil, nil, err
	}
	cfg := metering.Config{Clock: time.Now, Log: log}
	var proc billing.PaymentProcessor
	closeRedis := func() {}
	if u := config.String("REDIS_URL", ""); u != "" {
		rc, err := redisconn.Connect(ctx, u)
		if err != nil {
			pool.Close()
			return nil, nil, err
		}
		cfg.Counters = admission.New(rc, time.Now)
		closeRedis = func() { _ = rc.Close() }
	}
	switch pp := config.String("PAYMENT_PROCESSOR", ""); pp {
	case "sandbox":
		proc = sandboxpay.New()
	case "":
	default:
		closeRedis()
		pool.Close()
		return nil, nil, errors.New(`PAYMENT_PROCESSOR must be "sandbox" or unset`)
	}
	dir, closeFinance, err := financeDirectory(o.FinanceAddr)
	if err != nil {
		closeRedis()
		pool.Close()
		return nil, nil, err
	}
	cfg.FinanceDirectory = dir
	return newServices(postgres.New(pool), cfg, proc), func() { closeFinance(); closeRedis(); pool.Close() }, nil
}

// financeDirectory is the finance service at addr, which checks the user
// and grant of finance credentials; an empty addr is none, and they are
// refused.
func financeDirectory(addr string) (_ metering.FinanceDirectory, closeFn func(), err error) {
	if addr == "" {
		return nil, func() {}, nil
	}
	conn, err := rpc.Dial(addr)
	if err != nil {
		return nil, nil, fmt.Errorf("finance service at %q: %w", addr, err)
	}
	return financedir.New(conn), func() { _ = conn.Close() }, nil
}

// describe turns a problem the service returned into a readable line.
func describe(err error) string {
	var p *problem.Problem
	if !errors.As(err, &p) {
		return err.Error()
	}
	if p.Field != "" {
		return fmt.Sprintf("%s (%s): %s", p.Type, p.Field, p.Detail)
	}
	return fmt.Sprintf("%s: %s", p.Type, p.Detail)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer, open opener) error {
	if len(args) < 2 {
		fmt.Fprint(stderr, usage)
		return errUsage
	}
	name := args[0] + " " + args[1]
	c, ok := commands[name]
	if !ok {
		fmt.Fprint(stderr, usage)
		return errUsage
	}
	return c.exec(ctx, name, args[2:], stdout, stderr, open)
}

// command is one meteringctl subcommand.
type command struct {
	// account: the command takes --account, which must name an account
	// before the command runs.
	account bool
	// required are the flags that must be set, besides --account.
	required []string
	// define declares the command's flags on fs (and what open needs in o)
	// and returns what the command does once they are parsed.
	define func(fs *flag.FlagSet, o *openOptions) action
}

// action is what a command does. check, when set, is a last look at the
// parsed command line before anything is opened: a usage message, or "".
type action struct {
	check func() string
	do    func(ctx context.Context, e env) error
}

// env is what an action works with: the opened services, the --account it
// names (checked to exist) and the output.
type env struct {
	svc            *services
	account        string
	stdout, stderr io.Writer
}

// just is a command without flags of its own.
func just(do func(ctx context.Context, e env) error) func(*flag.FlagSet, *openOptions) action {
	return func(*flag.FlagSet, *openOptions) action { return action{do: do} }
}

// exec parses args, opens the services only once the command line is
// valid (so mistakes never need a database), checks --account and runs.
func (c command) exec(ctx context.Context, name string, args []string, stdout, stderr io.Writer, open opener) error {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	var acct string
	required := c.required
	if c.account {
		fs.StringVar(&acct, "account", "", "account ID")
		required = append([]string{"account"}, required...)
	}
	var o openOptions
	a := c.define(fs, &o)
	if err := parse(fs, args, stderr, required...); err != nil {
		return err
	}
	if a.check != nil {
		if msg := a.check(); msg != "" {
			fmt.Fprintln(stderr, msg)
			return errUsage
		}
	}
	svc, closeFn, err := open(ctx, o)
	if err != nil {
		return err
	}
	defer closeFn()
	if c.account {
		if _, err := svc.Account(ctx, acct); err != nil {
			return fmt.Errorf("account %q: %w", acct, err)
		}
	}
	return a.do(ctx, env{svc: svc, account: acct, stdout: stdout, stderr: stderr})
}

// commands are every subcommand by its two words (usage lists them).
var commands = map[string]command{
	"account create":         {required: []string{"name", "plan", "currency"}, define: accountCreate},
	"key issue":              {required: []string{"account", "name", "surface", "mode"}, define: keyIssue},
	"key revoke":             {required: []string{"id"}, define: keyRevoke},
	"key list":               {account: true, define: just(keyList)},
	"plan change":            {account: true, required: []string{"plan"}, define: planChange},
	"plan cancel":            {account: true, define: just(planCancel)},
	"plan list":              {account: true, define: just(planList)},
	"invoice close":          {account: true, define: just(invoiceClose)},
	"invoice list":           {account: true, define: just(invoiceList)},
	"invoice collect-due":    {define: just(invoiceCollectDue)},
	"credit grant":           {account: true, required: []string{"cents"}, define: creditGrant},
	"user add":               {account: true, required: []string{"email", "name"}, define: userAdd},
	"user list":              {account: true, define: just(userList)},
	"payment-method add":     {account: true, required: []string{"type", "holder"}, define: methodAdd},
	"payment-method list":    {account: true, define: just(methodList)},
	"payment-method default": {account: true, required: []string{"id"}, define: methodDefault},
	"payment-method remove":  {account: true, required: []string{"id"}, define: methodRemove},
	"payment list":           {account: true, define: just(paymentList)},
	"payment retry":          {account: true, required: []string{"id"}, define: paymentRetry},
	"payment force":          {required: []string{"id", "outcome"}, define: paymentForce},
	"payment settle-due":     {define: just(paymentSettleDue)},
}

// parse parses args into fs and checks that every flag in required is set.
func parse(fs *flag.FlagSet, args []string, stderr io.Writer, required ...string) error {
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "unexpected argument %q\n", fs.Arg(0))
		return errUsage
	}
	for _, name := range required {
		if fs.Lookup(name).Value.String() == "" {
			fmt.Fprintf(stderr, "--%s is required\n", name)
			fs.Usage()
			return errUsage
		}
	}
	return nil
}

func accountCreate(fs *flag.FlagSet, _ *openOptions) action {
	name := fs.String("name", "", "account name")
	plan := fs.String("plan", "", "plan: free, starter, growth or scale")
	currency := fs.String("currency", "", "billing currency: usd, eur or gbp")
	return action{do: func(ctx context.Context, e env) error {
		a, err := e.svc.CreateAccount(ctx, *name, *plan, metering.Currency(*currency))
		if err != nil {
			return err
		}
		tw := table(e.stdout)
		fmt.Fprintf(tw, "account\t%s\n", a.ID)
		fmt.Fprintf(tw, "name\t%s\n", a.Name)
		fmt.Fprintf(tw, "plan\t%s\n", a.PlanID)
		fmt.Fprintf(tw, "currency\t%s\n", a.BillingCurrency)
		fmt.Fprintf(tw, "billing anchor\t%s\n", a.BillingAnchor.Format(time.RFC3339))
		return tw.Flush()
	}}
}

func keyIssue(fs *flag.FlagSet, o *openOptions) action {
	var p metering.IssueParams
	fs.StringVar(&p.AccountID, "account", "", "account ID")
	fs.StringVar(&p.Name, "name", "", "credential name")
	fs.StringVar(&p.Kind, "kind", metering.KindAPIKey, "ak (API key) or at (access token)")
	fs.StringVar(&p.Surface, "surface", "", "conversion or finance")
	fs.StringVar(&p.Mode, "mode", "", "live or test")
	scopes := fs.String("scopes", "", "comma-separated scopes (default: the surface's defaults)")
	fs.BoolVar(&p.Operator, "operator", false, "allow the reserved usage:read scope")
	fs.StringVar(&p.FinanceUserID, "finance-user", "", "finance user ID (finance only)")
	fs.StringVar(&p.GrantID, "grant", "", "connection grant ID (finance only)")
	fs.StringVar(&o.FinanceAddr, "finance-addr", config.String("FINANCE_ADDR", ""),
		"finance service gRPC address, which checks the finance user and grant (finance only)")
	check := func() string {
		if p.Surface == metering.SurfaceFinance && o.FinanceAddr == "" {
			return "a finance credential needs --finance-addr (or FINANCE_ADDR): " +
				"the finance service must confirm that the finance user belongs to the account and the grant to the user"
		}
		return ""
	}
	return action{check: check, do: func(ctx context.Context, e env) error {
		for s := range strings.SplitSeq(*scopes, ",") {
			if s = strings.TrimSpace(s); s != "" {
				p.Scopes = append(p.Scopes, s)
			}
		}
		secret, c, err := e.svc.IssueCredential(ctx, p)
		if err != nil {
			return err
		}
		tw := table(e.stdout)
		fmt.Fprintf(tw, "credential\t%s\n", c.ID)
		fmt.Fprintf(tw, "account\t%s\n", c.AccountID)
		fmt.Fprintf(tw, "surface\t%s\n", c.Surface)
		fmt.Fprintf(tw, "mode\t%s\n", c.Mode)
		fmt.Fprintf(tw, "scopes\t%s\n", strings.Join(c.Scopes, ","))
		fmt.Fprintf(tw, "secret\t%s\n", secret)
		if err := tw.Flush(); err != nil {
			return err
		}
		fmt.Fprintln(e.stderr, "The secret is shown only this once: store it now.")
		return nil
	}}
}

func keyRevoke(fs *flag.FlagSet, _ *openOptions) action {
	id := fs.String("id", "", "credential ID")
	return action{do: func(ctx context.Context, e env) error {
		if err := e.svc.Revoke(ctx, *id); err != nil {
			return err
		}
		_, err := fmt.Fprintf(e.stdout, "revoked %s\n", *id)
		return err
	}}
}

func keyList(ctx context.Context, e env) error {
	return show(e.stdout, printCredentials)(e.svc.ListCredentials(ctx, e.account))
}

// printCredentials names each key by its display prefix: the secret is not
// stored.
func printCredentials(w io.Writer, creds []metering.Credential) error {
	tw := table(w)
	fmt.Fprintln(tw, "ID\tNAME\tPREFIX\tSURFACE\tMODE\tSCOPES\tCREATED\tREVOKED")
	for _, c := range creds {
		revoked := "-"
		if c.RevokedAt != nil {
			revoked = c.RevokedAt.Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", c.ID, c.Name, c.Prefix, c.Surface, c.Mode,
			strings.Join(c.Scopes, ","), c.CreatedAt.Format(time.RFC3339), revoked)
	}
	return tw.Flush()
}

// table is the aligned output every command prints.
func table(w io.Writer) *tabwriter.Writer { return tabwriter.NewWriter(w, 0, 4, 2, ' ', 0) }

// show prints with print what a call returned, or returns the call's error.
func show[T any](w io.Writer, print func(io.Writer, T) error) func(T, error) error {
	return func(v T, err error) error {
		if err != nil {
			return err
		}
		return print(w, v)
	}
}
