package server

import (
	"context"
	"testing"
	"time"

	"github.com/ledgerlane/platform/services/finance/sandboxlink"
)

// TestSandboxSyncInterval: with the named choice set, as cmd/finance sets it
// from SANDBOX_SYNC_INTERVAL, New runs the sandbox aggregator over the
// linked sandbox connections, on the configured clock: a tick gives a new
// link's connection its new rows. Without it there is no aggregator.
func TestSandboxSyncInterval(t *testing.T) {
	ctx := context.Background()
	at := time.Date(2026, 2, 28, 23, 30, 0, 0, time.UTC)
	clock := func() time.Time { return at }
	off, err := New(ctx, Config{CursorSecret: []byte("k"), Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	defer off.Close()
	if off.Sandbox() != nil {
		t.Fatal("an aggregator without the choice")
	}

	s, err := New(ctx, Config{CursorSecret: []byte("k"), Clock: clock, SandboxSyncInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	agg := s.Sandbox()
	if agg == nil {
		t.Fatal("no aggregator with SandboxSyncInterval set")
	}
	if rep, err := agg.SyncNow(ctx); err != nil || len(rep.Created) != 0 {
		t.Fatalf("a tick before any link: %+v, %v", rep, err)
	}
	o := sandboxlink.Owner{AccountID: "acct-1", Mode: sandboxlink.ModeTest}
	u, err := s.svcs.Sandbox.CreateUser(ctx, o, "Robin")
	if err != nil {
		t.Fatal(err)
	}
	v, err := s.svcs.Sandbox.StartLink(ctx, o, sandboxlink.LinkInput{UserID: u.ID, InstitutionID: "ins_otter", Username: "user_good", Password: "pass_good"})
	if err != nil || v.Status != sandboxlink.StatusLinked {
		t.Fatalf("link: %+v, %v", v, err)
	}
	rep, err := agg.SyncNow(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Created) != 2 || rep.Created[0].ConnectionID != v.ConnectionID || rep.Results[v.ConnectionID].Inserted != 2 {
		t.Fatalf("the tick after the link: %+v", rep)
	}
	for _, c := range rep.Created {
		if c.ConnectionID != v.ConnectionID {
			t.Fatalf("a row for another connection: %+v", c)
		}
	}
}
