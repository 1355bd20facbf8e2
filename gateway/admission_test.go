package gateway_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/ledgerlane/platform/pkg/redisconn"
	meteringv1 "github.com/ledgerlane/platform/proto/metering/v1"
)

func testLimits(rate, burst, quota int32, hardStop bool, capCents *int32) *meteringv1.AccountLimits {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	return &meteringv1.AccountLimits{
		Plan: "starter", RatePerSecond: rate, Burst: burst, MonthlyQuota: quota, HardStop: hardStop,
		OveragePricePer_1000: 150, OverageCapCents: capCents, Currency: "usd",
		PeriodStart: timestamppb.New(start), PeriodEnd: timestamppb.New(start.AddDate(0, 1, 0)), TestQuota: 250,
	}
}

// admitted builds a harness on Redis (TEST_REDIS_URL or miniredis) whose
// account has the given limits. Every harness uses a fresh account id, so
// runs on a shared Redis never see each other's counters.
func admitted(t *testing.T, l *meteringv1.AccountLimits) *harness {
	t.Helper()
	h := newHarnessWith(t, harnessOpts{redis: redisconn.ForTest(t), limits: l})
	acct := fmt.Sprintf("acct-%d", time.Now().UnixNano())
	for _, p := range h.metering.keys {
		p.AccountId = acct
	}
	h.metering.keys[keyTest] = &meteringv1.Principal{AccountId: acct, Surface: "conversion", Mode: "test", Scopes: []string{"convert"}}
	return h
}

const keyTest = "ak_test_convert"

var jsonCT = map[string]string{"Content-Type": "application/json"}

func convertBody(to string) *strings.Reader {
	return strings.NewReader(`{"to":"` + to + `","message":":20:X"}`)
}

func TestRateLimitHeadersAnd429(t *testing.T) {
	h := admitted(t, testLimits(1, 2, 1000, false, nil))
	for i := range 2 {
		r := h.do(t, "GET", "/v1/formats", keyConvert, nil, nil)
		if r.header.Get("RateLimit-Limit") != "2" || r.header.Get("RateLimit-Remaining") != fmt.Sprint(1-i) || r.header.Get("RateLimit-Reset") == "" {
			t.Fatalf("request %d headers: %v", i, r.header)
		}
	}
	r := h.do(t, "GET", "/v1/formats", keyConvert, nil, nil)
	p := r.problem(t)
	if r.status != 429 || p.Type != "rate-limited" || r.header.Get("Retry-After") != "1" || r.header.Get("RateLimit-Remaining") != "0" {
		t.Fatalf("empty bucket: %d %v %s", r.status, r.header, r.body)
	}
	// The bucket is the account's: another key of the same account is limited too.
	if r := h.do(t, "GET", "/v1/connections", keyManage, nil, nil); r.status != 429 {
		t.Fatalf("per-account bucket: %d", r.status)
	}
	h.clock.Add(time.Second)
	if r := h.do(t, "GET", "/v1/formats", keyConvert, nil, nil); r.status == 429 {
		t.Fatalf("a moved clock must refill the bucket: %s", r.body)
	}
	// Errors decided at the edge still carry the headers.
	h.clock.Add(10 * time.Second)
	r = h.do(t, "GET", "/v1/usage", keyConvert, nil, nil)
	if r.status != 403 || r.header.Get("RateLimit-Limit") == "" {
		t.Fatalf("403 without rate headers: %d %v", r.status, r.header)
	}
}

