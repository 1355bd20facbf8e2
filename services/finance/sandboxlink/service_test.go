package sandboxlink_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ledgerlane/platform/pkg/cursor"
	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/services/finance"
	"github.com/ledgerlane/platform/services/finance/memory"
	"github.com/ledgerlane/platform/services/finance/sandboxlink"
	"github.com/ledgerlane/platform/services/finance/seed"
)

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *clock) advance(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

const (
	acctA = "6a0c2f3e-1b4d-4e5f-8a9b-0c1d2e3f4a5b"
	acctB = "7b1d3a4f-2c5e-4f6a-9b0c-1d2e3f4a5b6c"
)

var (
	ownerA = sandboxlink.Owner{AccountID: acctA, Mode: "test"}
	ownerB = sandboxlink.Owner{AccountID: acctB, Mode: "test"}
)

type env struct {
	svc    *sandboxlink.Service
	kernel *finance.Service
	store  *memory.Store
	clk    *clock
}

func newEnv(t *testing.T, limits sandboxlink.Limits) env {
	t.Helper()
	clk := &clock{t: time.Date(2026, 3, 10, 9, 0, 0, 0, time.UTC)}
	store := memory.New()
	kernel := finance.NewService(finance.Config{Store: store, Cursors: cursor.New([]byte("k")), Clock: clk.now})
	return env{svc: sandboxlink.NewService(sandboxlink.Config{Kernel: kernel, Store: store, History: seed.SandboxHistory, Limits: limits}),
		kernel: kernel, store: store, clk: clk}
}

func (e env) user(t *testing.T, o sandboxlink.Owner) finance.User {
	t.Helper()
	u, err := e.svc.CreateUser(context.Background(), o, "Robin")
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func wantProblem(t *testing.T, err error, typ problem.Type, field string) {
	t.Helper()
	var p *problem.Problem
	if !errors.As(err, &p) {
		t.Fatalf("err = %v, want a %s problem", err, typ)
	}
	if p.Type != typ || p.Field != field {
		t.Fatalf("problem %s (field %q): %s; want %s (field %q)", p.Type, p.Field, p.Detail, typ, field)
	}
}

func good(userID, institution string) sandboxlink.LinkInput {
	return sandboxlink.LinkInput{UserID: userID, InstitutionID: institution, Username: sandboxlink.TestUsername, Password: sandboxlink.TestPassword}
}

// TestLinkAtOnce: the institution without MFA links at once, writing the
// connection, its accounts, a grant and the deterministic history.
func TestLinkAtOnce(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, sandboxlink.Limits{})
	u := e.user(t, ownerA)
	in := good(u.ID, "ins_otter")
	in.WritesEnabled = true
	v, err := e.svc.StartLink(ctx, ownerA, in)
	if err != nil {
		t.Fatal(err)
	}
	if v.Status != sandboxlink.StatusLinked || v.ConnectionID == "" || v.GrantID == "" || v.MFAPrompt != "" {
		t.Fatalf("link = %+v", v)
	}
	if len(v.Accounts) != 3 || v.Accounts[0].Name != "Otter Everyday Checking" {
		t.Fatalf("accounts = %+v", v.Accounts)
	}
	g, err := e.store.GetGrant(ctx, v.GrantID)
	if err != nil || g.UserID != u.ID || !g.WritesEnabled {
		t.Fatalf("grant = %+v, %v", g, err)
	}
	conn, err := e.store.GetConnection(ctx, v.ConnectionID)
	if err != nil || conn.Provider != finance.ProviderSandbox || conn.Institution != "Harbor Otter Bank" || conn.Status != finance.ConnectionActive {
		t.Fatalf("connection = %+v, %v", conn, err)
	}
	// The rows are exactly what the generator makes for this connection.
	inst, _ := sandboxlink.InstitutionByID("ins_otter")
	want := seed.SandboxHistory(inst, conn, e.clk.now())
	rows, err := e.store.ListTransactions(ctx, u.ID, finance.TransactionFilter{}, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(want.Transactions) || len(rows) < 60 {
		t.Fatalf("%d rows, want %d (at least 60)", len(rows), len(want.Transactions))
	}
	for _, w := range want.Transactions {
		if !slices.ContainsFunc(rows, func(r finance.Transaction) bool { return r.ID == w.ID && r.Amount.Amount.Equal(w.Amount.Amount) }) {
			t.Fatalf("row %s (%s %s) not written", w.ID, w.Merchant, w.Amount.Amount)
		}
	}
	// The credential issue check finds the user, the grant and test mode.
	check, err := e.kernel.CheckGrant(ctx, acctA, u.ID, v.GrantID, "test")
	if err != nil || !check.OK() {
		t.Fatalf("check = %+v, %v", check, err)
	}
	got, err := e.svc.GetLink(ctx, ownerA, v.ID)
	if err != nil || got.Status != sandboxlink.StatusLinked || len(got.Accounts) != 3 {
		t.Fatalf("get = %+v, %v", got, err)
	}
}

// TestSandboxHistoryIsDeterministic: the same institution, connection and
// instant give the same rows; another connection the same amounts under
// other ids.
func TestSandboxHistoryIsDeterministic(t *testing.T) {
	inst, _ := sandboxlink.InstitutionByID("ins_quokka")
	now := time.Date(2026, 2, 28, 23, 0, 0, 0, time.UTC)
	c1 := finance.Connection{ID: "11111111-1111-4111-8111-111111111111", UserID: "21111111-1111-4111-8111-111111111111", Institution: inst.Name}
	c2 := c1
	c2.ID = "31111111-1111-4111-8111-111111111111"
	a, b, c := seed.SandboxHistory(inst, c1, now), seed.SandboxHistory(inst, c1, now), seed.SandboxHistory(inst, c2, now)
	if len(a.Transactions) == 0 || len(a.Transactions) != len(b.Transactions) || len(a.Transactions) != len(c.Transactions) {
		t.Fatalf("%d, %d, %d rows", len(a.Transactions), len(b.Transactions), len(c.Transactions))
	}
	for i := range a.Transactions {
		if a.Transactions[i].ID != b.Transactions[i].ID || !a.Transactions[i].Amount.Amount.Equal(b.Transactions[i].Amount.Amount) {
			t.Fatalf("row %d differs between two runs", i)
		}
		if a.Transactions[i].ID == c.Transactions[i].ID || !a.Transactions[i].Amount.Amount.Equal(c.Transactions[i].Amount.Amount) {
			t.Fatalf("row %d: ids must differ and amounts agree across connections", i)
		}
		if d := a.Transactions[i].Date; d.Before(finance.Day(now).AddDate(0, 0, -seed.SandboxHistoryDays)) || d.After(finance.Day(now)) {
			t.Fatalf("row %d dated %s", i, d)
		}
	}
}

// TestLinkMFA walks the MFA state machine: waiting, a wrong code with the
// attempts left, the right code, and no code taken once linked.
func TestLinkMFA(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, sandboxlink.Limits{})
	u := e.user(t, ownerA)
	v, err := e.svc.StartLink(ctx, ownerA, good(u.ID, "ins_quokka"))
	if err != nil {
		t.Fatal(err)
	}
	if v.Status != sandboxlink.StatusMFARequired || v.ConnectionID != "" || v.MFAPrompt == "" ||
		!v.ExpiresAt.Equal(e.clk.now().Add(10*time.Minute)) {
		t.Fatalf("link = %+v", v)
	}
	if rows, _ := e.store.ListTransactions(ctx, u.ID, finance.TransactionFilter{}, nil, 0); len(rows) != 0 {
		t.Fatalf("%d rows before the MFA step", len(rows))
	}
	_, err = e.svc.AnswerMFA(ctx, ownerA, v.ID, "0000")
	wantProblem(t, err, problem.InvalidMFACode, "code")
	_, err = e.svc.AnswerMFA(ctx, ownerA, v.ID, "")
	wantProblem(t, err, problem.InvalidInput, "code")
	e.clk.advance(9 * time.Minute)
	v, err = e.svc.AnswerMFA(ctx, ownerA, v.ID, sandboxlink.TestMFACode)
	if err != nil {
		t.Fatal(err)
	}
	if v.Status != sandboxlink.StatusLinked || len(v.Accounts) != 2 || v.MFAAttempts != 1 || !v.ExpiresAt.IsZero() {
		t.Fatalf("link = %+v", v)
	}
	_, err = e.svc.AnswerMFA(ctx, ownerA, v.ID, sandboxlink.TestMFACode)
	wantProblem(t, err, problem.Conflict, "")
	if rows, _ := e.store.ListTransactions(ctx, u.ID, finance.TransactionFilter{}, nil, 0); len(rows) == 0 {
		t.Fatal("no rows once linked")
	}
}

// TestLinkMFAFails: the last wrong code fails the link, and an unanswered
// link expires at its deadline, not a microsecond later.
func TestLinkMFAFails(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, sandboxlink.Limits{})
	u := e.user(t, ownerA)
	v, err := e.svc.StartLink(ctx, ownerA, good(u.ID, "ins_quokka"))
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		_, err = e.svc.AnswerMFA(ctx, ownerA, v.ID, "9999")
		wantProblem(t, err, problem.InvalidMFACode, "code")
	}
	got, err := e.svc.GetLink(ctx, ownerA, v.ID)
	if err != nil || got.Status != sandboxlink.StatusFailed || got.ErrorCode != sandboxlink.ErrorTooManyMFAAttempts {
		t.Fatalf("link = %+v, %v", got, err)
	}
	_, err = e.svc.AnswerMFA(ctx, ownerA, v.ID, sandboxlink.TestMFACode)
	wantProblem(t, err, problem.Conflict, "")

	v, err = e.svc.StartLink(ctx, ownerA, good(u.ID, "ins_quokka"))
	if err != nil {
		t.Fatal(err)
	}
	e.clk.advance(10*time.Minute - time.Microsecond)
	if got, _ := e.svc.GetLink(ctx, ownerA, v.ID); got.Status != sandboxlink.StatusMFARequired {
		t.Fatalf("before the deadline: %s", got.Status)
	}
	e.clk.advance(time.Microsecond)
	if got, _ := e.svc.GetLink(ctx, ownerA, v.ID); got.Status != sandboxlink.StatusExpired {
		t.Fatalf("at the deadline: %s", got.Status)
	}
	_, err = e.svc.AnswerMFA(ctx, ownerA, v.ID, sandboxlink.TestMFACode)
	wantProblem(t, err, problem.Conflict, "")
}

