package local_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/ledgerlane/platform/deploy/local"
	"github.com/ledgerlane/platform/pkg/logging"
)

// TestLogLinesNameTheirServiceOnce: `make run` logs as the process "local";
// each part of it adds a component, never a second "service" key (JSON
// readers keep one of two equal keys, and which one is up to them).
func TestLogLinesNameTheirServiceOnce(t *testing.T) {
	var out lockedBuffer
	st := stack(t, false, func(c *local.Config) {
		c.Log = logging.NewTo(&out, "local", "debug")
		c.SandboxInterval = -1
	})
	for _, path := range []string{"/v1/health", "/v1/formats", "/v1/transactions"} {
		req, _ := http.NewRequest(http.MethodGet, st.URL+path, nil)
		req.Header.Set("Authorization", "Bearer "+st.Keys[0].Key)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}
	lines, components := 0, map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(out.String()))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		keys := topLevelKeys(t, sc.Bytes())
		if keys["service"] != 1 {
			t.Fatalf("%d service keys in %s", keys["service"], sc.Text())
		}
		var line struct{ Component string }
		_ = json.Unmarshal(sc.Bytes(), &line)
		components[line.Component] = true
		lines++
	}
	if lines == 0 || len(components) < 2 {
		t.Fatalf("%d lines from components %v: the check saw too little", lines, components)
	}
}

// topLevelKeys counts each key of one JSON object, duplicates included.
func topLevelKeys(t *testing.T, line []byte) map[string]int {
	dec := json.NewDecoder(bytes.NewReader(line))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not a JSON object: %s", line)
	}
	keys := map[string]int{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatalf("%v in %s", err, line)
		}
		keys[tok.(string)]++
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatalf("%v in %s", err, line)
		}
	}
	return keys
}
