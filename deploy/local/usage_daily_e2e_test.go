package local_test

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"
)

// TestUsageDaily: GET /v1/usage/daily counts metered units (a batch's items
// each, refusals not at all) per day, live and test apart and by key, and
// its period totals are exactly GET /v1/usage's used and test_used; one
// key's series is that key's alone; another account's key id is not found
// as an unknown one; the route needs usage:read and names a bad parameter.
// On both stores.
func TestUsageDaily(t *testing.T) {
	for _, db := range []bool{false, true} {
		t.Run(map[bool]string{false: "memory", true: "postgres"}[db], func(t *testing.T) { usageDaily(t, db) })
	}
}

func usageDaily(t *testing.T, withDB bool) {
	st := stack(t, withDB)
	keys := map[string]string{}
	for _, k := range st.Keys {
		keys[k.Name] = k.Key
	}
	c := client{t: t, base: st.URL, keys: keys}
	mt := sharedSample(t, "mt/php-mt940/Ing_sample")
	conv := func(key string, ctype string) int {
		return c.call("POST", "/v1/convert?to=camt.053", key, mt, "Content-Type", ctype).status
	}
	for range 3 {
		if s := conv("conversion-live", "text/plain"); s != 200 {
			t.Fatalf("live convert: %d", s)
		}
	}
	for range 2 {
		if s := conv("conversion-test", "text/plain"); s != 200 {
			t.Fatalf("test convert: %d", s)
		}
	}
	// Refused before a backend decided: not counted, not on any day.
	if s := conv("conversion-live", "image/png"); s/100 != 4 {
		t.Fatalf("a refused convert: %d", s)
	}
	items := make([]map[string]string, 4)
	for i := range items {
		items[i] = map[string]string{"message": mt}
	}
	body, _ := json.Marshal(map[string]any{"to": "camt.053", "items": items})
	if r := c.call("POST", "/v1/convert/batch", "conversion-all", string(body), "Content-Type", "application/json"); r.status != 202 {
		t.Fatalf("batch: %d %s", r.status, r.body)
	}

	usage := c.call("GET", "/v1/usage", "conversion-usage", "")
	if usage.status != 200 || usage.json["used"] != 7.0 || usage.json["test_used"] != 2.0 {
		t.Fatalf("usage: %d %s", usage.status, usage.body)
	}
	period := c.call("GET", "/v1/usage/daily", "conversion-usage", "")
	if period.status != 200 {
		t.Fatalf("daily: %d %s", period.status, period.body)
	}
	// The period total is GET /v1/usage's, exactly, and the days add up to it.
	if period.json["period_live"] != usage.json["used"] || period.json["test_used"] != usage.json["test_used"] ||
		period.json["period_undated"] != nil && period.json["period_undated"] != 0.0 || period.json["period_start"] != usage.json["period_start"] {
		t.Fatalf("period totals %s, usage %s", period.body, usage.body)
	}
	days := period.json["days"].([]any)
	if live, test := sumDays(days); live != 7 || test != 2 {
		t.Fatalf("the period's days add up to %d live, %d test: %s", live, test, period.body)
	}
	today := days[len(days)-1].(map[string]any)
	if today["date"] != period.json["end_date"] || today["live"] != 7.0 || today["test"] != 2.0 {
		t.Fatalf("today: %v", today)
	}
	// By key: the live key 3, the batch's key 4 (its items), the test key 2.
	byUnits := map[float64]map[string]any{}
	for _, cr := range period.json["credentials"].([]any) {
		m := cr.(map[string]any)
		byUnits[m["units"].(float64)] = m
	}
	if len(byUnits) != 3 || byUnits[3]["mode"] != "live" || byUnits[4]["mode"] != "live" || byUnits[2]["mode"] != "test" {
		t.Fatalf("by credential: %s", period.body)
	}
	for units, want := range map[float64][2]float64{3: {3, 0}, 4: {4, 0}, 2: {0, 2}} {
		id := byUnits[units]["credential_id"].(string)
		one := c.call("GET", "/v1/usage/daily?credential_id="+url.QueryEscape(id), "conversion-usage", "")
		live, test := sumDays(one.json["days"].([]any))
		if one.status != 200 || one.json["credential_id"] != id || float64(live) != want[0] || float64(test) != want[1] ||
			num(one.json["period_live"]) != want[0] || num(one.json["test_used"]) != want[1] {
			t.Fatalf("key %s's series: %d %s", id, one.status, one.body)
		}
	}
	last := c.call("GET", "/v1/usage/daily?days=90", "conversion-usage", "")
	if d := last.json["days"].([]any); last.status != 200 || len(d) != 90 {
		t.Fatalf("90 days: %d %s", last.status, last.body)
	} else if live, test := sumDays(d); live != 7 || test != 2 {
		t.Fatalf("90 days add up to %d live, %d test", live, test)
	}

	// Another account's key id answers as an unknown one.
	b := newBrowser(t, st.URL)
	b.signUp("daily@example.com", pw, "Daily Ltd")
	_, otherKey := b.createKey("other", "test")
	for _, id := range []string{otherKey, "00000000-0000-0000-0000-000000000000"} {
		c.call("GET", "/v1/usage/daily?credential_id="+id, "conversion-usage", "").wantProblem(t, 404, "not-found")
	}
	for _, q := range []string{"days=0", "days=91", "days=x"} {
		c.call("GET", "/v1/usage/daily?"+q, "conversion-usage", "").wantProblem(t, 400, "invalid-input")
	}
	c.call("GET", "/v1/usage/daily", "conversion-live", "").wantProblem(t, 403, "forbidden-scope")
	c.call("GET", "/v1/usage/daily", "conversion-test", "").wantProblem(t, 403, "forbidden-scope")
}

