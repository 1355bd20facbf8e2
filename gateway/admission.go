package gateway

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ledgerlane/platform/gateway/route"
	"github.com/ledgerlane/platform/pkg/principal"
	"github.com/ledgerlane/platform/pkg/problem"
	meteringv1 "github.com/ledgerlane/platform/proto/metering/v1"
	"github.com/ledgerlane/platform/services/metering/meter"
)

// admission is the edge's enforcement of metering's rules: one Redis round
// trip (meter.Admit) decides the token bucket, the quota or test pool, the
// spend cap and the idempotency reservation; a second (meter.Finish) settles
// only when there is something to settle (a refund, or a response to keep).
// When Redis cannot be reached, requests go through: usage is journalled in
// memory and reconciled into Redis once it answers again.
type admission struct {
	meter   *meter.Meter
	journal *journal
	metrics *metrics
	// downUntil (unix nanoseconds, wall clock) skips Redis for a moment after
	// it failed, so an outage costs each request nothing instead of a dial
	// timeout. A successful reconciliation closes it early.
	downUntil atomic.Int64
}

const breakerOpen = time.Second

func (a *admission) available() bool { return time.Now().UnixNano() >= a.downUntil.Load() }
func (a *admission) tripped()        { a.downUntil.Store(time.Now().Add(breakerOpen).UnixNano()) }

// idempotent reports whether route rt takes an Idempotency-Key, and whether
// it must. Finance writes require one (the debt payoff-plan only computes and
// lists none); conversion-surface writes honour one when sent.
func idempotent(rt route.Route) (takes, required bool) {
	if rt.Method == http.MethodGet {
		return false, false
	}
	if rt.Selector == "finance.v1.DebtService.CreatePayoffPlan" {
		return false, false
	}
	return true, rt.Surface == route.Finance
}

const batchSelector = "jobs.v1.JobService.CreateBatch"

