package local_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ledgerlane/platform/deploy/local"
	"github.com/ledgerlane/platform/services/jobs/webhook"
)

// flakyReceiver records deliveries and answers status (settable).
type flakyReceiver struct {
	mu     sync.Mutex
	got    []recorded
	status atomic.Int32
	srv    *httptest.Server
}

func newFlakyReceiver(t *testing.T, status int) *flakyReceiver {
	r := &flakyReceiver{}
	r.status.Store(int32(status))
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got = append(r.got, recorded{req.Header.Clone(), b})
		r.mu.Unlock()
		w.WriteHeader(int(r.status.Load()))
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *flakyReceiver) all() []recorded {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]recorded(nil), r.got...)
}

// TestFinanceEventsEndToEnd: finance writes through the gateway reach a
// webhook receiver as signed transactions.sync_updates_available events
// carried by NATS to jobs' fan-out: a PATCH, a bulk recategorise and an
// import while the first event waits to be delivered make ONE event (its
// body without amounts or names); once it is delivered, the next PATCH
// makes the next; a grant change makes one event, for that grant only; an
// endpoint subscribed only to job.completed gets none.
func TestFinanceEventsEndToEnd(t *testing.T) {
	clock := newStepClock()
	st := stack(t, false, func(c *local.Config) {
		c.Now = clock.Now
		c.SandboxInterval, c.DemoPlan = -1, "scale"
		// No detection tick: its first run announces the demo's streams as
		// recurring.detected, at a moment that races with the bursts below.
		c.RecurringInterval = -1
	})
	keys := map[string]string{}
	for _, k := range st.Keys {
		keys[k.Name] = k.Key
	}
	f := &fin{client: client{t: t, base: st.URL, keys: keys}}
	call := func(method, path, key, body string) resp {
		t.Helper()
		clock.Add(100 * time.Millisecond)
		return f.call(method, path, key, body)
	}
	recv := newFlakyReceiver(t, 503)
	jobsOnly := newHookReceiver(t)
	r := call("POST", "/v1/webhooks", "conversion-all", `{"url":"`+recv.srv.URL+`/fin","event_types":["transactions.sync_updates_available","connection.status_changed","recurring.detected"]}`)
	if r.status != 200 {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	finID, secret := r.json["id"].(string), r.json["secret"].(string)
	r = call("POST", "/v1/webhooks", "conversion-all", `{"url":"`+jobsOnly.srv.URL+`/jobs","event_types":["job.completed"]}`)
	if r.status != 200 {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	jobsID := r.json["id"].(string)

	// deliveries lists an endpoint's deliveries, newest first.
	deliveries := func(id string) []map[string]any {
		t.Helper()
		r := f.call("GET", "/v1/webhooks/"+id+"/deliveries?page_size=100", "conversion-all", "")
		if r.status != 200 {
			t.Fatalf("deliveries: %d %s", r.status, r.body)
		}
		var out []map[string]any
		for _, d := range r.json["deliveries"].([]any) {
			out = append(out, d.(map[string]any))
		}
		return out
	}
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for !ok() {
			if time.Now().After(deadline) {
				t.Fatalf("waiting for %s", what)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	attempts := func(d map[string]any) int { as, _ := d["attempts"].([]any); return len(as) }

	row := func(account string) map[string]any {
		r := f.call("GET", "/v1/transactions?page_size=1&account_id="+account, "finance-write", "")
		data, _ := r.json["data"].([]any)
		if r.status != 200 || len(data) != 1 {
			t.Fatalf("no row: %d %s", r.status, r.body)
		}
		return data[0].(map[string]any)
	}
	patch := func(id string) {
		t.Helper()
		v := version(f.tx("finance-write", id))
		f.ok(f.write("PATCH", "/v1/transactions/"+id, "finance-write", fmt.Sprintf(`{"expected_version": %d, "memo": "lunch %d"}`, v, f.n)))
	}
	tx := row(st.Demo.AccountIDs.Checking)
	txID := tx["id"].(string)

	// One event per grant that sees the change (docs/privacy.md): count
	// the demo's grants that see each account.
	grants, err := st.Finance.Store().ListGrants(context.Background(), st.Demo.UserID)
	if err != nil {
		t.Fatal(err)
	}
	seeing := func(accounts ...string) int {
		n := 0
		for _, g := range grants {
			if slices.ContainsFunc(accounts, func(a string) bool { return !slices.Contains(g.ExcludedAccountIDs, a) }) {
				n++
			}
		}
		return n
	}
	checking, euro := st.Demo.AccountIDs.Checking, st.Demo.AccountIDs.EuroChecking
	perPatch, perBurst := seeing(checking), seeing(checking, euro)
	if perPatch == 0 {
		t.Fatal("no grant sees the checking account")
	}

	// The burst: the receiver is down, so the PATCH's events wait for
	// their retry, absorbing what follows.
	patch(txID)
	waitFor("the first attempts", func() bool {
		ds := deliveries(finID)
		return len(ds) == perPatch && !slices.ContainsFunc(ds, func(d map[string]any) bool { return attempts(d) != 1 })
	})
	cur := f.tx("finance-write", txID)
	f.ok(f.write("POST", "/v1/transactions/bulk-categorize", "finance-write", jsonBody(map[string]any{"items": []map[string]any{
		{"transaction_id": txID, "category_id": st.Demo.CategoryIDs["Dining"], "expected_version": version(cur)}}})))
	f.ok(f.write("POST", "/v1/imports", "finance-write", jsonBody(map[string]any{
		"account_id": euro, "message": sharedSample(t, "mt/php-mt940/Ing_sample")})))
	// The bulk's and the import's events are in the stream; let the
	// fan-out take them (a grant that sees only the euro account may get
	// its first event now).
	waitFor("the burst's fan-out", func() bool { return len(deliveries(finID)) >= perBurst })
	if ds := deliveries(finID); len(ds) != perBurst {
		t.Fatalf("burst: %d deliveries, want %d (one per grant)", len(ds), perBurst)
	}
	recv.status.Store(204)
	clock.Add(time.Minute) // the retries are due
	waitFor("the retries", func() bool {
		ds := deliveries(finID)
		return !slices.ContainsFunc(ds, func(d map[string]any) bool { return d["status"] != "succeeded" })
	})
	check := func(d recorded) map[string]any {
		t.Helper()
		if err := webhook.Verify(secret, d.header.Get(webhook.SignatureHeader), d.body, clock.Now()); err != nil {
			t.Fatalf("signature: %v", err)
		}
		var body map[string]any
		if err := json.Unmarshal(d.body, &body); err != nil {
			t.Fatal(err)
		}
		if body["type"] != "transactions.sync_updates_available" || body["user_id"] != st.Demo.UserID || body["grant_id"] == "" ||
			body["id"] != d.header.Get(webhook.EventIDHeader) {
			t.Fatalf("body: %s", d.body)
		}
		for _, secretish := range []string{"amount", "merchant", "memo", "lunch", "description", "name", "account"} {
			if strings.Contains(string(d.body), secretish) {
				t.Fatalf("body carries %q: %s", secretish, d.body)
			}
		}
		return body
	}
	// byGrant is the event ids each grant received.
	byGrant := func() map[string][]string {
		out := map[string][]string{}
		for _, d := range recv.all() {
			b := check(d)
			g, id := b["grant_id"].(string), b["id"].(string)
			if !slices.Contains(out[g], id) {
				out[g] = append(out[g], id)
			}
		}
		return out
	}
	first := byGrant()
	if len(first) != perBurst {
		t.Fatalf("%d grants got events, want %d", len(first), perBurst)
	}
	for g, ids := range first {
		if len(ids) != 1 {
			t.Fatalf("grant %s got %d events for one burst", g, len(ids))
		}
	}

	// Delivered: the next PATCH makes the next event.
	patch(txID)
	waitFor("the next events", func() bool { return len(deliveries(finID)) == perBurst+perPatch })
	waitFor("their delivery", func() bool {
		n := 0
		for _, ids := range byGrant() {
			n += len(ids)
		}
		return n == perBurst+perPatch
	})
	next := 0
	for g, ids := range byGrant() {
		if len(ids) == 2 {
			next++
			if ids[0] != first[g][0] {
				t.Fatalf("grant %s: %v after %v", g, ids, first[g])
			}
		}
	}
	if next != perPatch {
		t.Fatalf("%d grants got the next event, want %d", next, perPatch)
	}

	// A grant that starts excluding an account (PATCH
	// /v1/finance-grants/{id}) moves that grant's feed and no other's: one
	// event, for it.
	gp := "/v1/finance-grants/" + st.Demo.GrantRedactedID
	had := byGrant()
	g := call("GET", gp, "conversion-all", "")
	excluded := append(g.json["excluded_account_ids"].([]any), st.Demo.AccountIDs.Savings)
	clock.Add(100 * time.Millisecond)
	if r := f.write("PATCH", gp, "conversion-all", jsonBody(map[string]any{"expected_version": g.json["version"],
		"excluded_account_ids": excluded})); r.status != 200 {
		t.Fatalf("grant change: %d %s", r.status, r.body)
	}
	total := perBurst + perPatch + 1
	waitFor("the grant change's event", func() bool {
		n := 0
		for _, ids := range byGrant() {
			n += len(ids)
		}
		return n == total
	})
	for g, ids := range byGrant() {
		want := len(had[g])
		if g == st.Demo.GrantRedactedID {
			want++
		}
		if len(ids) != want {
			t.Fatalf("grant %s: %d events after the grant change, had %d", g, len(ids), len(had[g]))
		}
	}
	if ds := deliveries(finID); len(ds) != total {
		t.Fatalf("%d deliveries after the grant change, want %d", len(ds), total)
	}
	if ds := deliveries(jobsID); len(ds) != 0 || len(jobsOnly.at("/jobs")) != 0 {
		t.Fatalf("job.completed-only endpoint got %d deliveries", len(ds))
	}
}