// TestLinkRefusals: every refusal answers its problem and stores nothing.
func TestLinkRefusals(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, sandboxlink.Limits{})
	u := e.user(t, ownerA)
	other := e.user(t, ownerB)
	tests := []struct {
		name  string
		owner sandboxlink.Owner
		in    sandboxlink.LinkInput
		typ   problem.Type
		field string
	}{
		{"institution down", ownerA, good(u.ID, "ins_wombat"), problem.InstitutionDown, ""},
		{"wrong password", ownerA, sandboxlink.LinkInput{UserID: u.ID, InstitutionID: "ins_otter", Username: "user_good", Password: "pass_bad"}, problem.InvalidCredentials, "password"},
		{"wrong username", ownerA, sandboxlink.LinkInput{UserID: u.ID, InstitutionID: "ins_quokka", Username: "user_bad", Password: "pass_good"}, problem.InvalidCredentials, "password"},
		{"no username", ownerA, sandboxlink.LinkInput{UserID: u.ID, InstitutionID: "ins_otter", Password: "pass_good"}, problem.InvalidInput, "username"},
		{"no password", ownerA, sandboxlink.LinkInput{UserID: u.ID, InstitutionID: "ins_otter", Username: "user_good"}, problem.InvalidInput, "password"},
		{"unknown institution", ownerA, good(u.ID, "ins_platypus"), problem.InvalidInput, "institution_id"},
		{"no institution", ownerA, good(u.ID, ""), problem.InvalidInput, "institution_id"},
		{"malformed user", ownerA, good("nope", "ins_otter"), problem.InvalidInput, "user_id"},
		{"unknown user", ownerA, good("9d7c5b3a-1e2f-4a6b-8c0d-2e4f6a8b0c1d", "ins_otter"), problem.NotFound, "user_id"},
		{"another account's user", ownerA, good(other.ID, "ins_otter"), problem.NotFound, "user_id"},
		{"live mode", sandboxlink.Owner{AccountID: acctA, Mode: "live"}, good(u.ID, "ins_otter"), problem.TestModeOnly, ""},
		{"no mode", sandboxlink.Owner{AccountID: acctA}, good(u.ID, "ins_otter"), problem.TestModeOnly, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := e.svc.StartLink(ctx, tt.owner, tt.in)
			wantProblem(t, err, tt.typ, tt.field)
		})
	}
	if ls, err := e.svc.Links(ctx, ownerA, ""); err != nil || len(ls) != 0 {
		t.Fatalf("links after refusals: %d, %v", len(ls), err)
	}
}

