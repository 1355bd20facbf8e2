package main

import (
	"bytes"
	"context"
	"errors"
	"net"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc"

	financev1 "github.com/ledgerlane/platform/proto/finance/v1"
	"github.com/ledgerlane/platform/services/metering"
	"github.com/ledgerlane/platform/services/metering/billing"
	"github.com/ledgerlane/platform/services/metering/memory"
)

// ctl runs meteringctl commands against one in-memory store.
type ctl struct {
	t      *testing.T
	store  *memory.Store
	svc    *services
	opened int
	// processor is the payment processor of the services open makes.
	processor billing.PaymentProcessor
}

func newCtl(t *testing.T) *ctl {
	store := memory.New()
	return &ctl{t: t, store: store, svc: newServices(store, metering.Config{}, nil)}
}

// open wires the finance service as openPostgres does.
func (c *ctl) open(_ context.Context, o openOptions) (*services, func(), error) {
	c.opened++
	dir, closeFinance, err := financeDirectory(o.FinanceAddr)
	if err != nil {
		return nil, nil, err
	}
	c.svc = newServices(c.store, metering.Config{FinanceDirectory: dir}, c.processor)
	return c.svc, closeFinance, nil
}

// fakeFinance is the finance DirectoryService on a loopback port: a user
// belongs to the account and has the grants allow last gave it.
type fakeFinance struct {
	financev1.UnimplementedDirectoryServiceServer
	addr  string
	mu    sync.Mutex
	users map[string]fakeUser
}

type fakeUser struct {
	account string
	grants  []string
}

func startFinance(t *testing.T) *fakeFinance {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeFinance{addr: lis.Addr().String(), users: map[string]fakeUser{}}
	s := grpc.NewServer()
	financev1.RegisterDirectoryServiceServer(s, f)
	go func() { _ = s.Serve(lis) }()
	t.Cleanup(s.Stop)
	return f
}

func (f *fakeFinance) allow(account, user, grant string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	u := f.users[user]
	u.account, u.grants = account, append(u.grants, grant)
	f.users[user] = u
}

func (f *fakeFinance) CheckGrant(_ context.Context, req *financev1.CheckGrantRequest) (*financev1.CheckGrantResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	u, ok := f.users[req.GetUserId()]
	return &financev1.CheckGrantResponse{
		UserInAccount: ok && u.account == req.GetAccountId(),
		GrantOfUser:   ok && slices.Contains(u.grants, req.GetGrantId()),
	}, nil
}

func (c *ctl) run(args ...string) (stdout, stderr string, err error) {
	var out, errOut bytes.Buffer
	err = run(c.t.Context(), args, &out, &errOut, c.open)
	return out.String(), errOut.String(), err
}

