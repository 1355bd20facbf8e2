package accounting_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/services/jobs"
	"github.com/ledgerlane/platform/services/jobs/accounting"
	"github.com/ledgerlane/platform/services/jobs/memory"
)

// fakePlatform records what the service asks of a platform.
type fakePlatform struct {
	mu          sync.Mutex
	now         func() time.Time
	serial      int
	exchangeErr error
	refreshErr  error
	revokeErr   error
	// pushErrAt fails the push of the n-th call (1-based) with pushErr.
	pushErrAt int
	pushErr   error
	calls     int
	booked    map[string]string // idempotency key → platform id
	refreshes int
	revoked   []string
	verifier  string
	access    string // the live access token
}

func newPlatform(now func() time.Time) *fakePlatform {
	return &fakePlatform{now: now, booked: map[string]string{}}
}

func (f *fakePlatform) AuthCodeURL(state, verifier string) string {
	return "https://platform.test/authorize?" + url.Values{"state": {state}, "challenge_of": {verifier}}.Encode()
}

func (f *fakePlatform) token() accounting.Token {
	f.serial++
	f.access = fmt.Sprintf("access-secret-%d", f.serial)
	return accounting.Token{AccessToken: f.access, RefreshToken: fmt.Sprintf("refresh-secret-%d", f.serial), Expiry: f.now().Add(time.Hour)}
}

func (f *fakePlatform) Exchange(_ context.Context, cb accounting.Callback) (accounting.Grant, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.verifier = cb.Verifier
	if f.exchangeErr != nil {
		return accounting.Grant{}, f.exchangeErr
	}
	return accounting.Grant{Token: f.token(), TenantID: "org-1"}, nil
}

func (f *fakePlatform) Refresh(context.Context, string) (accounting.Token, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.refreshes++
	if f.refreshErr != nil {
		return accounting.Token{}, f.refreshErr
	}
	return f.token(), nil
}

func (f *fakePlatform) Revoke(_ context.Context, t accounting.Token) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.revokeErr != nil {
		return f.revokeErr
	}
	f.revoked = append(f.revoked, t.RefreshToken)
	return nil
}

func (f *fakePlatform) Push(_ context.Context, access, tenant string, tx accounting.BankTransaction) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	if f.pushErrAt == f.calls {
		return "", f.pushErr
	}
	if access != f.access || tenant != "org-1" {
		return "", &accounting.PlatformError{Kind: accounting.KindUnauthorized, Status: 401}
	}
	if id, ok := f.booked[tx.Key]; ok {
		return id, nil
	}
	id := fmt.Sprintf("bt-%d", len(f.booked)+1)
	f.booked[tx.Key] = id
	return id, nil
}

func (f *fakePlatform) Accounts() (bool, string, string) { return false, "1000", "4000" }

// fakeConverter answers a fixed CSV.
type fakeConverter struct{ csv string }

func (c fakeConverter) StatementCSV(context.Context, accounting.Caller, string, string) (string, error) {
	return c.csv, nil
}

const header = "account,currency,booking_date,value_date,amount,direction,reference,bank_reference,end_to_end_id,counterparty,counterparty_account,description,additional_info,transaction_type,status,statement_id\r\n"

func statementCSV(rows ...string) string { return header + strings.Join(rows, "\r\n") + "\r\n" }

var threeEntries = statementCSV(
	"NL69INGB0123456789,EUR,2026-03-01,2026-03-01,-12.50,debit,REF1,B1,,Coffee Co,,coffee,,NMSC,booked,S1",
	"NL69INGB0123456789,EUR,2026-03-02,2026-03-02,1000.00,credit,NONREF,B2,,Employer,,salary,,NTRF,booked,S1",
	"NL69INGB0123456789,EUR,2026-03-02,2026-03-02,-12.50,debit,REF1,B1,,Coffee Co,,coffee,,NMSC,booked,S1",
)

// countingMetrics records what the service observed.
type countingMetrics struct {
	mu      sync.Mutex
	calls   map[string]int // platform/operation/outcome
	created int
	present int
}