func TestQuotaHeadersTestPoolAndCounting(t *testing.T) {
	h := admitted(t, testLimits(1000, 1000, 2, true, nil))
	// Live: 2 included, hard stop.
	r := h.do(t, "POST", "/v1/convert", keyConvert, convertBody("camt.053"), jsonCT)
	if r.status != 200 || r.header.Get("X-Quota-Limit") != "2" || r.header.Get("X-Quota-Remaining") != "2" {
		t.Fatalf("first: %d %v", r.status, r.header)
	}
	// A 5xx is not counted; a content-level 400 is; an edge-level 400 is not.
	if r := h.do(t, "POST", "/v1/convert", keyConvert, convertBody("boom"), jsonCT); r.status != 500 {
		t.Fatalf("boom: %d", r.status)
	}
	if r := h.do(t, "POST", "/v1/convert", keyConvert, strings.NewReader("x"), map[string]string{"Content-Type": "image/png"}); r.status != 400 {
		t.Fatalf("edge 400: %d", r.status)
	}
	r = h.do(t, "POST", "/v1/convert", keyConvert, convertBody("bad"), jsonCT)
	if r.status != 400 || r.header.Get("X-Quota-Remaining") != "1" {
		t.Fatalf("content-level 400: %d %v (5xx and edge 400 must not count)", r.status, r.header)
	}
	r = h.do(t, "POST", "/v1/convert", keyConvert, convertBody("camt.053"), jsonCT)
	p := r.problem(t)
	if r.status != 429 || p.Type != "quota-exceeded" || !strings.Contains(p.Detail, "2026-02-01T00:00:00Z") || r.header.Get("X-Quota-Remaining") != "0" {
		t.Fatalf("hard stop: %d %+v %v", r.status, p, r.header)
	}
	// Unmetered routes still work.
	if r := h.do(t, "GET", "/v1/formats", keyConvert, nil, nil); r.status == 429 || r.header.Get("X-Quota-Limit") != "" {
		t.Fatalf("formats: %d %v", r.status, r.header)
	}

	// Test pool: 250, shared, X-Quota-Limit 250.
	var last reply
	for range 250 {
		last = h.do(t, "POST", "/v1/convert", keyTest, convertBody("camt.053"), jsonCT)
		if last.status != 200 {
			t.Fatalf("test pool: %d %s", last.status, last.body)
		}
	}
	if last.header.Get("X-Quota-Limit") != "250" || last.header.Get("X-Quota-Remaining") != "1" {
		t.Fatalf("test pool headers: %v", last.header)
	}
	r = h.do(t, "POST", "/v1/convert", keyTest, convertBody("camt.053"), jsonCT)
	if p := r.problem(t); r.status != 429 || p.Type != "quota-exceeded" || !strings.Contains(p.Detail, "test pool") {
		t.Fatalf("spent test pool: %d %+v", r.status, p)
	}
}

func TestSpendCapRefusesTheRequestThatWouldReachIt(t *testing.T) {
	capCents := int32(1) // each overage conversion accrues 0.15 cents
	h := admitted(t, testLimits(1000, 1000, 1, false, &capCents))
	statuses := []int{}
	for range 9 {
		statuses = append(statuses, h.do(t, "POST", "/v1/convert", keyConvert, convertBody("camt.053"), jsonCT).status)
	}
	// 1 included + 6 overage (0.90 cents); the 8th would reach 1.05 ≥ 1 cent.
	want := []int{200, 200, 200, 200, 200, 200, 200, 429, 429}
	if fmt.Sprint(statuses) != fmt.Sprint(want) {
		t.Fatalf("statuses %v, want %v", statuses, want)
	}
	r := h.do(t, "POST", "/v1/convert", keyConvert, convertBody("camt.053"), jsonCT)
	if p := r.problem(t); !strings.Contains(p.Detail, "spend cap") {
		t.Fatalf("detail must name the cap: %+v", p)
	}
}

func TestIdempotency(t *testing.T) {
	h := admitted(t, testLimits(1000, 1000, 1000, false, nil))
	patch := func(id, key, body string) reply {
		hdr := map[string]string{"Content-Type": "application/json"}
		if key != "" {
			hdr["Idempotency-Key"] = key
		}
		return h.do(t, "PATCH", "/v1/transactions/"+id, keyFinanceWrite, strings.NewReader(body), hdr)
	}
	if r := patch("t1", "", `{"expected_version":1}`); r.status != 400 || r.problem(t).Field != "Idempotency-Key" {
		t.Fatalf("finance write without a key: %d %s", r.status, r.body)
	}
	if r := patch("t1", strings.Repeat("k", 129), `{"expected_version":1}`); r.status != 400 {
		t.Fatalf("129-character key: %d", r.status)
	}
	first := patch("t1", "key-1", `{"expected_version":1,"memo":"a"}`)
	if first.status != 200 || first.header.Get("Idempotency-Replayed") != "" {
		t.Fatalf("first: %d %v", first.status, first.header)
	}
	again := patch("t1", "key-1", `{"expected_version":1,"memo":"a"}`)
	if again.status != 200 || again.header.Get("Idempotency-Replayed") != "true" || string(again.body) != string(first.body) ||
		again.header.Get("Content-Type") != first.header.Get("Content-Type") {
		t.Fatalf("replay: %d %v %q vs %q", again.status, again.header, again.body, first.body)
	}
	if n := h.fin.updates.Load(); n != 1 {
		t.Fatalf("executions = %d, want 1", n)
	}
	// Metered conflicts say nothing about quota.
	conv := func(body string) reply {
		return h.do(t, "POST", "/v1/convert", keyConvert, strings.NewReader(body), map[string]string{"Content-Type": "application/json", "Idempotency-Key": "c-1"})
	}
	if r := conv(`{"to":"camt.053","message":"a"}`); r.status != 200 || r.header.Get("X-Quota-Remaining") == "" {
		t.Fatalf("metered first: %d %v", r.status, r.header)
	}
	if r := conv(`{"to":"camt.053","message":"b"}`); r.status != 409 || r.header.Get("X-Quota-Remaining") != "" {
		t.Fatalf("metered conflict: %d %v", r.status, r.header)
	}
	for name, r := range map[string]reply{
		"other body": patch("t1", "key-1", `{"expected_version":1,"memo":"b"}`),
		"other id":   patch("t2", "key-1", `{"expected_version":1,"memo":"a"}`),
	} {
		p := r.problem(t)
		if r.status != 409 || p.Type != "idempotency-conflict" || r.header.Get("Retry-After") != "" {
			t.Fatalf("%s: %d %+v %v", name, r.status, p, r.header)
		}
	}
}

