package openapi

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/ledgerlane/platform/gateway/route"
	"github.com/ledgerlane/platform/pkg/problem"
)

func TestDocumentCoversEveryRouteAndSlug(t *testing.T) {
	doc, err := openapi3.NewLoader().LoadFromData(Document())
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, rt := range route.All() {
		item := doc.Paths.Value(rt.Pattern)
		if item == nil || item.GetOperation(rt.Method) == nil {
			t.Errorf("%s %s is not documented: run make gen", rt.Method, rt.Pattern)
			continue
		}
		op := item.GetOperation(rt.Method)
		public := op.Security != nil && len(*op.Security) == 0
		if public != (rt.Surface == route.Public) {
			t.Errorf("%s %s: security does not match surface %s", rt.Method, rt.Pattern, rt.Surface)
		}
	}
	enum := doc.Components.Schemas["Problem"].Value.Properties["type"].Value.Enum
	for _, typ := range problem.Types() {
		found := false
		for _, v := range enum {
			found = found || v == string(typ)
		}
		if !found {
			t.Errorf("problem type %s is not in the document: run make gen", typ)
		}
	}
}

func TestHandler(t *testing.T) {
	h := Handler()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/v1/openapi.json", nil))
	if rec.Code != 200 || rec.Header().Get("Content-Type") != ContentType || !strings.HasPrefix(rec.Body.String(), "{") {
		t.Fatalf("GET: %d %v", rec.Code, rec.Header())
	}
	tag := rec.Header().Get("ETag")
	if tag == "" || rec.Header().Get("Cache-Control") == "" {
		t.Fatalf("caching headers missing: %v", rec.Header())
	}
	req := httptest.NewRequest(http.MethodGet, "/v1/openapi.json", nil)
	req.Header.Set("If-None-Match", `"other", `+tag)
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusNotModified || rec.Body.Len() != 0 {
		t.Fatalf("If-None-Match: %d", rec.Code)
	}
}
