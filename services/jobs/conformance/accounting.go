package conformance

import (
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/ledgerlane/platform/services/jobs/accounting"
)

// RunAccounting runs the accounting.Store suite; newStore returns an empty
// store for each case.
func RunAccounting(t *testing.T, newStore func(t *testing.T) accounting.Store) {
	for _, c := range []struct {
		name string
		f    func(*testing.T, accounting.Store)
	}{
		{"CreateGetTenant", testConnCreateGet},
		{"ListPages", testConnList},
		{"UpdateAndDelete", testConnUpdateDelete},
		{"ConsumeStateOnce", testConnConsumeState},
		{"RefreshDueAndClaim", testConnRefresh},
		{"ExpirePending", testConnExpirePending},
		{"PushedEntries", testConnPushed},
	} {
		t.Run(c.name, func(t *testing.T) { c.f(t, newStore(t)) })
	}
}

func newConn(account string, at time.Time) accounting.Connection {
	return accounting.Connection{
		ID: uuid.NewString(), AccountID: account, Mode: "live", Platform: accounting.Sandbox, DisplayName: "Books",
		Status: accounting.StatusPending, CreatedAt: at, UpdatedAt: at,
		StateHash: uuid.NewString(), StateExpiresAt: at.Add(15 * time.Minute), Verifier: []byte{1, 2, 3},
	}
}

func mustConn(t *testing.T, s accounting.Store, account string, at time.Time) accounting.Connection {
	t.Helper()
	c := newConn(account, at)
	if err := s.CreateConnection(ctx, c); err != nil {
		t.Fatal(err)
	}
	return c
}

func sameConn(t *testing.T, got, want accounting.Connection) {
	t.Helper()
	eq := got.ID == want.ID && got.AccountID == want.AccountID && got.Platform == want.Platform &&
		got.DisplayName == want.DisplayName && got.Status == want.Status && got.StatusReason == want.StatusReason &&
		got.CreatedAt.Equal(want.CreatedAt) && got.UpdatedAt.Equal(want.UpdatedAt) && got.ConnectedAt.Equal(want.ConnectedAt) &&
		got.StateHash == want.StateHash && got.StateExpiresAt.Equal(want.StateExpiresAt) &&
		string(got.Verifier) == string(want.Verifier) && string(got.Tokens) == string(want.Tokens) &&
		got.TokenExpiresAt.Equal(want.TokenExpiresAt) && got.PlatformTenantID == want.PlatformTenantID &&
		got.RefreshFailures == want.RefreshFailures && got.RefreshAfter.Equal(want.RefreshAfter)
	if !eq {
		t.Fatalf("connection differs:\n got %+v\nwant %+v", got, want)
	}
}

func testConnCreateGet(t *testing.T, s accounting.Store) {
	c := mustConn(t, s, "acct-a", t0)
	got, err := s.GetConnection(ctx, "acct-a", c.ID)
	if err != nil {
		t.Fatal(err)
	}
	sameConn(t, got, c)
	for _, tc := range []struct{ account, id string }{
		{"acct-b", c.ID},             // another tenant's
		{"acct-a", uuid.NewString()}, // unknown
		{"acct-a", "not-a-uuid"},     // malformed
	} {
		if _, err := s.GetConnection(ctx, tc.account, tc.id); !errors.Is(err, accounting.ErrNotFound) {
			t.Fatalf("GetConnection(%s, %s) = %v, want ErrNotFound", tc.account, tc.id, err)
		}
	}
	if err := s.DeleteConnection(ctx, "acct-b", c.ID); !errors.Is(err, accounting.ErrNotFound) {
		t.Fatalf("other tenant's delete: %v", err)
	}
}

