package local_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ledgerlane/platform/deploy/local"
	"github.com/ledgerlane/platform/services/jobs"
	"github.com/ledgerlane/platform/services/jobs/webhook"
)

// hookReceiver records what each path of it receives; a path under /down
// answers 500, the rest 204.
type hookReceiver struct {
	mu  sync.Mutex
	got map[string][]recorded
	srv *httptest.Server
	n   atomic.Int64
}

func newHookReceiver(t *testing.T) *hookReceiver {
	h := &hookReceiver{got: map[string][]recorded{}}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		h.mu.Lock()
		h.got[r.URL.Path] = append(h.got[r.URL.Path], recorded{r.Header.Clone(), b})
		h.mu.Unlock()
		h.n.Add(1)
		if strings.HasPrefix(r.URL.Path, "/down") {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *hookReceiver) at(path string) []recorded {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]recorded(nil), h.got[path]...)
}

// wait waits until path has received n deliveries and returns the last.
func (h *hookReceiver) wait(t *testing.T, path string, n int) recorded {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for len(h.at(path)) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d deliveries, want %d", path, len(h.at(path)), n)
		}
		time.Sleep(20 * time.Millisecond)
	}
	got := h.at(path)
	return got[n-1]
}

// TestWebhooksOperableEndToEnd drives the webhook endpoint routes through
// the gateway of the whole local stack against a receiver on loopback, on
// a clock that stands still until the test moves it: event-type filtering
// on a real job.completed, the deliveries with their attempts, resend (same
// event id), a test event, another tenant's and another mode's ids (404),
// disabling by exhausted deliveries and re-enabling, and a secret rotation
// whose deliveries verify with both secrets, then with the new one only.
func TestWebhooksOperableEndToEnd(t *testing.T) {
	clock := newStepClock()
	st := stack(t, false, func(c *local.Config) { c.Now = clock.Now })
	keys := map[string]string{}
	for _, k := range st.Keys {
		keys[k.Name] = k.Key
	}
	c := client{t: t, base: st.URL, keys: keys}
	// The rate buckets refill only as the clock moves: step it a little on
	// every call, as a client's calls are spread in time.
	call := func(method, path, key, body string) resp {
		t.Helper()
		clock.Add(100 * time.Millisecond)
		return c.call(method, path, key, body)
	}
	recv := newHookReceiver(t)
	const all = "conversion-all"

	// The registry: every finance type is sent since issue 33 item 2
	// (budget.threshold_reached last), so none is merely announced.
	r := call("GET", "/v1/webhooks/event-types", all, "")
	var types struct {
		EventTypes []struct {
			Name, Description string
			Announced         bool
		} `json:"event_types"`
	}
	_ = json.Unmarshal(r.body, &types)
	announced := 0
	for _, et := range types.EventTypes {
		if et.Announced {
			announced++
		}
	}
	if r.status != 200 || len(types.EventTypes) != 5 || types.EventTypes[0].Name != "job.completed" || types.EventTypes[0].Announced ||
		types.EventTypes[1].Name != "transactions.sync_updates_available" || types.EventTypes[1].Description == "" || announced != 0 {
		t.Fatalf("event types: %d %s", r.status, r.body)
	}
	r = call("POST", "/v1/webhooks", all, `{"url":"`+recv.srv.URL+`/x","event_types":["job.done"]}`)
	r.wantProblem(t, 400, "invalid-input")
	if r.json["field"] != "event_types[0]" {
		t.Fatalf("unknown type: %s", r.body)
	}
	create := func(path string, body string) (id, secret string) {
		t.Helper()
		r := call("POST", "/v1/webhooks", all, `{"url":"`+recv.srv.URL+path+`"`+body+`}`)
		id, _ = r.json["id"].(string)
		secret, _ = r.json["secret"].(string)
		if r.status != 200 || id == "" || !strings.HasPrefix(secret, "whsec_") || r.json["status"] != "active" {
			t.Fatalf("create %s: %d %s", path, r.status, r.body)
		}
		return id, secret
	}
	jobsID, jobsSecret := create("/jobs", `,"event_types":["job.completed"],"description":"batch results"`)
	recurID, recurSecret := create("/recurring", `,"event_types":["recurring.detected"]`)
	var listed struct {
		Endpoints []struct {
			ID          string   `json:"id"`
			Status      string   `json:"status"`
			Description string   `json:"description"`
			EventTypes  []string `json:"event_types"`
		} `json:"endpoints"`
	}
	list := func() {
		t.Helper()
		r := call("GET", "/v1/webhooks", all, "")
		if err := json.Unmarshal(r.body, &listed); err != nil || r.status != 200 {
			t.Fatalf("list: %d %s", r.status, r.body)
		}
	}
	list()
	if e := listed.Endpoints[0]; len(listed.Endpoints) != 2 || e.ID != jobsID || fmt.Sprint(e.EventTypes) != "[job.completed]" || e.Description != "batch results" {
		t.Fatalf("list: %+v", listed)
	}

	// 1. Filtering: a completed job reaches the endpoint subscribed to
	// job.completed only.
	r = call("POST", "/v1/convert/batch", all, `{"to":"camt.053","items":[{"message":":20:E2E\n:25:DE89370400440532013000\n:28C:1/1\n:60F:C260101EUR100,00\n:62F:C260101EUR100,00"}]}`)
	jobID, _ := r.json["id"].(string)
	if r.status != 202 || jobID == "" {
		t.Fatalf("batch: %d %s", r.status, r.body)
	}
	first := recv.wait(t, "/jobs", 1)
	if err := webhook.Verify(jobsSecret, first.header.Get(webhook.SignatureHeader), first.body, clock.Now()); err != nil {
		t.Fatalf("job.completed signature: %v", err)
	}
	eventID := first.header.Get(webhook.EventIDHeader)
	if first.header.Get(webhook.EventHeader) != "job.completed" || eventID == "" || !strings.Contains(string(first.body), jobID) {
		t.Fatalf("job.completed: %v %s", first.header, first.body)
	}

	// 2. Deliveries with their attempts; the other endpoint has none.
	r = call("GET", "/v1/webhooks/"+jobsID+"/deliveries", all, "")
	var page struct {
		Deliveries []struct {
			ID        string `json:"id"`
			EventType string `json:"event_type"`
			EventID   string `json:"event_id"`
			Status    string `json:"status"`
			Origin    string `json:"origin"`
			ResendOf  string `json:"resend_of"`
			JobID     string `json:"job_id"`
			Attempts  []struct {
				Number         int    `json:"number"`
				AttemptedAt    string `json:"attempted_at"`
				Succeeded      bool   `json:"succeeded"`
				ResponseStatus int    `json:"response_status"`
				Failure        string `json:"failure"`
				NextAttemptAt  string `json:"next_attempt_at"`
			} `json:"attempts"`
		} `json:"deliveries"`
		NextCursor string `json:"next_cursor"`
	}
	readPage := func(r resp) {
		t.Helper()
		page.Deliveries = nil
		if r.status != 200 {
			t.Fatalf("deliveries: %d %s", r.status, r.body)
		}
		if err := json.Unmarshal(r.body, &page); err != nil {
			t.Fatal(err)
		}
	}
	readPage(r)
	if len(page.Deliveries) != 1 {
		t.Fatalf("deliveries: %s", r.body)
	}
	d := page.Deliveries[0]
	if d.EventType != "job.completed" || d.EventID != eventID || d.Status != "succeeded" || d.Origin != "event" || d.JobID != jobID ||
		len(d.Attempts) != 1 || d.Attempts[0].ResponseStatus != 204 || !d.Attempts[0].Succeeded || d.Attempts[0].Number != 1 {
		t.Fatalf("delivery: %s", r.body)
	}
	deliveryID := d.ID
	if r = call("GET", "/v1/webhooks/"+jobsID+"/deliveries/"+deliveryID, all, ""); r.status != 200 || r.json["id"] != deliveryID {
		t.Fatalf("get delivery: %d %s", r.status, r.body)
	}
	if readPage(call("GET", "/v1/webhooks/"+jobsID+"/deliveries?status=failed", all, "")); len(page.Deliveries) != 0 {
		t.Fatalf("failed filter: %+v", page)
	}
	call("GET", "/v1/webhooks/"+jobsID+"/deliveries?status=done", all, "").wantProblem(t, 400, "invalid-input")
	if readPage(call("GET", "/v1/webhooks/"+recurID+"/deliveries", all, "")); len(page.Deliveries) != 0 || len(recv.at("/recurring")) != 0 {
		t.Fatalf("the recurring.detected endpoint got the job: %+v", page)
	}

	// 3. Resend: a new delivery of the same event, same id and body.
	r = call("POST", "/v1/webhooks/"+jobsID+"/deliveries/"+deliveryID+"/resend", all, "")
	if r.status != 202 || r.json["id"] == deliveryID || r.json["event_id"] != eventID || r.json["origin"] != "resend" || r.json["resend_of"] != deliveryID {
		t.Fatalf("resend: %d %s", r.status, r.body)
	}
	again := recv.wait(t, "/jobs", 2)
	if again.header.Get(webhook.EventIDHeader) != eventID || string(again.body) != string(first.body) || again.header.Get(webhook.DeliveryHeader) != r.json["id"] {
		t.Fatalf("resent: %v %s", again.header, again.body)
	}

	// 4. A test event, to an endpoint that subscribes to other types.
	r = call("POST", "/v1/webhooks/"+recurID+"/test", all, "")
	if r.status != 202 || r.json["event_type"] != "webhook.test" || r.json["status"] != "pending" {
		t.Fatalf("test: %d %s", r.status, r.body)
	}
	test := recv.wait(t, "/recurring", 1)
	if test.header.Get(webhook.EventHeader) != "webhook.test" || !strings.Contains(string(test.body), `"test":true`) ||
		webhook.Verify(recurSecret, test.header.Get(webhook.SignatureHeader), test.body, clock.Now()) != nil {
		t.Fatalf("test delivery: %v %s", test.header, test.body)
	}

	// 5. Another tenant's key, and this account's test mode: 404 for every
	// id of this account's live endpoints.
	stranger := newBrowser(t, st.URL)
	stranger.signUp("webhooks-stranger@example.com", pw, "Stranger Ltd")
	keys["stranger"], _ = stranger.createKey("hooks", "test", "webhooks:manage")
	demo := joinDemo(t, st, "webhooks-owner@demo.example")
	keys["own-test"], _ = demo.createKey("hooks test", "test", "webhooks:manage")
	for _, who := range []string{"stranger", "own-test"} {
		for _, rt := range [][2]string{
			{"PATCH", "/v1/webhooks/" + jobsID}, {"DELETE", "/v1/webhooks/" + jobsID},
			{"GET", "/v1/webhooks/" + jobsID + "/deliveries"}, {"GET", "/v1/webhooks/" + jobsID + "/deliveries/" + deliveryID},
			{"POST", "/v1/webhooks/" + jobsID + "/deliveries/" + deliveryID + "/resend"}, {"POST", "/v1/webhooks/" + jobsID + "/test"},
			{"POST", "/v1/webhooks/" + jobsID + "/rotate-secret"}, {"POST", "/v1/webhooks/" + jobsID + "/enable"},
		} {
			body := ""
			if rt[0] == "PATCH" {
				body = `{"url":"http://127.0.0.1:9/stolen"}`
			}
			call(rt[0], rt[1], who, body).wantProblem(t, 404, "not-found")
		}
	}
	// A delivery id through another endpoint of the owner's is absent too.
	call("GET", "/v1/webhooks/"+recurID+"/deliveries/"+deliveryID, all, "").wantProblem(t, 404, "not-found")

	// PATCH: the URL rules of creation, and the event types.
	r = call("PATCH", "/v1/webhooks/"+recurID, all, `{"url":"ftp://example.com/"}`)
	r.wantProblem(t, 400, "invalid-input")
	if r.json["field"] != "url" {
		t.Fatalf("patch url: %s", r.body)
	}
	r = call("PATCH", "/v1/webhooks/"+recurID, all, `{"event_types":[]}`)
	r.wantProblem(t, 400, "invalid-input")
	r = call("PATCH", "/v1/webhooks/"+recurID, all, `{"event_types":["*"],"description":"everything"}`)
	if r.status != 200 || r.json["description"] != "everything" || fmt.Sprint(r.json["event_types"]) != "[*]" || r.json["url"] != recv.srv.URL+"/recurring" {
		t.Fatalf("patch: %d %s", r.status, r.body)
	}

	// 6. Ten exhausted deliveries disable an endpoint; enabling resets it.
	downID, _ := create("/down", "")
	for round := range 2 {
		for range jobs.MaxPendingManual {
			if r := call("POST", "/v1/webhooks/"+downID+"/test", all, ""); r.status != 202 {
				t.Fatalf("test to down: %d %s", r.status, r.body)
			}
		}
		// Past the cap, refused at once.
		call("POST", "/v1/webhooks/"+downID+"/test", all, "").wantProblem(t, 429, "rate-limited")
		for i, step := range jobs.RetrySchedule {
			if i > 0 {
				clock.Add(step - jobs.RetrySchedule[i-1])
			}
			recv.wait(t, "/down", (round*len(jobs.RetrySchedule)+i+1)*jobs.MaxPendingManual)
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		list()
		if listed.Endpoints[2].Status == "disabled" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not disabled: %+v", listed)
		}
		time.Sleep(50 * time.Millisecond)
	}
	readPage(call("GET", "/v1/webhooks/"+downID+"/deliveries?status=failed&page_size=1", all, ""))
	if len(page.Deliveries) != 1 || page.NextCursor == "" || len(page.Deliveries[0].Attempts) != len(jobs.RetrySchedule) ||
		page.Deliveries[0].Attempts[0].ResponseStatus != 500 || page.Deliveries[0].Attempts[0].NextAttemptAt == "" {
		t.Fatalf("failed deliveries: %+v", page)
	}
	call("POST", "/v1/webhooks/"+downID+"/test", all, "").wantProblem(t, 409, "conflict")
	r = call("POST", "/v1/webhooks/"+downID+"/enable", all, "")
	if r.status != 200 || r.json["status"] != "active" || r.json["consecutive_failures"] != nil && r.json["consecutive_failures"] != float64(0) {
		t.Fatalf("enable: %d %s", r.status, r.body)
	}

	// 7. The portal's page shows the same endpoints, and acts on them
	// (before the clock moves a day on, past the session's life).
	webhooksPortal(t, demo, recv, clock, jobsID, recurID)

	// 8. Rotation: both signatures during the overlap, the new one only
	// after it.
	r = call("POST", "/v1/webhooks/"+jobsID+"/rotate-secret", all, "")
	newSecret, _ := r.json["secret"].(string)
	if r.status != 200 || !strings.HasPrefix(newSecret, "whsec_") || newSecret == jobsSecret || r.json["previous_secret_expires_at"] == nil {
		t.Fatalf("rotate: %d %s", r.status, r.body)
	}
	call("POST", "/v1/webhooks/"+jobsID+"/test", all, "")
	during := recv.wait(t, "/jobs", 3)
	h := during.header.Get(webhook.SignatureHeader)
	if strings.Count(h, "v1=") != 2 {
		t.Fatalf("during the overlap: %q", h)
	}
	for _, sec := range []string{newSecret, jobsSecret} {
		if err := webhook.Verify(sec, h, during.body, clock.Now()); err != nil {
			t.Fatalf("during the overlap: %v", err)
		}
	}
	clock.Add(jobs.RotationOverlap)
	call("POST", "/v1/webhooks/"+jobsID+"/test", all, "")
	after := recv.wait(t, "/jobs", 4)
	h = after.header.Get(webhook.SignatureHeader)
	if err := webhook.Verify(newSecret, h, after.body, clock.Now()); err != nil || strings.Count(h, "v1=") != 1 {
		t.Fatalf("after the overlap: %v %q", err, h)
	}
	if err := webhook.Verify(jobsSecret, h, after.body, clock.Now()); !errors.Is(err, webhook.ErrSignature) {
		t.Fatalf("the old secret after the overlap: %v", err)
	}
}

