package local_test

import (
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestRequestLog: an account's requests, live and test, successes and
// refusals, are in its log newest first with the route's pattern (never the
// path or query), the credential, the status and a refusal's problem type;
// one is found by its request id; the log needs usage:read and names a bad
// parameter.
func TestRequestLog(t *testing.T) {
	st := stack(t, false)
	keys := map[string]string{}
	for _, k := range st.Keys {
		keys[k.Name] = k.Key
	}
	c := client{t: t, base: st.URL, keys: keys}
	ok := c.call("GET", "/v1/formats", "conversion-test", "")
	bad := c.call("GET", "/v1/jobs/not-a-job?secret=hush", "conversion-live", "")
	if ok.status != 200 || bad.status/100 != 4 {
		t.Fatalf("setup: %d %d", ok.status, bad.status)
	}

	// An entry is recorded as its answer ends, which the client may read
	// first: the log is read until both are in (docs/request-log.md).
	var log resp
	var data []any
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		log = c.call("GET", "/v1/requests?limit=10", "conversion-usage", "")
		if log.status != 200 {
			t.Fatalf("request log: %d %s", log.status, log.body)
		}
		data, _ = log.json["data"].([]any)
		if hasRequest(data, bad.header.Get("X-Request-Id")) && hasRequest(data, ok.header.Get("X-Request-Id")) || time.Now().After(deadline) {
			break
		}
	}
	// The log's own reads are in it too: keep the two requests.
	data = slices.DeleteFunc(data, func(e any) bool { return e.(map[string]any)["route"] == "/v1/requests" })
	if len(data) < 2 {
		t.Fatalf("request log: %s", log.body)
	}
	newest, older := data[0].(map[string]any), data[1].(map[string]any)
	if newest["request_id"] != bad.header.Get("X-Request-Id") || newest["route"] != "/v1/jobs/{id}" || newest["mode"] != "live" ||
		newest["status"] != float64(bad.status) || newest["problem"] != bad.json["type"] || newest["method"] != "GET" {
		t.Fatalf("the refusal: %v (answer %d %s)", newest, bad.status, bad.body)
	}
	if older["request_id"] != ok.header.Get("X-Request-Id") || older["route"] != "/v1/formats" || older["mode"] != "test" ||
		older["status"] != 200.0 || older["problem"] != nil || older["credential_id"] == "" {
		t.Fatalf("the success: %v", older)
	}
	if strings.Contains(string(log.body), "hush") || strings.Contains(string(log.body), "not-a-job") {
		t.Fatalf("a path or query string in the log: %s", log.body)
	}

	one := c.call("GET", "/v1/requests?request_id="+url.QueryEscape(ok.header.Get("X-Request-Id")), "conversion-usage", "")
	if d, _ := one.json["data"].([]any); one.status != 200 || len(d) != 1 {
		t.Fatalf("by request id: %d %s", one.status, one.body)
	}
	if tests := c.call("GET", "/v1/requests?mode=test", "conversion-usage", ""); tests.status != 200 || strings.Contains(string(tests.body), `"mode":"live"`) {
		t.Fatalf("test mode only: %d %s", tests.status, tests.body)
	}
	// The same requests counted per day: today's live and test, errors
	// apart, and the window's totals by route and credential.
	daily := c.call("GET", "/v1/requests/daily?days=7", "conversion-usage", "")
	days, _ := daily.json["days"].([]any)
	if daily.status != 200 || len(days) != 7 {
		t.Fatalf("daily: %d %s", daily.status, daily.body)
	}
	today := days[6].(map[string]any)
	if today["test_ok"].(float64) < 1 || today["live_client_error"].(float64) < 1 {
		t.Fatalf("today's counts: %v", today)
	}
	routes, _ := daily.json["routes"].([]any)
	found := false
	for _, r := range routes {
		if m := r.(map[string]any); m["name"] == "/v1/jobs/{id}" && m["mode"] == "live" {
			found = true
		}
	}
	if !found {
		t.Fatalf("route totals: %s", daily.body)
	}
	c.call("GET", "/v1/requests/daily?days=91", "conversion-usage", "").wantProblem(t, 400, "invalid-input")
	c.call("GET", "/v1/requests/daily", "conversion-live", "").wantProblem(t, 403, "forbidden-scope")
	c.call("GET", "/v1/requests?limit=0", "conversion-usage", "").wantProblem(t, 400, "invalid-input")
	c.call("GET", "/v1/requests?mode=prod", "conversion-usage", "").wantProblem(t, 400, "invalid-input")
	c.call("GET", "/v1/requests", "conversion-live", "").wantProblem(t, 403, "forbidden-scope")
}

// TestPortalRequests: the portal's Requests page shows the account's
// requests by the name of the key that made them, finds one by its request
// id, and shows nothing of another account's.
func TestPortalRequests(t *testing.T) {
	st := stack(t, false)
	b := newBrowser(t, st.URL)
	b.signUp("req@example.com", pw, "Req Ltd")
	secret, _ := b.createKey("ci server", "test")
	if got := formats(t, st.URL, secret); got != 200 {
		t.Fatalf("formats: %d", got)
	}
	p := b.get("/portal/requests")
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(p.body, "GET /v1/formats") && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
		p = b.get("/portal/requests")
	}
	if p.status != 200 || !strings.Contains(p.body, "ci server (ak_test_") || !strings.Contains(p.body, "GET /v1/formats") {
		t.Fatalf("requests page: %d\n%s", p.status, p.body)
	}
	if !strings.Contains(p.body, `id="daily-chart"`) || !strings.Contains(p.body, "1 test requests") || !strings.Contains(p.body, `<code>/v1/formats</code>`) {
		t.Fatalf("no chart or totals on the requests page:\n%s", p.body)
	}
	other := newBrowser(t, st.URL)
	other.signUp("other@example.com", pw, "Other Ltd")
	if o := other.get("/portal/requests"); strings.Contains(o.body, "/v1/formats") || !strings.Contains(o.body, `id="daily-chart"`) {
		t.Fatal("another account's requests are shown")
	}
	if q := b.get("/portal/requests?request_id=nope"); q.status != 200 || strings.Contains(q.body, "GET /v1/formats") || !strings.Contains(q.body, "No request with this id") {
		t.Fatalf("search: %d\n%s", q.status, q.body)
	}
	if q := b.get("/portal/requests?mode=prod"); q.status != 400 {
		t.Fatalf("a bad mode: %d", q.status)
	}
}

func hasRequest(data []any, id string) bool {
	return slices.ContainsFunc(data, func(e any) bool { return e.(map[string]any)["request_id"] == id })
}
