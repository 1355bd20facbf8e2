package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ledgerlane/platform/gateway"
	"github.com/ledgerlane/platform/pkg/principal"
	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/pkg/rpc"
	conversionv1 "github.com/ledgerlane/platform/proto/conversion/v1"
	financev1 "github.com/ledgerlane/platform/proto/finance/v1"
	jobsv1 "github.com/ledgerlane/platform/proto/jobs/v1"
	meteringv1 "github.com/ledgerlane/platform/proto/metering/v1"
)

// fakeMetering resolves a fixed set of secrets; revoke removes one.
type fakeMetering struct {
	meteringv1.UnimplementedCredentialServiceServer
	mu     sync.Mutex
	keys   map[string]*meteringv1.Principal
	calls  int
	limits *meteringv1.AccountLimits
}

func (f *fakeMetering) ResolveCredential(_ context.Context, r *meteringv1.ResolveCredentialRequest) (*meteringv1.ResolveCredentialResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	p, ok := f.keys[r.GetSecret()]
	if !ok {
		return nil, problem.New(problem.Unauthorized, "invalid credential")
	}
	return &meteringv1.ResolveCredentialResponse{Principal: p, Limits: f.limits}, nil
}

func (f *fakeMetering) revoke(secret string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.keys, secret)
}

// fakeFinance echoes the caller so tests can see the principal arrive.
type fakeFinance struct {
	financev1.UnimplementedTransactionServiceServer
	financev1.UnimplementedAccountServiceServer
	updates atomic.Int32
	delay   time.Duration
}

// UpdateTransaction counts executions so idempotency tests can see them.
func (f *fakeFinance) UpdateTransaction(_ context.Context, r *financev1.UpdateTransactionRequest) (*financev1.UpdateTransactionResponse, error) {
	n := f.updates.Add(1)
	time.Sleep(f.delay)
	v := n
	return &financev1.UpdateTransactionResponse{Data: &financev1.Transaction{Id: r.GetId(), Memo: r.Memo, Version: &v}}, nil
}

func (*fakeFinance) ListTransactions(ctx context.Context, r *financev1.ListTransactionsRequest) (*financev1.ListTransactionsResponse, error) {
	p, _ := principal.FromIncoming(ctx)
	if r.GetPageSize() == 13 {
		panic("backend bug")
	}
	if r.GetPageSize() == 14 {
		return nil, problem.New(problem.Unauthorized, "the credential's grant is not valid")
	}
	id := "tx-of-" + p.FinanceUserID
	return &financev1.ListTransactionsResponse{
		Data:       []*financev1.Transaction{{Id: id}},
		Pagination: &financev1.Pagination{},
	}, nil
}

func (*fakeFinance) ListConnections(context.Context, *financev1.ListConnectionsRequest) (*financev1.ListConnectionsResponse, error) {
	inst := "Bank connection"
	return &financev1.ListConnectionsResponse{Data: []*financev1.BankConnection{{Id: "bank-conn", Institution: &inst}}}, nil
}

type fakeConverter struct {
	conversionv1.UnimplementedConversionServiceServer
	conversionv1.UnimplementedAccountingConnectionServiceServer
	mu   sync.Mutex
	last *conversionv1.ConvertRequest
}

func (f *fakeConverter) Convert(_ context.Context, r *conversionv1.ConvertRequest) (*conversionv1.ConvertResponse, error) {
	f.mu.Lock()
	f.last = r
	f.mu.Unlock()
	switch r.GetTo() {
	case "boom":
		return nil, status.Error(codes.Internal, "converter crashed")
	case "bad":
		return nil, problem.New(problem.InvalidInput, "message 1, line 3, field :61: bad amount").WithField("message")
	}
	pages, media := []string{"page1"}, "application/xml"
	if strings.HasPrefix(strings.ToLower(r.GetTo()), "mt") {
		pages, media = []string{":20:A\n", ":20:B\n"}, "text/plain"
	}
	return &conversionv1.ConvertResponse{
		Result:   pages,
		Warnings: []*conversionv1.Warning{{Code: "TRUNCATED", Severity: "warning"}},
		Meta:     &conversionv1.ConvertMeta{DetectedType: "MT940", TargetType: r.GetTo(), Pages: int32(len(pages)), MediaType: media},
	}, nil
}

