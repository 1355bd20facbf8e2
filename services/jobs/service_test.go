package jobs_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ledgerlane/platform/pkg/natsconn"
	"github.com/ledgerlane/platform/pkg/pgtest"
	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/pkg/rpc"
	conversionv1 "github.com/ledgerlane/platform/proto/conversion/v1"
	"github.com/ledgerlane/platform/services/jobs"
	"github.com/ledgerlane/platform/services/jobs/conformance"
	"github.com/ledgerlane/platform/services/jobs/convertclient"
	"github.com/ledgerlane/platform/services/jobs/memory"
	"github.com/ledgerlane/platform/services/jobs/metrics"
	"github.com/ledgerlane/platform/services/jobs/natsqueue"
	"github.com/ledgerlane/platform/services/jobs/postgres"
	"github.com/ledgerlane/platform/services/jobs/webhook"
)

// The converter fakes are gRPC clients, wrapped in convertclient as the
// service is in production, so that the error mapping is exercised too.

// fakeConverter upper-cases messages; a message starting with "bad" fails
// like an unparseable one, and block (when set) holds a call until it closes
// or the call's context ends, to play a worker killed mid-conversion.
type fakeConverter struct {
	calls   atomic.Int64
	block   func(msg string) bool
	started chan string
}

func (f *fakeConverter) Convert(ctx context.Context, in *conversionv1.ConvertRequest, _ ...grpc.CallOption) (*conversionv1.ConvertResponse, error) {
	f.calls.Add(1)
	if f.started != nil {
		f.started <- in.GetMessage()
	}
	if f.block != nil && f.block(in.GetMessage()) {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	if strings.HasPrefix(in.GetMessage(), "bad") {
		return nil, rpc.Status(problem.New(problem.InvalidInput, "the message is not a recognised format").WithField("message"))
	}
	return &conversionv1.ConvertResponse{
		Result:   []string{strings.ToUpper(in.GetMessage()), "|" + in.GetTo()},
		Warnings: []*conversionv1.Warning{{Code: "PAGED_OUTPUT", Severity: "info"}},
	}, nil
}

// clock is a settable test clock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Add(d time.Duration) { c.mu.Lock(); c.now = c.now.Add(d); c.mu.Unlock() }

var t0 = time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)

type env struct {
	store conformance.Store
	clock *clock
	names natsqueue.Names
	url   string
}

func newEnv(t testing.TB) *env { return newEnvOn(t, memory.New()) }

func newEnvOn(t testing.TB, store conformance.Store) *env {
	t.Helper()
	var b [4]byte
	_, _ = rand.Read(b[:])
	return &env{store: store, clock: &clock{now: t0}, names: natsqueue.NamesWithPrefix("t" + hex.EncodeToString(b[:])), url: natsconn.TestURL(t)}
}

// eachStore runs f on a memory store and, with TEST_DATABASE_URL, on
// PostgreSQL.
func eachStore(t *testing.T, f func(t *testing.T, e *env)) {
	t.Run("memory", func(t *testing.T) { f(t, newEnv(t)) })
	t.Run("postgres", func(t *testing.T) {
		f(t, newEnvOn(t, postgres.New(pgtest.Pool(t, "jobs", postgres.Migrations))))
	})
}

// service builds a Service on the env's store, NATS and names, with the
// production converter client over conv, Prometheus metrics and (unless mod
// sets one) the production webhook client for cfg.AllowPrivate.
func (e *env) service(t testing.TB, conv convertclient.Client, mod func(*jobs.Config)) *jobs.Service {
	t.Helper()
	nc, js, err := natsconn.Connect(e.url, "jobs-test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	q := natsqueue.New(js, e.names)
	cfg := jobs.Config{
		Store: e.store, Queue: q, Converter: convertclient.New(conv), Metrics: metrics.Prometheus{},
		Keys: testKeys(t), Clock: e.clock.Now, Workers: 3, AckWait: time.Second, AllowPrivate: true,
	}
	if mod != nil {
		mod(&cfg)
	}
	if cfg.Webhooks == nil {
		cfg.Webhooks = webhook.NewClient(cfg.AllowPrivate)
	}
	svc := jobs.NewService(cfg)
	if cfg.Keys != nil {
		if err := q.Setup(context.Background()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			// Remove this test's streams from a shared server.
			_ = js.DeleteStream(context.Background(), e.names.WorkStream)
			_ = js.DeleteStream(context.Background(), e.names.EventStream)
		})
	}
	return svc
}

var keySpec = "k1:" + strings.Repeat("A", 43) + "="

