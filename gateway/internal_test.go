package gateway

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ledgerlane/platform/pkg/problem"
)

func TestPanicAnswersProblemWithoutStack(t *testing.T) {
	var logs bytes.Buffer
	g := &Gateway{log: slog.New(slog.NewJSONHandler(&logs, nil))}
	h := g.withRequestID(g.withRecover(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		panic("secret internal state")
	})))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/v1/x", nil))
	if rec.Code != 500 || rec.Header().Get("Content-Type") != problem.ContentType {
		t.Fatalf("got %d %q", rec.Code, rec.Header().Get("Content-Type"))
	}
	var p problem.Problem
	if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil || p.Type != problem.Internal {
		t.Fatalf("problem: %v %s", err, rec.Body)
	}
	if strings.Contains(rec.Body.String(), "secret internal state") || strings.Contains(rec.Body.String(), "goroutine") {
		t.Fatalf("body leaks the panic: %s", rec.Body)
	}
	if !strings.Contains(logs.String(), "panic serving request") {
		t.Fatal("panic not logged")
	}
}

func TestNegotiateConvert(t *testing.T) {
	// The media types the converter's renderers carry for these targets.
	media := map[string]string{"camt.053": "application/xml", "MT940": "text/plain", "csv": "text/csv"}
	tests := []struct {
		accept, to, want string
		fails            bool
	}{
		{"", "camt.053", "", false},
		{"*/*", "MT940", "", false},
		{"application/json", "MT940", "", false},
		{"text/plain", "MT940", "text/plain", false},
		{"application/xml", "camt.053", "application/xml", false},
		{"application/xml;q=0.5, application/json", "camt.053", "", false},
		{"application/json;q=0.1, application/xml", "camt.053", "application/xml", false},
		{"text/csv", "csv", "text/csv", false},
		{"text/plain", "camt.053", "", true},
		{"image/png", "camt.053", "", true},
		{"application/json;q=0", "camt.053", "", true},
	}
	for _, tt := range tests {
		got, p := negotiateConvert(tt.accept, media[tt.to], tt.to)
		if (p != nil) != tt.fails || got != tt.want {
			t.Errorf("negotiate(%q, %q) = %q, %v; want %q fails=%v", tt.accept, tt.to, got, p, tt.want, tt.fails)
		}
	}
}

func TestDecodeErrorNamesField(t *testing.T) {
	tests := map[string]string{
		`proto: (line 1:2): unknown field "bogus"`:                         "bogus",
		`proto: (line 1:14): invalid value for int32 field page_size: "x"`: "page_size",
		`parsing field "page_size": strconv.ParseInt: parsing "abc"`:       "page_size",
		`proto: syntax error (line 1:1): unexpected token`:                 "body",
	}
	for msg, want := range tests {
		if f, _, ok := decodeError(msg); !ok || f != want {
			t.Errorf("decodeError(%q) = %q, %v; want %q", msg, f, ok, want)
		}
	}
}

// FuzzConvertRequest: whatever the body, headers and query, parsing answers a
// request or a 4xx problem, and never panics.
func FuzzConvertRequest(f *testing.F) {
	f.Add("application/json", `{"to":"camt.053","message":"x","options":{"ofxVersion":102}}`, "")
	f.Add("text/plain", ":20:X", "to=MT940&strict=maybe")
	f.Add("application/json", `{"to":`, "")
	f.Fuzz(func(t *testing.T, ct, body, query string) {
		r := httptest.NewRequest("POST", "/v1/convert", strings.NewReader(body))
		r.URL.RawQuery = query
		r.Header.Set("Content-Type", ct)
		req, p := parseConvertRequest(r)
		if p != nil {
			if p.Status < 400 || p.Status > 499 {
				t.Fatalf("status %d for bad input", p.Status)
			}
			return
		}
		if req.GetTo() == "" {
			t.Fatal("accepted a request without to")
		}
		_, _ = negotiateConvert(body, "application/xml", req.GetTo())
	})
}