func testConnList(t *testing.T, s accounting.Store) {
	var want []string // newest first
	for i := range 5 {
		c := mustConn(t, s, "acct-a", t0.Add(time.Duration(i)*time.Second))
		want = append([]string{c.ID}, want...)
	}
	// Two at the same instant: ordered by id, descending.
	same1, same2 := newConn("acct-a", t0.Add(time.Hour)), newConn("acct-a", t0.Add(time.Hour))
	for _, c := range []accounting.Connection{same1, same2} {
		if err := s.CreateConnection(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	hi, lo := same1.ID, same2.ID
	if hi < lo {
		hi, lo = lo, hi
	}
	want = append([]string{hi, lo}, want...)
	mustConn(t, s, "acct-b", t0)
	// A test-mode connection of the same tenant is not in its live list.
	testConn := newConn("acct-a", t0.Add(30*time.Minute))
	testConn.Mode = "test"
	if err := s.CreateConnection(ctx, testConn); err != nil {
		t.Fatal(err)
	}
	if tests, err := s.ListConnections(ctx, "acct-a", "test", nil, 10); err != nil || len(tests) != 1 || tests[0].ID != testConn.ID || tests[0].Mode != "test" {
		t.Fatalf("the test-mode list: %+v %v", tests, err)
	}

	var got []string
	var after *accounting.Position
	for range 10 {
		page, err := s.ListConnections(ctx, "acct-a", "live", after, 3)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range page {
			got = append(got, c.ID)
		}
		if len(page) < 3 {
			break
		}
		last := page[len(page)-1]
		after = &accounting.Position{CreatedAt: last.CreatedAt, ID: last.ID}
	}
	if len(got) != len(want) {
		t.Fatalf("listed %d connections, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("order differs at %d: got %v want %v", i, got, want)
		}
	}
}

func testConnUpdateDelete(t *testing.T, s accounting.Store) {
	c := mustConn(t, s, "acct-a", t0)
	c.Status, c.StatusReason, c.StateHash, c.Verifier = accounting.StatusActive, "", "", nil
	c.Tokens, c.TokenExpiresAt, c.PlatformTenantID = []byte{9, 9, 9}, t0.Add(time.Hour), "tenant-1"
	c.ConnectedAt, c.UpdatedAt, c.RefreshFailures, c.RefreshAfter = t0.Add(time.Minute), t0.Add(time.Minute), 2, t0.Add(2*time.Minute)
	if err := s.UpdateConnection(ctx, c); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetConnection(ctx, "acct-a", c.ID)
	if err != nil {
		t.Fatal(err)
	}
	sameConn(t, got, c)
	if err := s.RecordPushed(ctx, c.ID, "e1", "p1", t0); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteConnection(ctx, "acct-a", c.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetConnection(ctx, "acct-a", c.ID); !errors.Is(err, accounting.ErrNotFound) {
		t.Fatalf("after delete: %v", err)
	}
	if err := s.UpdateConnection(ctx, c); !errors.Is(err, accounting.ErrNotFound) {
		t.Fatalf("update after delete: %v", err)
	}
	if got, err := s.PushedEntries(ctx, c.ID, []string{"e1"}); err != nil || len(got) != 0 {
		t.Fatalf("push records survive the connection: %v %v", got, err)
	}
}

func testConnConsumeState(t *testing.T, s accounting.Store) {
	c := mustConn(t, s, "acct-a", t0)
	mustConn(t, s, "acct-a", t0)
	got, err := s.ConsumeState(ctx, c.StateHash)
	if err != nil || got.ID != c.ID {
		t.Fatalf("first consume: %v %v", got.ID, err)
	}
	if _, err := s.ConsumeState(ctx, c.StateHash); !errors.Is(err, accounting.ErrNotFound) {
		t.Fatalf("second consume: %v, want ErrNotFound", err)
	}
	if _, err := s.ConsumeState(ctx, ""); !errors.Is(err, accounting.ErrNotFound) {
		t.Fatalf("empty state: %v", err)
	}
	stored, _ := s.GetConnection(ctx, "acct-a", c.ID)
	if stored.StateHash != "" {
		t.Fatal("the state hash is still stored after use")
	}
}

func testConnRefresh(t *testing.T, s accounting.Store) {
	mk := func(status string, exp time.Time) accounting.Connection {
		c := mustConn(t, s, "acct-a", t0)
		c.Status, c.StateHash, c.TokenExpiresAt, c.Tokens = status, "", exp, []byte{1}
		if err := s.UpdateConnection(ctx, c); err != nil {
			t.Fatal(err)
		}
		return c
	}
	now := t0.Add(time.Hour)
	soon := mk(accounting.StatusActive, now.Add(2*time.Minute))
	sooner := mk(accounting.StatusActive, now.Add(time.Minute))
	mk(accounting.StatusActive, now.Add(time.Hour))  // not due
	mk(accounting.StatusError, now.Add(time.Minute)) // not active
	due, err := s.DueRefresh(ctx, now.Add(5*time.Minute), now, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(due) != 2 || due[0].ID != sooner.ID || due[1].ID != soon.ID {
		t.Fatalf("due: %+v", due)
	}
	ok, err := s.ClaimRefresh(ctx, sooner.ID, now, now.Add(30*time.Second))
	if err != nil || !ok {
		t.Fatalf("claim: %v %v", ok, err)
	}
	if ok, _ := s.ClaimRefresh(ctx, sooner.ID, now, now.Add(30*time.Second)); ok {
		t.Fatal("claimed twice within the lease")
	}
	due, _ = s.DueRefresh(ctx, now.Add(5*time.Minute), now, 10)
	if len(due) != 1 || due[0].ID != soon.ID {
		t.Fatalf("due while claimed: %+v", due)
	}
	if ok, _ := s.ClaimRefresh(ctx, sooner.ID, now.Add(time.Minute), now.Add(2*time.Minute)); !ok {
		t.Fatal("not claimable after the lease")
	}
	if ok, err := s.ClaimRefresh(ctx, uuid.NewString(), now, now.Add(time.Minute)); ok || err != nil {
		t.Fatalf("claiming a missing connection: %v %v", ok, err)
	}
}

// testConnExpirePending: pending connections whose window closed become
// error with the reason and lose their state and verifier, oldest window
// first, up to the limit; an open window, a consumed state (a callback
// completing) and other statuses are left alone.
func testConnExpirePending(t *testing.T, s accounting.Store) {
	older := mustConn(t, s, "acct-a", t0)                // window closes at t0+15m
	old := mustConn(t, s, "acct-b", t0.Add(time.Minute)) // t0+16m
	open := mustConn(t, s, "acct-a", t0.Add(time.Hour))  // still open at the sweep
	taken := mustConn(t, s, "acct-a", t0)                // its callback consumed the state
	if _, err := s.ConsumeState(ctx, taken.StateHash); err != nil {
		t.Fatal(err)
	}
	active := mustConn(t, s, "acct-a", t0)
	active.Status, active.StateHash = accounting.StatusActive, ""
	if err := s.UpdateConnection(ctx, active); err != nil {
		t.Fatal(err)
	}
	now := t0.Add(30 * time.Minute)
	got, err := s.ExpirePending(ctx, now, "not completed in time", 1)
	if err != nil || len(got) != 1 || got[0].ID != older.ID {
		t.Fatalf("first sweep: %+v %v", got, err)
	}
	got, err = s.ExpirePending(ctx, now, "not completed in time", 10)
	if err != nil || len(got) != 1 || got[0].ID != old.ID {
		t.Fatalf("second sweep: %+v %v", got, err)
	}
	for _, id := range []struct{ account, id string }{{"acct-a", older.ID}, {"acct-b", old.ID}} {
		c, err := s.GetConnection(ctx, id.account, id.id)
		if err != nil {
			t.Fatal(err)
		}
		if c.Status != accounting.StatusError || c.StatusReason != "not completed in time" || c.StateHash != "" || c.Verifier != nil || !c.UpdatedAt.Equal(now) {
			t.Fatalf("swept connection: %+v", c)
		}
	}
	if _, err := s.ConsumeState(ctx, older.StateHash); !errors.Is(err, accounting.ErrNotFound) {
		t.Fatalf("a swept state is still open: %v", err)
	}
	for _, c := range []accounting.Connection{open, taken, active} {
		g, err := s.GetConnection(ctx, c.AccountID, c.ID)
		if err != nil || g.Status == accounting.StatusError {
			t.Fatalf("swept what it must not: %+v %v", g, err)
		}
	}
	if got, err := s.ExpirePending(ctx, now, "x", 10); err != nil || len(got) != 0 {
		t.Fatalf("third sweep: %+v %v", got, err)
	}
}

func testConnPushed(t *testing.T, s accounting.Store) {
	c := mustConn(t, s, "acct-a", t0)
	other := mustConn(t, s, "acct-a", t0)
	if err := s.RecordPushed(ctx, c.ID, "e1", "p1", t0); err != nil {
		t.Fatal(err)
	}
	if err := s.RecordPushed(ctx, c.ID, "e1", "p-other", t0); err != nil {
		t.Fatalf("recording again: %v", err)
	}
	got, err := s.PushedEntries(ctx, c.ID, []string{"e1", "e2"})
	if err != nil || len(got) != 1 || got["e1"] != "p1" {
		t.Fatalf("pushed: %v %v", got, err)
	}
	if got, _ := s.PushedEntries(ctx, other.ID, []string{"e1"}); len(got) != 0 {
		t.Fatalf("another connection's records: %v", got)
	}
	if err := s.RecordPushed(ctx, uuid.NewString(), "e1", "p1", t0); !errors.Is(err, accounting.ErrNotFound) {
		t.Fatalf("record for a missing connection: %v", err)
	}
}
