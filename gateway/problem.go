package gateway

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/ledgerlane/platform/gateway/apidocs"
	"github.com/ledgerlane/platform/pkg/problem"
)

// writeProblem sends p as an RFC 9457 problem document: the only way the edge
// answers an error (docs/errors.md). requestID becomes its instance;
// Retry-After is set when p carries one.
func writeProblem(w http.ResponseWriter, p *problem.Problem, requestID string) {
	p.Instance = requestID
	if p.Title == "" {
		p.Title = p.Type.Title()
	}
	if p.Status == 0 {
		p.Status = p.Type.Status()
	}
	h := w.Header()
	h.Set("Content-Type", problem.ContentType)
	h.Set("Cache-Control", "no-store")
	// The spec keeps type a bare slug; its page is linked beside it.
	if p.Type.Known() {
		h.Set("Link", "<"+apidocs.ProblemPath(string(p.Type))+`>; rel="describedby"`)
	}
	if p.RetryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(p.RetryAfter))
	}
	w.WriteHeader(p.Status)
	_ = json.NewEncoder(w).Encode(p)
}
