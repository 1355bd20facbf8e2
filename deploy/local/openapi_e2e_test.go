package local_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"

	"github.com/ledgerlane/platform/gateway/openapi"
	"github.com/ledgerlane/platform/gateway/route"
)

// The OpenAPI 3 document the gateway serves is checked against behaviour
// here: client.call hands every request and answer of the end-to-end suite to
// conform, which validates the answer (its status is documented, its headers
// and body match) and, when the answer is 2xx, the request too (tests send bad
// requests on purpose; an accepted one must be one the document allows).

// contract is the served document, loaded once.
var contract = sync.OnceValues(func() (*openapi3.T, error) {
	doc, err := openapi3.NewLoader().LoadFromData(openapi.Document())
	if err != nil {
		return nil, err
	}
	return doc, doc.Validate(context.Background())
})

func init() {
	// Raw convert bodies and bare documents are text: validate them as strings.
	for _, mt := range []string{"application/x-swift-mt", "application/xml", "text/csv", "application/x-ofx", "application/vnd.intu.qbo"} {
		openapi3filter.RegisterBodyDecoder(mt, openapi3filter.PlainBodyDecoder)
	}
}

var contractOptions = &openapi3filter.Options{
	// An answer whose status the operation does not list (and no default
	// covers) is a mismatch.
	IncludeResponseStatus: true,
	AuthenticationFunc: func(_ context.Context, in *openapi3filter.AuthenticationInput) error {
		h := in.RequestValidationInput.Request.Header
		switch s := in.SecurityScheme; {
		case s.Type == "http" && strings.EqualFold(s.Scheme, "bearer"):
			if !strings.HasPrefix(h.Get("Authorization"), "Bearer ") {
				return errors.New("no bearer credential")
			}
		case s.Type == "apiKey" && s.In == "header":
			if h.Get(s.Name) == "" {
				return errors.New("no " + s.Name + " header")
			}
		default:
			return fmt.Errorf("unexpected security scheme %s", in.SecuritySchemeName)
		}
		return nil
	},
}

// conform reports where one exchange and the document disagree.
func (c client) conform(req *http.Request, body string, r resp) {
	c.t.Helper()
	if err := conformance(req, body, r); err != nil {
		c.t.Errorf("OpenAPI document and behaviour differ: %s %s → %d: %v\nbody: %.400s", req.Method, req.URL.RequestURI(), r.status, err, r.body)
	}
}

func conformance(req *http.Request, body string, r resp) error {
	doc, err := contract()
	if err != nil {
		return fmt.Errorf("the document does not load: %w", err)
	}
	if req.Method == http.MethodHead {
		return nil // HEAD is GET without a body; kin-openapi skips it
	}
	m := route.Lookup(req.Method, req.URL.Path)
	if req.Method == http.MethodOptions {
		if len(m.Allowed) > 0 || len(route.Lookup(http.MethodGet, req.URL.Path).Allowed) > 0 {
			if r.status != http.StatusNoContent || r.header.Get("Allow") == "" {
				return fmt.Errorf("OPTIONS answers 204 with Allow")
			}
			return nil
		}
	}
	var op *openapi3.Operation
	var item *openapi3.PathItem
	pattern := req.URL.Path
	params := map[string]string{}
	if len(m.Routes) == 0 {
		// The edge's own 404 and 405, answered before any operation.
		status := http.StatusNotFound
		if len(m.Allowed) > 0 {
			status = http.StatusMethodNotAllowed
		}
		ref := doc.Components.Responses["Problem"+strconv.Itoa(status)]
		if ref == nil {
			return fmt.Errorf("no Problem%d response in components", status)
		}
		op = &openapi3.Operation{Responses: openapi3.NewResponses()}
		op.Responses.Delete("default")
		op.Responses.Set(strconv.Itoa(status), ref)
		item = &openapi3.PathItem{}
	} else {
		pattern = m.Routes[0].Pattern
		if item = doc.Paths.Value(pattern); item != nil {
			op = item.GetOperation(req.Method)
		}
		if op == nil {
			return fmt.Errorf("%s %s is not in the document", req.Method, pattern)
		}
		segs := strings.Split(strings.TrimPrefix(pattern, "/"), "/")
		got := strings.Split(strings.TrimPrefix(req.URL.Path, "/"), "/")
		for i, s := range segs {
			if strings.HasPrefix(s, "{") && i < len(got) {
				params[strings.Trim(s, "{}")] = got[i]
			}
		}
	}
	vreq := req.Clone(context.Background())
	vreq.Body = io.NopCloser(strings.NewReader(body))
	if len(m.Routes) > 0 && m.Routes[0].Handler == route.HandlerGenerated && body != "" {
		// grpc-gateway reads the body of a generated route as JSON whatever
		// its Content-Type, as the document says.
		vreq.Header.Set("Content-Type", "application/json")
	}
	in := &openapi3filter.RequestValidationInput{
		Request:    vreq,
		PathParams: params,
		Route:      &routers.Route{Spec: doc, Path: pattern, PathItem: item, Method: req.Method, Operation: op},
		Options:    contractOptions,
	}
	if r.status >= 200 && r.status < 300 && len(m.Routes) > 0 {
		if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil {
			return fmt.Errorf("the request was accepted but the document refuses it: %w", err)
		}
	}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: r.status, Header: r.header, Options: contractOptions}
	out.SetBodyBytes(r.body)
	if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
		return fmt.Errorf("the answer does not match the document: %w", err)
	}
	return nil
}

