package faults

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ledgerlane/platform/deploy/local"
	financeseed "github.com/ledgerlane/platform/services/finance/seed"
	financeserver "github.com/ledgerlane/platform/services/finance/server"
	"github.com/ledgerlane/platform/services/jobs/webhook"
)

// sampleMessage is the MT940 statement every item and conversion carries: a
// small valid one of our own, so the suite needs no sample files.
const sampleMessage = ":20:FAULTS-1\n:25:NL91ABNA0417164300\n:28C:1/1\n:60F:C260101EUR1000,00\n" +
	":61:2601020102D25,00NTRFNONREF//FAULT1\n:86:fault suite payment\n:62F:C260102EUR975,00\n"

// tenant is one metering account of the suite with its conversion key: each
// scenario gets its own, so its usage is its own.
type tenant struct {
	c       *cluster
	account string
	key     string
	secret  string // its webhook endpoint's signing secret
	hookURL string
	http    *http.Client
	// lastAnswer is when the latest answer to a conversion arrived (Unix
	// nanoseconds): the end of the last request a stopping gateway served.
	lastAnswer atomic.Int64
}

// meteringctl runs the operators' tool against the suite's database.
func (c *cluster) meteringctl(args ...string) (map[string]string, error) {
	cmd := exec.Command(filepath.Join(c.bins, "meteringctl"), args...)
	cmd.Env = []string{"DATABASE_URL=" + c.dbURL, "REDIS_URL=" + c.redisURL, "LOG_LEVEL=error"}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("meteringctl %s: %v: %s", strings.Join(args[:2], " "), err, errOut.String())
	}
	// Its output is "name  value" lines.
	fields := map[string]string{}
	for line := range strings.SplitSeq(out.String(), "\n") {
		if f := strings.Fields(line); len(f) >= 2 {
			fields[f[0]] = f[len(f)-1]
		}
	}
	return fields, nil
}

// newTenant provisions an account on the scale plan (the highest rate, so
// the suite's load is never rate limited) with a live conversion key that may
// manage webhooks and read usage, and registers recv as its webhook.
func (c *cluster) newTenant(name string, recv *receiver) (*tenant, error) {
	acct, err := c.meteringctl("account", "create", "--name", name, "--plan", "scale", "--currency", "usd")
	if err != nil {
		return nil, err
	}
	key, err := c.meteringctl("key", "issue", "--account", acct["account"], "--name", name, "--surface", "conversion",
		"--mode", "live", "--operator", "--scopes", "convert,formats:read,jobs:read,webhooks:manage,usage:read")
	if err != nil {
		return nil, err
	}
	tn := &tenant{c: c, account: acct["account"], key: key["secret"],
		// One connection per request: a gateway that stops closes its
		// listener, and a request either reaches it whole or not at all.
		http: &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}}
	if recv != nil {
		tn.hookURL = recv.url + "/" + name
		r := tn.do(http.MethodPost, "/v1/webhooks", "", []byte(`{"url":"`+tn.hookURL+`"}`))
		if r.status != http.StatusOK {
			return nil, fmt.Errorf("register webhook: %d %s", r.status, r.body)
		}
		tn.secret, _ = r.json["secret"].(string)
		recv.addSecret(name, tn.secret)
	}
	return tn, nil
}

// newFinanceTenant provisions an account with a demo finance user (seeded
// through the finance store, as the local stack seeds its demo user) and a
// finance access token on its write grant.
func (c *cluster) newFinanceTenant(name string) (*tenant, error) {
	acct, err := c.meteringctl("account", "create", "--name", name, "--plan", "scale", "--currency", "usd")
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	fin, err := financeserver.New(ctx, financeserver.Config{DatabaseURL: c.dbURL, CursorSecret: []byte("seed only")})
	if err != nil {
		return nil, err
	}
	demo, err := financeseed.Demo(ctx, fin.Store(), acct["account"], local.TestInstant) // rows only: the binaries run on the real clock
	_ = fin.Close()
	if err != nil {
		return nil, fmt.Errorf("seed the finance user: %w", err)
	}
	key, err := c.meteringctl("key", "issue", "--account", acct["account"], "--name", name, "--surface", "finance",
		"--kind", "at", "--mode", "live", "--scopes", "transactions:read,transactions:write",
		"--finance-user", demo.UserID, "--grant", demo.GrantWriteID, "--finance-addr", c.financeAddr)
	if err != nil {
		return nil, err
	}
	return &tenant{c: c, account: acct["account"], key: key["secret"],
		http: &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}}, nil
}

