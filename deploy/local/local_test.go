package local_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/ledgerlane/platform/deploy/local"
	"github.com/ledgerlane/platform/pkg/pgtest"
	"github.com/ledgerlane/platform/pkg/redisconn"
)

// stack boots the whole platform in process on a free port. It uses the real
// Redis and NATS named by TEST_REDIS_URL / TEST_NATS_URL when set, and the
// embedded servers otherwise; withDB also puts both stores on TEST_DATABASE_URL.
// opts adjust the configuration before start. The stack's clock starts at
// testInstant() and ticks on (clock_test.go), so the seeded data and every
// date a test asserts on are the same on any day.
func stack(t *testing.T, withDB bool, opts ...func(*local.Config)) *local.Stack {
	t.Helper()
	cfg := local.Config{
		HTTPAddr: "127.0.0.1:0",
		RedisURL: os.Getenv("TEST_REDIS_URL"),
		NATSURL:  os.Getenv("TEST_NATS_URL"),
		Log:      slog.New(slog.DiscardHandler),
		Now:      local.TickingClock(testInstant()),
	}
	if withDB {
		url := os.Getenv("TEST_DATABASE_URL")
		if url == "" {
			t.Skip("TEST_DATABASE_URL is not set: skipping the PostgreSQL run of the end-to-end test")
		}
		var b [4]byte
		_, _ = rand.Read(b[:])
		suffix := hex.EncodeToString(b[:])
		cfg.DatabaseURL, cfg.FinanceSchema, cfg.MeteringSchema = pgtest.NoCommitWait(url), "e2e_finance_"+suffix, "e2e_metering_"+suffix
		t.Cleanup(func() {
			conn, err := pgx.Connect(context.Background(), url)
			if err != nil {
				return
			}
			defer conn.Close(context.Background())
			for _, s := range []string{cfg.FinanceSchema, cfg.MeteringSchema} {
				_, _ = conn.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+s+" CASCADE")
			}
		})
	}
	for _, o := range opts {
		o(&cfg)
	}
	st, err := local.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := st.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return st
}

// reachableRedis is the Redis a test that reaches into the gateway's
// records shares with its stack: the real server TEST_REDIS_URL names, else
// an embedded one started for the test.
func reachableRedis(t *testing.T) string {
	t.Helper()
	if url := os.Getenv("TEST_REDIS_URL"); url != "" {
		return url
	}
	e, err := redisconn.StartEmbedded()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return e.URL()
}

type client struct {
	t    *testing.T
	base string
	keys map[string]string
}

type resp struct {
	status int
	header http.Header
	body   []byte
	json   map[string]any
}

func (c client) call(method, path, key string, body string, hdr ...string) resp {
	c.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	if err != nil {
		c.t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+c.keys[key])
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	r, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer r.Body.Close()
	b, _ := io.ReadAll(r.Body)
	out := resp{status: r.StatusCode, header: r.Header, body: b}
	_ = json.Unmarshal(b, &out.json)
	// Every exchange is checked against the OpenAPI document the gateway
	// serves (openapi_e2e_test.go).
	c.conform(req, body, out)
	recordExample(req, body, out)
	return out
}

func (r resp) wantProblem(t *testing.T, status int, typ string) {
	t.Helper()
	if r.status != status || r.header.Get("Content-Type") != "application/problem+json" || r.json["type"] != typ {
		t.Fatalf("want %d %s problem, got %d %q %s", status, typ, r.status, r.header.Get("Content-Type"), r.body)
	}
	if r.json["instance"] != r.header.Get("X-Request-Id") || r.json["instance"] == "" {
		t.Fatalf("instance must be the request id: %s", r.body)
	}
}

func TestEndToEnd(t *testing.T) {
	for _, withDB := range []bool{false, true} {
		name := "memory"
		if withDB {
			name = "postgres"
		}
		t.Run(name, func(t *testing.T) { endToEnd(t, stack(t, withDB)) })
	}
	// The gateway reaches the services in process by default; the same
	// walk over their loopback gRPC ports, as separate binaries talk.
	t.Run("memory/loopback-grpc", func(t *testing.T) {
		endToEnd(t, stack(t, false, func(c *local.Config) { c.LoopbackGRPC = true }))
	})
}