func (m *countingMetrics) PlatformCall(platform, operation, outcome string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls[platform+"/"+operation+"/"+outcome]++
}

func (m *countingMetrics) EntriesPushed(_ string, created, present int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.created += created
	m.present += present
}

type env struct {
	metrics *countingMetrics
	svc     *accounting.Service
	store   *memory.Accounting
	p       *fakePlatform
	now     time.Time
	mu      sync.Mutex
}

func (e *env) clock() time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.now
}

func (e *env) advance(d time.Duration) {
	e.mu.Lock()
	e.now = e.now.Add(d)
	e.mu.Unlock()
}

func newEnv(t *testing.T, csv string) *env {
	t.Helper()
	e := &env{store: memory.NewAccounting(), now: time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)}
	e.p = newPlatform(e.clock)
	e.metrics = &countingMetrics{calls: map[string]int{}}
	e.svc = accounting.NewService(accounting.Config{Metrics: e.metrics,
		Store: e.store, Keys: jobs.NewRandomKeyring(), Platforms: map[string]accounting.Platform{accounting.Sandbox: e.p},
		Converter: fakeConverter{csv}, Clock: e.clock,
	})
	return e
}

var alice = accounting.Caller{AccountID: "acct-alice", Mode: "live"}
var bob = accounting.Caller{AccountID: "acct-bob", Mode: "live"}

func wantProblem(t *testing.T, err error, typ problem.Type, field string) {
	t.Helper()
	var p *problem.Problem
	if !errors.As(err, &p) || p.Type != typ || p.Field != field {
		t.Fatalf("want %s problem (field %q), got %v", typ, field, err)
	}
}

func stateOf(t *testing.T, authURL string) string {
	t.Helper()
	u, err := url.Parse(authURL)
	if err != nil {
		t.Fatal(err)
	}
	return u.Query().Get("state")
}

// connect creates and completes a connection for c.
func (e *env) connect(t *testing.T, c accounting.Caller) accounting.Connection {
	t.Helper()
	cr, err := e.svc.Create(context.Background(), c, accounting.CreateRequest{Platform: "sandbox"})
	if err != nil {
		t.Fatal(err)
	}
	conn, err := e.svc.Complete(context.Background(), accounting.CallbackRequest{Code: "code", State: stateOf(t, cr.AuthorizationURL)})
	if err != nil {
		t.Fatal(err)
	}
	return conn
}

func TestCreateValidation(t *testing.T) {
	e := newEnv(t, threeEntries)
	for _, tc := range []struct {
		name  string
		req   accounting.CreateRequest
		field string
	}{
		{"no platform", accounting.CreateRequest{}, "platform"},
		{"unknown platform", accounting.CreateRequest{Platform: "sage"}, "platform"},
		{"unconfigured platform", accounting.CreateRequest{Platform: "xero"}, "platform"},
		{"long name", accounting.CreateRequest{Platform: "sandbox", DisplayName: strings.Repeat("x", 101)}, "display_name"},
		{"two lines", accounting.CreateRequest{Platform: "sandbox", DisplayName: "a\nb"}, "display_name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.svc.Create(context.Background(), alice, tc.req)
			wantProblem(t, err, problem.InvalidInput, tc.field)
		})
	}
	cr, err := e.svc.Create(context.Background(), alice, accounting.CreateRequest{Platform: " SANDBOX "})
	if err != nil || cr.Connection.Status != accounting.StatusPending || cr.Connection.DisplayName != "Sandbox platform" {
		t.Fatalf("create: %+v %v", cr.Connection, err)
	}
	if _, err := e.svc.Create(context.Background(), accounting.Caller{}, accounting.CreateRequest{Platform: "sandbox"}); err == nil {
		t.Fatal("a caller without account was served")
	}
	noKeys := accounting.NewService(accounting.Config{Store: e.store, Platforms: map[string]accounting.Platform{accounting.Sandbox: e.p}})
	_, err = noKeys.Create(context.Background(), alice, accounting.CreateRequest{Platform: "sandbox"})
	wantProblem(t, err, problem.Unavailable, "")
}

