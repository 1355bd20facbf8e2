// Package conformance is the behaviour every jobs.Store must have. Each
// implementation's tests call Run, so memory and PostgreSQL cannot drift.
package conformance

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/ledgerlane/platform/services/jobs"
)

// Store is a jobs.Store that can also list every sealed blob it holds, so the
// suite can prove purges leave nothing behind.
type Store interface {
	jobs.Store
	Blobs(ctx context.Context) ([][]byte, error)
}

// t0 has microsecond precision, the finest PostgreSQL keeps.
var t0 = time.Date(2026, 3, 14, 9, 26, 53, 589793000, time.UTC)

// Run runs the suite; newStore returns an empty store for each case.
func Run(t *testing.T, newStore func(t *testing.T) Store) {
	for _, c := range []struct {
		name string
		f    func(*testing.T, Store)
	}{
		{"CreateAndGetJob", testCreateAndGet},
		{"JobWithoutOptions", testNoOptions},
		{"TenantIsolation", testTenantIsolation},
		{"CompleteItem", testCompleteItem},
		{"CompleteItemIdempotent", testCompleteItemIdempotent},
		{"DeleteJob", testDeleteJob},
		{"SweepExpired", testSweep},
		{"SweepDeliveries", testSweepDeliveries},
		{"Endpoints", testEndpoints},
		{"Deliveries", testDeliveries},
		{"DeliveryTrace", testDeliveryTrace},
		{"DeliveryExhaustionDisables", testDisable},
		{"EnqueueIntent", testEnqueueIntent},
		{"ClaimStalled", testClaimStalled},
		{"IdempotencyKey", testIdempotencyKey},
		{"EndpointSettings", testEndpointSettings},
		{"RotateAndEnable", testRotateAndEnable},
		{"DeliveryPages", testDeliveryPages},
		{"DeliveryAttempts", testAttempts},
		{"ManualDeliveries", testManualDeliveries},
		{"DomainEventDeliveries", testDomainEventDeliveries},
		{"Coalescing", testCoalescing},
	} {
		t.Run(c.name, func(t *testing.T) { c.f(t, newStore(t)) })
	}
}

var ctx = context.Background()

func newJob(account string, n int) (jobs.Job, []jobs.Item) {
	j := jobs.Job{
		ID: uuid.NewString(), AccountID: account, Mode: "live", Status: jobs.JobQueued,
		From: "mt940", To: "camt.053", Options: jobs.Options{Strict: true, TargetVersion: "camt.053.001.08", Field86Profile: "german"},
		ItemCount: n, Pending: n, TTL: time.Hour, CreatedAt: t0, ExpiresAt: t0.Add(time.Hour),
		Reference: "payroll 2026-11 / Zürich #3",
	}
	items := make([]jobs.Item, n)
	for i := range items {
		items[i] = jobs.Item{JobID: j.ID, Index: i, Status: jobs.ItemPending, Input: []byte{byte(i), 0xAA, 0xBB}}
	}
	return j, items
}

func mustCreate(t *testing.T, s Store, account string, n int) (jobs.Job, []jobs.Item) {
	t.Helper()
	j, items := newJob(account, n)
	if err := s.CreateJob(ctx, j, items); err != nil {
		t.Fatal(err)
	}
	return j, items
}

func sameJob(t *testing.T, got, want jobs.Job) {
	t.Helper()
	eq := got.ID == want.ID && got.AccountID == want.AccountID && got.Mode == want.Mode && got.Status == want.Status &&
		got.From == want.From && got.To == want.To && got.Options == want.Options &&
		got.ItemCount == want.ItemCount && got.Succeeded == want.Succeeded && got.Failed == want.Failed &&
		got.Pending == want.Pending && got.TTL == want.TTL && got.CreatedAt.Equal(want.CreatedAt) &&
		got.StartedAt.Equal(want.StartedAt) && got.CompletedAt.Equal(want.CompletedAt) && got.ExpiresAt.Equal(want.ExpiresAt) &&
		got.Reference == want.Reference
	if !eq {
		t.Fatalf("job:\n got %+v\nwant %+v", got, want)
	}
}