func sumDays(days []any) (live, test int64) {
	for _, d := range days {
		m := d.(map[string]any)
		live += int64(num(m["live"]))
		test += int64(num(m["test"]))
	}
	return live, test
}

// num reads a JSON number protojson may write as a string (int64).
func num(v any) float64 {
	switch x := v.(type) {
	case float64:
		return x
	case string:
		var f float64
		_ = json.Unmarshal([]byte(x), &f)
		return f
	}
	return 0
}

// TestPortalUsageDaily: the usage page charts the account's metered
// conversions per day (this period by default, or 90 days), for every key
// or one, and another account's key id shows the account's own chart.
func TestPortalUsageDaily(t *testing.T) {
	st := stack(t, false)
	b := newBrowser(t, st.URL)
	b.signUp("chart@example.com", pw, "Chart Ltd")
	secret, id := b.createKey("ci server", "test")
	mt := sharedSample(t, "mt/php-mt940/Ing_sample")
	c := client{t: t, base: st.URL, keys: map[string]string{"k": secret}}
	for range 2 {
		if r := c.call("POST", "/v1/convert?to=camt.053", "k", mt, "Content-Type", "text/plain"); r.status != 200 {
			t.Fatalf("convert: %d %s", r.status, r.body)
		}
	}
	p := b.get("/portal/usage")
	for _, want := range []string{`id="usage-daily-chart"`, "this period", `<span id="daily-test">2</span> test conversions`,
		`<span id="daily-period">0</span> live conversions`, `<option value="` + id + `">ci server (ak_test_`, `<td data-label="Conversions">2</td>`} {
		if !strings.Contains(p.body, want) {
			t.Fatalf("usage page: no %q\n%s", want, p.body)
		}
	}
	one := b.get("/portal/usage?range=90&key=" + id)
	if one.status != 200 || !strings.Contains(one.body, "Conversions per day of ci server (ak_test_") || !strings.Contains(one.body, "the last 90 days") ||
		strings.Count(one.body, "<title>") < 90 {
		t.Fatalf("one key, 90 days: %d\n%s", one.status, one.body)
	}
	other := newBrowser(t, st.URL)
	other.signUp("other-chart@example.com", pw, "Other Chart Ltd")
	o := other.get("/portal/usage?key=" + id)
	if o.status != 200 || strings.Contains(o.body, "ci server") || !strings.Contains(o.body, `<span id="daily-test">0</span>`) {
		t.Fatalf("another account's key: %d\n%s", o.status, o.body)
	}
}
