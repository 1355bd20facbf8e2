package admission_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/ledgerlane/platform/pkg/redisconn"
	"github.com/ledgerlane/platform/services/metering/admission"
)

// TestAdmissionOnRedisCluster: the whole admission path runs unchanged on a
// 3-node Redis Cluster (pkg/redisconn: a REDIS_URL with addr= seed nodes):
// rate and quota, idempotency reservation, settle and replay, usage,
// reconcile and refund for accounts spread over every node, and the
// alert marks, which are sent beside the scripts rather than from them
// (a script may only touch keys of one hash slot).
func TestAdmissionOnRedisCluster(t *testing.T) {
	ctx := context.Background()
	rc, err := redisconn.Connect(ctx, redisconn.TestClusterURL(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rc.Close() })
	c := &clock{t: time.Date(2026, 5, 10, 12, 0, 0, 0, time.UTC)}
	m := admission.New(rc, c.now)
	m.ChangedKey = "ll:{test}:changed:" + uuid.NewString()
	l := limits(c)
	accounts := make([]string, 24) // enough to land on all three nodes
	for i := range accounts {
		accounts[i] = uuid.NewString()
	}
	for _, acct := range accounts {
		r := admission.Request{AccountID: acct, Metered: true, Limits: l, IdempotencyKey: "k", Fingerprint: "fp",
			IdempotencyScope: admission.IdempotencyScope("cred", "live", "conversion", "", "")}
		d := admit(t, m, r)
		if d.Outcome != admission.Admitted {
			t.Fatalf("%s: %+v", acct, d)
		}
		resp := admission.Response{Status: 200, Header: http.Header{}, Body: []byte(`{"ok":true}`)}
		if err := m.Settle(ctx, r, d, resp, true, true); err != nil {
			t.Fatalf("settle: %v", err)
		}
		if d := admit(t, m, r); d.Outcome != admission.Replay || string(d.Stored.Body) != `{"ok":true}` {
			t.Fatalf("replay: %+v", d)
		}
		if err := m.Reconcile(ctx, admission.Request{AccountID: acct, Metered: true, Limits: l}, 2); err != nil {
			t.Fatalf("reconcile: %v", err)
		}
		if n, err := m.Refund(ctx, admission.Request{AccountID: acct, Metered: true, Limits: l}, "job-1", 1); err != nil || n != 1 {
			t.Fatalf("refund: %d, %v", n, err)
		}
		u, err := m.Usage(ctx, acct, l)
		if err != nil || u.Used != 2 { // 1 admitted + 2 reconciled − 1 refunded
			t.Fatalf("usage: %+v, %v", u, err)
		}
	}
	marked := changedAccounts(t, m)
	for _, acct := range accounts {
		if marked[acct] < 1 {
			t.Fatalf("account %s not marked", acct)
		}
		if ok, err := m.Checked(ctx, admission.Changed{AccountID: acct, Version: marked[acct]}); err != nil || !ok {
			t.Fatalf("checked: %v, %v", ok, err)
		}
	}
	if left := changedAccounts(t, m); len(left) != 0 {
		t.Fatalf("marks left after the checks: %v", left)
	}
}
