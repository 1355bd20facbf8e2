package apidocs_test

import (
	"html"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ledgerlane/platform/gateway/apidocs"
	"github.com/ledgerlane/platform/gateway/openapi"
	"github.com/ledgerlane/platform/gateway/route"
	"github.com/ledgerlane/platform/pkg/problem"
)

func site(t *testing.T) *apidocs.Site {
	t.Helper()
	s, err := apidocs.New(openapi.Document())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func page(t *testing.T, s *apidocs.Site, path string) string {
	t.Helper()
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	if rec.Code != 200 || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") {
		t.Fatalf("%s: %d %s", path, rec.Code, rec.Header().Get("Content-Type"))
	}
	body := rec.Body.String()
	if strings.Contains(body, "<no value>") || !strings.HasSuffix(strings.TrimSpace(body), "</html>") {
		t.Fatalf("%s is not a whole page", path)
	}
	return html.UnescapeString(body)
}

// The reference renders every route of the route table (the served
// document is generated from it; a route left out of either fails here).
func TestReferenceRendersEveryRoute(t *testing.T) {
	s := site(t)
	ref := page(t, s, "/docs")
	for _, rt := range route.All() {
		if rt.Pattern == "/v1/openapi.json" && rt.Method == http.MethodGet {
			continue // the document itself is linked from every page
		}
		if !strings.Contains(ref, `<span class="method">`+rt.Method+`</span> <code>`+rt.Pattern+`</code>`) {
			t.Errorf("/docs does not show %s %s", rt.Method, rt.Pattern)
		}
		if rt.Scope != "" && !strings.Contains(ref, "Scope <code>"+rt.Scope+"</code>") {
			t.Errorf("/docs does not show scope %s", rt.Scope)
		}
	}
	if page(t, s, "/docs/") != ref {
		t.Error("/docs/ is not /docs")
	}
	// The recorded exchanges (docs/openapi/examples.json) are shown.
	if n := strings.Count(ref, "<summary>Example"); n < 40 {
		t.Errorf("/docs shows %d examples", n)
	}
}

// Every problem type has its page, listed on /docs/problems, and the page
// names its status and meaning.
func TestEveryProblemTypeHasAPage(t *testing.T) {
	s := site(t)
	list := page(t, s, "/docs/problems")
	for _, typ := range problem.Types() {
		p := page(t, s, apidocs.ProblemPath(string(typ)))
		if !strings.Contains(p, "<code>"+string(typ)+"</code>") || !strings.Contains(p, typ.Title()) {
			t.Errorf("page of %s: missing its type or title", typ)
		}
		if !strings.Contains(list, `href="`+apidocs.ProblemPath(string(typ))+`"`) {
			t.Errorf("/docs/problems does not link %s", typ)
		}
	}
}

func TestWarningsPageListsCodes(t *testing.T) {
	w := page(t, site(t), apidocs.WarningsPath)
	for _, code := range []string{"BALANCE_MISMATCH", "TRANSLITERATED"} {
		if !strings.Contains(w, `id="`+code+`"`) {
			t.Errorf("/docs/warnings has no row for %s", code)
		}
	}
}

func TestUnknownPage(t *testing.T) {
	s := site(t)
	for _, p := range []string{"/docs/nope", "/docs/problems/nope", "/docsx"} {
		if _, ok := s.Page(p); ok {
			t.Errorf("%s is a page", p)
		}
	}
}

func TestHeadings(t *testing.T) {
	ref := page(t, site(t), "/docs")
	for _, h := range []string{">OAuth<", ">Accounting connections<", ">Net worth and holdings<", ">Usage and billing<"} {
		if !strings.Contains(ref, h) {
			t.Errorf("no heading %s", h)
		}
	}
}