// TestTenancy: another account's users and links are not found, and lists
// hold only the caller's.
func TestTenancy(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, sandboxlink.Limits{})
	u := e.user(t, ownerA)
	v, err := e.svc.StartLink(ctx, ownerA, good(u.ID, "ins_quokka"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.svc.GetLink(ctx, ownerB, v.ID)
	wantProblem(t, err, problem.NotFound, "")
	_, err = e.svc.AnswerMFA(ctx, ownerB, v.ID, sandboxlink.TestMFACode)
	wantProblem(t, err, problem.NotFound, "")
	_, err = e.svc.Links(ctx, ownerB, u.ID)
	wantProblem(t, err, problem.NotFound, "user_id")
	if ls, err := e.svc.Links(ctx, ownerB, ""); err != nil || len(ls) != 0 {
		t.Fatalf("B's links: %d, %v", len(ls), err)
	}
	if us, err := e.svc.Users(ctx, ownerB); err != nil || len(us) != 0 {
		t.Fatalf("B's users: %d, %v", len(us), err)
	}
	if us, err := e.svc.Users(ctx, ownerA); err != nil || len(us) != 1 || us[0].ID != u.ID || us[0].Mode != "test" {
		t.Fatalf("A's users: %+v, %v", us, err)
	}
	// The link is still waiting: B's attempt changed nothing.
	if got, _ := e.svc.GetLink(ctx, ownerA, v.ID); got.Status != sandboxlink.StatusMFARequired || got.MFAAttempts != 0 {
		t.Fatalf("link = %+v", got)
	}
}

// TestLimits: an account's users and a user's links are bounded; a refused
// start does not count.
func TestLimits(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, sandboxlink.Limits{UsersPerAccount: 2, LinksPerUser: 2})
	u := e.user(t, ownerA)
	e.user(t, ownerA)
	_, err := e.svc.CreateUser(ctx, ownerA, "third")
	wantProblem(t, err, problem.SandboxLimitReached, "")
	e.user(t, ownerB) // another account's count is its own
	for range 3 {
		_, err := e.svc.StartLink(ctx, ownerA, good(u.ID, "ins_wombat"))
		wantProblem(t, err, problem.InstitutionDown, "")
	}
	for range 2 {
		if _, err := e.svc.StartLink(ctx, ownerA, good(u.ID, "ins_quokka")); err != nil {
			t.Fatal(err)
		}
	}
	_, err = e.svc.StartLink(ctx, ownerA, good(u.ID, "ins_otter"))
	wantProblem(t, err, problem.SandboxLimitReached, "")
}

