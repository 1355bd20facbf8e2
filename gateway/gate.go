package gateway

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ledgerlane/platform/gateway/route"
	"github.com/ledgerlane/platform/pkg/periodic"
	"github.com/ledgerlane/platform/pkg/principal"
	"github.com/ledgerlane/platform/pkg/problem"
	meteringv1 "github.com/ledgerlane/platform/proto/metering/v1"
	"github.com/ledgerlane/platform/services/metering/admission"
	"github.com/ledgerlane/platform/services/metering/admission/limitswire"
)

// gate is the edge's enforcement of metering's rules (package admission):
// one Redis round trip (Admit) decides the token bucket, the quota or test
// pool, the spend cap and the idempotency reservation; a second (Settle) only
// when there is something to settle (a refund, or a response to keep). When
// Redis cannot be reached, requests go through: usage is journalled in memory
// and reconciled into Redis once it answers again.
type gate struct {
	ctl     *admission.Controller
	journal *admission.Journal
	metrics *metrics
	// downUntil (unix nanoseconds, wall clock) skips Redis for a moment after
	// it failed, so an outage costs each request nothing instead of a dial
	// timeout. A successful reconciliation closes it early.
	downUntil atomic.Int64
}

const breakerOpen = time.Second

func (a *gate) available() bool { return time.Now().UnixNano() >= a.downUntil.Load() }
func (a *gate) tripped()        { a.downUntil.Store(time.Now().Add(breakerOpen).UnixNano()) }

// batchItems counts the elements of a batch body's top-level "items"
// array, stopping once there are more than limit (an over-limit batch costs
// a scan of limit+1 items, not of the whole body). It checks only the
// structure the count needs: an object, items an array, each element one
// JSON value; the jobs service checks the rest. One item is decoded at a
// time into one reused buffer, so counting allocates about the largest item.
func batchItems(body []byte, limit int64) (int64, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return 0, errors.New("not a JSON object")
	}
	var item json.RawMessage
	n, seen := int64(0), false
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return 0, errors.New("not a JSON object")
		}
		if k != "items" {
			if err := dec.Decode(&item); err != nil {
				return 0, fmt.Errorf("member %q: not a JSON value", k)
			}
			continue
		}
		if seen {
			return 0, errors.New("items appears twice")
		}
		seen = true
		if t, err := dec.Token(); err != nil || t != json.Delim('[') {
			return 0, errors.New("items is not an array")
		}
		for dec.More() {
			if n++; n > limit {
				return n, nil
			}
			if err := dec.Decode(&item); err != nil {
				return 0, fmt.Errorf("items[%d] is not a JSON value", n-1)
			}
		}
		if _, err := dec.Token(); err != nil {
			return 0, errors.New("items is not closed")
		}
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('}') {
		return 0, errors.New("the object is not closed")
	}
	if !seen {
		return 0, errors.New("items is missing")
	}
	return n, nil
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

// ticket is a request admission let through, to settle once it is answered.
type ticket struct {
	req admission.Request
	d   admission.Decision
	// tracked: admitted in Redis (settle there); failOpen: Redis could not be
	// reached (journal metered usage); neither: no admission configured.
	tracked, failOpen bool
	// batch: a request counted per item, which counts only when accepted
	// (2xx): a batch refused whole ran no item.
	batch bool
	// keyed: the request carried an Idempotency-Key (kept when failing
	// open, where the admission request drops it).
	keyed bool
}

// admit decides the request on route rt for principal p: the token bucket,
// the quota or test pool, the spend cap and the idempotency reservation, in
// one Redis round trip. It sets the RateLimit-* and X-Quota-* headers. When
// the request is not to run (reject is set, or admission refused or replayed
// it) admit answers it itself and returns nil. reject is the edge's own
// refusal (missing scope, body too large, bad input): it still passes the
// token bucket, so every authenticated response carries the RateLimit
// headers, but it draws no quota and reserves no key.
func (g *Gateway) admit(w http.ResponseWriter, r *http.Request, p principal.Principal, limits *meteringv1.AccountLimits, rt route.Route, body []byte, reject *problem.Problem) *ticket {
	reqID := requestID(r.Context())
	key := r.Header.Get("Idempotency-Key")
	units, reject := checkAdmissible(r, rt, key, body, reject)
	a := g.adm
	if a == nil || limits == nil {
		if reject != nil {
			writeProblem(w, reject, reqID)
			return nil
		}
		return &ticket{}
	}
	t := newTicket(r, p, limits, rt, body, key, units, reject)
	if err := a.tryAdmit(r.Context(), t); err != nil {
		// Fail open: no limiter, no quota, no idempotency; usage is journalled.
		g.log.Warn("admission unavailable, failing open", "request_id", reqID, "err", err)
		a.metrics.failOpen.WithLabelValues("admit").Inc()
		if reject != nil {
			writeProblem(w, reject, reqID)
			return nil
		}
		t.failOpen = true
		t.keyed = t.req.IdempotencyKey != ""
		t.req.IdempotencyKey = ""
		return t
	}
	t.tracked = true
	setAdmissionHeaders(w.Header(), t.req, t.d)
	if reject != nil && t.d.Outcome != admission.RateLimited {
		writeProblem(w, reject, reqID)
		return nil
	}
	if t.d.Outcome == admission.Admitted {
		return t
	}
	g.answerNotAdmitted(w, t.req, t.d, reqID)
	return nil
}

