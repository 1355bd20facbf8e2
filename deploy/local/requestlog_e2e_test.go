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
	// One key's series and one route's: the live refusal was the live key's
	// only request, on /v1/jobs/{id}; the test key made no live one.
	liveKey := newest["credential_id"].(string)
	for q, want := range map[string][2]float64{
		"credential_id=" + url.QueryEscape(liveKey):        {0, 1}, // its test_ok, its live_client_error
		"credential_id=" + older["credential_id"].(string): {1, 0},
		"route=" + url.QueryEscape("/v1/jobs/{id}"):        {0, 1},
		"route=/v1/formats":                                {1, 0},
		"route=/v1/nowhere":                                {0, 0},
	} {
		series := c.call("GET", "/v1/requests/daily?days=7&"+q, "conversion-usage", "")
		sd, _ := series.json["days"].([]any)
		if series.status != 200 || len(sd) != 7 {
			t.Fatalf("daily ?%s: %d %s", q, series.status, series.body)
		}
		last := sd[6].(map[string]any)
		if last["test_ok"] != want[0] || last["live_client_error"] != want[1] || last["live_ok"] != 0.0 {
			t.Errorf("daily ?%s today: %v, want test_ok %v and live_client_error %v", q, last, want[0], want[1])
		}
	}
	both := c.call("GET", "/v1/requests/daily?route=/v1/formats&credential_id="+url.QueryEscape(liveKey), "conversion-usage", "")
	if both.wantProblem(t, 400, "invalid-input"); both.json["field"] != "route" {
		t.Errorf("both filters: %s", both.body)
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
	// The chart of one route, and of one key, chosen from the totals.
	if !strings.Contains(p.body, `<option value="r:/v1/formats">Route /v1/formats</option>`) || !strings.Contains(p.body, `>Key ci server (ak_test_`) {
		t.Fatalf("no series choice on the requests page:\n%s", p.body)
	}
	if q := b.get("/portal/requests?series=" + url.QueryEscape("r:/v1/formats")); q.status != 200 ||
		!strings.Contains(q.body, "Requests per day of /v1/formats") || !strings.Contains(q.body, "1 test requests") {
		t.Fatalf("the /v1/formats series: %d\n%s", q.status, q.body)
	}
	if q := b.get("/portal/requests?series=" + url.QueryEscape("r:/v1/nowhere")); q.status != 200 || !strings.Contains(q.body, "0 test requests") {
		t.Fatalf("a route without requests: %d\n%s", q.status, q.body)
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