func (f *fakeConverter) ListConnections(context.Context, *conversionv1.ListConnectionsRequest) (*conversionv1.ListConnectionsResponse, error) {
	return &conversionv1.ListConnectionsResponse{Connections: []*conversionv1.Connection{{Id: "accounting-conn"}}}, nil
}

type fakeJobs struct {
	jobsv1.UnimplementedJobServiceServer
}

// CreateBatch answers a new job, but for two targets that act out the jobs
// service's key handling: "unavailable" (its replica died after the commit)
// and "found" (the job its Idempotency-Key had already committed).
func (fakeJobs) CreateBatch(ctx context.Context, r *jobsv1.CreateBatchRequest) (*jobsv1.CreateBatchResponse, error) {
	switch r.GetTo() {
	case "unavailable":
		return nil, status.Error(codes.Unavailable, "replica stopped")
	case "found":
		if err := rpc.MarkReplayed(ctx); err != nil {
			return nil, err
		}
	}
	return &jobsv1.CreateBatchResponse{Job: &jobsv1.Job{Id: "job-1", Status: "queued", ItemCount: int32(len(r.GetItems()))}}, nil
}

type harness struct {
	gw       *gateway.Gateway
	fin      *fakeFinance
	url      string
	redisUp  atomic.Bool
	metering *fakeMetering
	conv     *fakeConverter
	clock    *fakeClock
}

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func serve(t *testing.T, register func(*grpc.Server)) *grpc.ClientConn {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := rpc.NewServer(slog.New(slog.DiscardHandler), nil)
	register(s)
	go func() { _ = s.Serve(lis) }()
	t.Cleanup(s.Stop)
	conn, err := rpc.Dial(lis.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

const (
	keyConvert      = "ak_live_convert"
	keyFormats      = "ak_live_formatsonly"
	keyManage       = "ak_live_manage"
	keyFinance      = "at_live_finance"
	keyFinanceWrite = "at_live_finance_write"
)

func newHarness(t *testing.T) *harness { return newHarnessWith(t, harnessOpts{}) }

type harnessOpts struct {
	redis  redis.UniversalClient
	limits *meteringv1.AccountLimits
}

func newHarnessWith(t *testing.T, o harnessOpts) *harness {
	t.Helper()
	h := &harness{
		metering: &fakeMetering{keys: map[string]*meteringv1.Principal{
			keyConvert:      {AccountId: "acct1", Surface: "conversion", Mode: "live", Scopes: []string{"convert", "validate", "formats:read"}},
			keyFormats:      {AccountId: "acct1", Surface: "conversion", Mode: "live", Scopes: []string{"formats:read"}},
			keyManage:       {AccountId: "acct1", Surface: "conversion", Mode: "live", Scopes: []string{"connections:manage"}},
			keyFinance:      {AccountId: "acct1", Surface: "finance", Mode: "live", Scopes: []string{"transactions:read", "accounts:read"}, FinanceUserId: "user1", GrantId: "g1"},
			keyFinanceWrite: {AccountId: "acct1", Surface: "finance", Mode: "live", Scopes: []string{"transactions:read", "transactions:write"}, FinanceUserId: "user1", GrantId: "g2"},
		}},
		conv:  &fakeConverter{},
		clock: &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)},
		fin:   &fakeFinance{},
	}
	h.metering.limits = o.limits
	fin := serve(t, func(s *grpc.Server) {
		financev1.RegisterTransactionServiceServer(s, h.fin)
		financev1.RegisterAccountServiceServer(s, h.fin)
	})
	conv := serve(t, func(s *grpc.Server) {
		conversionv1.RegisterConversionServiceServer(s, h.conv)
	})
	met := serve(t, func(s *grpc.Server) { meteringv1.RegisterCredentialServiceServer(s, h.metering) })
	jobs := serve(t, func(s *grpc.Server) {
		jobsv1.RegisterJobServiceServer(s, fakeJobs{})
		// Accounting connections are the jobs service's.
		conversionv1.RegisterAccountingConnectionServiceServer(s, h.conv)
	})
	g, err := gateway.New(gateway.Config{
		Backends: gateway.Backends{Finance: fin, Converter: conv, Metering: met, Jobs: jobs},
		Checks: []gateway.Check{{Name: "redis", Probe: func(context.Context) error {
			if !h.redisUp.Load() {
				return errors.New("connection refused")
			}
			return nil
		}}},
		Version: "1.2.3", Commit: "abc123",
		CredentialTTL: 5 * time.Second,
		Log:           slog.New(slog.DiscardHandler),
		Now:           h.clock.Now,
		Redis:         o.redis,
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(g.Handler())
	t.Cleanup(srv.Close)
	h.url = srv.URL
	h.gw = g
	return h
}

type reply struct {
	status int
	header http.Header
	body   []byte
}

func (r reply) problem(t *testing.T) problem.Problem {
	t.Helper()
	if ct := r.header.Get("Content-Type"); ct != problem.ContentType {
		t.Fatalf("Content-Type = %q, want problem+json; body %s", ct, r.body)
	}
	var p problem.Problem
	if err := json.Unmarshal(r.body, &p); err != nil {
		t.Fatalf("problem body: %v: %s", err, r.body)
	}
	if p.Instance == "" || p.Instance != r.header.Get("X-Request-Id") {
		t.Fatalf("instance %q must be the request id %q", p.Instance, r.header.Get("X-Request-Id"))
	}
	return p
}

func (h *harness) do(t *testing.T, method, path, key string, body io.Reader, hdr map[string]string) reply {
	t.Helper()
	req, err := http.NewRequest(method, h.url+path, body)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return reply{resp.StatusCode, resp.Header, b}
}

func TestProblems(t *testing.T) {
	h := newHarness(t)
	big := strings.Repeat("x", 2<<20+1)
	tests := []struct {
		name         string
		method, path string
		key          string
		body         string
		hdr          map[string]string
		status       int
		typ          problem.Type
		field        string
	}{
		{"unknown route", "GET", "/v1/nothing", keyConvert, "", nil, 404, problem.NotFound, ""},
		{"unknown route without key", "GET", "/nothing", "", "", nil, 404, problem.NotFound, ""},
		{"wrong method", "DELETE", "/v1/health", "", "", nil, 405, problem.MethodNotAllowed, ""},
		{"missing key", "GET", "/v1/formats", "", "", nil, 401, problem.Unauthorized, ""},
		{"unknown key", "GET", "/v1/formats", "ak_live_nope", "", nil, 401, problem.Unauthorized, ""},
		{"malformed key", "GET", "/v1/formats", "garbage", "", nil, 401, problem.Unauthorized, ""},
		{"missing scope", "POST", "/v1/convert", keyFormats, `{"to":"camt.053","message":"x"}`, map[string]string{"Content-Type": "application/json"}, 403, problem.ForbiddenScope, ""},
		{"finance key on conversion route", "GET", "/v1/formats", keyFinance, "", nil, 403, problem.ForbiddenScope, ""},
		{"conversion key on finance route", "GET", "/v1/transactions", keyConvert, "", nil, 403, problem.ForbiddenScope, ""},
		{"convert body over 2 MiB", "POST", "/v1/convert", keyConvert, big, map[string]string{"Content-Type": "text/plain"}, 413, problem.MessageTooLarge, ""},
		{"convert unsupported content type", "POST", "/v1/convert", keyConvert, "x", map[string]string{"Content-Type": "image/png"}, 400, problem.InvalidInput, "Content-Type"},
		{"convert malformed json", "POST", "/v1/convert", keyConvert, `{"to":`, map[string]string{"Content-Type": "application/json"}, 400, problem.InvalidInput, "body"},
		{"convert unknown field", "POST", "/v1/convert", keyConvert, `{"to":"x","message":"m","bogus":1}`, map[string]string{"Content-Type": "application/json"}, 400, problem.InvalidInput, "bogus"},
		{"convert wrong type", "POST", "/v1/convert", keyConvert, `{"to":5,"message":"m"}`, map[string]string{"Content-Type": "application/json"}, 400, problem.InvalidInput, "to"},
		{"convert missing to", "POST", "/v1/convert", keyConvert, `:20:X`, map[string]string{"Content-Type": "text/plain"}, 400, problem.InvalidInput, "to"},
		{"convert accept mismatch", "POST", "/v1/convert?to=camt.053", keyConvert, `:20:X`, map[string]string{"Content-Type": "text/plain", "Accept": "text/plain"}, 406, problem.NotAcceptable, "Accept"},
		{"generated route bad query", "GET", "/v1/transactions?page_size=abc", keyFinance, "", nil, 400, problem.InvalidInput, "page_size"},
		{"route not built yet", "GET", "/v1/sync-status", keyFinance, "", nil, 501, problem.NotImplemented, ""},
		{"backend panic", "GET", "/v1/transactions?page_size=13", keyFinance, "", nil, 500, problem.Internal, ""},
		{"ready with a dependency down", "GET", "/v1/ready", "", "", nil, 503, problem.Unavailable, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var body io.Reader
			if tt.body != "" {
				body = strings.NewReader(tt.body)
			}
			r := h.do(t, tt.method, tt.path, tt.key, body, tt.hdr)
			if r.status != tt.status {
				t.Fatalf("status = %d, want %d; body %s", r.status, tt.status, r.body)
			}
			p := r.problem(t)
			if p.Type != tt.typ || p.Status != tt.status || p.Title == "" {
				t.Fatalf("problem = %+v, want type %s", p, tt.typ)
			}
			if p.Field != tt.field {
				t.Fatalf("field = %q, want %q (detail %q)", p.Field, tt.field, p.Detail)
			}
			if strings.Contains(string(r.body), "goroutine") || strings.Contains(string(r.body), "backend bug") {
				t.Fatalf("body leaks internals: %s", r.body)
			}
		})
	}
}

func TestUnauthorizedNeverTellsWhetherAKeyExists(t *testing.T) {
	h := newHarness(t)
	h.metering.revoke(keyManage)
	a := h.do(t, "GET", "/v1/formats", "ak_live_never_existed", nil, nil).problem(t)
	b := h.do(t, "GET", "/v1/formats", keyManage, nil, nil).problem(t)
	a.Instance, b.Instance = "", ""
	if a != b {
		t.Fatalf("unknown and revoked keys answer differently: %+v vs %+v", a, b)
	}
	// A backend's refusal (a withdrawn grant) reads the same as the edge's.
	r := h.do(t, "GET", "/v1/transactions?page_size=14", keyFinance, nil, nil)
	c := r.problem(t)
	c.Instance = ""
	if c != a || r.header.Get("WWW-Authenticate") == "" {
		t.Fatalf("a backend 401 tells why: %+v vs %+v (%v)", c, a, r.header)
	}
}

func TestEdgeRoutes(t *testing.T) {
	h := newHarness(t)
	r := h.do(t, "GET", "/v1/health", "", nil, map[string]string{"X-Request-Id": "client-id-1"})
	if r.status != 200 || decode(t, r.body)["status"] != "ok" {
		t.Fatalf("health: %d %s", r.status, r.body)
	}
	if r.header.Get("X-Request-Id") != "client-id-1" {
		t.Fatalf("request id not echoed: %q", r.header.Get("X-Request-Id"))
	}
	h.redisUp.Store(true)
	r = h.do(t, "GET", "/v1/ready", "", nil, nil)
	if ready := decode(t, r.body); r.status != 200 || ready["status"] != "ok" || len(ready["checks"].([]any)) != 5 {
		t.Fatalf("ready: %d %s", r.status, r.body)
	}
	r = h.do(t, "GET", "/v1/version", "", nil, map[string]string{"X-Request-Id": "bad id with spaces"})
	v := decode(t, r.body)
	if r.status != 200 || v["version"] != "1.2.3" || v["commit"] != "abc123" || v["api_version"] != "v1" {
		t.Fatalf("version: %d %s", r.status, r.body)
	}
	if id := r.header.Get("X-Request-Id"); !strings.HasPrefix(id, "req_") {
		t.Fatalf("invalid client request id must be replaced, got %q", id)
	}
	// The bare host and /v1 point onwards instead of a 404; this harness
	// has no portal, so none is offered.
	for _, path := range []string{"/", "/v1", "/v1/"} {
		r = h.do(t, "GET", path, "", nil, nil)
		idx := decode(t, r.body)
		if r.status != 200 || idx["openapi"] != "/v1/openapi.json" || idx["api"] != "/v1" || idx["portal"] != nil {
			t.Fatalf("index %s: %d %s", path, r.status, r.body)
		}
	}
	if r = h.do(t, "POST", "/", "", nil, nil); r.status != 405 || r.header.Get("Allow") == "" {
		t.Fatalf("POST /: %d %v", r.status, r.header)
	}
	// The reference is served without a credential; a problem document
	// links the page of its type, and that page exists.
	if r = h.do(t, "GET", "/docs", "", nil, nil); r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "text/html") {
		t.Fatalf("/docs: %d %v", r.status, r.header)
	}
	r = h.do(t, "GET", "/v1/nope", "", nil, nil)
	link := r.header.Get("Link")
	if r.status != 404 || link != `</docs/problems/not-found>; rel="describedby"` {
		t.Fatalf("problem link: %d %q", r.status, link)
	}
	if r = h.do(t, "GET", "/docs/problems/not-found", "", nil, nil); r.status != 200 {
		t.Fatalf("the linked page: %d", r.status)
	}
	if r = h.do(t, "GET", "/docs/nope", "", nil, nil); r.status != 404 || r.problem(t).Type != problem.NotFound {
		t.Fatalf("/docs/nope: %d %s", r.status, r.body)
	}
}