func TestAuthorizationFlow(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, threeEntries)
	cr, err := e.svc.Create(ctx, alice, accounting.CreateRequest{Platform: "sandbox", DisplayName: "Books"})
	if err != nil {
		t.Fatal(err)
	}
	state := stateOf(t, cr.AuthorizationURL)
	stored, _ := e.store.GetConnection(ctx, alice.AccountID, cr.Connection.ID)
	if stored.StateHash == "" || strings.Contains(stored.StateHash, state) || len(stored.Verifier) == 0 {
		t.Fatalf("the state must be kept only as a hash, the verifier sealed: %+v", stored)
	}
	conn, err := e.svc.Complete(ctx, accounting.CallbackRequest{Code: "c", State: state})
	if err != nil || conn.Status != accounting.StatusActive || conn.PlatformTenantID != "org-1" {
		t.Fatalf("complete: %+v %v", conn, err)
	}
	// The platform got the verifier whose challenge went out.
	if u, _ := url.Parse(cr.AuthorizationURL); u.Query().Get("challenge_of") != e.p.verifier || e.p.verifier == "" {
		t.Fatal("the verifier given to the exchange is not the one of the authorization URL")
	}
	stored, _ = e.store.GetConnection(ctx, alice.AccountID, conn.ID)
	if strings.Contains(string(stored.Tokens), "secret") || len(stored.Tokens) == 0 || stored.Verifier != nil {
		t.Fatal("tokens must be stored sealed and the verifier dropped")
	}
	// Single use.
	_, err = e.svc.Complete(ctx, accounting.CallbackRequest{Code: "c", State: state})
	wantProblem(t, err, problem.AuthorizationFailed, "state")
	_, err = e.svc.Complete(ctx, accounting.CallbackRequest{Code: "c"})
	wantProblem(t, err, problem.AuthorizationFailed, "state")
}

func TestAuthorizationFailures(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		prepare func(e *env)
		req     func(state string) accounting.CallbackRequest
		want    problem.Type
		reason  string
	}{
		{"expired", func(e *env) { e.advance(accounting.DefaultStateTTL) },
			func(s string) accounting.CallbackRequest { return accounting.CallbackRequest{Code: "c", State: s} },
			problem.AuthorizationFailed, "not completed in time"},
		{"declined", func(*env) {},
			func(s string) accounting.CallbackRequest {
				return accounting.CallbackRequest{State: s, Error: "access_denied"}
			},
			problem.AuthorizationFailed, "declined at the platform: access_denied"},
		{"no code", func(*env) {},
			func(s string) accounting.CallbackRequest { return accounting.CallbackRequest{State: s} },
			problem.AuthorizationFailed, "no authorization code"},
		{"code refused", func(e *env) {
			e.p.exchangeErr = &accounting.PlatformError{Kind: accounting.KindInvalidGrant, Status: 400, Message: "invalid_grant"}
		}, func(s string) accounting.CallbackRequest { return accounting.CallbackRequest{Code: "c", State: s} },
			problem.AuthorizationFailed, "invalid_grant"},
		{"platform down", func(e *env) { e.p.exchangeErr = errors.New("dial tcp: refused") },
			func(s string) accounting.CallbackRequest { return accounting.CallbackRequest{Code: "c", State: s} },
			problem.PlatformUnavailable, "did not answer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, threeEntries)
			cr, err := e.svc.Create(ctx, alice, accounting.CreateRequest{Platform: "sandbox"})
			if err != nil {
				t.Fatal(err)
			}
			tc.prepare(e)
			_, err = e.svc.Complete(ctx, tc.req(stateOf(t, cr.AuthorizationURL)))
			var p *problem.Problem
			if !errors.As(err, &p) || p.Type != tc.want {
				t.Fatalf("want %s, got %v", tc.want, err)
			}
			page, _ := e.svc.List(ctx, alice, "", nil)
			if c := page.Connections[0]; c.Status != accounting.StatusError || !strings.Contains(c.StatusReason, tc.reason) {
				t.Fatalf("connection after failure: %s %q", c.Status, c.StatusReason)
			}
		})
	}
}