// batchItems counts a batch request's items; a body that does not parse
// counts as one (the jobs service will refuse it with 400).
func batchItems(body []byte) int64 {
	var b struct {
		Items []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(body, &b); err != nil || len(b.Items) == 0 {
		return 1
	}
	return int64(len(b.Items))
}

// validKey: 1 to 128 visible ASCII characters.
func validKey(k string) bool {
	if len(k) < 1 || len(k) > 128 {
		return false
	}
	for i := 0; i < len(k); i++ {
		if k[i] < 0x21 || k[i] > 0x7e {
			return false
		}
	}
	return true
}

// fingerprint binds an idempotency key to method, route, path (so its ids),
// query, the headers that select a conversion, and the body.
func fingerprint(r *http.Request, rt route.Route, body []byte) string {
	h := sha256.New()
	q := r.URL.Query()
	keys := make([]string, 0, len(q))
	for k := range q {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	fmt.Fprintf(h, "%s\n%s\n%s\n", r.Method, rt.Pattern, r.URL.Path)
	for _, k := range keys {
		fmt.Fprintf(h, "%s=%s\n", k, strings.Join(q[k], ","))
	}
	for _, k := range []string{"Content-Type", "Accept", "X-Service-From", "X-Service-To", "X-Service-To-Version"} {
		fmt.Fprintf(h, "%s:%s\n", k, r.Header.Get(k))
	}
	bh := sha256.Sum256(body)
	h.Write(bh[:])
	return hex.EncodeToString(h.Sum(nil))
}

// limitsOf converts the wire snapshot the credential lookup returned.
func limitsOf(p *meteringv1.AccountLimits) meter.Limits {
	l := meter.Limits{
		Plan: p.GetPlan(), RatePerSecond: int(p.GetRatePerSecond()), Burst: int(p.GetBurst()),
		MonthlyQuota: int64(p.GetMonthlyQuota()), HardStop: p.GetHardStop(), OveragePer1000: int64(p.GetOveragePricePer_1000()),
		Currency: p.GetCurrency(), PeriodStart: p.GetPeriodStart().AsTime(), PeriodEnd: p.GetPeriodEnd().AsTime(),
		TestQuota: int64(p.GetTestQuota()),
	}
	if p.OverageCapCents != nil {
		v := int64(p.GetOverageCapCents())
		l.OverageCapCents = &v
	}
	return l
}

var errRedisSkipped = errors.New("redis marked unavailable")

// recorder buffers a response so it can be kept for idempotent replays and
// inspected before it is sent.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
	v      verdict
}

func (rec *recorder) verdict() *verdict { return &rec.v }

func (rec *recorder) Header() http.Header { return rec.header }
func (rec *recorder) WriteHeader(code int) {
	if rec.status == 0 {
		rec.status = code
	}
}
func (rec *recorder) Write(b []byte) (int, error) {
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	return rec.body.Write(b)
}

// perRequestHeaders are never stored for replay: they describe this request.
var perRequestHeaders = map[string]bool{
	"X-Request-Id": true, "Ratelimit-Limit": true, "Ratelimit-Remaining": true, "Ratelimit-Reset": true,
	"Date": true, "Content-Length": true, "Retry-After": true,
}

// serveAdmitted runs next under admission for principal p on route rt. body is
// the request body already read (bounded) by the caller. reject, when set, is
// the answer the edge already decided (missing scope, body too large): the
// request still passes the token bucket, so every authenticated response
// carries the RateLimit headers, but it draws no quota and reserves no key.
func (g *Gateway) serveAdmitted(w http.ResponseWriter, r *http.Request, p principal.Principal, limits *meteringv1.AccountLimits, rt route.Route, body []byte, reject *problem.Problem, next http.Handler) {
	reqID := requestID(r.Context())
	a := g.adm
	takes, required := idempotent(rt)
	key := r.Header.Get("Idempotency-Key")
	_, keySent := r.Header["Idempotency-Key"]
	if reject == nil {
		switch {
		case required && !keySent:
			reject = problem.New(problem.InvalidInput, "this write needs an Idempotency-Key header (1 to 128 characters)").WithField("Idempotency-Key")
		case keySent && !validKey(key):
			reject = problem.New(problem.InvalidInput, "Idempotency-Key must be 1 to 128 visible ASCII characters").WithField("Idempotency-Key")
		}
	}
	if !takes || reject != nil {
		key = ""
	}
	if a == nil || limits == nil {
		if reject != nil {
			problem.Write(w, reject, reqID)
			return
		}
		next.ServeHTTP(w, r)
		return
	}
	req := meter.Request{AccountID: p.AccountID, Test: p.Mode == "test", Metered: rt.Metered && reject == nil, Limits: limitsOf(limits)}
	if rt.Selector == batchSelector {
		req.Units = batchItems(body)
	}
	if key != "" {
		req.IdempotencyKey, req.Fingerprint = key, fingerprint(r, rt, body)
		req.IdempotencyScope = meter.IdempotencyScope(p.CredentialID, p.Mode, p.Surface, p.FinanceUserID, p.GrantID)
	}
	var d meter.Decision
	err := errRedisSkipped
	if a.available() {
		if d, err = a.meter.Admit(r.Context(), req); err != nil {
			a.tripped()
		}
	}
	if err != nil {
		// Fail open: no limiter, no quota, no idempotency; usage is journalled.
		g.log.Warn("admission unavailable, failing open", "request_id", reqID, "err", err)
		a.metrics.failOpen.WithLabelValues("admit").Inc()
		if reject != nil {
			problem.Write(w, reject, reqID)
			return
		}
		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r)
		if req.Metered && meter.Counted(sw.status, sw.v.contentLevel) {
			a.journal.add(req)
		}
		return
	}
	h := w.Header()
	h.Set("RateLimit-Limit", strconv.Itoa(d.Limit))
	h.Set("RateLimit-Remaining", strconv.Itoa(d.Remaining))
	h.Set("RateLimit-Reset", strconv.Itoa(ceilSeconds(d.Reset)))
	// Only outcomes that consulted the quota report it; a replay carries the
	// headers it was first answered with.
	if req.Metered && (d.Outcome == meter.Admitted || d.Outcome == meter.QuotaExceeded || d.Outcome == meter.CapReached) {
		h.Set("X-Quota-Limit", strconv.FormatInt(d.QuotaLimit, 10))
		h.Set("X-Quota-Remaining", strconv.FormatInt(d.QuotaRemaining(), 10))
	}
	if reject != nil && d.Outcome != meter.RateLimited {
		problem.Write(w, reject, reqID)
		return
	}
	switch d.Outcome {
	case meter.RateLimited:
		pr := problem.New(problem.RateLimited, fmt.Sprintf("the account's request rate is over its plan's limit (%d per second, burst %d)", req.Limits.RatePerSecond, req.Limits.Burst))
		pr.RetryAfter = max(1, ceilSeconds(d.RetryAfter))
		problem.Write(w, pr, reqID)
		return
	case meter.QuotaExceeded:
		problem.Write(w, problem.New(problem.QuotaExceeded, quotaDetail(req, d)), reqID)
		return
	case meter.CapReached:
		problem.Write(w, problem.New(problem.QuotaExceeded, capDetail(req)), reqID)
		return
	case meter.IdempotencyConflict:
		problem.Write(w, problem.New(problem.IdempotencyConflict, "this Idempotency-Key was used with another request (method, route, id or body); use a new key").WithField("Idempotency-Key"), reqID)
		return
	case meter.InFlight:
		pr := problem.New(problem.IdempotencyInFlight, "a request with this Idempotency-Key is still running; retry after it finishes")
		pr.RetryAfter = 1
		problem.Write(w, pr, reqID)
		return
	case meter.Replay:
		for k, vs := range d.Stored.Header {
			h[k] = vs
		}
		h.Set("Idempotency-Replayed", "true")
		w.WriteHeader(d.Stored.Status)
		_, _ = w.Write(d.Stored.Body)
		return
	}

	var status int
	var v verdict
	var resp meter.Response
	if key != "" {
		// Buffer the response: it is kept for replays before it is sent.
		rec := &recorder{header: http.Header{}}
		next.ServeHTTP(rec, r)
		status, v = rec.status, rec.v
		resp = meter.Response{Status: status, Header: http.Header{}, Body: rec.body.Bytes()}
		for k, vs := range rec.header {
			h[k] = vs
		}
		// A replay carries the headers the request was first answered
		// with, the quota it was admitted under included.
		for k, vs := range h {
			if !perRequestHeaders[http.CanonicalHeaderKey(k)] {
				resp.Header[k] = vs
			}
		}
		defer func() {
			w.WriteHeader(status)
			_, _ = io.Copy(w, bytes.NewReader(resp.Body))
		}()
	} else {
		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r)
		status, v = sw.status, sw.v
	}
	counted := meter.Counted(status, v.contentLevel)
	if err := a.meter.Finish(r.Context(), req, d, resp, counted, meter.Keep(status)); err != nil {
		g.log.Warn("settling admission failed", "request_id", reqID, "err", err)
		a.metrics.failOpen.WithLabelValues("finish").Inc()
	}
}