// TestUserNames: a name is optional, bounded and printable.
func TestUserNames(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, sandboxlink.Limits{})
	u, err := e.svc.CreateUser(ctx, ownerA, "  ")
	if err != nil || u.Name != "Sandbox user" || u.Mode != "test" || u.OwnerAccountID != acctA {
		t.Fatalf("user = %+v, %v", u, err)
	}
	_, err = e.svc.CreateUser(ctx, ownerA, "a\x00b")
	wantProblem(t, err, problem.InvalidInput, "name")
	_, err = e.svc.CreateUser(ctx, ownerA, string(make([]byte, 201)))
	wantProblem(t, err, problem.InvalidInput, "name")
	_, err = e.svc.CreateUser(ctx, sandboxlink.Owner{AccountID: acctA, Mode: "live"}, "x")
	wantProblem(t, err, problem.TestModeOnly, "")
}

// TestLinkedConnections: the aggregator's list holds linked connections
// only, with their checking and card accounts.
func TestLinkedConnections(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, sandboxlink.Limits{})
	u := e.user(t, ownerA)
	linked, err := e.svc.StartLink(ctx, ownerA, good(u.ID, "ins_otter"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.StartLink(ctx, ownerA, good(u.ID, "ins_quokka")); err != nil { // still waiting
		t.Fatal(err)
	}
	cs, err := e.svc.LinkedConnections(ctx)
	if err != nil || len(cs) != 1 || cs[0].ConnectionID != linked.ConnectionID || len(cs[0].Accounts) != 2 {
		t.Fatalf("linked = %+v, %v", cs, err)
	}
	for _, a := range cs[0].Accounts {
		if a.Subtype == "savings" {
			t.Fatalf("savings account %s gets card activity", a.ID)
		}
	}
}
