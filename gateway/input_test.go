package gateway_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/ledgerlane/platform/pkg/problem"
	conversionv1 "github.com/ledgerlane/platform/proto/conversion/v1"
)

// Validate answers a content-level 400 for the message "bad", so tests can
// tell what the backend counted from what the edge refused.
func (f *fakeConverter) Validate(_ context.Context, r *conversionv1.ValidateRequest) (*conversionv1.ValidateResponse, error) {
	if r.GetMessage() == "bad" {
		return nil, problem.New(problem.InvalidInput, "the message is not MT or MX").WithField("message")
	}
	return &conversionv1.ValidateResponse{Valid: true, DetectedType: "MT940"}, nil
}

// Input no backend could read is refused at the edge with 400 naming the
// parameter, before any backend call; never a 500.
func TestEdgeRefusesUnreadableInput(t *testing.T) {
	h := newHarness(t)
	raw := map[string]string{"Content-Type": "text/plain"}
	tests := []struct {
		name, method, path, key string
		hdr                     map[string]string
		body                    string
		field                   string
	}{
		{"query value", "GET", "/v1/transactions/search?q=%FF", keyFinance, nil, "", "q"},
		{"cursor with a NUL", "GET", "/v1/transactions?cursor=%00", keyFinance, nil, "", "cursor"},
		{"path id", "GET", "/v1/transactions/%FF%FE", keyFinance, nil, "", "id"},
		{"path id with a control character", "PATCH", "/v1/transactions/a%0Ab", keyFinanceWrite, map[string]string{"Idempotency-Key": "k1"}, "{}", "id"},
		{"malformed query", "GET", "/v1/transactions?page_size=%zz", keyFinance, nil, "", "query"},
		{"query name", "GET", "/v1/transactions?%FF=1", keyFinance, nil, "", "query"},
		{"convert target", "POST", "/v1/convert?to=%FF", keyConvert, raw, ":20:X", "to"},
		{"X-Service header", "POST", "/v1/convert", keyConvert, map[string]string{"Content-Type": "text/plain", "X-Service-To": "camt\xff"}, ":20:X", "X-Service-To"},
		{"trailing JSON", "PATCH", "/v1/transactions/t1", keyFinanceWrite, map[string]string{"Idempotency-Key": "k2"}, `{"expected_version":3}{"memo":"x"}`, "body"},
		{"trailing JSON envelope", "POST", "/v1/convert", keyConvert, jsonCT, `{"to":"camt.053","message":"x"} []`, "body"},
		{"NUL in a JSON string", "PATCH", "/v1/transactions/t1", keyFinanceWrite, map[string]string{"Idempotency-Key": "k3"}, `{"memo":"a\u0000b"}`, "body"},
		{"not JSON", "POST", "/v1/validate", keyConvert, nil, `{"message":`, "body"},
		{"unknown query parameter", "GET", "/v1/transactions?page_size=3&pagesize=3", keyFinance, nil, "", "pagesize"},
		{"unknown parameter on a write", "PATCH", "/v1/transactions/t1?dry_run=1", keyFinanceWrite, map[string]string{"Idempotency-Key": "k5"}, `{"memo":"x"}`, "dry_run"},
		{"a body field as a query parameter of a write", "PATCH", "/v1/transactions/t1?expected_version=abc", keyFinanceWrite, map[string]string{"Idempotency-Key": "k8", "Content-Type": "application/json"}, `{"memo":"x"}`, "expected_version"},
		{"text/plain JSON write", "PATCH", "/v1/transactions/t1", keyFinanceWrite, map[string]string{"Idempotency-Key": "k6", "Content-Type": "text/plain"}, `{"memo":"x"}`, "Content-Type"},
		{"form post", "POST", "/v1/validate", keyConvert, map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, `{"message":"x"}`, "Content-Type"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var body *strings.Reader
			if tt.body != "" {
				body = strings.NewReader(tt.body)
			}
			var r reply
			if body != nil {
				r = h.do(t, tt.method, tt.path, tt.key, body, tt.hdr)
			} else {
				r = h.do(t, tt.method, tt.path, tt.key, nil, tt.hdr)
			}
			p := r.problem(t)
			if r.status != 400 || p.Type != problem.InvalidInput || p.Field != tt.field {
				t.Fatalf("want 400 invalid-input naming %s, got %d %+v", tt.field, r.status, p)
			}
		})
	}
	if h.fin.updates.Load() != 0 || h.conv.last != nil {
		t.Fatal("a refused request reached a backend")
	}
	// An escaped backslash before u0000 is no NUL.
	r := h.do(t, "PATCH", "/v1/transactions/t1", keyFinanceWrite, strings.NewReader(`{"memo":"a\\u0000b"}`), map[string]string{"Idempotency-Key": "k4"})
	if r.status != 200 {
		t.Fatalf("escaped backslash: %d %s", r.status, r.body)
	}
	// Both names of a field are parameters; a JSON type with parameters, or
	// a +json type, is JSON.
	r = h.do(t, "GET", "/v1/transactions?pageSize=3", keyFinance, nil, nil)
	if r.status != 200 {
		t.Fatalf("pageSize: %d %s", r.status, r.body)
	}
	r = h.do(t, "PATCH", "/v1/transactions/t1", keyFinanceWrite, strings.NewReader(`{"memo":"x"}`), map[string]string{"Idempotency-Key": "k7", "Content-Type": "application/json; charset=utf-8"})
	if r.status != 200 {
		t.Fatalf("json with charset: %d %s", r.status, r.body)
	}
	// A secret that is not visible ASCII is unknown, not a metering error.
	r = h.do(t, "GET", "/v1/formats", "ak_live_\xff", nil, nil)
	if r.status != 401 {
		t.Fatalf("non-ASCII secret: %d %s", r.status, r.body)
	}
}

