package gateway

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ledgerlane/platform/pkg/problem"
)

func TestWriteProblem(t *testing.T) {
	rec := httptest.NewRecorder()
	p := problem.New(problem.RateLimited, "slow down")
	p.RetryAfter = 2
	writeProblem(rec, p, "req_1")
	if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") != "2" || rec.Header().Get("Content-Type") != problem.ContentType {
		t.Fatalf("got %d %v", rec.Code, rec.Header())
	}
	if !strings.Contains(rec.Body.String(), `"instance":"req_1"`) {
		t.Fatalf("body: %s", rec.Body)
	}
}
