package local_test

import (
	"context"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ledgerlane/platform/deploy/local"
)

// TestLimitsEndToEnd drives the metering rules through the real stack: quota
// headers, a spend cap refusing the request that would reach it, usage
// matching what was used, idempotent replays and 409s, the test pool running
// out at 250, and 429 with Retry-After from the token bucket.
func TestLimitsEndToEnd(t *testing.T) {
	clock := newStepClock()
	st, err := local.Start(context.Background(), local.Config{
		HTTPAddr: "127.0.0.1:0", RedisURL: os.Getenv("TEST_REDIS_URL"), NATSURL: os.Getenv("TEST_NATS_URL"),
		Log: slog.New(slog.DiscardHandler), Now: clock.Now, DemoUsage: 24_999, // starter includes 25,000
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	keys := map[string]string{}
	for _, k := range st.Keys {
		keys[k.Name] = k.Key
	}
	c := client{t: t, base: st.URL, keys: keys}
	convert := func(key, body string, hdr ...string) resp {
		clock.Add(100 * time.Millisecond) // stay under the starter plan's 20/s
		return c.call("POST", "/v1/convert?to=camt.053", key, body, append([]string{"Content-Type", "text/plain"}, hdr...)...)
	}

	// Warm the credential cache first: the cap must still apply at once.
	convert("conversion-live", ":20:WARM")
	u := c.call("GET", "/v1/usage", "conversion-usage", "")
	if u.status != 200 || u.json["used"] != 25_000.0 || u.json["remaining"] != 0.0 || u.json["overage_cap_cents"] != nil ||
		!strings.Contains(string(u.body), `"overage_cap_cents":null`) || u.json["test_remaining"] != 250.0 {
		t.Fatalf("usage: %d %s", u.status, u.body)
	}
	if r := c.call("POST", "/v1/portal/billing/limits", "conversion-usage", `{"overage_cap_cents":1}`, "Content-Type", "application/json"); r.status != 200 {
		t.Fatalf("set cap: %d %s", r.status, r.body)
	}
	// 6 overage at $1.50/1,000 = 0.9 cents; the 7th would reach 1.05.
	for i := range 6 {
		r := convert("conversion-live", ":20:X")
		if r.status == 429 || r.header.Get("X-Quota-Limit") != "25000" {
			t.Fatalf("convert %d: %d %v %s", i, r.status, r.header, r.body)
		}
		if r.header.Get("X-Quota-Remaining") != "0" {
			t.Fatalf("convert %d: X-Quota-Remaining %q, want 0", i, r.header.Get("X-Quota-Remaining"))
		}
	}
	r := convert("conversion-live", ":20:X")
	r.wantProblem(t, 429, "quota-exceeded")
	if !strings.Contains(r.json["detail"].(string), "spend cap") {
		t.Fatalf("detail must name the cap: %s", r.body)
	}
	u = c.call("GET", "/v1/usage", "conversion-usage", "")
	if u.json["used"] != 25_006.0 || u.json["overage_blocked"] != true || u.json["overage_cap_cents"] != 1.0 {
		t.Fatalf("usage after overage: %s", u.body)
	}
	if r := c.call("POST", "/v1/portal/billing/limits", "conversion-usage", `{"clear_overage_cap":true}`, "Content-Type", "application/json"); r.status != 200 {
		t.Fatalf("clear cap: %d %s", r.status, r.body)
	}
	clock.Add(6 * time.Second) // the gateway's credential cache (5 s) picks the change up
	if r := convert("conversion-live", ":20:X"); r.status == 429 {
		t.Fatalf("cleared cap still refuses: %s", r.body)
	}

	// Idempotency on the conversion surface: honoured when sent.
	first := convert("conversion-live", ":20:IDEM", "Idempotency-Key", "e2e-1")
	again := convert("conversion-live", ":20:IDEM", "Idempotency-Key", "e2e-1")
	if again.header.Get("Idempotency-Replayed") != "true" || string(again.body) != string(first.body) || again.status != first.status {
		t.Fatalf("replay: %d %v", again.status, again.header)
	}
	convert("conversion-live", ":20:OTHER", "Idempotency-Key", "e2e-1").wantProblem(t, 409, "idempotency-conflict")
	u = c.call("GET", "/v1/usage", "conversion-usage", "")
	if u.json["used"] != 25_008.0 {
		t.Fatalf("a replay must not count: %s", u.body)
	}
	// Finance writes require the key.
	c.call("PATCH", "/v1/transactions/00000000-0000-0000-0000-000000000001", "finance-write", `{"expected_version":1}`, "Content-Type", "application/json").
		wantProblem(t, 400, "invalid-input")

	// The test pool: 250 for the account's life, then quota-exceeded.
	for i := range 250 {
		if r := convert("conversion-test", ":20:T"); r.status == 429 || r.header.Get("X-Quota-Limit") != "250" {
			t.Fatalf("test %d: %d %v", i, r.status, r.header)
		}
	}
	convert("conversion-test", ":20:T").wantProblem(t, 429, "quota-exceeded")

	// The token bucket: a burst over 40 without the clock moving.
	var limited resp
	for range 45 {
		if r := c.call("GET", "/v1/formats", "conversion-live", ""); r.status == 429 {
			limited = r
			break
		}
	}
	limited.wantProblem(t, 429, "rate-limited")
	if limited.header.Get("Retry-After") != "1" || limited.header.Get("RateLimit-Remaining") != "0" || limited.header.Get("RateLimit-Limit") != "40" {
		t.Fatalf("429 headers: %v", limited.header)
	}
}