func testCreateAndGet(t *testing.T, s Store) {
	j, items := mustCreate(t, s, uuid.NewString(), 3)
	got, err := s.GetJob(ctx, j.AccountID, j.ID)
	if err != nil {
		t.Fatal(err)
	}
	sameJob(t, got, j)
	if got, err = s.JobByID(ctx, j.ID); err != nil {
		t.Fatal(err)
	}
	sameJob(t, got, j)
	its, err := s.Items(ctx, j.ID)
	if err != nil || len(its) != 3 {
		t.Fatalf("items: %v %d", err, len(its))
	}
	for i, it := range its {
		if it.Index != i || it.Status != jobs.ItemPending || string(it.Input) != string(items[i].Input) || it.Result != nil {
			t.Fatalf("item %d: %+v", i, it)
		}
	}
	it, err := s.Item(ctx, j.ID, 2)
	if err != nil || it.Index != 2 {
		t.Fatalf("item: %v %+v", err, it)
	}
	if _, err := s.Item(ctx, j.ID, 3); !errors.Is(err, jobs.ErrNotFound) {
		t.Fatalf("item out of range: %v", err)
	}
	if err := s.CreateJob(ctx, j, items); !errors.Is(err, jobs.ErrConflict) {
		t.Fatalf("duplicate job: %v", err)
	}
	if err := s.StartJob(ctx, j.ID, t0.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	got, _ = s.JobByID(ctx, j.ID)
	if got.Status != jobs.JobRunning || !got.StartedAt.Equal(t0.Add(time.Second)) {
		t.Fatalf("started: %+v", got)
	}
	// A second start keeps the first time.
	_ = s.StartJob(ctx, j.ID, t0.Add(time.Minute))
	if got, _ = s.JobByID(ctx, j.ID); !got.StartedAt.Equal(t0.Add(time.Second)) {
		t.Fatalf("restarted: %+v", got)
	}
}

func testNoOptions(t *testing.T, s Store) {
	j, items := newJob(uuid.NewString(), 1)
	j.Options = jobs.Options{}
	if err := s.CreateJob(ctx, j, items); err != nil {
		t.Fatal(err)
	}
	got, err := s.JobByID(ctx, j.ID)
	if err != nil {
		t.Fatal(err)
	}
	sameJob(t, got, j)
}

func testTenantIsolation(t *testing.T, s Store) {
	j, _ := mustCreate(t, s, uuid.NewString(), 1)
	other := uuid.NewString()
	for _, id := range []string{j.ID, uuid.NewString(), "not-a-uuid"} {
		if _, err := s.GetJob(ctx, other, id); !errors.Is(err, jobs.ErrNotFound) {
			t.Fatalf("get %s as other tenant: %v", id, err)
		}
		if err := s.DeleteJob(ctx, other, id); !errors.Is(err, jobs.ErrNotFound) {
			t.Fatalf("delete %s as other tenant: %v", id, err)
		}
	}
	if _, err := s.GetJob(ctx, j.AccountID, j.ID); err != nil {
		t.Fatalf("owner lost the job: %v", err)
	}
}

func testCompleteItem(t *testing.T, s Store) {
	j, _ := mustCreate(t, s, uuid.NewString(), 3)
	steps := []struct {
		index      int
		status     string
		wantStatus string
		ok, failed int
	}{
		{0, jobs.ItemOK, jobs.JobRunning, 1, 0},
		{2, jobs.ItemFailed, jobs.JobRunning, 1, 1},
		{1, jobs.ItemOK, jobs.JobCompleted, 2, 1},
	}
	for n, st := range steps {
		at := t0.Add(time.Duration(n+1) * time.Minute)
		got, changed, err := s.CompleteItem(ctx, j.ID, st.index, st.status, []byte{0xCC, byte(st.index)}, at)
		if err != nil || !changed {
			t.Fatalf("step %d: %v changed=%v", n, err, changed)
		}
		if got.Status != st.wantStatus || got.Succeeded != st.ok || got.Failed != st.failed || got.Pending != 3-n-1 {
			t.Fatalf("step %d: %+v", n, got)
		}
		if !got.StartedAt.Equal(t0.Add(time.Minute)) {
			t.Fatalf("step %d: started_at %v", n, got.StartedAt)
		}
		it, _ := s.Item(ctx, j.ID, st.index)
		if it.Status != st.status || it.Input != nil || string(it.Result) != string([]byte{0xCC, byte(st.index)}) {
			t.Fatalf("step %d: item %+v", n, it)
		}
	}
	got, _ := s.JobByID(ctx, j.ID)
	done := t0.Add(3 * time.Minute)
	if !got.CompletedAt.Equal(done) || !got.ExpiresAt.Equal(done.Add(time.Hour)) {
		t.Fatalf("completion times: %+v", got)
	}
}

func testCompleteItemIdempotent(t *testing.T, s Store) {
	j, _ := mustCreate(t, s, uuid.NewString(), 2)
	if _, changed, err := s.CompleteItem(ctx, j.ID, 0, jobs.ItemOK, []byte("r1"), t0); err != nil || !changed {
		t.Fatal(err, changed)
	}
	got, changed, err := s.CompleteItem(ctx, j.ID, 0, jobs.ItemFailed, []byte("r2"), t0.Add(time.Second))
	if err != nil || changed {
		t.Fatalf("redelivery: %v changed=%v", err, changed)
	}
	if got.Succeeded != 1 || got.Failed != 0 || got.Pending != 1 {
		t.Fatalf("counts moved on redelivery: %+v", got)
	}
	if it, _ := s.Item(ctx, j.ID, 0); string(it.Result) != "r1" || it.Status != jobs.ItemOK {
		t.Fatalf("result overwritten: %+v", it)
	}
	if _, _, err := s.CompleteItem(ctx, uuid.NewString(), 0, jobs.ItemOK, nil, t0); !errors.Is(err, jobs.ErrNotFound) {
		t.Fatalf("unknown job: %v", err)
	}
}

func blobCount(t *testing.T, s Store) int {
	t.Helper()
	b, err := s.Blobs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return len(b)
}

func testDeleteJob(t *testing.T, s Store) {
	j, _ := mustCreate(t, s, uuid.NewString(), 2)
	_, _, _ = s.CompleteItem(ctx, j.ID, 0, jobs.ItemOK, []byte("sealed"), t0)
	if n := blobCount(t, s); n != 2 {
		t.Fatalf("blobs before delete: %d", n)
	}
	if err := s.DeleteJob(ctx, j.AccountID, j.ID); err != nil {
		t.Fatal(err)
	}
	if n := blobCount(t, s); n != 0 {
		t.Fatalf("blobs after delete: %d", n)
	}
	if _, err := s.GetJob(ctx, j.AccountID, j.ID); !errors.Is(err, jobs.ErrNotFound) {
		t.Fatalf("get after delete: %v", err)
	}
	if _, err := s.Items(ctx, j.ID); !errors.Is(err, jobs.ErrNotFound) {
		t.Fatalf("items after delete: %v", err)
	}
	if err := s.DeleteJob(ctx, j.AccountID, j.ID); !errors.Is(err, jobs.ErrNotFound) {
		t.Fatalf("second delete: %v", err)
	}
}

func testSweep(t *testing.T, s Store) {
	acct := uuid.NewString()
	done, _ := mustCreate(t, s, acct, 1)
	_, _, _ = s.CompleteItem(ctx, done.ID, 0, jobs.ItemOK, []byte("sealed"), t0) // expires t0+1h
	// An unfinished job outlives its estimated expiry (a long batch with a
	// short TTL must not be cut short) until MaxTTL after creation.
	running, _ := mustCreate(t, s, acct, 1)
	if n, err := s.SweepExpired(ctx, t0.Add(time.Hour-time.Microsecond)); err != nil || n != 0 {
		t.Fatalf("early sweep: %d %v", n, err)
	}
	if n, err := s.SweepExpired(ctx, t0.Add(time.Hour)); err != nil || n != 1 {
		t.Fatalf("sweep at expiry: %d %v", n, err)
	}
	if _, err := s.JobByID(ctx, done.ID); !errors.Is(err, jobs.ErrNotFound) {
		t.Fatalf("swept job still there: %v", err)
	}
	if n := blobCount(t, s); n != 1 {
		t.Fatalf("blobs after first sweep: %d", n)
	}
	if n, _ := s.SweepExpired(ctx, t0.Add(jobs.MaxTTL-time.Microsecond)); n != 0 {
		t.Fatal("unfinished job swept at its estimated expiry")
	}
	if n, _ := s.SweepExpired(ctx, t0.Add(jobs.MaxTTL)); n != 1 || blobCount(t, s) != 0 {
		t.Fatalf("stuck job not swept after MaxTTL")
	}
	if _, err := s.JobByID(ctx, running.ID); !errors.Is(err, jobs.ErrNotFound) {
		t.Fatalf("stuck job still there: %v", err)
	}
}

func testSweepDeliveries(t *testing.T, s Store) {
	e := newEndpoint(uuid.NewString(), t0)
	_ = s.CreateEndpoint(ctx, e)
	done, pending := newDelivery(e, uuid.NewString(), t0), newDelivery(e, uuid.NewString(), t0)
	for _, d := range []jobs.Delivery{done, pending} {
		if _, err := s.CreateDelivery(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	_, _ = s.RecordAttempt(ctx, done.ID, jobs.Attempt{At: t0, Succeeded: true})
	_, _ = s.SweepExpired(ctx, t0.Add(jobs.DeliveryRetention-time.Second))
	if _, err := s.Delivery(ctx, done.ID); err != nil {
		t.Fatalf("finished delivery dropped early: %v", err)
	}
	_, _ = s.SweepExpired(ctx, t0.Add(jobs.DeliveryRetention))
	if _, err := s.Delivery(ctx, done.ID); !errors.Is(err, jobs.ErrNotFound) {
		t.Fatalf("finished delivery kept: %v", err)
	}
	if _, err := s.Delivery(ctx, pending.ID); err != nil {
		t.Fatalf("pending delivery dropped: %v", err)
	}
}

func newEndpoint(account string, at time.Time) jobs.Endpoint {
	return jobs.Endpoint{ID: uuid.NewString(), AccountID: account, Mode: "live", URL: "https://example.com/hook",
		Secret: []byte{1, 2, 3}, Status: jobs.EndpointActive, CreatedAt: at}
}

func testEndpoints(t *testing.T, s Store) {
	acct := uuid.NewString()
	e1, e2 := newEndpoint(acct, t0), newEndpoint(acct, t0.Add(time.Second))
	e2.Mode = "test" // the mode is kept
	other := newEndpoint(uuid.NewString(), t0)
	for _, e := range []jobs.Endpoint{e2, e1, other} {
		if err := s.CreateEndpoint(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	list, err := s.ListEndpoints(ctx, acct)
	if err != nil || len(list) != 2 || list[0].ID != e1.ID || list[1].ID != e2.ID {
		t.Fatalf("list: %v %+v", err, list)
	}
	if list[0].URL != e1.URL || string(list[0].Secret) != string(e1.Secret) || list[0].Status != jobs.EndpointActive || !list[0].CreatedAt.Equal(t0) ||
		list[0].Mode != "live" || list[1].Mode != "test" {
		t.Fatalf("endpoint: %+v", list[0])
	}
	if empty, err := s.ListEndpoints(ctx, uuid.NewString()); err != nil || empty == nil || len(empty) != 0 {
		t.Fatalf("empty list: %v %#v", err, empty)
	}
	if err := s.DeleteEndpoint(ctx, acct, other.ID); !errors.Is(err, jobs.ErrNotFound) {
		t.Fatalf("cross-tenant delete: %v", err)
	}
	if err := s.DeleteEndpoint(ctx, acct, e1.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.EndpointByID(ctx, e1.ID); !errors.Is(err, jobs.ErrNotFound) {
		t.Fatalf("deleted endpoint: %v", err)
	}
	if got, err := s.EndpointByID(ctx, e2.ID); err != nil || got.AccountID != acct {
		t.Fatalf("endpoint by id: %v %+v", err, got)
	}
}

func newDelivery(e jobs.Endpoint, jobID string, at time.Time) jobs.Delivery {
	return jobs.Delivery{ID: uuid.NewString(), AccountID: e.AccountID, EndpointID: e.ID, JobID: jobID,
		Event: jobs.EventJobCompleted, Body: []byte(`{"event":"job.completed"}`), Status: jobs.DeliveryPending,
		NextAttemptAt: at, CreatedAt: at}
}

func testDeliveries(t *testing.T, s Store) {
	e := newEndpoint(uuid.NewString(), t0)
	if err := s.CreateEndpoint(ctx, e); err != nil {
		t.Fatal(err)
	}
	jobID := uuid.NewString()
	d := newDelivery(e, jobID, t0)
	if created, err := s.CreateDelivery(ctx, d); err != nil || !created {
		t.Fatal(err, created)
	}
	// The same event for the same endpoint keeps the first delivery's id.
	if created, err := s.CreateDelivery(ctx, newDelivery(e, jobID, t0)); err != nil || created {
		t.Fatalf("duplicate delivery: %v created=%v", err, created)
	}
	if got, _ := s.ClaimDue(ctx, t0.Add(-time.Second), time.Minute, 10); len(got) != 0 {
		t.Fatalf("claimed before due: %+v", got)
	}
	got, err := s.ClaimDue(ctx, t0, time.Minute, 10)
	if err != nil || len(got) != 1 || got[0].ID != d.ID || string(got[0].Body) != string(d.Body) {
		t.Fatalf("claim: %v %+v", err, got)
	}
	// Leased: not claimable again until the lease ends.
	if again, _ := s.ClaimDue(ctx, t0.Add(30*time.Second), time.Minute, 10); len(again) != 0 {
		t.Fatalf("claimed twice: %+v", again)
	}
	if _, err := s.RecordAttempt(ctx, d.ID, jobs.Attempt{At: t0, NextAttemptAt: t0.Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	dd, _ := s.Delivery(ctx, d.ID)
	if dd.Attempts != 1 || dd.Status != jobs.DeliveryPending || !dd.NextAttemptAt.Equal(t0.Add(time.Minute)) {
		t.Fatalf("after failed attempt: %+v", dd)
	}
	if _, err := s.RecordAttempt(ctx, d.ID, jobs.Attempt{At: t0.Add(time.Minute), Succeeded: true}); err != nil {
		t.Fatal(err)
	}
	if dd, _ = s.Delivery(ctx, d.ID); dd.Attempts != 2 || dd.Status != jobs.DeliverySucceeded {
		t.Fatalf("after success: %+v", dd)
	}
	if got, _ := s.ClaimDue(ctx, t0.Add(time.Hour), time.Minute, 10); len(got) != 0 {
		t.Fatalf("finished delivery claimed: %+v", got)
	}
	// Abandoned deliveries do not count against the endpoint.
	d2 := newDelivery(e, uuid.NewString(), t0)
	_, _ = s.CreateDelivery(ctx, d2)
	if _, err := s.RecordAttempt(ctx, d2.ID, jobs.Attempt{At: t0, Abandoned: true}); err != nil {
		t.Fatal(err)
	}
	if dd, _ = s.Delivery(ctx, d2.ID); dd.Status != jobs.DeliveryAbandoned {
		t.Fatalf("abandoned: %+v", dd)
	}
	if ep, _ := s.EndpointByID(ctx, e.ID); ep.ConsecutiveFailures != 0 {
		t.Fatalf("abandon counted: %+v", ep)
	}
}

// testDeliveryTrace: the trace context stored with a delivery comes back
// on every claim (a retry after a restart continues the job's trace) and
// from Delivery; a delivery stored without one comes back with none.
func testDeliveryTrace(t *testing.T, s Store) {
	e := newEndpoint(uuid.NewString(), t0)
	if err := s.CreateEndpoint(ctx, e); err != nil {
		t.Fatal(err)
	}
	traced := newDelivery(e, uuid.NewString(), t0)
	traced.TraceParent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	traced.TraceState = "vendor=opaque,other=1"
	bare := newDelivery(e, uuid.NewString(), t0.Add(time.Second))
	for _, d := range []jobs.Delivery{traced, bare} {
		if created, err := s.CreateDelivery(ctx, d); err != nil || !created {
			t.Fatal(err, created)
		}
	}
	check := func(what string, got jobs.Delivery, want jobs.Delivery) {
		t.Helper()
		if got.TraceParent != want.TraceParent || got.TraceState != want.TraceState {
			t.Fatalf("%s: trace %q %q, want %q %q", what, got.TraceParent, got.TraceState, want.TraceParent, want.TraceState)
		}
	}
	claimed, err := s.ClaimDue(ctx, t0.Add(time.Second), time.Minute, 10)
	if err != nil || len(claimed) != 2 || claimed[0].ID != traced.ID || claimed[1].ID != bare.ID {
		t.Fatalf("claim: %v %+v", err, claimed)
	}
	check("first claim", claimed[0], traced)
	check("first claim without a trace", claimed[1], bare)
	// A failed attempt leaves the trace for the retry.
	if _, err := s.RecordAttempt(ctx, traced.ID, jobs.Attempt{At: t0, NextAttemptAt: t0.Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	again, err := s.ClaimDue(ctx, t0.Add(time.Minute), time.Minute, 10)
	if err != nil || len(again) != 1 || again[0].ID != traced.ID {
		t.Fatalf("claim of the retry: %v %+v", err, again)
	}
	check("retry claim", again[0], traced)
	for _, want := range []jobs.Delivery{traced, bare} {
		got, err := s.Delivery(ctx, want.ID)
		if err != nil {
			t.Fatal(err)
		}
		check("delivery", got, want)
	}
}

func testDisable(t *testing.T, s Store) {
	e := newEndpoint(uuid.NewString(), t0)
	if err := s.CreateEndpoint(ctx, e); err != nil {
		t.Fatal(err)
	}
	// exhaust records one exhausted delivery and returns whether that
	// disabled the endpoint.
	exhaust := func() bool {
		t.Helper()
		d := newDelivery(e, uuid.NewString(), t0)
		if _, err := s.CreateDelivery(ctx, d); err != nil {
			t.Fatal(err)
		}
		disabled, err := s.RecordAttempt(ctx, d.ID, jobs.Attempt{At: t0, Exhausted: true})
		if err != nil {
			t.Fatal(err)
		}
		return disabled
	}
	countDisabled := func() int {
		t.Helper()
		n, err := s.CountDisabledEndpoints(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	for range jobs.DisableAfter - 1 {
		if exhaust() {
			t.Fatal("disabled before the threshold")
		}
	}
	ep, _ := s.EndpointByID(ctx, e.ID)
	if ep.ConsecutiveFailures != jobs.DisableAfter-1 || ep.Status != jobs.EndpointActive {
		t.Fatalf("before threshold: %+v", ep)
	}
	// A success resets the streak.
	d := newDelivery(e, uuid.NewString(), t0)
	_, _ = s.CreateDelivery(ctx, d)
	_, _ = s.RecordAttempt(ctx, d.ID, jobs.Attempt{At: t0, Succeeded: true})
	if ep, _ = s.EndpointByID(ctx, e.ID); ep.ConsecutiveFailures != 0 {
		t.Fatalf("success did not reset: %+v", ep)
	}
	if n := countDisabled(); n != 0 {
		t.Fatalf("%d disabled endpoints before the threshold", n)
	}
	// Exactly the DisableAfter-th consecutive exhaustion reports the
	// disabling; a later one (a delivery already claimed when the endpoint
	// went) does not report it again.
	for i := 1; i <= jobs.DisableAfter+1; i++ {
		if got, want := exhaust(), i == jobs.DisableAfter; got != want {
			t.Fatalf("exhaustion %d reported disabled=%v, want %v", i, got, want)
		}
	}
	if ep, _ = s.EndpointByID(ctx, e.ID); ep.ConsecutiveFailures != jobs.DisableAfter+1 || ep.Status != jobs.EndpointDisabled {
		t.Fatalf("after threshold: %+v", ep)
	}
	other := newEndpoint(uuid.NewString(), t0)
	if err := s.CreateEndpoint(ctx, other); err != nil {
		t.Fatal(err)
	}
	if n := countDisabled(); n != 1 {
		t.Fatalf("%d disabled endpoints, want 1 (of every tenant, active ones left out)", n)
	}
	// An endpoint deleted while its delivery was being attempted: the
	// exhaustion is recorded, nothing is disabled.
	gone := newEndpoint(uuid.NewString(), t0)
	if err := s.CreateEndpoint(ctx, gone); err != nil {
		t.Fatal(err)
	}
	d = newDelivery(gone, uuid.NewString(), t0)
	if _, err := s.CreateDelivery(ctx, d); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteEndpoint(ctx, gone.AccountID, gone.ID); err != nil {
		t.Fatal(err)
	}
	if disabled, err := s.RecordAttempt(ctx, d.ID, jobs.Attempt{At: t0, Exhausted: true}); err != nil || disabled {
		t.Fatalf("exhausted delivery of a deleted endpoint: disabled=%v err=%v", disabled, err)
	}
}

func ids(js []jobs.Job) []string {
	out := make([]string, len(js))
	for i, j := range js {
		out[i] = j.ID
	}
	return out
}

func sameIDs(t *testing.T, what string, got []jobs.Job, want ...string) {
	t.Helper()
	g := ids(got)
	if len(g) != len(want) {
		t.Fatalf("%s: got %v, want %v", what, g, want)
	}
	for i := range g {
		if g[i] != want[i] {
			t.Fatalf("%s: got %v, want %v", what, g, want)
		}
	}
}

// testEnqueueIntent: a stored job's enqueue intent is left to its creator
// for EnqueueLease, then claimable by one publisher at a time, until closed.
func testEnqueueIntent(t *testing.T, s Store) {
	backlog := func() jobs.OutboxBacklog {
		t.Helper()
		b, err := s.OutboxBacklog(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	if b := backlog(); b.Open != 0 || !b.Oldest.IsZero() {
		t.Fatalf("backlog of an empty store: %+v", b)
	}
	j, _ := mustCreate(t, s, "0e8a3c6e-2f4b-4f54-9f53-000000000001", 3)
	if b := backlog(); b.Open != 1 || !b.Oldest.Equal(j.CreatedAt) {
		t.Fatalf("backlog: %+v, want 1 from %v", b, j.CreatedAt)
	}
	claim := func(at time.Time) []jobs.Job {
		t.Helper()
		js, err := s.ClaimUnenqueued(ctx, at, time.Minute, 10)
		if err != nil {
			t.Fatal(err)
		}
		return js
	}
	sameIDs(t, "within the creator's lease", claim(t0.Add(jobs.EnqueueLease-time.Second)))
	got := claim(t0.Add(jobs.EnqueueLease))
	sameIDs(t, "after the lease", got, j.ID)
	sameJob(t, got[0], j)
	sameIDs(t, "claimed by another", claim(t0.Add(jobs.EnqueueLease+30*time.Second)))
	sameIDs(t, "claim expired", claim(t0.Add(jobs.EnqueueLease+time.Minute)), j.ID)
	if err := s.MarkEnqueued(ctx, j.ID); err != nil {
		t.Fatal(err)
	}
	sameIDs(t, "enqueued", claim(t0.Add(time.Hour)))
	if b := backlog(); b.Open != 0 || !b.Oldest.IsZero() {
		t.Fatalf("backlog with every intent closed: %+v", b)
	}
	// Two open intents, the older created second: the backlog counts both,
	// claimed or not, and is as old as the older.
	var open []jobs.Job
	for _, after := range []time.Duration{2 * time.Second, time.Second} {
		oj, items := newJob("0e8a3c6e-2f4b-4f54-9f53-000000000002", 1)
		oj.CreatedAt = t0.Add(after)
		if err := s.CreateJob(ctx, oj, items); err != nil {
			t.Fatal(err)
		}
		open = append(open, oj)
	}
	claim(t0.Add(time.Hour))
	if b := backlog(); b.Open != 2 || !b.Oldest.Equal(open[1].CreatedAt) {
		t.Fatalf("backlog: %+v, want 2 from %v", b, open[1].CreatedAt)
	}
	if err := s.MarkEnqueued(ctx, open[1].ID); err != nil {
		t.Fatal(err)
	}
	if b := backlog(); b.Open != 1 || !b.Oldest.Equal(open[0].CreatedAt) {
		t.Fatalf("backlog after the older intent closed: %+v, want 1 from %v", b, open[0].CreatedAt)
	}
	if err := s.MarkEnqueued(ctx, "0e8a3c6e-2f4b-4f54-9f53-0000000000ff"); err != nil {
		t.Fatalf("mark a missing job: %v", err)
	}
}

// testClaimStalled: an enqueued, unfinished job without progress for the
// given time is claimed once per lease; progress or completion ends that.
func testClaimStalled(t *testing.T, s Store) {
	j, _ := mustCreate(t, s, "0e8a3c6e-2f4b-4f54-9f53-000000000001", 2)
	claim := func(at time.Time) []jobs.Job {
		t.Helper()
		js, err := s.ClaimStalled(ctx, at, 2*time.Minute, time.Minute, 10)
		if err != nil {
			t.Fatal(err)
		}
		return js
	}
	sameIDs(t, "not enqueued yet", claim(t0.Add(time.Hour)))
	if err := s.MarkEnqueued(ctx, j.ID); err != nil {
		t.Fatal(err)
	}
	sameIDs(t, "fresh", claim(t0.Add(2*time.Minute-time.Second)))
	sameIDs(t, "stalled", claim(t0.Add(2*time.Minute)), j.ID)
	sameIDs(t, "claimed", claim(t0.Add(2*time.Minute+30*time.Second)))
	idx, err := s.PendingIndexes(ctx, j.ID)
	if err != nil || len(idx) != 2 || idx[0] != 0 || idx[1] != 1 {
		t.Fatalf("pending %v, %v", idx, err)
	}
	// An item completes at +5 min: progress.
	if _, _, err := s.CompleteItem(ctx, j.ID, 1, jobs.ItemOK, []byte{1}, t0.Add(5*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if idx, _ := s.PendingIndexes(ctx, j.ID); len(idx) != 1 || idx[0] != 0 {
		t.Fatalf("pending after a completion: %v", idx)
	}
	sameIDs(t, "after progress", claim(t0.Add(6*time.Minute)))
	sameIDs(t, "stalled again", claim(t0.Add(7*time.Minute)), j.ID)
	if _, _, err := s.CompleteItem(ctx, j.ID, 0, jobs.ItemOK, []byte{1}, t0.Add(8*time.Minute)); err != nil {
		t.Fatal(err)
	}
	sameIDs(t, "completed", claim(t0.Add(time.Hour)))
	if _, err := s.PendingIndexes(ctx, "0e8a3c6e-2f4b-4f54-9f53-0000000000ff"); !errors.Is(err, jobs.ErrNotFound) {
		t.Fatalf("pending of a missing job: %v", err)
	}
}

// testIdempotencyKey: a job stored with a key is found by it (with its
// request hash) within its account only; a second job with the key is
// refused whole (no job, no items), another account may use the same key,
// and a deleted job takes its key with it.
func testIdempotencyKey(t *testing.T, s Store) {
	acct := uuid.NewString()
	j, items := newJob(acct, 2)
	j.IdempotencyKey, j.RequestHash = "cred:live:k1", "h1"
	if err := s.CreateJob(ctx, j, items); err != nil {
		t.Fatal(err)
	}
	got, err := s.JobByIdempotencyKey(ctx, acct, "cred:live:k1")
	if err != nil || got.RequestHash != "h1" || got.IdempotencyKey != "cred:live:k1" {
		t.Fatalf("by key: %+v %v", got, err)
	}
	sameJob(t, got, j)
	for _, tc := range []struct{ acct, key string }{{acct, "cred:live:k2"}, {uuid.NewString(), "cred:live:k1"}} {
		if _, err := s.JobByIdempotencyKey(ctx, tc.acct, tc.key); !errors.Is(err, jobs.ErrNotFound) {
			t.Fatalf("by key %s in %s: %v, want not found", tc.key, tc.acct, err)
		}
	}
	dup, dupItems := newJob(acct, 3)
	dup.IdempotencyKey, dup.RequestHash = j.IdempotencyKey, "h2"
	if err := s.CreateJob(ctx, dup, dupItems); !errors.Is(err, jobs.ErrConflict) {
		t.Fatalf("a second job with the key: %v, want conflict", err)
	}
	if _, err := s.GetJob(ctx, acct, dup.ID); !errors.Is(err, jobs.ErrNotFound) {
		t.Fatalf("the refused job was stored: %v", err)
	}
	other, otherItems := newJob(uuid.NewString(), 1)
	other.IdempotencyKey, other.RequestHash = j.IdempotencyKey, "h3"
	if err := s.CreateJob(ctx, other, otherItems); err != nil {
		t.Fatalf("the same key in another account: %v", err)
	}
	if err := s.DeleteJob(ctx, acct, j.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.JobByIdempotencyKey(ctx, acct, j.IdempotencyKey); !errors.Is(err, jobs.ErrNotFound) {
		t.Fatalf("by key after delete: %v", err)
	}
	if err := s.CreateJob(ctx, dup, dupItems); err != nil {
		t.Fatalf("the key after its job was deleted: %v", err)
	}
}

func domainDelivery(e jobs.Endpoint, eventID, key string, at time.Time) jobs.Delivery {
	return jobs.Delivery{ID: uuid.NewString(), AccountID: e.AccountID, EndpointID: e.ID, Event: "transactions.sync_updates_available",
		EventID: eventID, Origin: jobs.OriginEvent, CoalesceKey: key, Body: []byte(`{"type":"transactions.sync_updates_available"}`),
		Status: jobs.DeliveryPending, NextAttemptAt: at, CreatedAt: at}
}

// testDomainEventDeliveries: an event of no job is stored once per
// endpoint and event id (a redelivered event finds its delivery), and
// another event id makes another delivery.
func testDomainEventDeliveries(t *testing.T, s Store) {
	e1, e2 := newEndpoint(uuid.NewString(), t0), newEndpoint(uuid.NewString(), t0)
	for _, e := range []jobs.Endpoint{e1, e2} {
		if err := s.CreateEndpoint(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	ev := uuid.NewString()
	for i, c := range []struct {
		d    jobs.Delivery
		want bool
	}{
		{domainDelivery(e1, ev, "", t0), true},
		{domainDelivery(e1, ev, "", t0), false},
		{domainDelivery(e2, ev, "", t0), true},
		{domainDelivery(e1, uuid.NewString(), "", t0), true},
	} {
		if created, err := s.CreateDelivery(ctx, c.d); err != nil || created != c.want {
			t.Fatalf("%d: created=%v err=%v, want %v", i, created, err, c.want)
		}
	}
	d := domainDelivery(e1, uuid.NewString(), "", t0)
	d.TraceParent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	_, _ = s.CreateDelivery(ctx, d)
	if got, err := s.Delivery(ctx, d.ID); err != nil || got.JobID != "" || got.EventID != d.EventID || got.Event != d.Event || got.CoalesceKey != "" {
		t.Fatalf("delivery: %v %+v", err, got)
	}
}

// testCoalescing: while a delivery with a coalesce key waits, another with
// the same key to the same endpoint is not stored (another key or endpoint
// is); once claimed it absorbs nothing, so the next one is stored; a failed
// attempt makes it absorb again only when no newer one took over; once
// finished the next one is stored.
func testCoalescing(t *testing.T, s Store) {
	e, other := newEndpoint(uuid.NewString(), t0), newEndpoint(uuid.NewString(), t0)
	for _, x := range []jobs.Endpoint{e, other} {
		if err := s.CreateEndpoint(ctx, x); err != nil {
			t.Fatal(err)
		}
	}
	create := func(ep jobs.Endpoint, key string) (jobs.Delivery, bool) {
		t.Helper()
		d := domainDelivery(ep, uuid.NewString(), key, t0)
		created, err := s.CreateDelivery(ctx, d)
		if err != nil {
			t.Fatal(err)
		}
		return d, created
	}
	first, ok := create(e, "u1|g1")
	if !ok {
		t.Fatal("first not created")
	}
	if got, _ := s.Delivery(ctx, first.ID); !got.Absorbing || got.CoalesceKey != "u1|g1" {
		t.Fatalf("stored: %+v", got)
	}
	for range 5 {
		if _, created := create(e, "u1|g1"); created {
			t.Fatal("absorbed event created a delivery")
		}
	}
	if _, created := create(e, "u1|g2"); !created {
		t.Fatal("another key absorbed")
	}
	if _, created := create(other, "u1|g1"); !created {
		t.Fatal("another endpoint absorbed")
	}
	claimed, err := s.ClaimDue(ctx, t0, time.Minute, 10)
	if err != nil || len(claimed) != 3 {
		t.Fatalf("claim: %v %d", err, len(claimed))
	}
	// Being sent: the next change makes the next delivery, which absorbs.
	second, ok := create(e, "u1|g1")
	if !ok {
		t.Fatal("in-flight delivery absorbed")
	}
	if _, created := create(e, "u1|g1"); created {
		t.Fatal("second did not absorb")
	}
	// The first fails with a retry left: the second holds the key, so the
	// first does not absorb again.
	if _, err := s.RecordAttempt(ctx, first.ID, jobs.Attempt{At: t0, NextAttemptAt: t0.Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Delivery(ctx, first.ID); got.Absorbing || got.Status != jobs.DeliveryPending {
		t.Fatalf("first after failure: %+v", got)
	}
	// The second is claimed and fails: with no other absorbing, it absorbs again.
	if _, err := s.ClaimDue(ctx, t0, time.Minute, 10); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RecordAttempt(ctx, second.ID, jobs.Attempt{At: t0, NextAttemptAt: t0.Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Delivery(ctx, second.ID); !got.Absorbing {
		t.Fatalf("second after failure: %+v", got)
	}
	if _, created := create(e, "u1|g1"); created {
		t.Fatal("retrying delivery did not absorb")
	}
	// Delivered: the next change makes the next one.
	if _, err := s.RecordAttempt(ctx, second.ID, jobs.Attempt{At: t0.Add(time.Minute), Succeeded: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RecordAttempt(ctx, first.ID, jobs.Attempt{At: t0.Add(time.Minute), Exhausted: true}); err != nil {
		t.Fatal(err)
	}
	if _, created := create(e, "u1|g1"); !created {
		t.Fatal("after delivery: no new delivery")
	}
}