// checkAdmissible adds the edge's refusals that need no Redis to reject
// (the one it was given wins): a batch must hold 1 to MaxBatchItems items
// (counted, as units, before anything is reserved: one the jobs service
// would refuse whole is refused here, unmetered, in the time it takes to
// count to the limit), and an Idempotency-Key must be valid and is
// required where the route says so.
func checkAdmissible(r *http.Request, rt route.Route, key string, body []byte, reject *problem.Problem) (int64, *problem.Problem) {
	_, keySent := r.Header["Idempotency-Key"]
	units := int64(0)
	if rt.Units == route.UnitsPerItem && reject == nil {
		n, err := batchItems(body, route.MaxBatchItems)
		switch {
		case err != nil:
			reject = problem.New(problem.InvalidInput, "the body must be a JSON object whose items is an array: "+err.Error()).WithField("items")
		case n < 1 || n > route.MaxBatchItems:
			count := strconv.FormatInt(n, 10)
			if n > route.MaxBatchItems {
				count = "more"
			}
			reject = problem.New(problem.InvalidInput, fmt.Sprintf("items must hold 1 to %d entries, got %s", route.MaxBatchItems, count)).WithField("items")
		}
		units = n
	}
	if reject == nil {
		switch {
		case rt.Idempotency == route.IdempotencyRequired && !keySent:
			reject = problem.New(problem.InvalidInput, "this write needs an Idempotency-Key header (1 to 128 characters)").WithField("Idempotency-Key")
		case keySent && !validKey(key):
			reject = problem.New(problem.InvalidInput, "Idempotency-Key must be 1 to 128 visible ASCII characters").WithField("Idempotency-Key")
		}
	}
	return units, reject
}

// newTicket is the admission request for p on rt: metered unless refused,
// counted per item for a batch, and carrying the idempotency key, its
// fingerprint and scope where the route honours one.
func newTicket(r *http.Request, p principal.Principal, limits *meteringv1.AccountLimits, rt route.Route, body []byte, key string, units int64, reject *problem.Problem) *ticket {
	t := &ticket{req: admission.Request{AccountID: p.AccountID, Test: p.Mode == "test", Metered: rt.Metered && reject == nil,
		Limits: limitswire.FromProto(limits), CredentialID: p.CredentialID}}
	if rt.Units == route.UnitsPerItem && reject == nil {
		t.req.Units, t.batch = units, true
	}
	if rt.Idempotency != route.IdempotencyNone && reject == nil && key != "" {
		t.req.IdempotencyKey, t.req.Fingerprint = key, fingerprint(r, rt, body)
		t.req.IdempotencyScope = admission.IdempotencyScope(p.CredentialID, p.Mode, p.Surface, p.FinanceUserID, p.GrantID)
	}
	return t
}

// tryAdmit runs t's admission in Redis, one round trip, keeping the
// decision in t. It returns errRedisSkipped while the breaker is open.
func (a *gate) tryAdmit(ctx context.Context, t *ticket) error {
	// The day its units are counted in, fixed now: a give-back after
	// midnight, or the journal's count after an outage, moves the same day.
	t.req.At = a.ctl.Now()
	if !a.available() {
		return errRedisSkipped
	}
	t.req.Attempt = admission.NewAttempt()
	var err error
	if t.d, err = a.ctl.Admit(ctx, t.req); err != nil {
		a.tripped()
		// The script may have run with its reply lost (a stall): the
		// reconciler abandons it, undoing what it counted and reserved,
		// since this request now runs and is journalled instead.
		a.journal.Abandon(t.req)
	}
	return err
}