type answer struct {
	status int
	header http.Header
	body   []byte
	json   map[string]any
	err    error // transport error: no answer
}

func (a answer) problemType() string {
	s, _ := a.json["type"].(string)
	return s
}

func (tn *tenant) do(method, path, idemKey string, body []byte) answer {
	req, err := http.NewRequest(method, tn.c.baseURL+path, bytes.NewReader(body))
	if err != nil {
		return answer{err: err}
	}
	req.Header.Set("Authorization", "Bearer "+tn.key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if idemKey != "" {
		req.Header.Set("Idempotency-Key", idemKey)
	}
	resp, err := tn.http.Do(req)
	if err != nil {
		return answer{err: err}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return answer{err: err}
	}
	a := answer{status: resp.StatusCode, header: resp.Header, body: b}
	_ = json.Unmarshal(b, &a.json)
	return a
}

// convert sends one synchronous conversion of msg.
func (tn *tenant) convert(msg []byte) answer { return tn.convertKeyed(msg, "") }

// convertKeyed is convert with an Idempotency-Key (none when empty).
func (tn *tenant) convertKeyed(msg []byte, key string) answer {
	req, err := http.NewRequest(http.MethodPost, tn.c.baseURL+"/v1/convert?to=camt.053", bytes.NewReader(msg))
	if err != nil {
		return answer{err: err}
	}
	req.Header.Set("Authorization", "Bearer "+tn.key)
	req.Header.Set("Content-Type", "text/plain")
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	resp, err := tn.http.Do(req)
	if err != nil {
		return answer{err: err}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return answer{err: err}
	}
	tn.lastAnswer.Store(time.Now().UnixNano())
	return answer{status: resp.StatusCode, header: resp.Header, body: b}
}

func batchBody(msg []byte, n int) []byte { return batchBodyRef(msg, n, "") }

// batchBodyRef is batchBody with the client's reference (none when empty).
func batchBodyRef(msg []byte, n int, ref string) []byte {
	type item struct {
		Message string `json:"message"`
	}
	items := make([]item, n)
	for i := range items {
		items[i].Message = string(msg)
	}
	body := map[string]any{"to": "camt.053", "items": items}
	if ref != "" {
		body["reference"] = ref
	}
	b, _ := json.Marshal(body)
	return b
}

// usage reads GET /v1/usage's live count.
func (tn *tenant) usage() (int64, error) {
	r := tn.do(http.MethodGet, "/v1/usage", "", nil)
	if r.err != nil || r.status != http.StatusOK {
		return 0, fmt.Errorf("usage: %d %v %s", r.status, r.err, r.body)
	}
	// used is a JSON number, or a string for 64-bit integers (protojson).
	switch v := r.json["used"].(type) {
	case float64:
		return int64(v), nil
	case string:
		return strconv.ParseInt(v, 10, 64)
	}
	return 0, fmt.Errorf("usage: no used in %s", r.body)
}

// waitUsage waits until the account's usage equals want (usage journalled
// during a Redis outage is reconciled every few seconds) and returns the last
// value read.
func (tn *tenant) waitUsage(want int64, timeout time.Duration) (int64, bool) {
	var got int64 = -1
	ok := waitFor(timeout, time.Second, func() bool {
		u, err := tn.usage()
		if err == nil {
			got = u
		}
		return err == nil && u == want
	})
	return got, ok
}

// jobRow is a job as the jobs schema holds it, with its items counted by
// status: the suite reads the store directly so polling a 1,000-item job does
// not fetch 1,000 results a second.
type jobRow struct {
	id, status                         string
	items, succeeded, failed, pending  int
	itemsOK, itemsFailed, itemsPending int
}

func (c *cluster) pool(ctx context.Context) (*pgxpool.Pool, error) {
	return pgxpool.New(ctx, c.dbURL)
}

// jobsOf lists the account's jobs as stored, with their item counts.
func (c *cluster) jobsOf(ctx context.Context, account string) ([]jobRow, error) {
	db, err := c.pool(ctx)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	rows, err := db.Query(ctx, `
		SELECT j.id::text, j.status, j.item_count, j.succeeded_count, j.failed_count, j.pending_count,
		       count(*) FILTER (WHERE i.status = 'ok'), count(*) FILTER (WHERE i.status = 'failed'),
		       count(*) FILTER (WHERE i.status = 'pending')
		FROM jobs.jobs j LEFT JOIN jobs.items i ON i.job_id = j.id
		WHERE j.account_id = $1 GROUP BY j.id ORDER BY j.created_at`, account)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []jobRow
	for rows.Next() {
		var r jobRow
		if err := rows.Scan(&r.id, &r.status, &r.items, &r.succeeded, &r.failed, &r.pending,
			&r.itemsOK, &r.itemsFailed, &r.itemsPending); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// waitJobsDone waits until every job of the account is completed, and returns
// them as last read.
func (c *cluster) waitJobsDone(account string, timeout time.Duration) ([]jobRow, bool) {
	var last []jobRow
	ok := waitFor(timeout, time.Second, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		rows, err := c.jobsOf(ctx, account)
		if err != nil {
			return false
		}
		last = rows
		for _, r := range rows {
			if r.status != "completed" {
				return false
			}
		}
		return true
	})
	return last, ok
}

// checkJobThroughAPI reads the job through the gateway and checks it from the
// client's side: completed, every item ok exactly once, in order.
func (tn *tenant) checkJobThroughAPI(id string, n int) error {
	r := tn.do(http.MethodGet, "/v1/jobs/"+id, "", nil)
	if r.err != nil || r.status != http.StatusOK {
		return fmt.Errorf("GET /v1/jobs/%s: %d %v", id, r.status, r.err)
	}
	if r.json["status"] != "completed" {
		return fmt.Errorf("job %s is %v", id, r.json["status"])
	}
	items, _ := r.json["items"].([]any)
	if len(items) != n {
		return fmt.Errorf("job %s lists %d items, want %d", id, len(items), n)
	}
	for i, it := range items {
		m, _ := it.(map[string]any)
		idx, _ := m["index"].(float64)
		if m["status"] != "ok" || int(idx) != i {
			return fmt.Errorf("job %s item %d: index %v status %v problem %v", id, i, m["index"], m["status"], m["problem"])
		}
	}
	return nil
}

// receiver is the suite's webhook endpoint: it verifies each delivery's
// signature and records it by job and delivery id. For a tenant named in
// failFirst it answers the first attempt of each delivery 503 (a receiver
// that is down and recovers), so every job's webhook goes through a retry.
type receiver struct {
	url string
	srv *http.Server

	mu        sync.Mutex
	secrets   map[string]string
	failFirst map[string]bool
	failAll   map[string]bool           // tenants whose every attempt is answered 503
	seen      map[string]bool           // delivery ids attempted at least once
	ok        map[string]map[string]int // job id → delivery id → successful receipts
	attempts  map[string]int            // delivery id → attempts
	arrivals  map[string][]time.Time    // delivery id → when each attempt arrived
	jobOf     map[string]string         // delivery id → its job
	refOf     map[string]string         // job id → the reference its job.completed carried
	byTenant  map[string][]string       // tenant → its delivery ids, first seen first
	bad       []string                  // deliveries that did not verify
}

func newReceiver() (*receiver, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &receiver{url: "http://" + l.Addr().String(), secrets: map[string]string{}, failFirst: map[string]bool{},
		failAll: map[string]bool{}, seen: map[string]bool{}, ok: map[string]map[string]int{}, attempts: map[string]int{},
		arrivals: map[string][]time.Time{}, jobOf: map[string]string{}, refOf: map[string]string{}, byTenant: map[string][]string{}}
	r.srv = &http.Server{Handler: r, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = r.srv.Serve(l) }()
	return r, nil
}

func (r *receiver) close() { _ = r.srv.Close() }

func (r *receiver) addSecret(name, secret string) {
	r.mu.Lock()
	r.secrets[name] = secret
	r.mu.Unlock()
}

func (r *receiver) setFailFirst(name string) {
	r.mu.Lock()
	r.failFirst[name] = true
	r.mu.Unlock()
}

// setFailAll makes the receiver answer every attempt of the tenant's
// deliveries 503 (fail), or none (recover).
func (r *receiver) setFailAll(name string, fail bool) {
	r.mu.Lock()
	r.failAll[name] = fail
	r.mu.Unlock()
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	arrived := time.Now()
	body, err := io.ReadAll(http.MaxBytesReader(w, req.Body, 1<<20))
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	name := strings.TrimPrefix(req.URL.Path, "/")
	id := req.Header.Get(webhook.DeliveryHeader)
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := webhook.Verify(r.secrets[name], req.Header.Get(webhook.SignatureHeader), body, time.Now()); err != nil {
		r.bad = append(r.bad, name+": "+err.Error())
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	r.attempts[id]++
	r.arrivals[id] = append(r.arrivals[id], arrived)
	first := !r.seen[id]
	r.seen[id] = true
	if first {
		r.byTenant[name] = append(r.byTenant[name], id)
	}
	var ev struct {
		Event     string `json:"event"`
		ID        string `json:"id"`
		Reference string `json:"reference"`
	}
	if err := json.Unmarshal(body, &ev); err != nil || ev.Event != "job.completed" {
		r.bad = append(r.bad, name+": not a job.completed event")
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	r.jobOf[id] = ev.ID
	r.refOf[ev.ID] = ev.Reference
	if r.failAll[name] || (first && r.failFirst[name]) {
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	if r.ok[ev.ID] == nil {
		r.ok[ev.ID] = map[string]int{}
	}
	r.ok[ev.ID][id]++
	w.WriteHeader(http.StatusNoContent)
}

// reference is the reference job's job.completed carried ("" when none
// arrived).
func (r *receiver) reference(job string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.refOf[job]
}

// deliveries returns, for each job, the delivery ids received successfully
// and the attempts each took.
func (r *receiver) deliveries(job string) (ids []string, attempts []int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for id := range r.ok[job] {
		ids = append(ids, id)
		attempts = append(attempts, r.attempts[id])
	}
	return ids, attempts
}

// attemptRecord is one delivery as the receiver saw it.
type attemptRecord struct {
	id, job  string
	arrivals []time.Time
}

// tenantAttempts returns the tenant's deliveries, first seen first, with
// when each attempt arrived, and the attempts in all.
func (r *receiver) tenantAttempts(name string) ([]attemptRecord, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []attemptRecord
	total := 0
	for _, id := range r.byTenant[name] {
		out = append(out, attemptRecord{id: id, job: r.jobOf[id], arrivals: slices.Clone(r.arrivals[id])})
		total += len(r.arrivals[id])
	}
	return out, total
}

// waitWebhooks waits until every job has a successful delivery, then checks
// that each has exactly one delivery id (retries of it are fine).
func (r *receiver) waitWebhooks(jobs []string, timeout time.Duration) (retried int, err error) {
	if !waitFor(timeout, time.Second, func() bool {
		for _, j := range jobs {
			if ids, _ := r.deliveries(j); len(ids) == 0 {
				return false
			}
		}
		return true
	}) {
		missing := 0
		for _, j := range jobs {
			if ids, _ := r.deliveries(j); len(ids) == 0 {
				missing++
			}
		}
		return 0, fmt.Errorf("%d of %d jobs got no job.completed within %s", missing, len(jobs), timeout)
	}
	for _, j := range jobs {
		ids, attempts := r.deliveries(j)
		if len(ids) != 1 {
			return 0, fmt.Errorf("job %s got %d distinct job.completed deliveries: %v", j, len(ids), ids)
		}
		if attempts[0] > 1 {
			retried++
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.bad) > 0 {
		return 0, errors.New("deliveries that did not verify: " + strings.Join(r.bad, "; "))
	}
	return retried, nil
}

// deliveryRow is a webhook delivery as the jobs schema holds it.
type deliveryRow struct {
	id, job, endpoint, status string
	attempts                  int
	createdAt                 time.Time
}

// deliveriesOf lists the account's webhook deliveries as stored, oldest
// first.
func (c *cluster) deliveriesOf(ctx context.Context, account string) ([]deliveryRow, error) {
	db, err := c.pool(ctx)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	rows, err := db.Query(ctx, `SELECT id::text, job_id::text, endpoint_id::text, status, attempts, created_at
		FROM jobs.deliveries WHERE account_id = $1 ORDER BY created_at, id`, account)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []deliveryRow
	for rows.Next() {
		var d deliveryRow
		if err := rows.Scan(&d.id, &d.job, &d.endpoint, &d.status, &d.attempts, &d.createdAt); err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

// endpoint is a webhook endpoint as GET /v1/webhooks lists it.
type endpoint struct {
	ID, URL, Status     string
	ConsecutiveFailures int `json:"consecutive_failures"`
}

// webhooks lists the tenant's webhook endpoints through the API.
func (tn *tenant) webhooks() ([]endpoint, error) {
	r := tn.do(http.MethodGet, "/v1/webhooks", "", nil)
	if r.err != nil || r.status != http.StatusOK {
		return nil, fmt.Errorf("GET /v1/webhooks: %d %v %s", r.status, r.err, r.body)
	}
	var out struct{ Endpoints []endpoint }
	if err := json.Unmarshal(r.body, &out); err != nil {
		return nil, fmt.Errorf("GET /v1/webhooks: %w: %s", err, r.body)
	}
	return out.Endpoints, nil
}
