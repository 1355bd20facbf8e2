package gateway

import (
	"encoding/json"
	"net/http"

	"github.com/ledgerlane/platform/pkg/problem"
)

// index answers GET / and GET /v1: where a newcomer who typed the bare host
// goes next, rather than a 404. Links are relative to the host asked.
func (g *Gateway) index(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet, http.MethodHead:
	case http.MethodOptions:
		w.Header().Set("Allow", "GET, HEAD, OPTIONS")
		w.WriteHeader(http.StatusNoContent)
		return
	default:
		w.Header().Set("Allow", "GET, HEAD, OPTIONS")
		writeProblem(w, problem.New(problem.MethodNotAllowed, r.Method+" is not allowed on "+r.URL.Path), requestID(r.Context()))
		return
	}
	links := struct {
		API     string `json:"api"`
		OpenAPI string `json:"openapi"`
		Health  string `json:"health"`
		Version string `json:"version"`
		Docs    string `json:"docs"`
		Portal  string `json:"portal,omitempty"`
	}{API: "/v1", OpenAPI: "/v1/openapi.json", Health: "/v1/health", Version: "/v1/version", Docs: "/docs"}
	if g.portalOn {
		links.Portal = "/portal/"
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(links)
}

// serveDocs answers the reference pages; a path under /docs that is no page
// is a 404 problem like any other.
func (g *Gateway) serveDocs(w http.ResponseWriter, r *http.Request) {
	if _, ok := g.docs.Page(r.URL.Path); !ok {
		writeProblem(w, problem.New(problem.NotFound, "no page "+r.URL.Path+"; the reference starts at /docs"), requestID(r.Context()))
		return
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		g.docs.ServeHTTP(w, r)
	case http.MethodOptions:
		w.Header().Set("Allow", "GET, HEAD, OPTIONS")
		w.WriteHeader(http.StatusNoContent)
	default:
		w.Header().Set("Allow", "GET, HEAD, OPTIONS")
		writeProblem(w, problem.New(problem.MethodNotAllowed, r.Method+" is not allowed on "+r.URL.Path), requestID(r.Context()))
	}
}