// A pending connection whose authorization window closed is swept into
// error with the reason the late callback would get, without waiting for a
// callback that may never come; a window still open and a completed
// connection are left alone, and the swept state no longer completes.
func TestExpirePending(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, threeEntries)
	stale, err := e.svc.Create(ctx, alice, accounting.CreateRequest{Platform: "sandbox"})
	if err != nil {
		t.Fatal(err)
	}
	done := e.connect(t, alice)
	e.advance(accounting.DefaultStateTTL - time.Second)
	if n, err := e.svc.ExpirePending(ctx, 10); n != 0 || err != nil {
		t.Fatalf("swept inside the window: %d %v", n, err)
	}
	fresh, err := e.svc.Create(ctx, alice, accounting.CreateRequest{Platform: "sandbox"})
	if err != nil {
		t.Fatal(err)
	}
	e.advance(time.Second)
	if n, err := e.svc.ExpirePending(ctx, 10); n != 1 || err != nil {
		t.Fatalf("swept %d, want 1: %v", n, err)
	}
	page, err := e.svc.List(ctx, alice, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	status := map[string]accounting.Connection{}
	for _, c := range page.Connections {
		status[c.ID] = c
	}
	if c := status[stale.Connection.ID]; c.Status != accounting.StatusError || !strings.Contains(c.StatusReason, "not completed in time") {
		t.Fatalf("stale connection: %s %q", c.Status, c.StatusReason)
	}
	if status[fresh.Connection.ID].Status != accounting.StatusPending || status[done.ID].Status != accounting.StatusActive {
		t.Fatalf("swept what it must not: %+v", status)
	}
	_, err = e.svc.Complete(ctx, accounting.CallbackRequest{Code: "c", State: stateOf(t, stale.AuthorizationURL)})
	wantProblem(t, err, problem.AuthorizationFailed, "state")
}

func TestTenantIsolation(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, threeEntries)
	conn := e.connect(t, alice)
	if err := e.svc.Delete(ctx, bob, conn.ID); err == nil {
		t.Fatal("bob deleted alice's connection")
	} else {
		wantProblem(t, err, problem.NotFound, "")
	}
	_, err := e.svc.Push(ctx, bob, accounting.PushRequest{ConnectionID: conn.ID, Message: "x"})
	wantProblem(t, err, problem.NotFound, "")
	page, err := e.svc.List(ctx, bob, "", nil)
	if err != nil || len(page.Connections) != 0 {
		t.Fatalf("bob lists %d connections (%v)", len(page.Connections), err)
	}
	for _, id := range []string{"", "nope", "00000000-0000-4000-8000-000000000000"} {
		wantProblem(t, e.svc.Delete(ctx, alice, id), problem.NotFound, "")
	}
}