func testKeys(t testing.TB) *jobs.Keyring {
	k, err := jobs.ParseKeyring(keySpec)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// start runs f in the background until the test ends or stop is called.
func start(t *testing.T, f func(ctx context.Context)) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); f(ctx) }()
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); <-done }) }
	t.Cleanup(stop)
	return stop
}

func waitFor(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func wantProblem(t *testing.T, err error, typ problem.Type, field string) {
	t.Helper()
	p := rpc.Problem(err)
	if err == nil || p.Type != typ || p.Field != field {
		t.Fatalf("want %s naming %q, got %v (%+v)", typ, field, err, p)
	}
}

var alice = jobs.Caller{AccountID: "0e8a3c6e-2f4b-4f54-9f53-000000000001", Mode: "live"}
var bob = jobs.Caller{AccountID: "0e8a3c6e-2f4b-4f54-9f53-000000000002", Mode: "live"}

func messages(n int, f func(i int) string) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = f(i)
	}
	return out
}

func ttl(v int32) *int32 { return &v }

func TestCreateBatchValidation(t *testing.T) {
	e := newEnv(t)
	svc := e.service(t, &fakeConverter{}, nil)
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		req   jobs.BatchRequest
		field string
	}{
		{"to missing", jobs.BatchRequest{Messages: []string{"x"}}, "to"},
		{"no items", jobs.BatchRequest{To: "camt.053"}, "items"},
		{"too many items", jobs.BatchRequest{To: "camt.053", Messages: messages(jobs.MaxItems+1, func(int) string { return "x" })}, "items"},
		{"empty message", jobs.BatchRequest{To: "camt.053", Messages: []string{"x", ""}}, "items[1].message"},
		{"ttl zero", jobs.BatchRequest{To: "camt.053", Messages: []string{"x"}, TTLSeconds: ttl(0)}, "ttl_seconds"},
		{"ttl negative", jobs.BatchRequest{To: "camt.053", Messages: []string{"x"}, TTLSeconds: ttl(-5)}, "ttl_seconds"},
		{"ttl over a day", jobs.BatchRequest{To: "camt.053", Messages: []string{"x"}, TTLSeconds: ttl(86401)}, "ttl_seconds"},
		{"reference too long", jobs.BatchRequest{To: "camt.053", Messages: []string{"x"}, Reference: strings.Repeat("ü", jobs.MaxReferenceLen+1)}, "reference"},
		{"reference with a newline", jobs.BatchRequest{To: "camt.053", Messages: []string{"x"}, Reference: "run 4\nX-Injected: 1"}, "reference"},
		{"reference not UTF-8", jobs.BatchRequest{To: "camt.053", Messages: []string{"x"}, Reference: "run \xff"}, "reference"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := svc.CreateBatch(ctx, alice, tc.req)
			wantProblem(t, err, problem.InvalidInput, tc.field)
		})
	}
	t.Run("ttl bounds accepted", func(t *testing.T) {
		for _, v := range []int32{1, 86400} {
			j, err := svc.CreateBatch(ctx, alice, jobs.BatchRequest{To: "camt.053", Messages: []string{"x"}, TTLSeconds: ttl(v)})
			if err != nil || j.TTL != time.Duration(v)*time.Second || !j.ExpiresAt.Equal(t0.Add(j.TTL)) {
				t.Fatalf("ttl %d: %v %+v", v, err, j)
			}
		}
		j, err := svc.CreateBatch(ctx, alice, jobs.BatchRequest{To: "camt.053", Messages: []string{"x"}})
		if err != nil || j.TTL != time.Hour || j.Status != jobs.JobQueued || j.ItemCount != 1 || j.Pending != 1 {
			t.Fatalf("default: %v %+v", err, j)
		}
	})
	t.Run("reference of 128 characters accepted", func(t *testing.T) {
		ref := strings.Repeat("ü", jobs.MaxReferenceLen)
		if j, err := svc.CreateBatch(ctx, alice, jobs.BatchRequest{To: "camt.053", Messages: []string{"x"}, Reference: ref}); err != nil || j.Reference != ref {
			t.Fatalf("%v %q", err, j.Reference)
		}
	})
	t.Run("no principal", func(t *testing.T) {
		_, err := svc.CreateBatch(ctx, jobs.Caller{}, jobs.BatchRequest{To: "x", Messages: []string{"x"}})
		wantProblem(t, err, problem.Unauthorized, "")
	})
	t.Run("item over 2 MiB", func(t *testing.T) {
		big := strings.Repeat("x", jobs.MaxItemBytes+1)
		_, err := svc.CreateBatch(ctx, alice, jobs.BatchRequest{To: "camt.053", Messages: []string{"x", big}})
		wantProblem(t, err, problem.MessageTooLarge, "items[1].message")
		if _, err := svc.CreateBatch(ctx, alice, jobs.BatchRequest{To: "camt.053", Messages: []string{big[1:]}}); err != nil {
			t.Fatalf("an item of exactly 2 MiB: %v", err)
		}
	})
}