var webhookSecretField = regexp.MustCompile(`id="new-secret" type="text" readonly value="(whsec_[A-Za-z0-9_-]+)"`)

// webhooksPortal drives the Webhooks page as the account holder: the
// endpoints of each mode, adding one (secret shown once), its deliveries,
// test, resend, rotate, delete; forms without the CSRF token are refused.
func webhooksPortal(t *testing.T, b *browser, recv *hookReceiver, clock *stepClock, jobsID, recurID string) {
	list := b.get("/portal/webhooks")
	if list.status != 200 || !strings.Contains(list.body, `href="/portal/webhooks/`+jobsID+`?mode=live"`) ||
		!strings.Contains(list.body, `href="/portal/webhooks"`) || !strings.Contains(list.body, "batch results") {
		t.Fatalf("webhooks page: %d %s", list.status, list.body)
	}
	if tp := b.get("/portal/webhooks?mode=test"); strings.Contains(tp.body, jobsID) || !strings.Contains(tp.body, "No test endpoints yet") {
		t.Fatalf("test mode lists live endpoints: %s", tp.body)
	}
	tok := list.csrf(t)
	if p := b.post("/portal/webhooks", url.Values{"url": {recv.srv.URL + "/portal"}, "mode": {"live"}}); p.status != http.StatusForbidden {
		t.Fatalf("create without the token: %d", p.status)
	}
	p := b.post("/portal/webhooks", url.Values{"csrf": {tok}, "mode": {"test"}, "url": {"ftp://nope/"}, "event_type": {"job.completed"}})
	if p.status != 400 || !strings.Contains(p.errorText(), "url") || !strings.Contains(p.body, `value="ftp://nope/"`) {
		t.Fatalf("bad url: %d %s", p.status, p.errorText())
	}
	p = b.post("/portal/webhooks", url.Values{"csrf": {tok}, "mode": {"test"}, "url": {recv.srv.URL + "/portal"},
		"description": {"from the portal"}, "event_type": {"job.completed", "budget.threshold_reached"}})
	m := webhookSecretField.FindStringSubmatch(p.body)
	if p.status != 200 || m == nil || !strings.Contains(p.body, `data-copy="new-secret"`) || !strings.Contains(p.body, "from the portal") {
		t.Fatalf("create: %d %s", p.status, p.body)
	}
	id := regexp.MustCompile(`href="/portal/webhooks/([0-9a-f-]{36})\?mode=test"`).FindStringSubmatch(p.body)
	if id == nil {
		t.Fatalf("no link to the new endpoint: %s", p.body)
	}
	epPath := "/portal/webhooks/" + id[1] + "?mode=test"
	if live := b.get("/portal/webhooks/" + id[1] + "?mode=live"); live.status != 404 {
		t.Fatalf("a test endpoint under live: %d", live.status)
	}
	ep := b.get(epPath)
	if ep.status != 200 || !strings.Contains(ep.body, `value="budget.threshold_reached" checked`) || !strings.Contains(ep.body, "No deliveries") {
		t.Fatalf("endpoint page: %d %s", ep.status, ep.body)
	}
	act := func(path string, extra ...string) page {
		t.Helper()
		f := url.Values{"csrf": {tok}, "mode": {"test"}}
		for i := 0; i+1 < len(extra); i += 2 {
			f[extra[i]] = append(f[extra[i]], extra[i+1])
		}
		return b.post(path, f)
	}
	if p := act("/portal/webhooks/" + id[1] + "/test"); p.status != http.StatusSeeOther {
		t.Fatalf("send test: %d %s", p.status, p.body)
	}
	got := recv.wait(t, "/portal", 1)
	if err := webhook.Verify(m[1], got.header.Get(webhook.SignatureHeader), got.body, clock.Now()); err != nil && !errors.Is(err, webhook.ErrTimestamp) {
		t.Fatalf("portal test event signature: %v", err)
	}
	var ep2 page
	deadline := time.Now().Add(30 * time.Second)
	for {
		ep2 = b.get(epPath)
		if strings.Contains(ep2.body, "HTTP 204") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no attempt shown: %s", ep2.body)
		}
		time.Sleep(50 * time.Millisecond)
	}
	did := regexp.MustCompile(`action="/portal/webhooks/[0-9a-f-]{36}/deliveries/([0-9a-f-]{36})/resend"`).FindStringSubmatch(ep2.body)
	if did == nil || !strings.Contains(ep2.body, "webhook.test") {
		t.Fatalf("deliveries on the page: %s", ep2.body)
	}
	if p := act("/portal/webhooks/" + id[1] + "/deliveries/" + did[1] + "/resend"); p.status != http.StatusSeeOther {
		t.Fatalf("resend: %d %s", p.status, p.body)
	}
	if again := recv.wait(t, "/portal", 2); again.header.Get(webhook.EventIDHeader) != got.header.Get(webhook.EventIDHeader) {
		t.Fatal("the portal's resend changed the event id")
	}
	if p := act("/portal/webhooks/"+id[1], "url", recv.srv.URL+"/portal2", "description", "renamed", "event_type", "*"); p.status != http.StatusSeeOther {
		t.Fatalf("update: %d %s", p.status, p.body)
	}
	rot := act("/portal/webhooks/" + id[1] + "/rotate")
	if m2 := webhookSecretField.FindStringSubmatch(rot.body); rot.status != 200 || m2 == nil || m2[1] == m[1] || !strings.Contains(rot.body, "renamed") {
		t.Fatalf("rotate: %d %s", rot.status, rot.body)
	}
	// Another account's session finds nothing.
	if p := b.get("/portal/webhooks/" + recurID + "?mode=test"); p.status != 404 {
		t.Fatalf("live endpoint under test mode: %d", p.status)
	}
	if p := act("/portal/webhooks/" + id[1] + "/delete"); p.status != 400 {
		t.Fatalf("delete without the box: %d", p.status)
	}
	if p := act("/portal/webhooks/"+id[1]+"/delete", "confirm", "1"); p.status != http.StatusSeeOther {
		t.Fatalf("delete: %d %s", p.status, p.body)
	}
	if p := b.get(epPath); p.status != 404 {
		t.Fatalf("deleted endpoint page: %d", p.status)
	}
}
