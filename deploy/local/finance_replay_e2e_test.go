package local_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"testing"

	"github.com/ledgerlane/platform/deploy/local"
	"github.com/ledgerlane/platform/pkg/redisconn"
)

// TestFinancePatchRetriedAfterALostAnswer: a PATCH /v1/transactions/{id}
// commits, but the gateway's stored answer is lost (deleted from Redis here,
// as when the gateway died before storing it or Redis was unreachable). The
// retry with the same Idempotency-Key and body reaches the finance service
// again at a version that has moved on; the service recognises it and the
// client gets 200 with the row, Idempotency-Replayed: true, and the row is
// changed once. Another credential sending that key still gets 409.
func TestFinancePatchRetriedAfterALostAnswer(t *testing.T) {
	for _, withDB := range []bool{false, true} {
		name := "memory"
		if withDB {
			name = "postgres"
		}
		t.Run(name, func(t *testing.T) {
			// The test reaches into the gateway's Redis, so it needs its
			// address: the real server when named, else an embedded one it
			// starts itself.
			redisURL := os.Getenv("TEST_REDIS_URL")
			if redisURL == "" {
				e, err := redisconn.StartEmbedded()
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(e.Close)
				redisURL = e.URL()
			}
			st := stack(t, withDB, func(c *local.Config) { c.SandboxInterval, c.DemoPlan, c.RedisURL = -1, "scale", redisURL })
			financePatchRetriedAfterALostAnswer(t, st, redisURL)
		})
	}
}

func financePatchRetriedAfterALostAnswer(t *testing.T, st *local.Stack, redisURL string) {
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
	r := c.call("GET", "/v1/transactions?page_size=1&account_id="+st.Demo.AccountIDs.Checking, "finance-write", "")
	data, _ := r.json["data"].([]any)
	if r.status != 200 || len(data) != 1 {
		t.Fatalf("no row: %d %s", r.status, r.body)
	}
	row := data[0].(map[string]any)
	id, start := row["id"].(string), version(row)

	var b [8]byte
	_, _ = rand.Read(b[:])
	key := "lost-answer-" + hex.EncodeToString(b[:]) // unique on a shared Redis
	body := fmt.Sprintf(`{"expected_version": %d, "memo": "lost answer"}`, start)
	patch := func(cred, body string) resp {
		t.Helper()
		return c.call("PATCH", "/v1/transactions/"+id, cred, body, "Content-Type", "application/json", "Idempotency-Key", key)
	}

	first := patch("finance-write", body)
	if first.status != 200 || first.header.Get("Idempotency-Replayed") != "" {
		t.Fatalf("first attempt: %d replayed=%q %s", first.status, first.header.Get("Idempotency-Replayed"), first.body)
	}
	committed := version(first.json["data"].(map[string]any))
	if committed != start+1 {
		t.Fatalf("first attempt: version %d, want %d", committed, start+1)
	}

	// The answer is lost: the gateway's record of the key goes
	// (services/metering/admission idemKey: ll:{account}:idem:scope:key).
	records, err := rc.Keys(ctx, "*:idem:*:"+key).Result()
	if err != nil || len(records) != 1 {
		t.Fatalf("the gateway's record of %s: %v %v", key, records, err)
	}
	if err := rc.Del(ctx, records...).Err(); err != nil {
		t.Fatal(err)
	}

	again := patch("finance-write", body)
	if again.status != 200 || again.header.Get("Idempotency-Replayed") != "true" {
		t.Fatalf("retry: %d replayed=%q %s; want 200 replayed", again.status, again.header.Get("Idempotency-Replayed"), again.body)
	}
	tx := again.json["data"].(map[string]any)
	if version(tx) != committed || tx["memo"] != "lost answer" {
		t.Errorf("retry answered version %d memo %v, want the first answer's %d", version(tx), tx["memo"], committed)
	}
	if v := version(c.call("GET", "/v1/transactions/"+id, "finance-write", "").json["data"].(map[string]any)); v != committed {
		t.Errorf("stored version %d, want %d: the row changed twice", v, committed)
	}

	// The same key from another credential is not its retry.
	other := patch("finance-redacted", body)
	other.wantProblem(t, 409, "version-conflict")
	if other.header.Get("Idempotency-Replayed") != "" {
		t.Errorf("another credential got a replay: %s", other.body)
	}
	// Nor is another body under the same key, once the gateway no longer
	// holds the key (it would answer 409 idempotency-conflict itself).
	records, _ = rc.Keys(ctx, "*:idem:*:"+key).Result()
	for _, rec := range records {
		_ = rc.Del(ctx, rec).Err()
	}
	patch("finance-write", fmt.Sprintf(`{"expected_version": %d, "memo": "another"}`, start)).wantProblem(t, 409, "version-conflict")
}
