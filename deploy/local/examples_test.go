package local_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/ledgerlane/platform/gateway/route"
)

// The OpenAPI document's request and response examples come from this
// suite (issue 32): with OPENAPI_EXAMPLES set to a file (`make examples`),
// client.call records the shortest successful exchange of each operation, and
// TestMain writes them there once every test has passed. `make gen` puts
// them into the document. What is recorded is what the end-to-end tests
// checked against the document, scrubbed: secrets keep only their prefix,
// long strings and lists are cut.

var examples = struct {
	sync.Mutex
	m map[string]example
}{m: map[string]example{}}

// example is one exchange: the request body (absent for none) and the
// answer's status and body.
type example struct {
	Request  any `json:"request,omitempty"`
	Status   int `json:"status"`
	Response any `json:"response"`
	size     int // of the exchange as sent and answered, before scrubbing
}

func TestMain(m *testing.M) {
	code := m.Run()
	if path := os.Getenv("OPENAPI_EXAMPLES"); path != "" && code == 0 {
		examples.Lock()
		b, err := json.MarshalIndent(examples.m, "", "  ")
		examples.Unlock()
		if err == nil {
			err = os.WriteFile(path, append(b, '\n'), 0o644)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "examples:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// recordExample keeps req and r as their operation's example when
// recording, r is a 2xx JSON answer and the operation has none yet.
func recordExample(req *http.Request, body string, r resp) {
	if os.Getenv("OPENAPI_EXAMPLES") == "" || r.status/100 != 2 || !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") {
		return
	}
	m := route.Lookup(req.Method, req.URL.Path)
	if len(m.Routes) == 0 || req.Method == http.MethodHead {
		return
	}
	key := req.Method + " " + m.Routes[0].Pattern
	if key == "GET /v1/openapi.json" {
		return // the document itself
	}
	var in, out any
	if body != "" && json.Unmarshal([]byte(body), &in) != nil {
		return
	}
	if json.Unmarshal(r.body, &out) != nil {
		return
	}
	// The shortest exchange of an operation is kept: the clearest to read.
	ex := example{Request: scrub("", in), Status: r.status, Response: scrub("", out), size: len(body) + len(r.body)}
	examples.Lock()
	defer examples.Unlock()
	if old, ok := examples.m[key]; !ok || ex.size < old.size {
		examples.m[key] = ex
	}
}

var xmlComment = regexp.MustCompile(`<!--[\s\S]*?-->\s*`)

// secretPrefixes start the credentials and secrets the API hands out.
var secretPrefixes = []string{"ak_", "at_", "whsec_", "ps_", "oc_", "cs_"}

// scrub returns v with every secret cut to its prefix, XML comments
// dropped, strings over 600 characters cut, and lists over 3 items cut to 3.
func scrub(name string, v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = scrub(k, e)
		}
		return out
	case []any:
		out := []any{}
		for _, e := range v[:min(len(v), 3)] {
			out = append(out, scrub(name, e))
		}
		return out
	case string:
		for _, p := range secretPrefixes {
			if strings.HasPrefix(v, p) && len(v) > 16 {
				return v[:12] + "…"
			}
		}
		if name == "secret" || name == "client_secret" || name == "access_token" || name == "password" {
			return "…"
		}
		v = xmlComment.ReplaceAllString(v, "") // a sample file's licence header says nothing about the API
		if r := []rune(v); len(r) > 600 {
			return string(r[:600]) + "…"
		}
		return v
	}
	return v
}
