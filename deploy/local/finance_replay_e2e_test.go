package local_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/ledgerlane/platform/deploy/local"
	"github.com/ledgerlane/platform/pkg/redisconn"
)

// TestFinancePatchRetriedAfterALostAnswer: a PATCH /v1/transactions/{id}
// commits, but the gateway's stored answer is lost (deleted from Redis here,
// as when the gateway died before storing it or Redis was unreachable). The
// retry with the same Idempotency-Key and body reaches the finance service
// again at a version that has moved on; the service recognises it and the
// client gets 200 with the row, Idempotency-Replayed: true, and the row is
// changed once. The same key from another credential is never its retry:
// where that credential sees the row it gets 409 version-conflict, and
// where its grant hides the row (an excluded account or category) 404
// not-found, exactly as for a row that does not exist, so the key reveals
// nothing of rows it cannot see. The rows are chosen by visibility, not by
// recency, so the seed's calendar does not decide which case is tried.
func TestFinancePatchRetriedAfterALostAnswer(t *testing.T) {
	for _, withDB := range []bool{false, true} {
		name := "memory"
		if withDB {
			name = "postgres"
		}
		t.Run(name, func(t *testing.T) {
			// The test reaches into the gateway's Redis.
			redisURL := reachableRedis(t)
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
	first := func(cred, query string) map[string]any {
		t.Helper()
		r := c.call("GET", "/v1/transactions?page_size=1&"+query, cred, "")
		data, _ := r.json["data"].([]any)
		if r.status != 200 || len(data) != 1 {
			t.Fatalf("no row for %s: %d %s", query, r.status, r.body)
		}
		return data[0].(map[string]any)
	}
	// Seen by both credentials: a checking row the redacted grant lists.
	shared := first("finance-redacted", "account_id="+st.Demo.AccountIDs.Checking)
	// Seen by finance-write only: a row on the account the redacted grant
	// excludes.
	hidden := first("finance-write", "account_id="+st.Demo.ExcludedAccountID)
	if r := c.call("GET", "/v1/transactions/"+hidden["id"].(string), "finance-redacted", ""); r.status != 404 {
		t.Fatalf("the redacted grant sees the excluded account's row: %d", r.status)
	}

	t.Run("seen by both", func(t *testing.T) {
		c.t = t
		lostAnswer(t, c, rc, shared, func(other resp) { other.wantProblem(t, 409, "version-conflict") })
	})
	t.Run("hidden from the other credential", func(t *testing.T) {
		c.t = t
		lostAnswer(t, c, rc, hidden, func(other resp) { other.wantProblem(t, 404, "not-found") })
	})
}

// lostAnswer patches row with finance-write, loses the gateway's stored
// answer, retries (a replay), then sends the same key and body from
// finance-redacted, whose answer wantOther judges, and finally another body
// under the key.
func lostAnswer(t *testing.T, c client, rc redis.UniversalClient, row map[string]any, wantOther func(resp)) {
	ctx := context.Background()
	id, start := row["id"].(string), version(row)
	var b [8]byte
	_, _ = rand.Read(b[:])
	key := "lost-answer-" + hex.EncodeToString(b[:]) // unique on a shared Redis
	body := fmt.Sprintf(`{"expected_version": %d, "memo": "lost answer"}`, start)
	patch := func(cred, body string) resp {
		t.Helper()
		return c.call("PATCH", "/v1/transactions/"+id, cred, body, "Content-Type", "application/json", "Idempotency-Key", key)
	}
	forget := func() {
		t.Helper()
		// The gateway's record of the key (services/metering/admission
		// idemKey: ll:{account}:idem:scope:key).
		records, err := rc.Keys(ctx, "*:idem:*:"+key).Result()
		if err != nil || len(records) == 0 {
			t.Fatalf("the gateway's record of %s: %v %v", key, records, err)
		}
		if err := rc.Del(ctx, records...).Err(); err != nil {
			t.Fatal(err)
		}
	}

	first := patch("finance-write", body)
	if first.status != 200 || first.header.Get("Idempotency-Replayed") != "" {
		t.Fatalf("first attempt: %d replayed=%q %s", first.status, first.header.Get("Idempotency-Replayed"), first.body)
	}
	committed := version(first.json["data"].(map[string]any))
	if committed != start+1 {
		t.Fatalf("first attempt: version %d, want %d", committed, start+1)
	}

	forget() // the answer is lost
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
	wantOther(other)
	if other.header.Get("Idempotency-Replayed") != "" {
		t.Errorf("another credential got a replay: %s", other.body)
	}
	// Nor is another body under the same key, once the gateway no longer
	// holds the key (it would answer 409 idempotency-conflict itself).
	forget()
	patch("finance-write", fmt.Sprintf(`{"expected_version": %d, "memo": "another"}`, start)).wantProblem(t, 409, "version-conflict")
	if v := version(c.call("GET", "/v1/transactions/"+id, "finance-write", "").json["data"].(map[string]any)); v != committed {
		t.Errorf("stored version %d after the refusals, want %d", v, committed)
	}
}
