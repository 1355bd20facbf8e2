package local_test

import (
	"testing"
)

// TestEdgeRefusesAmbiguousCredentials (issue 27, 5): two different
// credentials in one request (Authorization and X-API-Key) are refused with
// 400 naming X-API-Key, not decided silently; the same one twice is fine.
// Every /v1 answer carries nosniff.
func TestEdgeRefusesAmbiguousCredentials(t *testing.T) {
	st := stack(t, false)
	keys := map[string]string{}
	for _, k := range st.Keys {
		keys[k.Name] = k.Key
	}
	c := client{t: t, base: st.URL, keys: keys}
	r := c.call("GET", "/v1/usage", "conversion-usage", "", "X-API-Key", keys["conversion-live"])
	r.wantProblem(t, 400, "invalid-input")
	if r.json["field"] != "X-API-Key" {
		t.Fatalf("field: %s", r.body)
	}
	if r := c.call("GET", "/v1/usage", "conversion-usage", "", "X-API-Key", keys["conversion-usage"]); r.status != 200 {
		t.Fatalf("the same credential twice: %d %s", r.status, r.body)
	}
	for _, path := range []string{"/v1/usage", "/v1/health", "/v1/nope"} {
		if r := c.call("GET", path, "conversion-usage", ""); r.header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: %d without nosniff", path, r.status)
		}
	}
}