func endToEnd(t *testing.T, st *local.Stack) {
	keys := map[string]string{}
	for _, k := range st.Keys {
		keys[k.Name] = k.Key
	}
	for _, want := range []string{"conversion-live", "conversion-test", "conversion-all", "conversion-usage", "finance-read", "finance-write", "finance-redacted"} {
		if keys[want] == "" {
			t.Fatalf("demo key %s missing", want)
		}
	}
	c := client{t: t, base: st.URL, keys: keys}

	t.Run("edge routes", func(t *testing.T) {
		if r := c.call("GET", "/v1/health", "", ""); r.status != 200 || r.json["status"] != "ok" {
			t.Fatalf("health: %d %s", r.status, r.body)
		}
		if r := c.call("GET", "/v1/ready", "", ""); r.status != 200 || r.json["status"] != "ok" {
			t.Fatalf("ready: %d %s", r.status, r.body)
		}
		if r := c.call("GET", "/v1/version", "", ""); r.status != 200 || r.json["api_version"] != "v1" {
			t.Fatalf("version: %d %s", r.status, r.body)
		}
	})

	t.Run("problems", func(t *testing.T) {
		c.call("GET", "/v1/formats", "", "").wantProblem(t, 401, "unauthorized")
		c.call("GET", "/v1/formats", "", "", "X-API-Key", "ak_live_doesnotexist").wantProblem(t, 401, "unauthorized")
		c.call("GET", "/v1/usage", "conversion-live", "").wantProblem(t, 403, "forbidden-scope")
		c.call("GET", "/v1/transactions", "conversion-all", "").wantProblem(t, 403, "forbidden-scope")
		c.call("GET", "/v1/nope", "", "").wantProblem(t, 404, "not-found")
		r := c.call("DELETE", "/v1/health", "", "")
		r.wantProblem(t, 405, "method-not-allowed")
		if r.header.Get("Allow") != "GET, HEAD, OPTIONS" {
			t.Fatalf("Allow = %q", r.header.Get("Allow"))
		}
		c.call("POST", "/v1/convert?to=camt.053", "conversion-live", strings.Repeat("A", 2<<20+10), "Content-Type", "text/plain").
			wantProblem(t, 413, "message-too-large")
		c.call("POST", "/v1/categories", "finance-write", `{"name": `, "Content-Type", "application/json").
			wantProblem(t, 400, "invalid-input")
	})

	t.Run("finance read and cursor", func(t *testing.T) {
		r := c.call("GET", "/v1/transactions?page_size=5", "finance-read", "")
		if r.status != 200 {
			t.Fatalf("%d %s", r.status, r.body)
		}
		data, _ := r.json["data"].([]any)
		pg, _ := r.json["pagination"].(map[string]any)
		if len(data) != 5 || pg["has_more"] != true || pg["next_cursor"] == "" || r.json["filtered"] != false {
			t.Fatalf("first page: %s", r.body)
		}
		next := pg["next_cursor"].(string)
		r2 := c.call("GET", "/v1/transactions?page_size=5&cursor="+next, "finance-read", "")
		if r2.status != 200 {
			t.Fatalf("page 2: %d %s", r2.status, r2.body)
		}
		first := data[0].(map[string]any)["id"]
		for _, tx := range r2.json["data"].([]any) {
			if tx.(map[string]any)["id"] == first {
				t.Fatal("page 2 repeats page 1")
			}
		}
		forged := strings.Replace(next, next[:1], "Z", 1)
		if forged == next {
			forged = "A" + next[1:]
		}
		c.call("GET", "/v1/transactions?page_size=5&cursor="+forged, "finance-read", "").wantProblem(t, 400, "invalid-input")
		// A cursor from another query (other filter) is foreign.
		c.call("GET", "/v1/transactions?page_size=5&pending=true&cursor="+next, "finance-read", "").wantProblem(t, 400, "invalid-input")
		c.call("GET", "/v1/transactions?page_size=0", "finance-read", "").wantProblem(t, 400, "invalid-input")

		id := first.(string)
		if r := c.call("GET", "/v1/transactions/"+id, "finance-read", ""); r.status != 200 || r.json["data"].(map[string]any)["id"] != id {
			t.Fatalf("get: %d %s", r.status, r.body)
		}
		if r := c.call("GET", "/v1/categories", "finance-read", ""); r.status != 200 || len(r.json["data"].([]any)) == 0 {
			t.Fatalf("categories: %d %s", r.status, r.body)
		}
		if r := c.call("GET", "/v1/sync-status", "finance-read", ""); r.status != 200 {
			t.Fatalf("sync-status: %d %s", r.status, r.body)
		}
	})

	t.Run("convert", func(t *testing.T) {
		msg, err := os.ReadFile(filepath.Join("..", "..", "..", "shared", "samples", "mt", "php-mt940", "Ing_sample"))
		if err != nil {
			t.Skipf("../shared samples not found: %v", err)
		}
		r := c.call("POST", "/v1/convert?to=camt.053", "conversion-live", string(msg), "Content-Type", "application/x-swift-mt")
		meta, _ := r.json["meta"].(map[string]any)
		if r.status != 200 || meta["detectedType"] != "MT940" || meta["targetType"] != "camt.053" || r.header.Get("X-Quota-Limit") == "" {
			t.Fatalf("MT940 → camt.053: %d %s", r.status, r.body)
		}
		mx := r.json["result"].(string)
		back := c.call("POST", "/v1/convert", "conversion-live", mx, "Content-Type", "application/xml", "X-Service-To", "MT940", "Accept", "text/plain")
		if back.status != 200 || back.header.Get("Content-Type") != "text/plain" || !strings.Contains(string(back.body), ":61:") ||
			back.header.Get("X-Service-Warnings") == "" {
			t.Fatalf("camt.053 → MT940 bare: %d %v %s", back.status, back.header, back.body)
		}
		bad := c.call("POST", "/v1/convert?to=camt.053", "conversion-live", ":20:X\n:60F:C991399EUR1,00", "Content-Type", "text/plain")
		bad.wantProblem(t, 400, "invalid-input")
		if f := c.call("GET", "/v1/formats", "conversion-live", ""); f.status != 200 || len(f.json["formats"].([]any)) < 10 {
			t.Fatalf("formats: %d %s", f.status, f.body)
		}
	})

	t.Run("validate, normalize and enrich", func(t *testing.T) {
		body := func(msg string) string {
			b, _ := json.Marshal(map[string]any{"message": msg})
			return string(b)
		}
		const mt940 = ":20:A\n:25:DE89370400440532013000\n:28C:1\n:60F:C260101EUR10,\n:61:260102C5,NTRFX\n:86:Müller\n:62F:C260102EUR15,\n-"
		r := c.call("POST", "/v1/validate", "conversion-live", body(mt940), "Content-Type", "application/json")
		if r.status != 200 || r.json["valid"] != true || r.header.Get("X-Quota-Remaining") == "" {
			t.Fatalf("validate: %d %v %s", r.status, r.header, r.body)
		}
		r = c.call("POST", "/v1/validate", "conversion-live", body(strings.Replace(mt940, "C260101", "C261301", 1)), "Content-Type", "application/json")
		errs, _ := r.json["errors"].([]any)
		if r.status != 200 || r.json["valid"] == true || len(errs) != 1 || errs[0].(map[string]any)["line"] != float64(4) {
			t.Fatalf("invalid message: %d %s", r.status, r.body)
		}
		// The base transliteration profile writes ü as u.
		r = c.call("POST", "/v1/normalize", "conversion-live", body(mt940), "Content-Type", "application/json")
		if msg, _ := r.json["message"].(string); r.status != 200 || !strings.Contains(msg, ":86:Muller\r\n") {
			t.Fatalf("normalize: %d %s", r.status, r.body)
		}
		c.call("POST", "/v1/normalize", "conversion-live", body("hello"), "Content-Type", "application/json").wantProblem(t, 400, "invalid-input")

		r = c.call("POST", "/v1/enrich", "conversion-live", body(mt940), "Content-Type", "application/json")
		ibans, _ := r.json["ibans"].([]any)
		if r.status != 200 || len(ibans) != 1 || ibans[0].(map[string]any)["bank_code"] != "37040044" || r.json["message"] != mt940 {
			t.Fatalf("enrich: %d %s", r.status, r.body)
		}
	})

	t.Run("connections routed by surface", func(t *testing.T) {
		r := c.call("GET", "/v1/connections", "finance-read", "")
		if r.status != 200 || len(r.json["data"].([]any)) == 0 {
			t.Fatalf("finance connections: %d %s", r.status, r.body)
		}
		// The conversion surface's are the accounting-platform connections.
		if r := c.call("GET", "/v1/connections", "conversion-all", ""); r.status != 200 || r.json["connections"] == nil && r.json["next_cursor"] == nil {
			t.Fatalf("accounting connections: %d %s", r.status, r.body)
		}
		c.call("GET", "/v1/connections", "conversion-live", "").wantProblem(t, 403, "forbidden-scope")
	})

	t.Run("privacy scoping", func(t *testing.T) {
		r := c.call("GET", "/v1/transactions?page_size=200", "finance-redacted", "")
		if r.status != 200 || r.json["filtered"] != true {
			t.Fatalf("redacted grant must filter: %d %s", r.status, r.body)
		}
		if !strings.Contains(string(r.body), "transaction.location") {
			t.Fatalf("redacted_fields must name transaction.location: %s", r.body)
		}
		for _, tx := range r.json["data"].([]any) {
			if _, ok := tx.(map[string]any)["location"]; ok {
				t.Fatal("location leaked through a redacting grant")
			}
		}
		r = c.call("GET", "/v1/connections", "finance-redacted", "")
		for _, conn := range r.json["data"].([]any) {
			if _, ok := conn.(map[string]any)["institution"]; ok {
				t.Fatalf("institution leaked: %s", r.body)
			}
		}
	})
}

func TestKeysFileShape(t *testing.T) {
	st := stack(t, false)
	path := filepath.Join(t.TempDir(), "keys.json")
	if err := local.WriteKeysFile(path, st.Keys); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("keys file must be owner-only: %v %v", fi.Mode(), err)
	}
	var got []map[string]any
	raw, _ := os.ReadFile(path)
	if err := json.Unmarshal(raw, &got); err != nil || len(got) != 7 {
		t.Fatalf("keys file: %v %s", err, raw)
	}
	for _, k := range got {
		if k["name"] == "" || !strings.HasPrefix(k["key"].(string), "a") || len(k["scopes"].([]any)) == 0 {
			t.Fatalf("bad key entry %v", k)
		}
	}
}