func TestPushBooksOnce(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, threeEntries)
	conn := e.connect(t, alice)
	req := accounting.PushRequest{ConnectionID: conn.ID, Message: "statement text"}
	res, err := e.svc.Push(ctx, alice, req)
	if err != nil || res.Created != 3 || res.AlreadyPresent != 0 {
		t.Fatalf("first push: %+v %v", res, err)
	}
	// Entries 1 and 3 differ by date only: two bookings.
	if res.Entries[0].Entry.ID == res.Entries[2].Entry.ID {
		t.Fatal("entries on different dates share an id")
	}
	res, err = e.svc.Push(ctx, alice, req)
	if err != nil || res.Created != 0 || res.AlreadyPresent != 3 || len(e.p.booked) != 3 {
		t.Fatalf("second push: %+v %v (booked %d)", res, err, len(e.p.booked))
	}
	if e.metrics.created != 3 || e.metrics.present != 3 || e.metrics.calls["sandbox/push/ok"] != 3 || e.metrics.calls["sandbox/exchange/ok"] != 1 {
		t.Fatalf("metrics: %+v", e.metrics)
	}

	// A platform failing part-way: the retry books the rest, nothing twice.
	e2 := newEnv(t, threeEntries)
	conn2 := e2.connect(t, alice)
	e2.p.pushErrAt, e2.p.pushErr = 2, &accounting.PlatformError{Kind: accounting.KindUnavailable, Status: 503}
	_, err = e2.svc.Push(ctx, alice, accounting.PushRequest{ConnectionID: conn2.ID, Message: "x"})
	wantProblem(t, err, problem.PlatformUnavailable, "")
	res, err = e2.svc.Push(ctx, alice, accounting.PushRequest{ConnectionID: conn2.ID, Message: "x"})
	if err != nil || res.Created != 2 || res.AlreadyPresent != 1 || len(e2.p.booked) != 3 {
		t.Fatalf("retry: %+v %v (booked %d)", res, err, len(e2.p.booked))
	}

	// A refusal names the platform's reason.
	e3 := newEnv(t, threeEntries)
	conn3 := e3.connect(t, alice)
	e3.p.pushErrAt, e3.p.pushErr = 1, &accounting.PlatformError{Kind: accounting.KindRejected, Status: 400, Message: "Account code '4000' is not a valid code"}
	_, err = e3.svc.Push(ctx, alice, accounting.PushRequest{ConnectionID: conn3.ID, Message: "x"})
	var p *problem.Problem
	if !errors.As(err, &p) || p.Type != problem.PlatformRejected || !strings.Contains(p.Detail, "not a valid code") {
		t.Fatalf("rejected push: %v", err)
	}
}

func TestPushValidation(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, threeEntries)
	conn := e.connect(t, alice)
	_, err := e.svc.Push(ctx, alice, accounting.PushRequest{ConnectionID: conn.ID, Message: "  "})
	wantProblem(t, err, problem.InvalidInput, "message")
	_, err = e.svc.Push(ctx, alice, accounting.PushRequest{ConnectionID: conn.ID, Message: "x", BankAccount: strings.Repeat("9", 101)})
	wantProblem(t, err, problem.InvalidInput, "bank_account")

	pending, _ := e.svc.Create(ctx, alice, accounting.CreateRequest{Platform: "sandbox"})
	_, err = e.svc.Push(ctx, alice, accounting.PushRequest{ConnectionID: pending.Connection.ID, Message: "x"})
	wantProblem(t, err, problem.ConnectionInactive, "")

	empty := newEnv(t, header)
	c2 := empty.connect(t, alice)
	_, err = empty.svc.Push(ctx, alice, accounting.PushRequest{ConnectionID: c2.ID, Message: "x"})
	wantProblem(t, err, problem.Unprocessable, "message")
}