// Requests the edge refuses, or that grpc-gateway cannot decode, are never
// counted; the backend's own 400 is. One rule for every metered route.
func TestOnlyContentLevelRefusalsCount(t *testing.T) {
	h := admitted(t, testLimits(1000, 1000, 10, true, nil))
	validate := func(body string) reply {
		return h.do(t, "POST", "/v1/validate", keyConvert, strings.NewReader(body), jsonCT)
	}
	if r := validate(`{"message":"x"}`); r.status != 200 || r.header.Get("X-Quota-Remaining") != "10" {
		t.Fatalf("first validate: %d %v %s", r.status, r.header, r.body)
	}
	for _, body := range []string{`{"message":`, `{"mesage":"x"}`, `{"message":"x"}{}`, `{"message":7}`} {
		if r := validate(body); r.status != 400 {
			t.Fatalf("%s: %d %s", body, r.status, r.body)
		}
	}
	if r := h.do(t, "POST", "/v1/convert", keyConvert, strings.NewReader(`{"to":"camt.053","mesage":"x"}`), jsonCT); r.status != 400 {
		t.Fatalf("convert unknown member: %d", r.status)
	}
	if r := validate("bad"); r.status != 400 {
		t.Fatalf("not JSON: %d", r.status)
	}
	if r := validate(`{"message":"bad"}`); r.status != 400 || r.header.Get("X-Quota-Remaining") != "9" {
		t.Fatalf("content-level 400: %d %v (edge refusals must not count)", r.status, r.header)
	}
	if r := validate(`{"message":"x"}`); r.header.Get("X-Quota-Remaining") != "8" {
		t.Fatalf("the backend's 400 must count: %v", r.header)
	}
}

// from, to and the target version each fall back on their own: envelope,
// then query, then X-Service-* header.
func TestConvertResolvesEachParameterOnItsOwn(t *testing.T) {
	h := newHarness(t)
	tests := []struct {
		name, path, body string
		hdr              map[string]string
		to, from, ver    string
	}{
		{"envelope without to takes the query", "/v1/convert?to=camt.053&toVersion=camt.053.001.02", `{"message":"x"}`, nil, "camt.053", "", "camt.053.001.02"},
		{"envelope without to takes the header", "/v1/convert", `{"message":"x","from":"MT940"}`, map[string]string{"X-Service-To": "csv", "X-Service-From": "MT942"}, "csv", "MT940", ""},
		{"envelope wins", "/v1/convert?to=csv", `{"message":"x","to":"camt.053","options":{"targetVersion":"camt.053.001.08"}}`, map[string]string{"X-Service-To-Version": "camt.053.001.02"}, "camt.053", "", "camt.053.001.08"},
		{"query wins over header", "/v1/convert?to=csv&from=MT940", `{"message":"x"}`, map[string]string{"X-Service-To": "camt.053", "X-Service-From": "MT942"}, "csv", "MT940", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hdr := map[string]string{"Content-Type": "application/json"}
			for k, v := range tt.hdr {
				hdr[k] = v
			}
			if r := h.do(t, "POST", tt.path, keyConvert, strings.NewReader(tt.body), hdr); r.status != 200 {
				t.Fatalf("%d %s", r.status, r.body)
			}
			h.conv.mu.Lock()
			last := h.conv.last
			h.conv.mu.Unlock()
			if last.GetTo() != tt.to || last.GetFrom() != tt.from || last.GetOptions().GetTargetVersion() != tt.ver {
				t.Fatalf("got to=%q from=%q version=%q", last.GetTo(), last.GetFrom(), last.GetOptions().GetTargetVersion())
			}
		})
	}
}