func TestWebhookEndpointLimit(t *testing.T) {
	e := newEnv(t)
	svc := e.service(t, &fakeConverter{}, nil)
	ctx := context.Background()
	var last jobs.EndpointCreated
	for i := 0; i < jobs.MaxEndpoints; i++ {
		c, err := svc.CreateWebhook(ctx, alice, jobs.WebhookSettings{URL: fmt.Sprintf("http://127.0.0.1:9/hook%d", i)})
		if err != nil {
			t.Fatalf("endpoint %d: %v", i+1, err)
		}
		last = c
	}
	_, err := svc.CreateWebhook(ctx, alice, jobs.WebhookSettings{URL: "http://127.0.0.1:9/one-more"})
	wantProblem(t, err, problem.Conflict, "url")
	// The limit is per account, and deleting one makes room.
	if _, err := svc.CreateWebhook(ctx, bob, jobs.WebhookSettings{URL: "http://127.0.0.1:9/bob"}); err != nil {
		t.Fatalf("another account: %v", err)
	}
	if err := svc.DeleteWebhook(ctx, alice, last.Endpoint.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateWebhook(ctx, alice, jobs.WebhookSettings{URL: "http://127.0.0.1:9/again"}); err != nil {
		t.Fatalf("after a delete: %v", err)
	}
}

func TestWithoutKeyEveryRouteIsUnavailable(t *testing.T) {
	e := newEnv(t)
	svc := e.service(t, &fakeConverter{}, func(c *jobs.Config) { c.Keys = nil })
	ctx := context.Background()
	checks := map[string]error{}
	_, checks["CreateBatch"] = svc.CreateBatch(ctx, alice, jobs.BatchRequest{To: "x", Messages: []string{"x"}})
	_, checks["GetJob"] = svc.GetJob(ctx, alice, "0e8a3c6e-2f4b-4f54-9f53-0000000000ff")
	checks["DeleteJob"] = svc.DeleteJob(ctx, alice, "0e8a3c6e-2f4b-4f54-9f53-0000000000ff")
	_, checks["CreateWebhook"] = svc.CreateWebhook(ctx, alice, jobs.WebhookSettings{URL: "https://example.com/"})
	_, checks["ListWebhooks"] = svc.ListWebhooks(ctx, alice)
	checks["DeleteWebhook"] = svc.DeleteWebhook(ctx, alice, "0e8a3c6e-2f4b-4f54-9f53-0000000000ff")
	for name, err := range checks {
		p := rpc.Problem(err)
		if err == nil || p.Type != problem.BatchUnavailable || p.Status != 503 {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// receiver records deliveries; status decides what it answers.
type receiver struct {
	mu     sync.Mutex
	got    []delivery
	status atomic.Int32
	delay  atomic.Int64 // nanoseconds
	srv    *httptest.Server
}

type delivery struct {
	header http.Header
	body   []byte
}

func newReceiver(t *testing.T, status int) *receiver {
	r := &receiver{}
	r.status.Store(int32(status))
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got = append(r.got, delivery{req.Header.Clone(), b})
		r.mu.Unlock()
		if d := r.delay.Load(); d > 0 {
			time.Sleep(time.Duration(d))
		}
		w.WriteHeader(int(r.status.Load()))
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) deliveries() []delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]delivery(nil), r.got...)
}

func TestBatchThroughQueueWithWebhook(t *testing.T) { eachStore(t, batchThroughQueueWithWebhook) }

func batchThroughQueueWithWebhook(t *testing.T, e *env) {
	conv := &fakeConverter{}
	svc := e.service(t, conv, nil)
	ctx := context.Background()
	rec := newReceiver(t, http.StatusNoContent)
	created, err := svc.CreateWebhook(ctx, alice, jobs.WebhookSettings{URL: rec.srv.URL + "/hooks"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(created.Secret, "whsec_") || len(created.Secret) != len("whsec_")+43 {
		t.Fatalf("secret shape: %q", created.Secret)
	}
	start(t, func(ctx context.Context) { _ = svc.RunWorkers(ctx) })
	start(t, func(ctx context.Context) { _ = svc.RunFanout(ctx) })

	const n = 25
	msgs := messages(n, func(i int) string {
		if i%10 == 7 {
			return fmt.Sprintf("bad message %d", i)
		}
		return fmt.Sprintf("secret payment %d", i)
	})
	const ref = "statements 2026-11-27 / run 4"
	j, err := svc.CreateBatch(ctx, alice, jobs.BatchRequest{To: "camt.053", Messages: msgs, Reference: ref})
	if err != nil {
		t.Fatal(err)
	}
	if j.Reference != ref {
		t.Fatalf("reference %q on the answer", j.Reference)
	}
	var v jobs.JobView
	waitFor(t, "job completion", 20*time.Second, func() bool {
		v, err = svc.GetJob(ctx, alice, j.ID)
		return err == nil && v.Job.Status == jobs.JobCompleted
	})
	if v.Job.Succeeded != n-2 || v.Job.Failed != 2 || v.Job.Pending != 0 || v.Job.StartedAt.IsZero() || v.Job.CompletedAt.IsZero() {
		t.Fatalf("job: %+v", v.Job)
	}
	if !v.Job.ExpiresAt.Equal(v.Job.CompletedAt.Add(time.Hour)) {
		t.Fatalf("expires_at %v, completed_at %v", v.Job.ExpiresAt, v.Job.CompletedAt)
	}
	for i, it := range v.Items {
		if it.Index != i {
			t.Fatalf("item order: %d at %d", it.Index, i)
		}
		if i%10 == 7 {
			if it.Status != jobs.ItemFailed || it.Problem == nil || it.Problem.Type != "invalid-input" || it.Problem.Status != 400 || it.Problem.Title == "" || it.Result != "" {
				t.Fatalf("failed item %d: %+v", i, it)
			}
			continue
		}
		want := strings.ToUpper(msgs[i]) + "|camt.053"
		if it.Status != jobs.ItemOK || it.Result != want || len(it.Warnings) != 1 || it.Problem != nil {
			t.Fatalf("item %d: %+v", i, it)
		}
	}
	if got := conv.calls.Load(); got != n {
		t.Fatalf("converter called %d times for %d items", got, n)
	}
	// At rest: inputs purged, results sealed, no plaintext anywhere.
	blobs, _ := e.store.Blobs(ctx)
	if len(blobs) != n+1 { // n results + the webhook secret
		t.Fatalf("blobs: %d", len(blobs))
	}
	for _, b := range blobs {
		if bytes.Contains(b, []byte("payment")) || bytes.Contains(b, []byte("PAYMENT")) || bytes.Contains(b, []byte("whsec_")) {
			t.Fatal("plaintext at rest")
		}
	}

	waitFor(t, "webhook delivery", 10*time.Second, func() bool { return len(rec.deliveries()) == 1 })
	d := rec.deliveries()[0]
	if err := webhook.Verify(created.Secret, d.header.Get(webhook.SignatureHeader), d.body, e.clock.Now()); err != nil {
		t.Fatalf("signature: %v (%s)", err, d.header.Get(webhook.SignatureHeader))
	}
	if d.header.Get(webhook.EventHeader) != "job.completed" || d.header.Get(webhook.DeliveryHeader) == "" || d.header.Get("Content-Type") != "application/json" {
		t.Fatalf("headers: %v", d.header)
	}
	var body map[string]any
	if err := json.Unmarshal(d.body, &body); err != nil {
		t.Fatal(err)
	}
	if body["event"] != "job.completed" || body["id"] != j.ID || body["status"] != "completed" ||
		body["item_count"] != float64(n) || body["succeeded_count"] != float64(n-2) || body["failed_count"] != float64(2) ||
		body["completed_at"] == nil || body["expires_at"] == nil || body["reference"] != ref || v.Job.Reference != ref {
		t.Fatalf("body: %s", d.body)
	}
	if bytes.Contains(d.body, []byte("payment")) || bytes.Contains(d.body, []byte("PAYMENT")) {
		t.Fatal("message content in webhook body")
	}
	// Another tenant's endpoint list is empty, and the owner's has no secret.
	if es, _ := svc.ListWebhooks(ctx, bob); len(es) != 0 {
		t.Fatalf("bob sees %d endpoints", len(es))
	}
	es, _ := svc.ListWebhooks(ctx, alice)
	if len(es) != 1 || es[0].Secret != nil || es[0].Status != jobs.EndpointActive || es[0].ConsecutiveFailures != 0 {
		t.Fatalf("list: %+v", es)
	}
}

func TestTenantIsolationAndPurge(t *testing.T) { eachStore(t, tenantIsolationAndPurge) }

func tenantIsolationAndPurge(t *testing.T, e *env) {
	svc := e.service(t, &fakeConverter{}, nil)
	ctx := context.Background()
	start(t, func(ctx context.Context) { _ = svc.RunWorkers(ctx) })
	j, err := svc.CreateBatch(ctx, alice, jobs.BatchRequest{To: "pain.001", Messages: []string{"secret one", "secret two"}, TTLSeconds: ttl(600)})
	if err != nil {
		t.Fatal(err)
	}
	_, errUnknown := svc.GetJob(ctx, bob, "0e8a3c6e-2f4b-4f54-9f53-0000000000ff")
	_, errOther := svc.GetJob(ctx, bob, j.ID)
	_, errGarbage := svc.GetJob(ctx, bob, "not-a-uuid")
	pu, po, pg := rpc.Problem(errUnknown), rpc.Problem(errOther), rpc.Problem(errGarbage)
	if pu.Type != problem.NotFound || *pu != *po || *pu != *pg {
		t.Fatalf("other tenant's job distinguishable: %+v / %+v / %+v", pu, po, pg)
	}
	if err := svc.DeleteJob(ctx, bob, j.ID); rpc.Problem(err).Type != problem.NotFound {
		t.Fatalf("bob deleted alice's job: %v", err)
	}
	waitFor(t, "completion", 20*time.Second, func() bool {
		v, err := svc.GetJob(ctx, alice, j.ID)
		return err == nil && v.Job.Status == jobs.JobCompleted
	})

	t.Run("early purge", func(t *testing.T) {
		if err := svc.DeleteJob(ctx, alice, j.ID); err != nil {
			t.Fatal(err)
		}
		if b, _ := e.store.Blobs(ctx); len(b) != 0 {
			t.Fatalf("%d blobs left after DELETE", len(b))
		}
		if _, err := svc.GetJob(ctx, alice, j.ID); rpc.Problem(err).Type != problem.NotFound {
			t.Fatalf("get after delete: %v", err)
		}
	})

	t.Run("ttl sweep", func(t *testing.T) {
		j2, err := svc.CreateBatch(ctx, alice, jobs.BatchRequest{To: "pain.001", Messages: []string{"secret three"}, TTLSeconds: ttl(600)})
		if err != nil {
			t.Fatal(err)
		}
		var v jobs.JobView
		waitFor(t, "completion", 20*time.Second, func() bool {
			v, err = svc.GetJob(ctx, alice, j2.ID)
			return err == nil && v.Job.Status == jobs.JobCompleted
		})
		if b, _ := e.store.Blobs(ctx); len(b) != 1 {
			t.Fatalf("want the one sealed result, got %d blobs", len(b))
		}
		e.clock.Add(v.Job.ExpiresAt.Sub(e.clock.Now()) - time.Second)
		if n, _ := svc.Sweep(ctx); n != 0 {
			t.Fatal("swept before expiry")
		}
		e.clock.Add(time.Second)
		if n, _ := svc.Sweep(ctx); n != 1 {
			t.Fatalf("swept %d", n)
		}
		if b, _ := e.store.Blobs(ctx); len(b) != 0 {
			t.Fatalf("%d blobs left after sweep", len(b))
		}
		if _, err := svc.GetJob(ctx, alice, j2.ID); rpc.Problem(err).Type != problem.NotFound {
			t.Fatalf("get after sweep: %v", err)
		}
	})
}

func TestWorkerKilledMidJobLosesNothing(t *testing.T) { eachStore(t, workerKilledMidJobLosesNothing) }

func workerKilledMidJobLosesNothing(t *testing.T, e *env) {
	ctx := context.Background()
	// Worker A converts normally until it meets item 5, where it hangs
	// until it is killed, without acknowledging what it holds.
	killed := &fakeConverter{started: make(chan string, 100), block: func(m string) bool { return m == "msg 5" }}
	a := e.service(t, killed, func(c *jobs.Config) { c.Workers = 1 })
	rec := newReceiver(t, http.StatusOK)
	if _, err := a.CreateWebhook(ctx, alice, jobs.WebhookSettings{URL: rec.srv.URL}); err != nil {
		t.Fatal(err)
	}
	const n = 12
	j, err := a.CreateBatch(ctx, alice, jobs.BatchRequest{To: "camt.053", Messages: messages(n, func(i int) string { return fmt.Sprintf("msg %d", i) })})
	if err != nil {
		t.Fatal(err)
	}
	stopA := start(t, func(ctx context.Context) { _ = a.RunWorkers(ctx) })
	for m := range killed.started {
		if m == "msg 5" {
			break
		}
	}
	stopA() // killed mid-job
	mid, _ := a.GetJob(ctx, alice, j.ID)
	if mid.Job.Status == jobs.JobCompleted || mid.Job.Pending == 0 {
		t.Fatalf("job finished before the kill: %+v", mid.Job)
	}

	// Worker B picks up the rest, including A's unacknowledged item once
	// AckWait (1 s here) has passed.
	b := e.service(t, &fakeConverter{}, nil)
	start(t, func(ctx context.Context) { _ = b.RunWorkers(ctx) })
	start(t, func(ctx context.Context) { _ = b.RunFanout(ctx) })
	var v jobs.JobView
	waitFor(t, "completion by worker B", 30*time.Second, func() bool {
		v, err = b.GetJob(ctx, alice, j.ID)
		return err == nil && v.Job.Status == jobs.JobCompleted
	})
	if v.Job.Succeeded != n || v.Job.Failed != 0 || v.Job.Pending != 0 || len(v.Items) != n {
		t.Fatalf("job: %+v items %d", v.Job, len(v.Items))
	}
	for i, it := range v.Items {
		if it.Index != i || it.Status != jobs.ItemOK || it.Result != fmt.Sprintf("MSG %d|camt.053", i) {
			t.Fatalf("item %d: %+v", i, it)
		}
	}
	waitFor(t, "one delivery", 10*time.Second, func() bool { return len(rec.deliveries()) >= 1 })
	time.Sleep(200 * time.Millisecond)
	if got := len(rec.deliveries()); got != 1 {
		t.Fatalf("%d deliveries for one job", got)
	}
}

// fixedResolver answers every host with the same addresses.
type fixedResolver []netip.Addr

func (r fixedResolver) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	return r, nil
}

func TestWebhookURLValidation(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	prod := func(addrs ...string) *jobs.Service {
		var r fixedResolver
		for _, a := range addrs {
			r = append(r, netip.MustParseAddr(a))
		}
		return e.service(t, &fakeConverter{}, func(c *jobs.Config) { c.AllowPrivate = false; c.Resolver = r })
	}
	public := prod("93.184.215.14")
	rebinding := prod("93.184.215.14", "10.1.2.3")
	for _, tc := range []struct {
		name string
		svc  *jobs.Service
		url  string
		ok   bool
	}{
		{"https public", public, "https://hooks.example.com/in", true},
		{"http public", public, "http://hooks.example.com/in", true},
		{"public literal", public, "https://93.184.215.14/", true},
		{"empty", public, "", false},
		{"ftp", public, "ftp://hooks.example.com/", false},
		{"javascript", public, "javascript:alert(1)", false},
		{"relative", public, "/hooks", false},
		{"credentials", public, "https://user:pw@hooks.example.com/", false},
		{"loopback", public, "http://127.0.0.1:8080/", false},
		{"localhost", public, "http://localhost/", false},
		{"ipv6 loopback", public, "http://[::1]/", false},
		{"private", public, "http://10.0.0.7/", false},
		{"private 192", public, "http://192.168.1.1/", false},
		{"link-local metadata", public, "http://169.254.169.254/latest", false},
		{"mapped loopback", public, "http://[::ffff:127.0.0.1]/", false},
		{"resolves to private", rebinding, "https://sneaky.example.com/", false},
		{"allowed private in local stack", e.service(t, &fakeConverter{}, nil), "http://127.0.0.1:9999/", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.svc.CreateWebhook(ctx, alice, jobs.WebhookSettings{URL: tc.url})
			if tc.ok && err != nil {
				t.Fatalf("refused: %v", err)
			}
			if !tc.ok {
				wantProblem(t, err, problem.InvalidInput, "url")
			}
		})
	}
	t.Run("delete", func(t *testing.T) {
		c, err := public.CreateWebhook(ctx, alice, jobs.WebhookSettings{URL: "https://hooks.example.com/x"})
		if err != nil {
			t.Fatal(err)
		}
		if err := public.DeleteWebhook(ctx, bob, c.Endpoint.ID); rpc.Problem(err).Type != problem.NotFound {
			t.Fatalf("bob deleted: %v", err)
		}
		if err := public.DeleteWebhook(ctx, alice, c.Endpoint.ID); err != nil {
			t.Fatal(err)
		}
		if err := public.DeleteWebhook(ctx, alice, c.Endpoint.ID); rpc.Problem(err).Type != problem.NotFound {
			t.Fatalf("second delete: %v", err)
		}
	})
}

func TestDeliveryRetryScheduleAndAutoDisable(t *testing.T) {
	eachStore(t, deliveryRetryScheduleAndAutoDisable)
}

func deliveryRetryScheduleAndAutoDisable(t *testing.T, e *env) {
	ctx := context.Background()
	rec := newReceiver(t, http.StatusInternalServerError)
	svc := e.service(t, &fakeConverter{}, nil)
	c, err := svc.CreateWebhook(ctx, alice, jobs.WebhookSettings{URL: rec.srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	body := []byte(`{"event":"job.completed","id":"j"}`)
	fanout := func(jobID string) {
		t.Helper()
		if err := svc.Fanout(ctx, alice.AccountID, alice.Mode, jobID, body); err != nil {
			t.Fatal(err)
		}
	}

	fanout("0e8a3c6e-2f4b-4f54-9f53-00000000aaaa")
	fanout("0e8a3c6e-2f4b-4f54-9f53-00000000aaaa") // a redelivered event adds nothing
	// Attempts are due at 0 s, 1 m, 5 m, 30 m and 2 h after the first.
	steps := []struct {
		advance time.Duration
		want    int
	}{
		{0, 1},
		{59 * time.Second, 0},
		{time.Second, 1}, // 1 m
		{3 * time.Minute, 0},
		{time.Minute, 1}, // 5 m
		{24 * time.Minute, 0},
		{time.Minute, 1}, // 30 m
		{89 * time.Minute, 0},
		{time.Minute, 1}, // 2 h: the fifth and last
		{24 * time.Hour, 0},
	}
	for i, st := range steps {
		e.clock.Add(st.advance)
		if got := svc.DeliverDue(ctx); got != st.want {
			t.Fatalf("step %d (+%v): %d attempts, want %d", i, st.advance, got, st.want)
		}
	}
	got := rec.deliveries()
	if len(got) != 5 {
		t.Fatalf("%d attempts", len(got))
	}
	id := got[0].header.Get(webhook.DeliveryHeader)
	for i, d := range got {
		if d.header.Get(webhook.DeliveryHeader) != id {
			t.Fatalf("attempt %d has delivery id %q, want %q", i, d.header.Get(webhook.DeliveryHeader), id)
		}
		if err := webhook.Verify(c.Secret, d.header.Get(webhook.SignatureHeader), d.body, e.clock.Now()); err != nil && !errors.Is(err, webhook.ErrTimestamp) {
			t.Fatalf("attempt %d: %v", i, err)
		}
	}
	es, _ := svc.ListWebhooks(ctx, alice)
	if es[0].ConsecutiveFailures != 1 || es[0].Status != jobs.EndpointActive {
		t.Fatalf("after one exhausted delivery: %+v", es[0])
	}

	// Nine more exhausted deliveries disable the endpoint.
	for k := 0; k < jobs.DisableAfter-1; k++ {
		fanout(fmt.Sprintf("0e8a3c6e-2f4b-4f54-9f53-%012d", k))
		for _, d := range jobs.RetrySchedule {
			_ = d
			svc.DeliverDue(ctx)
			e.clock.Add(2 * time.Hour)
		}
	}
	es, _ = svc.ListWebhooks(ctx, alice)
	if es[0].ConsecutiveFailures != jobs.DisableAfter || es[0].Status != jobs.EndpointDisabled {
		t.Fatalf("after ten exhausted deliveries: %+v", es[0])
	}
	before := len(rec.deliveries())
	fanout("0e8a3c6e-2f4b-4f54-9f53-00000000bbbb")
	if n := svc.DeliverDue(ctx); n != 0 || len(rec.deliveries()) != before {
		t.Fatal("a disabled endpoint still gets deliveries")
	}
}

func TestDeliverySuccessAndTimeout(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	slow := newReceiver(t, http.StatusOK)
	slow.delay.Store(int64(300 * time.Millisecond))
	svc := e.service(t, &fakeConverter{}, func(c *jobs.Config) {
		c.Webhooks = &webhook.Client{HTTP: &http.Client{Timeout: 100 * time.Millisecond}}
	})
	if _, err := svc.CreateWebhook(ctx, alice, jobs.WebhookSettings{URL: slow.srv.URL}); err != nil {
		t.Fatal(err)
	}
	_ = svc.Fanout(ctx, alice.AccountID, alice.Mode, "0e8a3c6e-2f4b-4f54-9f53-00000000cccc", []byte(`{}`))
	svc.DeliverDue(ctx)
	// The timed-out attempt is a failure: it is retried a minute later.
	e.clock.Add(time.Minute)
	slow.delay.Store(0)
	if n := svc.DeliverDue(ctx); n != 1 {
		t.Fatalf("retry after timeout: %d attempts", n)
	}
	e.clock.Add(24 * time.Hour)
	if n := svc.DeliverDue(ctx); n != 0 {
		t.Fatalf("delivered again after a 2xx: %d", n)
	}
	if got := len(slow.deliveries()); got != 2 {
		t.Fatalf("%d requests", got)
	}
}

// flakyConverter is unreachable, as a converter mid-deploy would be.
type flakyConverter struct{ calls atomic.Int64 }

func (f *flakyConverter) Convert(context.Context, *conversionv1.ConvertRequest, ...grpc.CallOption) (*conversionv1.ConvertResponse, error) {
	f.calls.Add(1)
	return nil, status.Error(codes.Unavailable, "connection refused")
}

func TestUnreachableConverterFailsItemsAfterRetries(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	conv := &flakyConverter{}
	// Backoff 10 ms, 20 ms, 20 ms: the 4th attempt has waited 50 ms.
	svc := e.service(t, conv, func(c *jobs.Config) {
		c.RetryBase, c.RetryCeiling, c.ConvertRetryFor = 10*time.Millisecond, 20*time.Millisecond, 50*time.Millisecond
	})
	start(t, func(ctx context.Context) { _ = svc.RunWorkers(ctx) })
	j, err := svc.CreateBatch(ctx, alice, jobs.BatchRequest{To: "camt.053", Messages: []string{"a", "b"}})
	if err != nil {
		t.Fatal(err)
	}
	var v jobs.JobView
	waitFor(t, "completion", 20*time.Second, func() bool {
		v, err = svc.GetJob(ctx, alice, j.ID)
		return err == nil && v.Job.Status == jobs.JobCompleted
	})
	for _, it := range v.Items {
		if it.Status != jobs.ItemFailed || it.Problem == nil || it.Problem.Type != "unavailable" || it.Problem.Status != 503 {
			t.Fatalf("item: %+v", it)
		}
	}
	if got := conv.calls.Load(); got != 8 {
		t.Fatalf("converter called %d times, want 4 per item", got)
	}
}

func TestInputUnderRemovedKeyFailsItem(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	old := e.service(t, &fakeConverter{}, nil)
	j, err := old.CreateBatch(ctx, alice, jobs.BatchRequest{To: "camt.053", Messages: []string{"a"}})
	if err != nil {
		t.Fatal(err)
	}
	// A worker whose ring no longer holds k1 cannot open the input.
	other, err := jobs.ParseKeyring("k2:" + strings.Repeat("B", 43) + "=")
	if err != nil {
		t.Fatal(err)
	}
	svc := e.service(t, &fakeConverter{}, func(c *jobs.Config) { c.Keys = other })
	start(t, func(ctx context.Context) { _ = svc.RunWorkers(ctx) })
	var v jobs.JobView
	waitFor(t, "completion", 20*time.Second, func() bool {
		v, err = svc.GetJob(ctx, alice, j.ID)
		return err == nil && v.Job.Status == jobs.JobCompleted
	})
	if it := v.Items[0]; it.Status != jobs.ItemFailed || it.Problem == nil || it.Problem.Type != "internal" {
		t.Fatalf("item: %+v", it)
	}
}

// An endpoint whose address turns private after registration (DNS
// rebinding) is refused again when connecting.
func TestDeliveryRefusesPrivateAddressAtDialTime(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	rec := newReceiver(t, http.StatusOK)
	lenient := e.service(t, &fakeConverter{}, nil)
	if _, err := lenient.CreateWebhook(ctx, alice, jobs.WebhookSettings{URL: rec.srv.URL}); err != nil {
		t.Fatal(err)
	}
	strict := e.service(t, &fakeConverter{}, func(c *jobs.Config) { c.AllowPrivate = false })
	if err := strict.Fanout(ctx, alice.AccountID, alice.Mode, "0e8a3c6e-2f4b-4f54-9f53-00000000dddd", []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	if n := strict.DeliverDue(ctx); n != 1 {
		t.Fatalf("%d attempts", n)
	}
	if got := len(rec.deliveries()); got != 0 {
		t.Fatalf("a loopback receiver got %d requests", got)
	}
	// The failure is scheduled for retry like any other.
	e.clock.Add(time.Minute)
	if n := strict.DeliverDue(ctx); n != 1 {
		t.Fatalf("retry: %d attempts", n)
	}
}