// setAdmissionHeaders sets the RateLimit-* headers and, on outcomes that
// consulted the quota, the X-Quota-* ones (a replay carries the headers
// it was first answered with).
func setAdmissionHeaders(h http.Header, req admission.Request, d admission.Decision) {
	h.Set("RateLimit-Limit", strconv.Itoa(d.Limit))
	h.Set("RateLimit-Remaining", strconv.Itoa(d.Remaining))
	h.Set("RateLimit-Reset", strconv.Itoa(ceilSeconds(d.Reset)))
	if req.Metered && (d.Outcome == admission.Admitted || d.Outcome == admission.QuotaExceeded || d.Outcome == admission.CapReached) {
		h.Set("X-Quota-Limit", strconv.FormatInt(d.QuotaLimit, 10))
		h.Set("X-Quota-Remaining", strconv.FormatInt(d.QuotaRemaining(), 10))
	}
}

// answerNotAdmitted answers a request admission did not let run: over the
// rate or the quota or the spend cap, a key used with another request or
// still running, or the replay of a kept answer.
func (g *Gateway) answerNotAdmitted(w http.ResponseWriter, req admission.Request, d admission.Decision, reqID string) {
	switch d.Outcome {
	case admission.RateLimited:
		pr := problem.New(problem.RateLimited, fmt.Sprintf("the account's request rate is over its plan's limit (%d per second, burst %d)", req.Limits.RatePerSecond, req.Limits.Burst))
		pr.RetryAfter = max(1, ceilSeconds(d.RetryAfter))
		writeProblem(w, pr, reqID)
	case admission.QuotaExceeded:
		writeProblem(w, problem.New(problem.QuotaExceeded, quotaDetail(req, d)), reqID)
	case admission.CapReached:
		writeProblem(w, problem.New(problem.QuotaExceeded, capDetail(req)), reqID)
	case admission.IdempotencyConflict:
		writeProblem(w, problem.New(problem.IdempotencyConflict, "this Idempotency-Key was used with another request (method, route, id or body); use a new key").WithField("Idempotency-Key"), reqID)
	case admission.InFlight:
		pr := problem.New(problem.IdempotencyInFlight, "a request with this Idempotency-Key is still running; retry after it finishes")
		pr.RetryAfter = 1
		writeProblem(w, pr, reqID)
	case admission.Replay:
		if d.Stored == nil {
			// Kept sealed under a key since rotated out of the ring (older
			// than the rotation allows): the answer is gone, not the key's
			// meaning, so the request must not run again under it.
			g.log.Warn("a kept answer does not open", "request_id", reqID, "err", d.StoredErr)
			writeProblem(w, problem.New(problem.IdempotencyConflict, "the answer kept for this Idempotency-Key can no longer be read; check whether the first request took effect, then use a new key").WithField("Idempotency-Key"), reqID)
			return
		}
		h := w.Header()
		for k, vs := range d.Stored.Header {
			h[k] = vs
		}
		h.Set("Idempotency-Replayed", "true")
		w.WriteHeader(d.Stored.Status)
		_, _ = w.Write(d.Stored.Body)
	}
}

// answer is what a handler answered, as settlement needs it.
type answer struct {
	status int
	v      verdict
	// resp is the buffered response (buffered answers only), kept for
	// replays when the ticket holds an idempotency key.
	resp admission.Response
}

// dispatch runs next. With buffer set the response is held back and
// returned, to be sent with send once it is settled: a replayable answer is
// stored before the client can see it, and an after-success step runs before
// the client can send its next request.
func dispatch(w http.ResponseWriter, r *http.Request, next http.Handler, buffer bool) answer {
	if !buffer {
		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r)
		return answer{status: sw.status, v: sw.v}
	}
	rec := &recorder{header: http.Header{}}
	next.ServeHTTP(rec, r)
	h := w.Header()
	for k, vs := range rec.header {
		h[k] = vs
	}
	// A replay carries the headers the request was first answered with,
	// the quota it was admitted under included.
	resp := admission.Response{Status: rec.status, Header: http.Header{}, Body: rec.body.Bytes()}
	for k, vs := range h {
		if !perRequestHeaders[http.CanonicalHeaderKey(k)] {
			resp.Header[k] = vs
		}
	}
	return answer{status: rec.status, v: rec.v, resp: resp}
}

// send writes a buffered answer.
func (a answer) send(w http.ResponseWriter) {
	w.WriteHeader(a.status)
	_, _ = w.Write(a.resp.Body)
}

