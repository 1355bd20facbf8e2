package local_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ledgerlane/platform/deploy/local"
	"github.com/ledgerlane/platform/services/jobs/webhook"
)

// TestJobsEndToEnd drives batch jobs and webhooks through the gateway of the
// whole local stack: a webhook receiver on loopback (the stack allows private
// targets), a batch submitted over HTTP, polling to completion, a verified
// job.completed delivery, and an early purge. The converter engine may not
// know the formats yet, so items are asserted on shape: ok with a result, or
// failed with a problem; either way the job completes.
func TestJobsEndToEnd(t *testing.T) {
	for _, withDB := range []bool{false, true} {
		name := "memory"
		if withDB {
			name = "postgres"
		}
		t.Run(name, func(t *testing.T) { jobsEndToEnd(t, stack(t, withDB)) })
	}
}

type recorded struct {
	header http.Header
	body   []byte
}

func jobsEndToEnd(t *testing.T, st *local.Stack) {
	keys := map[string]string{}
	for _, k := range st.Keys {
		keys[k.Name] = k.Key
	}
	c := client{t: t, base: st.URL, keys: keys}

	var mu sync.Mutex
	var got []recorded
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, recorded{r.Header.Clone(), b})
		mu.Unlock()
		w.WriteHeader(http.StatusOK)
	}))
	defer recv.Close()

	// Webhook routes need the opt-in scope.
	if r := c.call("POST", "/v1/webhooks", "conversion-live", `{"url":"`+recv.URL+`"}`); r.status != 403 {
		t.Fatalf("webhook without scope: %d %s", r.status, r.body)
	}
	r := c.call("POST", "/v1/webhooks", "conversion-all", `{"url":"ftp://example.com/"}`)
	r.wantProblem(t, 400, "invalid-input")
	if r.json["field"] != "url" {
		t.Fatalf("field: %s", r.body)
	}
	r = c.call("POST", "/v1/webhooks", "conversion-all", `{"url":"`+recv.URL+`/hook"}`)
	secret, _ := r.json["secret"].(string)
	hookID, _ := r.json["id"].(string)
	if r.status != 200 || !strings.HasPrefix(secret, "whsec_") || hookID == "" {
		t.Fatalf("create webhook: %d %s", r.status, r.body)
	}
	r = c.call("GET", "/v1/webhooks", "conversion-all", "")
	if r.status != 200 || strings.Contains(string(r.body), secret) || !strings.Contains(string(r.body), `"status":"active"`) {
		t.Fatalf("list webhooks: %d %s", r.status, r.body)
	}

	// Bad batches answer 400 naming the field.
	for _, tc := range []struct{ body, field string }{
		{`{"items":[{"message":"x"}]}`, "to"},
		{`{"to":"camt.053","items":[]}`, "items"},
		{`{"to":"camt.053","items":[{"message":""}]}`, "items[0].message"},
		{`{"to":"camt.053","items":[{"message":"x"}],"ttl_seconds":90000}`, "ttl_seconds"},
		{`{"to":"camt.053","items":[{"message":"x"}],"reference":"a\nb"}`, "reference"},
	} {
		r := c.call("POST", "/v1/convert/batch", "conversion-live", tc.body)
		r.wantProblem(t, 400, "invalid-input")
		if r.json["field"] != tc.field {
			t.Fatalf("%s: field %v, want %s", tc.body, r.json["field"], tc.field)
		}
	}

	const n = 5
	items := make([]string, n)
	for i := range items {
		items[i] = fmt.Sprintf(`{"message":":20:E2E%d\n:25:DE89370400440532013000\n:28C:1/1\n:60F:C260101EUR100,00\n:62F:C260101EUR100,00"}`, i)
	}
	// The client's reference (docs/jobs.md) comes back on the job and in its
	// webhook.
	const ref = "nightly statements / 2026-05-20"
	r = c.call("POST", "/v1/convert/batch", "conversion-live", `{"to":"camt.053","reference":"`+ref+`","items":[`+strings.Join(items, ",")+`]}`)
	jobID, _ := r.json["id"].(string)
	if r.status != 202 || r.json["status"] != "queued" || jobID == "" || r.json["expires_at"] == nil || r.json["created_at"] == nil || r.json["reference"] != ref {
		t.Fatalf("batch: %d %s", r.status, r.body)
	}

	deadline := time.Now().Add(30 * time.Second)
	for {
		r = c.call("GET", "/v1/jobs/"+jobID, "conversion-live", "")
		if r.status != 200 {
			t.Fatalf("get job: %d %s", r.status, r.body)
		}
		if r.json["status"] == "completed" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("job did not complete: %s", r.body)
		}
		time.Sleep(50 * time.Millisecond)
	}
	var job struct {
		ItemCount      int `json:"item_count"`
		SucceededCount int `json:"succeeded_count"`
		FailedCount    int `json:"failed_count"`
		PendingCount   int `json:"pending_count"`
		Items          []struct {
			Index   int    `json:"index"`
			Status  string `json:"status"`
			Result  string `json:"result"`
			Problem *struct {
				Type   string `json:"type"`
				Status int    `json:"status"`
			} `json:"problem"`
		} `json:"items"`
	}
	if err := json.Unmarshal(r.body, &job); err != nil {
		t.Fatal(err)
	}
	if job.ItemCount != n || job.SucceededCount+job.FailedCount != n || job.PendingCount != 0 || len(job.Items) != n {
		t.Fatalf("counts: %s", r.body)
	}
	for i, it := range job.Items {
		switch {
		case it.Index != i:
			t.Fatalf("item order: %s", r.body)
		case it.Status == "ok" && it.Result != "" && it.Problem == nil:
		case it.Status == "failed" && it.Problem != nil && it.Problem.Type != "" && it.Problem.Status >= 400 && it.Result == "":
		default:
			t.Fatalf("item %d shape: %s", i, r.body)
		}
	}

	// The receiver gets one verified job.completed.
	deadline = time.Now().Add(15 * time.Second)
	for {
		mu.Lock()
		n := len(got)
		mu.Unlock()
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no webhook delivery")
		}
		time.Sleep(50 * time.Millisecond)
	}
	mu.Lock()
	d := got[0]
	mu.Unlock()
	if err := webhook.Verify(secret, d.header.Get("X-Service-Signature"), d.body, st.Now()); err != nil {
		t.Fatalf("verify: %v", err)
	}
	var ev map[string]any
	_ = json.Unmarshal(d.body, &ev)
	if d.header.Get("X-Service-Event") != "job.completed" || d.header.Get("X-Service-Delivery") == "" ||
		ev["event"] != "job.completed" || ev["id"] != jobID || ev["status"] != "completed" || ev["reference"] != ref || strings.Contains(string(d.body), "E2E") {
		t.Fatalf("delivery: %v %s", d.header, d.body)
	}

	// Early purge, then not-found like any unknown id.
	if r := c.call("DELETE", "/v1/jobs/"+jobID, "conversion-live", ""); r.status != 200 {
		t.Fatalf("delete job: %d %s", r.status, r.body)
	}
	c.call("GET", "/v1/jobs/"+jobID, "conversion-live", "").wantProblem(t, 404, "not-found")
	c.call("GET", "/v1/jobs/8f2b7a4e-0000-4000-8000-000000000000", "conversion-live", "").wantProblem(t, 404, "not-found")
	if r := c.call("DELETE", "/v1/webhooks/"+hookID, "conversion-all", ""); r.status != 200 {
		t.Fatalf("delete webhook: %d %s", r.status, r.body)
	}
}