// field returns the value of a "key  value" line of out.
func field(t *testing.T, out, key string) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(key) + `\s+(\S+)$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no %q line in:\n%s", key, out)
	}
	return m[1]
}

func TestLifecycle(t *testing.T) {
	c := newCtl(t)
	out, _, err := c.run("account", "create", "--name", "Acme", "--plan", "growth", "--currency", "gbp")
	if err != nil {
		t.Fatalf("account create: %v", err)
	}
	account := field(t, out, "account")
	if field(t, out, "plan") != "growth" || field(t, out, "currency") != "gbp" {
		t.Errorf("account create printed:\n%s", out)
	}

	out, stderr, err := c.run("key", "issue", "--account", account, "--name", "ops", "--surface", "conversion",
		"--mode", "live", "--scopes", "convert, usage:read", "--operator")
	if err != nil {
		t.Fatalf("key issue: %v", err)
	}
	secret := field(t, out, "secret")
	id := field(t, out, "credential")
	if !strings.HasPrefix(secret, "ak_live_") || field(t, out, "scopes") != "convert,usage:read" {
		t.Errorf("key issue printed:\n%s", out)
	}
	if !strings.Contains(stderr, "only this once") {
		t.Errorf("no warning that the secret is shown once: %q", stderr)
	}
	if _, err := c.svc.Resolve(t.Context(), secret); err != nil {
		t.Errorf("printed secret does not resolve: %v", err)
	}

	fin := startFinance(t)
	fin.allow(account, "u1", "g1")
	out, _, err = c.run("key", "issue", "--account", account, "--name", "app", "--kind", "at", "--surface", "finance",
		"--mode", "test", "--finance-user", "u1", "--grant", "g1", "--finance-addr", fin.addr)
	if err != nil {
		t.Fatalf("key issue finance: %v", err)
	}
	if !strings.HasPrefix(field(t, out, "secret"), "at_test_") {
		t.Errorf("finance issue printed:\n%s", out)
	}

	if out, _, err = c.run("key", "revoke", "--id", id); err != nil || out != "revoked "+id+"\n" {
		t.Fatalf("key revoke = %q, %v", out, err)
	}
	if _, err := c.svc.Resolve(t.Context(), secret); !errors.Is(err, metering.ErrNotFound) {
		t.Errorf("revoked secret resolves: %v", err)
	}

	out, _, err = c.run("key", "list", "--account", account)
	if err != nil {
		t.Fatalf("key list: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "ID") {
		t.Fatalf("key list printed:\n%s", out)
	}
	if !strings.Contains(lines[1], id) || !strings.Contains(lines[1], secret[:12]) || strings.HasSuffix(lines[1], " -") {
		t.Errorf("revoked key line: %q", lines[1])
	}
	if !strings.HasSuffix(lines[2], " -") {
		t.Errorf("active key line: %q", lines[2])
	}
	if strings.Contains(out, secret[12:]) {
		t.Error("key list printed a secret")
	}
}

func TestErrors(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		wantUsage  bool   // a command-line mistake: no database is opened
		wantErr    string // substring of the described error
		wantStderr string
	}{
		{name: "no command", args: nil, wantUsage: true, wantStderr: "usage:"},
		{name: "unknown command", args: []string{"key", "rotate"}, wantUsage: true, wantStderr: "usage:"},
		{name: "missing flag", args: []string{"key", "revoke"}, wantUsage: true, wantStderr: "--id is required"},
		{name: "unknown flag", args: []string{"key", "list", "--acount", "x"}, wantUsage: true, wantStderr: "flag provided but not defined"},
		{name: "stray argument", args: []string{"key", "list", "--account", "x", "y"}, wantUsage: true, wantStderr: `unexpected argument "y"`},
		{name: "unknown plan", args: []string{"account", "create", "--name", "A", "--plan", "gold", "--currency", "usd"},
			wantErr: `invalid-input (plan): unknown plan "gold"`},
		{name: "reserved scope", args: []string{"key", "issue", "--account", "x", "--name", "n", "--surface", "conversion",
			"--mode", "live", "--scopes", "keys:manage"}, wantErr: "invalid-input (scopes)"},
		{name: "unknown account", args: []string{"key", "issue", "--account", "x", "--name", "n", "--surface", "conversion",
			"--mode", "live"}, wantErr: "not found"},
		{name: "unknown credential", args: []string{"key", "revoke", "--id", "x"}, wantErr: "not found"},
		{name: "list of unknown account", args: []string{"key", "list", "--account", "x"}, wantErr: "not found"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newCtl(t)
			_, stderr, err := c.run(tc.args...)
			if tc.wantUsage {
				if !errors.Is(err, errUsage) || c.opened != 0 {
					t.Errorf("err = %v, opened = %d; want a usage error before opening", err, c.opened)
				}
			} else if err == nil || !strings.Contains(describe(err), tc.wantErr) {
				t.Errorf("err = %v, want %q", err, tc.wantErr)
			}
			if !strings.Contains(stderr, tc.wantStderr) {
				t.Errorf("stderr = %q, want %q", stderr, tc.wantStderr)
			}
		})
	}
}

// TestFinanceCredentials: a finance credential is issued only when the
// finance service confirms that its user and grant belong to the account.
func TestFinanceCredentials(t *testing.T) {
	fin := startFinance(t)
	// A closed port: the finance service is down.
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := lis.Addr().String()
	lis.Close()

	tests := []struct {
		name       string
		env        string // FINANCE_ADDR
		args       []string
		wantUsage  bool
		wantErr    string // substring of the described error
		wantStderr string
	}{
		{name: "issued", args: []string{"--finance-user", "u1", "--grant", "g1", "--finance-addr", fin.addr}},
		{name: "address from FINANCE_ADDR", env: fin.addr, args: []string{"--finance-user", "u1", "--grant", "g1"}},
		{name: "no finance address", args: []string{"--finance-user", "u1", "--grant", "g1"},
			wantUsage: true, wantStderr: "a finance credential needs --finance-addr (or FINANCE_ADDR)"},
		{name: "user of another account", args: []string{"--finance-user", "u2", "--grant", "g2", "--finance-addr", fin.addr},
			wantErr: `invalid-input (finance_user_id): finance user "u2" is not a user of account`},
		{name: "grant of another user", args: []string{"--finance-user", "u1", "--grant", "g2", "--finance-addr", fin.addr},
			wantErr: `invalid-input (grant_id): grant "g2" is not a grant of finance user "u1"`},
		{name: "finance down", args: []string{"--finance-user", "u1", "--grant", "g1", "--finance-addr", down},
			wantErr: "check finance user and grant: ask the finance service: Unavailable"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("FINANCE_ADDR", tc.env)
			c := newCtl(t)
			out, _, err := c.run("account", "create", "--name", "Acme", "--plan", "starter", "--currency", "usd")
			if err != nil {
				t.Fatal(err)
			}
			account := field(t, out, "account")
			fin.allow(account, "u1", "g1")
			fin.allow("another-account", "u2", "g2")
			c.opened = 0

			args := append([]string{"key", "issue", "--account", account, "--name", "app", "--kind", "at",
				"--surface", "finance", "--mode", "live"}, tc.args...)
			out, stderr, err := c.run(args...)
			switch {
			case tc.wantUsage:
				if !errors.Is(err, errUsage) || c.opened != 0 {
					t.Errorf("err = %v, opened = %d; want a usage error before opening", err, c.opened)
				}
			case tc.wantErr != "":
				if err == nil || !strings.Contains(describe(err), tc.wantErr) {
					t.Errorf("err = %v, want %q", err, tc.wantErr)
				}
			case err != nil:
				t.Fatalf("key issue: %v", err)
			default:
				if _, err := c.svc.Resolve(t.Context(), field(t, out, "secret")); err != nil {
					t.Errorf("printed secret does not resolve: %v", err)
				}
			}
			if !strings.Contains(stderr, tc.wantStderr) {
				t.Errorf("stderr = %q, want %q", stderr, tc.wantStderr)
			}
			if list, _ := c.svc.ListCredentials(t.Context(), account); (err == nil) != (len(list) == 1) {
				t.Errorf("%d credentials stored after err = %v", len(list), err)
			}
		})
	}
}
