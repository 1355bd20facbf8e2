package local_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/ledgerlane/platform/deploy/local"
	"github.com/ledgerlane/platform/pkg/redisconn"
)

// TestKeptAnswersAreSealed (issue 27, 4): the answers the gateway keeps in
// Redis for Idempotency-Key replays, a converted statement and a webhook's
// one-time secret, are at rest only sealed: the record holds no clear body
// and nothing of either answer, and a replay still returns the answer.
func TestKeptAnswersAreSealed(t *testing.T) {
	redisURL := reachableRedis(t)
	st := stack(t, false, func(c *local.Config) { c.RedisURL = redisURL })
	ctx := context.Background()
	rc, err := redisconn.Connect(ctx, redisURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rc.Close() })
	keys := map[string]string{}
	for _, k := range st.Keys {
		keys[k.Name] = k.Key
	}
	c := client{t: t, base: st.URL, keys: keys}
	var b [8]byte
	_, _ = rand.Read(b[:])
	suffix := hex.EncodeToString(b[:])

	for _, tc := range []struct {
		name, path, key, body, contentType, secret string
	}{
		{"a conversion", "/v1/convert?to=camt.053", "conversion-live",
			":20:SEALED1\n:25:DE89370400440532013000\n:28C:1/1\n:60F:C260101EUR100,00\n:62F:C260101EUR100,00", "text/plain", "SEALED1"},
		{"a webhook's secret", "/v1/webhooks", "conversion-all", `{"url":"https://hooks.example.com/sealed"}`, "application/json", "whsec_"},
	} {
		idem := "sealed-" + suffix + "-" + strings.ReplaceAll(tc.name, " ", "-")
		first := c.call("POST", tc.path, tc.key, tc.body, "Content-Type", tc.contentType, "Idempotency-Key", idem)
		if first.status != 200 || !strings.Contains(string(first.body), tc.secret) {
			t.Fatalf("%s: %d %s", tc.name, first.status, first.body)
		}
		records, err := rc.Keys(ctx, "*:idem:*:"+idem).Result()
		if err != nil || len(records) != 1 {
			t.Fatalf("%s: the record of %s: %v %v", tc.name, idem, records, err)
		}
		rec, err := rc.HGetAll(ctx, records[0]).Result()
		if err != nil {
			t.Fatal(err)
		}
		if _, clear := rec["body"]; clear || rec["sb"] == "" {
			t.Fatalf("%s: the record keeps fields %v, want a sealed body only", tc.name, mapKeys(rec))
		}
		for f, v := range rec {
			if strings.Contains(v, tc.secret) || (len(first.body) > 20 && strings.Contains(v, string(first.body[:20]))) {
				t.Fatalf("%s: field %s of the record holds the answer in the clear", tc.name, f)
			}
		}
		again := c.call("POST", tc.path, tc.key, tc.body, "Content-Type", tc.contentType, "Idempotency-Key", idem)
		if again.status != 200 || again.header.Get("Idempotency-Replayed") != "true" || string(again.body) != string(first.body) {
			t.Fatalf("%s: the replay: %d %q %s", tc.name, again.status, again.header.Get("Idempotency-Replayed"), again.body)
		}
	}
}

func mapKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