func TestFinanceEnvelopeAndPrincipal(t *testing.T) {
	h := newHarness(t)
	r := h.do(t, "GET", "/v1/transactions", "", nil, map[string]string{"X-API-Key": keyFinance})
	if r.status != 200 {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	env := decode(t, r.body)
	for _, k := range []string{"data", "pagination", "redacted_fields", "filtered"} {
		if _, ok := env[k]; !ok {
			t.Fatalf("envelope lacks %q: %s", k, r.body)
		}
	}
	data := env["data"].([]any)
	if data[0].(map[string]any)["id"] != "tx-of-user1" || env["pagination"].(map[string]any)["has_more"] != false || env["filtered"] != false {
		t.Fatalf("principal or pagination missing: %s", r.body)
	}
}

func TestConnectionsRoutedBySurface(t *testing.T) {
	h := newHarness(t)
	fin := h.do(t, "GET", "/v1/connections", keyFinance, nil, nil)
	conv := h.do(t, "GET", "/v1/connections", keyManage, nil, nil)
	if fin.status != 200 || !strings.Contains(string(fin.body), "bank-conn") {
		t.Fatalf("finance credential: %d %s", fin.status, fin.body)
	}
	if conv.status != 200 || !strings.Contains(string(conv.body), "accounting-conn") {
		t.Fatalf("conversion credential: %d %s", conv.status, conv.body)
	}
}

func TestRevocationHonouredAfterCacheTTL(t *testing.T) {
	h := newHarness(t)
	if r := h.do(t, "GET", "/v1/transactions", keyFinance, nil, nil); r.status != 200 {
		t.Fatalf("first call: %d", r.status)
	}
	h.metering.revoke(keyFinance)
	if r := h.do(t, "GET", "/v1/transactions", keyFinance, nil, nil); r.status != 200 {
		t.Fatalf("within the cache TTL the key still works: %d", r.status)
	}
	h.clock.Add(6 * time.Second)
	if r := h.do(t, "GET", "/v1/transactions", keyFinance, nil, nil); r.status != 401 {
		t.Fatalf("after the TTL a revoked key must be refused, got %d", r.status)
	}
}

func TestConvertNegotiation(t *testing.T) {
	h := newHarness(t)
	json := map[string]string{"Content-Type": "application/json"}
	r := h.do(t, "POST", "/v1/convert", keyConvert, strings.NewReader(`{"to":"camt.053","message":"m","options":{"strict":true,"ofxVersion":220}}`), json)
	if r.status != 200 || !strings.Contains(string(r.body), `"result":"page1"`) || !strings.Contains(string(r.body), `"detectedType":"MT940"`) {
		t.Fatalf("envelope: %d %s", r.status, r.body)
	}
	h.conv.mu.Lock()
	last := h.conv.last
	h.conv.mu.Unlock()
	if !last.GetOptions().GetStrict() || last.GetOptions().GetOfxVersion() != "220" {
		t.Fatalf("options not carried: %+v", last.GetOptions())
	}

	r = h.do(t, "POST", "/v1/convert?to=MT940&toVersion=x", keyConvert, strings.NewReader("<Document/>"),
		map[string]string{"Content-Type": "application/xml", "Accept": "text/plain", "X-Service-To": "ignored"})
	if r.status != 200 || string(r.body) != ":20:A\n:20:B\n" || r.header.Get("X-Service-Pages") != "2" || r.header.Get("X-Service-Warnings") != "1" || r.header.Get("X-Service-Warnings-Link") != "/docs/warnings" {
		t.Fatalf("bare MT: %d %v %q", r.status, r.header, r.body)
	}
	h.conv.mu.Lock()
	last = h.conv.last
	h.conv.mu.Unlock()
	if last.GetTo() != "MT940" || string(last.GetRaw()) != "<Document/>" || last.GetOptions().GetTargetVersion() != "x" {
		t.Fatalf("query precedence / raw body: %+v", last)
	}
	r = h.do(t, "POST", "/v1/convert", keyConvert, strings.NewReader(":20:X"),
		map[string]string{"Content-Type": "text/plain", "X-Service-To": "camt.053", "Accept": "application/xml"})
	if r.status != 200 || r.header.Get("Content-Type") != "application/xml" || r.header.Get("X-Service-Pages") != "" {
		t.Fatalf("bare MX via headers: %d %v", r.status, r.header)
	}
}

// decode parses a JSON object; protojson output is compared by value, never by
// bytes, because protojson varies its whitespace on purpose.
func decode(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("json: %v: %s", err, b)
	}
	return m
}