func TestIdempotencyInFlightAndExactlyOnce(t *testing.T) {
	h := admitted(t, testLimits(1000, 1000, 1000, false, nil))
	h.fin.delay = 300 * time.Millisecond
	var wg sync.WaitGroup
	results := make([]reply, 50)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = h.do(t, "PATCH", "/v1/transactions/t9", keyFinanceWrite, strings.NewReader(`{"expected_version":3}`),
				map[string]string{"Content-Type": "application/json", "Idempotency-Key": "burst"})
		}()
	}
	wg.Wait()
	ok, inflight := 0, 0
	for _, r := range results {
		switch r.status {
		case 200:
			ok++
		case 409:
			if r.problem(t).Type != "idempotency-in-flight" || r.header.Get("Retry-After") != "1" {
				t.Fatalf("in-flight 409: %v %s", r.header, r.body)
			}
			inflight++
		default:
			t.Fatalf("unexpected %d %s", r.status, r.body)
		}
	}
	if n := h.fin.updates.Load(); n != 1 {
		t.Fatalf("50 identical requests executed %d times, want once", n)
	}
	if ok+inflight != 50 || ok < 1 {
		t.Fatalf("ok %d, in flight %d", ok, inflight)
	}
}

// stoppableRedisHarness is a harness on a miniredis the test can stop and
// restart on the same port (where the client finds it again).
func stoppableRedisHarness(t *testing.T) (*harness, *miniredis.Miniredis) {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	lis.Close()
	srv := miniredis.NewMiniRedis()
	if err := srv.StartAddr(addr); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	rc := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: 0, DialTimeout: 200 * time.Millisecond})
	t.Cleanup(func() { _ = rc.Close() })
	h := newHarnessWith(t, harnessOpts{redis: rc, limits: testLimits(1000, 1000, 1000, false, nil)})
	return h, srv
}