// settle records what the request came to: a metered answer that does not
// count gives its units back, an idempotent answer is kept for replays (or
// its key released), and usage served while Redis was unreachable is
// journalled. The counting rule is admission.Counted, with content-level
// meaning "the backend decided it" (backend.go).
func (g *Gateway) settle(ctx context.Context, t *ticket, a answer) {
	counted := admission.Counted(a.status, a.v.contentLevel)
	if t.batch && (a.status < 200 || a.status > 299) {
		counted = false // refused whole: no item ran
	}
	if counted && a.resp.Header["Idempotency-Replayed"] != nil &&
		((t.req.IdempotencyKey != "" && !t.d.PriorRefunded) || (t.failOpen && t.keyed)) {
		// The backend answered with work this key had already committed (a
		// batch whose first answer was lost). The attempt that committed it
		// was billed and never refunded, or its key would say so (a gateway
		// killed before settling it, or a record older than 24 hours): not
		// twice. Failing open the key's record cannot be read: the attempt
		// that committed the work is billed (admitted, or journalled), so
		// the replay is not; should that attempt have been answered 5xx
		// and refunded during the outage, the job goes unbilled, the rare
		// side to err on (docs/limits.md).
		counted = false
	}
	switch {
	case t.failOpen:
		if t.req.Metered && counted {
			g.adm.journal.Add(t.req)
		}
	case t.tracked:
		if err := g.adm.ctl.Settle(ctx, t.req, t.d, a.resp, counted, admission.Keep(a.status)); err != nil {
			g.log.Warn("settling admission failed", "request_id", requestID(ctx), "err", err)
			g.adm.metrics.failOpen.WithLabelValues("finish").Inc()
		}
	}
}

// quotaDetail names the quota that refused req, and for a batch (admitted
// whole or refused whole) what it asked for and what is left: a pool with 250
// left is not "spent" to a client who sent 251 items.
func quotaDetail(req admission.Request, d admission.Decision) string {
	left := d.QuotaRemaining()
	switch {
	case req.Test && req.Units > 1:
		return fmt.Sprintf("%d items requested, %d left in the test pool (a one-time %d that never resets): send fewer items or use a live key",
			req.Units, left, req.Limits.TestQuota)
	case req.Test:
		return fmt.Sprintf("the one-time test pool of %d requests is spent; it never resets: use a live key", req.Limits.TestQuota)
	case req.Limits.PaymentState == "settling":
		// Introductory limits: the payment, not the plan, is the way out.
		return fmt.Sprintf("%d left of the introductory quota of %d live conversions that applies until the account's first direct debit settles (3 to 6 business days): it lifts to the %s plan's volume then",
			left, req.Limits.MonthlyQuota, req.Limits.Plan)
	case req.Limits.PaymentState == "failed":
		return fmt.Sprintf("%d left of the Free quota of %d live conversions that applies because a payment failed: it lifts when a payment settles (retry it in the portal's payment methods)",
			left, req.Limits.MonthlyQuota)
	case req.Units > 1:
		return fmt.Sprintf("%d items requested, %d left in the %s plan's quota of %d live conversions until %s: send fewer items, raise the limit or upgrade",
			req.Units, left, req.Limits.Plan, req.Limits.MonthlyQuota, req.Limits.PeriodEnd.UTC().Format(time.RFC3339))
	}
	return fmt.Sprintf("the %s plan's quota of %d live conversions is used up until %s; raise the limit or upgrade to continue",
		req.Limits.Plan, req.Limits.MonthlyQuota, req.Limits.PeriodEnd.UTC().Format(time.RFC3339))
}

// capDetail names the spend cap; a batch says it would reach it.
func capDetail(req admission.Request) string {
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

// ReconcileUsage flushes usage journalled during a Redis outage. It returns
// how many requests are still pending.
func (g *Gateway) ReconcileUsage(ctx context.Context) (int64, error) {
	if g.adm == nil {
		return 0, nil
	}
	err := g.adm.journal.Flush(ctx, g.adm.ctl)
	if err == nil {
		g.adm.downUntil.Store(0)
	}
	return g.adm.journal.Size(), err
}

// RunReconciler flushes the journal (abandonments and usage) every interval
// until ctx ends.
func (g *Gateway) RunReconciler(ctx context.Context, interval time.Duration) {
	periodic.Task{Name: "usage reconciliation", Every: interval, Log: g.log, Run: func(ctx context.Context) error {
		if g.adm == nil || (g.adm.journal.Size() == 0 && g.adm.journal.Abandons() == 0) {
			return nil
		}
		if left, err := g.ReconcileUsage(ctx); err != nil {
			g.log.Warn("usage reconciliation pending", "requests", left, "err", err)
		} else {
			g.log.Info("usage reconciled after a Redis outage")
		}
		return nil
	}}.Loop(ctx)
}