// quotaDetail names the quota that refused req, and for a batch (admitted
// whole or refused whole) what it asked for and what is left: a pool with 250
// left is not "spent" to a client who sent 251 items.
func quotaDetail(req meter.Request, d meter.Decision) string {
	left := d.QuotaRemaining()
	switch {
	case req.Test && req.Units > 1:
		return fmt.Sprintf("%d items requested, %d left in the test pool (a one-time %d that never resets): send fewer items or use a live key",
			req.Units, left, req.Limits.TestQuota)
	case req.Test:
		return fmt.Sprintf("the one-time test pool of %d requests is spent; it never resets: use a live key", req.Limits.TestQuota)
	case req.Units > 1:
		return fmt.Sprintf("%d items requested, %d left in the %s plan's quota of %d live conversions until %s: send fewer items, raise the limit or upgrade",
			req.Units, left, req.Limits.Plan, req.Limits.MonthlyQuota, req.Limits.PeriodEnd.UTC().Format(time.RFC3339))
	}
	return fmt.Sprintf("the %s plan's quota of %d live conversions is used up until %s; raise the limit or upgrade to continue",
		req.Limits.Plan, req.Limits.MonthlyQuota, req.Limits.PeriodEnd.UTC().Format(time.RFC3339))
}

// capDetail names the spend cap; a batch says it would reach it.
func capDetail(req meter.Request) string {
	cap := fmt.Sprintf("the overage spend cap of %d %s cents (pre-tax)", derefCap(req.Limits.OverageCapCents), strings.ToUpper(req.Limits.Currency))
	fix := "raise or clear it with POST /v1/portal/billing/limits, or upgrade"
	if req.Units > 1 {
		return fmt.Sprintf("%d items requested would reach %s; send fewer items, %s", req.Units, cap, fix)
	}
	return cap + " is reached; " + fix
}

