package local_test

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/ledgerlane/platform/deploy/local"
)

// TestIdempotencyNeverCrossesCredentials sends, for every ordered pair of demo
// credentials, the first one's request with a fresh Idempotency-Key, then the
// very same request (key, headers and body) with the second credential. The
// second must run as a request of its own: it is never answered with the
// first one's stored response.
func TestIdempotencyNeverCrossesCredentials(t *testing.T) {
	// The demo account's token bucket is shared by all its credentials: a
	// stepped clock keeps the pairs under the plan's rate.
	clock := newStepClock()
	st := stack(t, false, func(c *local.Config) { c.SandboxInterval, c.Now = -1, clock.Now })
	keys := map[string]string{}
	var names []string
	for _, k := range st.Keys {
		keys[k.Name] = k.Key
		names = append(names, k.Name)
	}
	c := steppedClient{client{t: t, base: st.URL, keys: keys}, clock}

	// A transaction on the account the redacted grant excludes, and one that
	// carries a location, which that grant redacts.
	excluded := firstTx(t, c, "account_id="+url.QueryEscape(st.Demo.ExcludedAccountID))
	located := ""
	for page, cursor := 0, ""; located == "" && page < 20; page++ {
		q := "page_size=100"
		if cursor != "" {
			q += "&cursor=" + url.QueryEscape(cursor)
		}
		r := c.call("GET", "/v1/transactions?"+q, "finance-write", "")
		for _, row := range r.json["data"].([]any) {
			tx := row.(map[string]any)
			if tx["location"] != nil && tx["account_id"] != st.Demo.ExcludedAccountID {
				located = tx["id"].(string)
				break
			}
		}
		cursor, _ = r.json["pagination"].(map[string]any)["next_cursor"].(string)
	}
	if excluded == "" || located == "" {
		t.Fatalf("demo data lacks an excluded (%q) or located (%q) transaction", excluded, located)
	}

	// request is what credential name sends: every credential's request is
	// one it may plausibly make, so the first answer is usually stored.
	request := func(name string, n int) (method, path, body string, hdr []string) {
		if strings.HasPrefix(name, "finance") {
			id := excluded
			if n%2 == 1 {
				id = located
			}
			v := version(c.call("GET", "/v1/transactions/"+id, "finance-write", "").json["data"].(map[string]any))
			return "PATCH", "/v1/transactions/" + id, fmt.Sprintf(`{"expected_version":%d,"memo":"m%d"}`, v, n),
				[]string{"Content-Type", "application/json"}
		}
		return "POST", "/v1/convert?to=camt.053", ":20:PAIR\n:25:X\n:28C:1\n:60F:C260101EUR1,\n:62F:C260101EUR1,\n-",
			[]string{"Content-Type", "text/plain"}
	}

	n := 0
	for _, a := range names {
		for _, b := range names {
			if a == b {
				continue
			}
			n++
			key := fmt.Sprintf("pair-%d", n)
			method, path, body, hdr := request(a, n)
			hdr = append(hdr, "Idempotency-Key", key)
			first := c.call(method, path, a, body, hdr...)
			second := c.call(method, path, b, body, hdr...)
			if second.header.Get("Idempotency-Replayed") != "" {
				t.Errorf("%s replayed %s's answer (%d) for key %s: %s", b, a, first.status, key, second.body)
			}
			if first.status == 200 && strings.HasPrefix(a, "finance") {
				if second.status == 200 && b == "finance-redacted" && strings.Contains(string(second.body), `"location":{`) {
					t.Errorf("%s saw a redacted location through %s's key: %s", b, a, second.body)
				}
			}
			// The first credential itself still replays its own answer.
			if first.status < 500 && first.status != 429 && first.status != 403 {
				again := c.call(method, path, a, body, hdr...)
				if again.header.Get("Idempotency-Replayed") != "true" || again.status != first.status {
					t.Errorf("%s's own retry of key %s: %d replayed=%q, first %d", a, key, again.status,
						again.header.Get("Idempotency-Replayed"), first.status)
				}
			}
		}
	}

	// The leak the issue names, directly: a row on the excluded account,
	// edited by finance-write, stays a 404 for finance-redacted whatever key
	// it replays.
	v := version(c.call("GET", "/v1/transactions/"+excluded, "finance-write", "").json["data"].(map[string]any))
	body := fmt.Sprintf(`{"expected_version":%d,"memo":"hidden"}`, v)
	hdr := []string{"Content-Type", "application/json", "Idempotency-Key", "leak-1"}
	if r := c.call("PATCH", "/v1/transactions/"+excluded, "finance-write", body, hdr...); r.status != 200 {
		t.Fatalf("finance-write edit: %d %s", r.status, r.body)
	}
	c.call("PATCH", "/v1/transactions/"+excluded, "finance-redacted", body, hdr...).wantProblem(t, 404, "not-found")
}

// steppedClient moves the clock a fifth of a second before every call.
type steppedClient struct {
	client
	clock *stepClock
}

func (c steppedClient) call(method, path, key string, body string, hdr ...string) resp {
	c.t.Helper()
	c.clock.Add(200 * time.Millisecond)
	return c.client.call(method, path, key, body, hdr...)
}

func firstTx(t *testing.T, c steppedClient, query string) string {
	t.Helper()
	r := c.call("GET", "/v1/transactions?page_size=1&"+query, "finance-write", "")
	data, _ := r.json["data"].([]any)
	if r.status != 200 || len(data) == 0 {
		t.Fatalf("transactions?%s: %d %s", query, r.status, r.body)
	}
	return data[0].(map[string]any)["id"].(string)
}
