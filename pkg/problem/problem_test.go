package problem

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestEveryTypeIsDocumented(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "errors.md"))
	if err != nil {
		t.Skipf("docs/errors.md not found: %v", err)
	}
	for _, typ := range Types() {
		if !strings.Contains(string(doc), "| `"+string(typ)+"` |") {
			t.Errorf("docs/errors.md does not list %q", typ)
		}
	}
}

func TestGRPCRoundTrip(t *testing.T) {
	for _, typ := range Types() {
		t.Run(string(typ), func(t *testing.T) {
			p := FromError(Error(typ, "some detail", Field("f"), RetryAfter(3)))
			if p.Type != typ || p.Status != typ.Status() || p.Field != "f" || p.RetryAfter != 3 {
				t.Fatalf("round trip lost data: %+v", p)
			}
			if typ == Internal && p.Detail != "" {
				t.Fatal("internal detail must not reach clients")
			}
		})
	}
}

func TestFromPlainErrors(t *testing.T) {
	tests := []struct {
		err  error
		want Type
	}{
		{errors.New("boom"), Internal},
		{status.Error(codes.Unimplemented, "x"), NotImplemented},
		{status.Error(codes.NotFound, "x"), NotFound},
		{status.Error(codes.Unavailable, "x"), Unavailable},
		{status.Error(codes.Internal, "db password leaked"), Internal},
	}
	for _, tt := range tests {
		p := FromError(tt.err)
		if p.Type != tt.want {
			t.Errorf("FromError(%v) = %s, want %s", tt.err, p.Type, tt.want)
		}
		if strings.Contains(p.Detail, "password") {
			t.Errorf("internal message leaked: %q", p.Detail)
		}
	}
}

func TestWrite(t *testing.T) {
	rec := httptest.NewRecorder()
	p := New(RateLimited, "slow down")
	p.RetryAfter = 2
	Write(rec, p, "req_1")
	if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") != "2" || rec.Header().Get("Content-Type") != ContentType {
		t.Fatalf("got %d %v", rec.Code, rec.Header())
	}
	if !strings.Contains(rec.Body.String(), `"instance":"req_1"`) {
		t.Fatalf("body: %s", rec.Body)
	}
}
