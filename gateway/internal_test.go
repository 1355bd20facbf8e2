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

// TestReadBody: the body is read whole (sized or chunked), over the limit is
// 413, and the handler behind reads the same bytes again: the convert handler
// takes them without a copy, any other reader gets a fresh stream.
func TestReadBody(t *testing.T) {
	const limit = 64
	tests := []struct {
		name     string
		body     string
		chunked  bool // no Content-Length
		preRead  int  // bytes a handler read before asking for the whole body
		want     string
		wantType problem.Type
	}{
		{name: "sized", body: "hello world", want: "hello world"},
		{name: "chunked", body: "hello world", chunked: true, want: "hello world"},
		{name: "empty", body: "", want: ""},
		{name: "at the limit", body: strings.Repeat("x", limit), want: strings.Repeat("x", limit)},
		{name: "over the limit", body: strings.Repeat("x", limit+1), wantType: problem.MessageTooLarge},
		{name: "chunked over the limit", body: strings.Repeat("x", limit+1), chunked: true, wantType: problem.MessageTooLarge},
		{name: "partly read again", body: "hello world", preRead: 6, want: "world"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/v1/convert", strings.NewReader(tt.body))
			if tt.chunked {
				r.ContentLength = -1
			}
			body, p := readBody(httptest.NewRecorder(), r, limit)
			if tt.wantType != "" {
				if p == nil || p.Type != tt.wantType {
					t.Fatalf("problem %v, want %s", p, tt.wantType)
				}
				return
			}
			if p != nil || string(body) != tt.body || r.ContentLength != int64(len(tt.body)) {
				t.Fatalf("read %q (length %d), %v; want %q", body, r.ContentLength, p, tt.body)
			}
			if tt.preRead > 0 {
				_, _ = r.Body.Read(make([]byte, tt.preRead))
			}
			again, err := bodyBytes(r)
			if err != nil || string(again) != tt.want {
				t.Fatalf("read again %q, %v; want %q", again, err, tt.want)
			}
			if tt.preRead == 0 && len(body) > 0 && &again[0] != &body[0] {
				t.Error("the body was copied")
			}
			if n, _ := r.Body.Read(make([]byte, 1)); n != 0 {
				t.Error("the body can be read past its end")
			}
		})
	}
}