// GET /v1/openapi.json serves the document without a key, revalidates with
// its ETag, and the document itself passes its own validation.
func TestOpenAPIServed(t *testing.T) {
	st := stack(t, false)
	c := client{t: t, base: st.URL}
	r := c.call("GET", "/v1/openapi.json", "", "")
	if r.status != 200 || r.header.Get("Content-Type") != openapi.ContentType || !bytes.Equal(r.body, openapi.Document()) {
		t.Fatalf("GET /v1/openapi.json: %d %q (%d bytes)", r.status, r.header.Get("Content-Type"), len(r.body))
	}
	if r.header.Get("Cache-Control") == "" || r.header.Get("ETag") == "" || r.header.Get("RateLimit-Limit") != "" {
		t.Fatalf("headers: %v", r.header)
	}
	if nm := c.call("GET", "/v1/openapi.json", "", "", "If-None-Match", r.header.Get("ETag")); nm.status != http.StatusNotModified || len(nm.body) != 0 {
		t.Fatalf("If-None-Match: %d", nm.status)
	}
	if h := c.call("HEAD", "/v1/openapi.json", "", ""); h.status != 200 || len(h.body) != 0 || h.header.Get("Content-Length") != strconv.Itoa(len(r.body)) {
		t.Fatalf("HEAD: %d %v", h.status, h.header)
	}
	doc, err := contract()
	if err != nil {
		t.Fatal(err)
	}
	if doc.OpenAPI != "3.0.3" || doc.Paths.Len() == 0 {
		t.Fatalf("openapi %q with %d paths", doc.OpenAPI, doc.Paths.Len())
	}
}

// The validator itself catches a wrong answer: a test of the test.
func TestConformanceCatchesMismatches(t *testing.T) {
	req, _ := http.NewRequest("GET", "http://x/v1/health", nil)
	h := http.Header{"Content-Type": {"application/json"}, "X-Request-Id": {"req_1"}}
	if err := conformance(req, "", resp{status: 200, header: h, body: []byte(`{"status":"ok"}`)}); err != nil {
		t.Fatalf("a right answer was refused: %v", err)
	}
	if conformance(req, "", resp{status: 200, header: h, body: []byte(`{"status":7}`)}) == nil {
		t.Fatal("a wrong body passed")
	}
	if conformance(req, "", resp{status: 200, header: http.Header{"Content-Type": {"application/json"}}, body: []byte(`{"status":"ok"}`)}) == nil {
		t.Fatal("a missing X-Request-Id passed")
	}
	ph := http.Header{"Content-Type": {"application/problem+json"}, "X-Request-Id": {"req_1"}, "Cache-Control": {"no-store"}}
	bad, _ := http.NewRequest("GET", "http://x/v1/nope", nil)
	if conformance(bad, "", resp{status: 404, header: ph, body: []byte(`{"type":"not-found","title":"Not found","status":404,"instance":"req_1"}`)}) != nil {
		t.Fatal("a right 404 was refused")
	}
	if conformance(bad, "", resp{status: 404, header: ph, body: []byte(`{"type":"no-such-slug","title":"x","status":404,"instance":"req_1"}`)}) == nil {
		t.Fatal("an unknown slug passed")
	}
}