func TestRefresh(t *testing.T) {
	ctx := context.Background()
	t.Run("before expiry", func(t *testing.T) {
		e := newEnv(t, threeEntries)
		conn := e.connect(t, alice)
		if n, err := e.svc.RefreshDue(ctx, 10); err != nil || n != 0 {
			t.Fatalf("nothing is due yet: %d %v", n, err)
		}
		e.advance(time.Hour - accounting.DefaultRefreshBefore + time.Second)
		if n, err := e.svc.RefreshDue(ctx, 10); err != nil || n != 1 || e.p.refreshes != 1 {
			t.Fatalf("refresh: %d %v (%d)", n, err, e.p.refreshes)
		}
		// The new access token is the one pushes use.
		if res, err := e.svc.Push(ctx, alice, accounting.PushRequest{ConnectionID: conn.ID, Message: "x"}); err != nil || res.Created != 3 {
			t.Fatalf("push after refresh: %+v %v", res, err)
		}
	})
	t.Run("refused", func(t *testing.T) {
		e := newEnv(t, threeEntries)
		conn := e.connect(t, alice)
		e.p.refreshErr = &accounting.PlatformError{Kind: accounting.KindInvalidGrant, Status: 400, Message: "invalid_grant"}
		e.advance(time.Hour)
		_, _ = e.svc.RefreshDue(ctx, 10)
		got, _ := e.store.GetConnection(ctx, alice.AccountID, conn.ID)
		if got.Status != accounting.StatusError || !strings.Contains(got.StatusReason, "refused the token refresh") {
			t.Fatalf("after a refused refresh: %s %q", got.Status, got.StatusReason)
		}
		e.advance(time.Hour)
		_, _ = e.svc.RefreshDue(ctx, 10)
		if e.p.refreshes != 1 {
			t.Fatalf("a refused refresh was retried: %d", e.p.refreshes)
		}
		_, err := e.svc.Push(ctx, alice, accounting.PushRequest{ConnectionID: conn.ID, Message: "x"})
		wantProblem(t, err, problem.ConnectionInactive, "")
	})
	t.Run("transient, bounded", func(t *testing.T) {
		e := newEnv(t, threeEntries)
		conn := e.connect(t, alice)
		e.p.refreshErr = &accounting.PlatformError{Kind: accounting.KindUnavailable, Status: 503}
		e.advance(time.Hour)
		for range 100 {
			_, _ = e.svc.RefreshDue(ctx, 10)
			e.advance(time.Minute)
		}
		got, _ := e.store.GetConnection(ctx, alice.AccountID, conn.ID)
		if got.Status != accounting.StatusError || e.p.refreshes != accounting.MaxRefreshFailures {
			t.Fatalf("after %d transient failures: %s %q", e.p.refreshes, got.Status, got.StatusReason)
		}
	})
}

func TestDeleteRevokes(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, threeEntries)
	conn := e.connect(t, alice)
	e.p.revokeErr = &accounting.PlatformError{Kind: accounting.KindUnavailable}
	wantProblem(t, e.svc.Delete(ctx, alice, conn.ID), problem.PlatformUnavailable, "")
	if _, err := e.store.GetConnection(ctx, alice.AccountID, conn.ID); err != nil {
		t.Fatal("a connection whose revocation failed was deleted")
	}
	e.p.revokeErr = nil
	if err := e.svc.Delete(ctx, alice, conn.ID); err != nil {
		t.Fatal(err)
	}
	if len(e.p.revoked) != 1 || e.p.revoked[0] != "refresh-secret-1" {
		t.Fatalf("revoked %v", e.p.revoked)
	}
	// A platform that refuses the revocation has no grant left: deleted.
	c2 := e.connect(t, alice)
	e.p.revokeErr = &accounting.PlatformError{Kind: accounting.KindRejected, Status: 400}
	if err := e.svc.Delete(ctx, alice, c2.ID); err != nil {
		t.Fatal(err)
	}
	// A pending connection has nothing to revoke.
	cr, _ := e.svc.Create(ctx, alice, accounting.CreateRequest{Platform: "sandbox"})
	if err := e.svc.Delete(ctx, alice, cr.Connection.ID); err != nil {
		t.Fatal(err)
	}
}

func TestListPages(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, threeEntries)
	var ids []string
	for range 5 {
		cr, err := e.svc.Create(ctx, alice, accounting.CreateRequest{Platform: "sandbox"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append([]string{cr.Connection.ID}, ids...)
		e.advance(time.Second)
	}
	size := int32(2)
	var got []string
	cur := ""
	for {
		page, err := e.svc.List(ctx, alice, cur, &size)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range page.Connections {
			got = append(got, c.ID)
		}
		if page.NextCursor == "" {
			break
		}
		cur = page.NextCursor
	}
	if strings.Join(got, ",") != strings.Join(ids, ",") {
		t.Fatalf("pages %v, want %v", got, ids)
	}
	page, _ := e.svc.List(ctx, alice, "", &size)
	_, err := e.svc.List(ctx, bob, page.NextCursor, &size)
	wantProblem(t, err, problem.InvalidInput, "cursor")
	for _, bad := range []int32{0, 201, -1} {
		_, err := e.svc.List(ctx, alice, "", &bad)
		wantProblem(t, err, problem.InvalidInput, "page_size")
	}
}