func TestFailOpenAndReconcile(t *testing.T) {
	h, srv := stoppableRedisHarness(t)
	convert := func() reply { return h.do(t, "POST", "/v1/convert", keyConvert, convertBody("camt.053"), jsonCT) }
	for range 3 {
		convert()
	}
	srv.Close() // Redis stops mid-run
	for range 4 {
		if r := convert(); r.status != 200 || r.header.Get("RateLimit-Limit") != "" {
			t.Fatalf("with Redis down requests must go through unlimited: %d %v", r.status, r.header)
		}
	}
	metrics := httptestGet(t, h.gw.Metrics())
	if !strings.Contains(metrics, `ledgerlane_gateway_fail_open_total{stage="admit"} 4`) ||
		!strings.Contains(metrics, "ledgerlane_gateway_usage_journal_pending 4") {
		t.Fatalf("metrics: %s", metrics)
	}
	if left, err := h.gw.ReconcileUsage(context.Background()); err == nil || left != 4 {
		t.Fatalf("reconcile while down: %d %v", left, err)
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	if left, err := h.gw.ReconcileUsage(context.Background()); err != nil || left != 0 {
		t.Fatalf("reconcile: %d %v", left, err)
	}
	r := convert()
	if r.header.Get("X-Quota-Remaining") != fmt.Sprint(1000-7) {
		t.Fatalf("after reconciliation the 4 requests made during the outage count: %v", r.header)
	}
}

// TestFailOpenBatchesBillTheirItemsOnce: while Redis cannot be reached a
// batch is journalled by its items, not as one request, and an answer the
// jobs service found by the Idempotency-Key (work an earlier attempt
// committed) is not billed again: the fault suite's 50 concurrent
// duplicates, with Redis marked unavailable under load, billed 49 for one
// 100-item job (1 for the committing attempt, 1 for each of 48 replays).
func TestFailOpenBatchesBillTheirItemsOnce(t *testing.T) {
	h, srv := stoppableRedisHarness(t)
	batch := func(to, key string) reply {
		t.Helper()
		return h.do(t, "POST", "/v1/convert/batch", keyConvert,
			strings.NewReader(`{"to":"`+to+`","items":[{"message":":20:X"},{"message":":20:Y"},{"message":":20:Z"}]}`),
			map[string]string{"Content-Type": "application/json", "Idempotency-Key": key})
	}
	srv.Close() // Redis out: every request fails open
	if r := batch("camt.053", "k-1"); r.status != 202 {
		t.Fatalf("batch: %d %s", r.status, r.body)
	}
	for range 3 {
		if r := batch("found", "k-1"); r.status != 202 || r.header.Get("Idempotency-Replayed") != "true" {
			t.Fatalf("replayed batch: %d %v %s", r.status, r.header, r.body)
		}
	}
	metrics := httptestGet(t, h.gw.Metrics())
	if !strings.Contains(metrics, "ledgerlane_gateway_usage_journal_pending 3\n") {
		t.Fatalf("want the 3 items of the one job journalled: %s", metrics)
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	if left, err := h.gw.ReconcileUsage(context.Background()); err != nil || left != 0 {
		t.Fatalf("reconcile: %d %v", left, err)
	}
	r := h.do(t, "POST", "/v1/convert", keyConvert, convertBody("camt.053"), jsonCT)
	if r.header.Get("X-Quota-Remaining") != fmt.Sprint(1000-3) {
		t.Fatalf("after reconciliation the job's 3 items count, once: %v", r.header)
	}
}

func httptestGet(t *testing.T, h http.Handler) string {
	t.Helper()
	rec := &strings.Builder{}
	w := &bodyWriter{h: http.Header{}, b: rec}
	req, _ := http.NewRequest("GET", "/metrics", nil)
	h.ServeHTTP(w, req)
	return rec.String()
}

type bodyWriter struct {
	h http.Header
	b *strings.Builder
}

func (w *bodyWriter) Header() http.Header         { return w.h }
func (w *bodyWriter) WriteHeader(int)             {}
func (w *bodyWriter) Write(p []byte) (int, error) { return w.b.Write(p) }

func TestBatchIsAcceptedOrRefusedWhole(t *testing.T) {
	h := admitted(t, testLimits(1000, 1000, 5, true, nil))
	batch := func(n int) reply {
		items := strings.TrimSuffix(strings.Repeat(`{"message":":20:X"},`, n), ",")
		return h.do(t, "POST", "/v1/convert/batch", keyConvert, strings.NewReader(`{"to":"camt.053","items":[`+items+`]}`), jsonCT)
	}
	r := batch(3)
	if r.status != 202 || decode(t, r.body)["status"] != "queued" || r.header.Get("X-Quota-Remaining") != "5" {
		t.Fatalf("batch of 3: %d %v %s", r.status, r.header, r.body)
	}
	if r := batch(3); r.status != 429 || r.problem(t).Type != "quota-exceeded" {
		t.Fatalf("a batch that does not fit must be refused whole: %d %s", r.status, r.body)
	}
	if r := batch(2); r.status != 202 || r.header.Get("X-Quota-Remaining") != "2" {
		t.Fatalf("batch of 2: %d %v", r.status, r.header)
	}
}

// TestBatchFoundByItsKeyIsBilledOnce: a batch the jobs service finds by its
// Idempotency-Key (the attempt that committed it lost its answer) is billed
// only when that attempt's units were given back: after a 5xx, yes; after a
// gateway that died before settling (no record of the key), no.
func TestBatchFoundByItsKeyIsBilledOnce(t *testing.T) {
	h := admitted(t, testLimits(1000, 1000, 100, true, nil))
	batch := func(to, key string) reply {
		t.Helper()
		return h.do(t, "POST", "/v1/convert/batch", keyConvert,
			strings.NewReader(`{"to":"`+to+`","items":[{"message":":20:X"},{"message":":20:Y"}]}`),
			map[string]string{"Content-Type": "application/json", "Idempotency-Key": key})
	}
	steps := []struct {
		name, to, key string
		status        int
		remaining     string // X-Quota-Remaining: the count before the request
		replayed      bool
	}{
		{"a new job", "camt.053", "k-new", 202, "100", false},
		{"found, its attempt never settled", "found", "k-orphan", 202, "98", true},
		{"the replica died after committing", "unavailable", "k-lost", 503, "", false},
		{"found after that 503", "found", "k-lost", 202, "98", true},
		{"what the account was billed", "camt.053", "k-check", 202, "96", false},
	}
	for _, s := range steps {
		r := batch(s.to, s.key)
		if r.status != s.status || (s.remaining != "" && r.header.Get("X-Quota-Remaining") != s.remaining) ||
			(r.header.Get("Idempotency-Replayed") == "true") != s.replayed {
			t.Fatalf("%s: %d remaining %q replayed %q; want %d %q %v: %s", s.name, r.status,
				r.header.Get("X-Quota-Remaining"), r.header.Get("Idempotency-Replayed"), s.status, s.remaining, s.replayed, r.body)
		}
	}
}