// HEAD answers wherever GET does, with GET's headers and no body; OPTIONS
// answers 204 with Allow; 405 lists HEAD and OPTIONS too.
func TestHeadAndOptions(t *testing.T) {
	h := newHarness(t)
	get := h.do(t, "GET", "/v1/transactions", keyFinance, nil, nil)
	head := h.do(t, "HEAD", "/v1/transactions", keyFinance, nil, nil)
	if head.status != 200 || len(head.body) != 0 || head.header.Get("Content-Type") != get.header.Get("Content-Type") ||
		head.header.Get("Content-Length") != get.header.Get("Content-Length") {
		t.Fatalf("HEAD: %d %v (GET %v)", head.status, head.header, get.header)
	}
	if r := h.do(t, "HEAD", "/v1/health", "", nil, nil); r.status != 200 || len(r.body) != 0 {
		t.Fatalf("HEAD health: %d", r.status)
	}
	if r := h.do(t, "HEAD", "/v1/transactions", "", nil, nil); r.status != 401 {
		t.Fatalf("HEAD without a key: %d", r.status)
	}
	if r := h.do(t, "HEAD", "/v1/convert", keyConvert, nil, nil); r.status != 405 {
		t.Fatalf("HEAD on a POST route: %d", r.status)
	}
	r := h.do(t, "OPTIONS", "/v1/transactions/t1", "", nil, nil)
	if r.status != http.StatusNoContent || r.header.Get("Allow") != "GET, HEAD, OPTIONS, PATCH" {
		t.Fatalf("OPTIONS: %d Allow %q", r.status, r.header.Get("Allow"))
	}
	if r := h.do(t, "OPTIONS", "/v1/nope", "", nil, nil); r.status != 404 {
		t.Fatalf("OPTIONS on no route: %d", r.status)
	}
	r = h.do(t, "DELETE", "/v1/convert", keyConvert, nil, nil)
	if r.status != 405 || r.header.Get("Allow") != "OPTIONS, POST" {
		t.Fatalf("405: %d Allow %q", r.status, r.header.Get("Allow"))
	}
}

// A replay carries the quota headers the request was first answered with.
func TestReplayCarriesQuotaHeaders(t *testing.T) {
	h := admitted(t, testLimits(1000, 1000, 5, true, nil))
	hdr := map[string]string{"Content-Type": "application/json", "Idempotency-Key": "q-1"}
	first := h.do(t, "POST", "/v1/convert", keyConvert, convertBody("camt.053"), hdr)
	h.do(t, "POST", "/v1/convert", keyConvert, convertBody("camt.053"), jsonCT)
	again := h.do(t, "POST", "/v1/convert", keyConvert, convertBody("camt.053"), hdr)
	if again.header.Get("Idempotency-Replayed") != "true" || first.header.Get("X-Quota-Limit") != "5" ||
		again.header.Get("X-Quota-Limit") != "5" || again.header.Get("X-Quota-Remaining") != first.header.Get("X-Quota-Remaining") {
		t.Fatalf("replay headers: %v, first %v", again.header, first.header)
	}
}

// A batch refused whole says what it asked for and what is left.
func TestBatchRefusalNamesWhatIsLeft(t *testing.T) {
	h := admitted(t, testLimits(1000, 1000, 5, true, nil))
	batch := func(key string, n int) reply {
		items := strings.TrimSuffix(strings.Repeat(`{"message":":20:X"},`, n), ",")
		return h.do(t, "POST", "/v1/convert/batch", key, strings.NewReader(`{"to":"camt.053","items":[`+items+`]}`), jsonCT)
	}
	if r := batch(keyTest, 249); r.status != 202 {
		t.Fatalf("249 test items: %d %s", r.status, r.body)
	}
	r := batch(keyTest, 2)
	if p := r.problem(t); r.status != 429 || !strings.Contains(p.Detail, "2 items requested, 1 left in the test pool") {
		t.Fatalf("test pool: %d %q", r.status, p.Detail)
	}
	r = batch(keyConvert, 6)
	if p := r.problem(t); r.status != 429 || !strings.Contains(p.Detail, "6 items requested, 5 left in the starter plan's quota") {
		t.Fatalf("live quota: %d %q", r.status, p.Detail)
	}
}