func derefCap(c *int64) int64 {
	if c == nil {
		return 0
	}
	return *c
}

// ceilSeconds rounds a duration up to whole seconds, as Retry-After needs.
func ceilSeconds(d time.Duration) int {
	return int(math.Ceil(d.Seconds()))
}

// journal holds usage counted while Redis was unreachable, per counter.
type journal struct {
	mu      sync.Mutex
	pending map[string]*journalEntry
}

type journalEntry struct {
	req meter.Request
	n   int64
}

func newJournal() *journal { return &journal{pending: map[string]*journalEntry{}} }

func (j *journal) add(r meter.Request) {
	k := fmt.Sprintf("%s|%v|%d", r.AccountID, r.Test, r.Limits.PeriodStart.Unix())
	j.mu.Lock()
	defer j.mu.Unlock()
	e, ok := j.pending[k]
	if !ok {
		e = &journalEntry{req: r}
		j.pending[k] = e
	}
	e.n++
}

func (j *journal) size() int64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	var n int64
	for _, e := range j.pending {
		n += e.n
	}
	return n
}

// flush writes pending usage to Redis; entries that fail stay for next time.
func (j *journal) flush(ctx context.Context, m *meter.Meter) error {
	j.mu.Lock()
	entries := make(map[string]*journalEntry, len(j.pending))
	for k, e := range j.pending {
		entries[k] = e
	}
	j.pending = map[string]*journalEntry{}
	j.mu.Unlock()
	var firstErr error
	for k, e := range entries {
		if err := m.Reconcile(ctx, e.req, e.n); err != nil {
			if firstErr == nil {
				firstErr = err
			}
			j.mu.Lock()
			if cur, ok := j.pending[k]; ok {
				cur.n += e.n
			} else {
				j.pending[k] = e
			}
			j.mu.Unlock()
		}
	}
	return firstErr
}

// ReconcileUsage flushes usage journalled during a Redis outage. It returns
// how many requests are still pending.
func (g *Gateway) ReconcileUsage(ctx context.Context) (int64, error) {
	if g.adm == nil {
		return 0, nil
	}
	err := g.adm.journal.flush(ctx, g.adm.meter)
	if err == nil {
		g.adm.downUntil.Store(0)
	}
	return g.adm.journal.size(), err
}

// RunReconciler flushes the journal every interval until ctx ends.
func (g *Gateway) RunReconciler(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if g.adm == nil || g.adm.journal.size() == 0 {
				continue
			}
			if left, err := g.ReconcileUsage(ctx); err != nil {
				g.log.Warn("usage reconciliation pending", "requests", left, "err", err)
			} else {
				g.log.Info("usage reconciled after a Redis outage")
			}
		}
	}
}