// TestRequestMetrics: requests are counted by route pattern, never by raw
// path, with unmatched paths under one label.
func TestRequestMetrics(t *testing.T) {
	h := newHarness(t)
	h.do(t, "GET", "/v1/formats", keyConvert, nil, nil)
	h.do(t, "GET", "/v1/formats", keyConvert, nil, nil)
	h.do(t, "GET", "/v1/jobs/0c4b7b64-5f0b-4c55-9d5b-2d1c3e4f5a6b", "", nil, nil)
	h.do(t, "GET", "/v1/no/such/route", "", nil, nil)
	h.do(t, "BREW", "/v1/formats", keyConvert, nil, nil)
	metrics := httptestGet(t, h.gw.Metrics())
	// The harness's backends answer /v1/formats with whatever they do; the
	// count is what matters here.
	if !regexp.MustCompile(`ledgerlane_gateway_requests_total\{code="\d{3}",method="GET",route="/v1/formats"\} 2`).MatchString(metrics) {
		t.Errorf("GET /v1/formats not counted twice:\n%s", metrics)
	}
	for _, want := range []string{
		`ledgerlane_gateway_requests_total{code="401",method="GET",route="/v1/jobs/{id}"} 1`,
		`ledgerlane_gateway_requests_total{code="404",method="GET",route="unmatched"} 1`,
		`ledgerlane_gateway_requests_total{code="405",method="OTHER",route="unmatched"} 1`,
		`ledgerlane_gateway_request_duration_seconds_count{method="GET",route="/v1/formats"} 2`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if strings.Contains(metrics, "0c4b7b64") || strings.Contains(metrics, "no/such") {
		t.Error("a raw path became a label value")
	}
}
