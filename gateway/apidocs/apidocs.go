// Package apidocs serves the API reference under /docs: pages rendered on
// the server, without scripts or network access, from the OpenAPI document
// the gateway serves at /v1/openapi.json (gateway/openapi), so the two
// cannot disagree. /docs lists every operation with its scope, parameters,
// bodies and answers, and every schema; /docs/problems/{type} explains one
// problem type (each problem document links to its page with a Link
// header); /docs/warnings lists the conversion warning codes that
// X-Service-Warnings-Link points to. It owns the pages and nothing else.
package apidocs

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"sort"
	"strconv"
	"strings"
)

//go:embed templates/*.html
var templates embed.FS

// ProblemPath is where the page of a problem type lives.
func ProblemPath(slug string) string { return "/docs/problems/" + slug }

// WarningsPath is the page of the conversion warning codes.
const WarningsPath = "/docs/warnings"

// Site holds every page, rendered once from one document.
type Site struct {
	pages map[string][]byte // path → HTML
}

// New renders the pages of doc, an OpenAPI 3 document as gateway/openapi
// generates it (with x-ledgerlane-routes, -problems and -warnings).
func New(doc []byte) (*Site, error) {
	var d document
	if err := json.Unmarshal(doc, &d); err != nil {
		return nil, fmt.Errorf("apidocs: read the OpenAPI document: %w", err)
	}
	tmpl, err := template.New("").Funcs(template.FuncMap{
		"anchor": anchor, "lower": strings.ToLower, "join": strings.Join,
	}).ParseFS(templates, "templates/*.html")
	if err != nil {
		return nil, fmt.Errorf("apidocs: templates: %w", err)
	}
	s := &Site{pages: map[string][]byte{}}
	render := func(path, name string, data any) error {
		var b bytes.Buffer
		if err := tmpl.ExecuteTemplate(&b, name, data); err != nil {
			return fmt.Errorf("apidocs: render %s: %w", path, err)
		}
		s.pages[path] = b.Bytes()
		return nil
	}
	ref := d.reference()
	if err := render("/docs", "reference.html", ref); err != nil {
		return nil, err
	}
	if err := render("/docs/problems", "problems.html", d.Problems); err != nil {
		return nil, err
	}
	for _, p := range d.Problems {
		page := problemPage{Problem: p, Operations: ref.answering(p.Status)}
		if err := render(ProblemPath(p.Type), "problem.html", page); err != nil {
			return nil, err
		}
	}
	if err := render(WarningsPath, "warnings.html", groupWarnings(d.Warnings)); err != nil {
		return nil, err
	}
	return s, nil
}

// Paths lists every page, for tests and the index.
func (s *Site) Paths() []string {
	out := make([]string, 0, len(s.pages))
	for p := range s.pages {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// ServeHTTP answers GET and HEAD of a page; anything else under /docs is
// for the caller to refuse (Page reports whether a path is a page).
func (s *Site) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	page, ok := s.Page(r.URL.Path)
	if !ok {
		http.NotFound(w, r)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "public, max-age=300")
	// Pages are static HTML with inline styles and no scripts.
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
	h.Set("Content-Length", strconv.Itoa(len(page)))
	_, _ = w.Write(page)
}

// Page returns the page at path ("/docs/" is "/docs").
func (s *Site) Page(path string) ([]byte, bool) {
	if path == "/docs/" {
		path = "/docs"
	}
	p, ok := s.pages[strings.TrimSuffix(path, "/")]
	return p, ok
}

// anchor is an HTML id for a name: letters, digits, '-' and '_' kept.
func anchor(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	return b.String()
}
