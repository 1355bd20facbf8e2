package local_test

import (
	"strings"
	"testing"

	"github.com/ledgerlane/platform/gateway/route"
	"github.com/ledgerlane/platform/services/jobs"
)

// TestBatchLimitsAgree: the edge refuses a batch over the jobs service's
// item limit before anything is reserved, so the two limits are one.
func TestBatchLimitsAgree(t *testing.T) {
	if route.MaxBatchItems != jobs.MaxItems {
		t.Fatalf("the edge allows %d items a batch, the jobs service %d", route.MaxBatchItems, jobs.MaxItems)
	}
}

// TestBatchRefusalsCostNothing (issue 27, 3): a batch refused whole, by the
// edge (too many items, no items, a body that is no batch) or by the jobs
// service (a bad option, an empty message), is answered 400 naming the
// field and counts nothing; one million tiny items in 16 MiB are refused
// at the edge after counting to the limit. An accepted batch counts its
// items.
func TestBatchRefusalsCostNothing(t *testing.T) {
	st := stack(t, false)
	keys := map[string]string{}
	for _, k := range st.Keys {
		keys[k.Name] = k.Key
	}
	c := client{t: t, base: st.URL, keys: keys}
	used := func() float64 {
		t.Helper()
		u := c.call("GET", "/v1/usage", "conversion-usage", "")
		if u.status != 200 {
			t.Fatalf("usage: %d %s", u.status, u.body)
		}
		return u.json["used"].(float64)
	}
	items := func(n int, item string) string {
		return `{"to":"camt.053","items":[` + strings.TrimSuffix(strings.Repeat(item+",", n), ",") + `]}`
	}
	before := used()
	for _, tc := range []struct{ name, body, field string }{
		{"one item over the limit", items(route.MaxBatchItems+1, `{"message":"x"}`), "items"},
		{"a million tiny items", `{"to":"camt.053","items":[` + strings.TrimSuffix(strings.Repeat("0,", 1_000_000), ",") + `]}`, "items"},
		{"no items", `{"to":"camt.053","items":[]}`, "items"},
		{"items not an array", `{"to":"camt.053","items":{"message":"x"}}`, "items"},
		{"not an object", `[1,2,3]`, "items"},
		{"no body", ``, "items"},
		{"an empty message", items(3, `{"message":""}`), "items[0].message"},
		{"a bad option", `{"to":"camt.053","items":[{"message":"x"}],"ttl_seconds":90000}`, "ttl_seconds"},
		{"no target", `{"items":[{"message":"x"},{"message":"y"}]}`, "to"},
	} {
		r := c.call("POST", "/v1/convert/batch", "conversion-live", tc.body, "Content-Type", "application/json")
		r.wantProblem(t, 400, "invalid-input")
		if r.json["field"] != tc.field {
			t.Errorf("%s: field %v, want %s: %s", tc.name, r.json["field"], tc.field, r.body)
		}
	}
	if after := used(); after != before {
		t.Fatalf("refused batches counted %v units", after-before)
	}
	r := c.call("POST", "/v1/convert/batch", "conversion-live", items(3, `{"message":":20:X"}`), "Content-Type", "application/json")
	if r.status != 202 {
		t.Fatalf("a good batch: %d %s", r.status, r.body)
	}
	if after := used(); after != before+3 {
		t.Fatalf("an accepted batch of 3 counted %v", after-before)
	}
}
