package admission

import (
	"context"
	"crypto/rand"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ledgerlane/platform/services/metering/admission/quota"
)

//go:embed admit.lua
var admitLua string

//go:embed reconcile.lua
var reconcileLua string

//go:embed refund.lua
var refundLua string

//go:embed abandon.lua
var abandonLua string

//go:embed giveback.lua
var givebackLua string

var (
	admitScript     = redis.NewScript(admitLua)
	reconcileScript = redis.NewScript(reconcileLua)
	refundScript    = redis.NewScript(refundLua)
	abandonScript   = redis.NewScript(abandonLua)
	givebackScript  = redis.NewScript(givebackLua)
)

// Retention of idempotency records: 24 hours after the first request, as the
// spec fixes. InFlightTTL bounds a reservation whose request never finished
// (the gateway died mid-request), after which the key can run again.
const (
	IdempotencyTTL = 24 * time.Hour
	InFlightTTL    = 2 * time.Minute
)

// The values admission reads and writes are package quota's, plain Go, so
// the metering service's domain packages use them without this package's
// Redis client; they are named here too for the gateway.
type (
	Limits  = quota.Limits
	Request = quota.Request
	Usage   = quota.Usage
)

// unitsOf is how many conversions r stands for (0 means 1).
func unitsOf(r Request) int64 {
	if r.Units < 1 {
		return 1
	}
	return r.Units
}

// IdempotencyScope is the part of an idempotency record's key that names who
// may replay it: the credential, and with it the mode (live or test), the
// surface and, for finance, the user and grant. Every field goes in even
// though the credential id implies the rest, so the key says what it is bound
// to. docs/limits.md ("Idempotency") gives the reasons.
func IdempotencyScope(credentialID, mode, surface, financeUserID, grantID string) string {
	return mode + ":" + surface + ":" + credentialID + ":" + financeUserID + ":" + grantID
}

// Outcome of an admission.
type Outcome int

const (
	Admitted Outcome = iota
	RateLimited
	QuotaExceeded
	CapReached
	IdempotencyConflict
	InFlight
	Replay
	void // the script ran past its deadline (ErrVoid); never returned
)

// Sealer seals and opens blobs bound to additional data (seal.Keyring).
type Sealer interface {
	Seal(plaintext []byte, aad string) ([]byte, error)
	Open(blob []byte, aad string) ([]byte, error)
}

// ErrStoredUnreadable: a kept answer does not open (its key was rotated
// out of the ring, or the record was tampered with).
var ErrStoredUnreadable = errors.New("admission: the kept answer does not open")

// storedAAD binds a sealed answer to its record's key, so a blob copied
// onto another key does not open.
func storedAAD(recordKey string) string { return "idem/v1|" + recordKey }

// Decision is the admission's answer.
type Decision struct {
	Outcome Outcome
	// Token bucket state for the RateLimit-* headers.
	Limit     int
	Remaining int
	// Reset is how long until the bucket is full again.
	Reset time.Duration
	// RetryAfter is how long until one token is available (RateLimited).
	RetryAfter time.Duration
	// QuotaLimit and UsedBefore: X-Quota-Limit and X-Quota-Remaining come
	// from these (metered requests only).
	QuotaLimit int64
	UsedBefore int64
	// OverageUnits is how many of the request's units went into paid overage.
	OverageUnits int64
	// Stored is the response to replay (Replay only); nil with
	// StoredErr set when the kept answer does not open.
	Stored    *Response
	StoredErr error
	// PriorRefunded (Admitted with an idempotency key only): the key's last
	// attempt was settled without being kept (a 5xx or 429), so whatever it
	// counted was given back. A backend that answers this attempt with work
	// the key already committed is then billed now; without it, that work
	// was billed by the attempt that committed it.
	PriorRefunded bool
}

// QuotaRemaining is the count before this request, clamped at zero.
func (d Decision) QuotaRemaining() int64 { return max(0, d.QuotaLimit-d.UsedBefore) }

// Response is what an idempotent request answered, kept for replays.
type Response struct {
	Status int                 `json:"-"`
	Header map[string][]string `json:"-"` // an http.Header; plain so no net/http is needed here
	Body   []byte              `json:"-"`
}

// Controller runs the admission script against Redis.
type Controller struct {
	rdb redis.UniversalClient
	now func() time.Time
	// VoidAfter bounds how late the admission script may run: one that
	// Redis executes more than VoidAfter after the request was sent (Redis
	// was paused, or a network hung) changes nothing and answers ErrVoid.
	// The caller has failed open and counted the request by then, or will
	// on ErrVoid, so a late script must not count it again nor reserve its
	// Idempotency-Key. It must be well below the client's read timeout
	// (go-redis: 3 s; New derives it from the client's); zero turns the
	// check off.
	VoidAfter time.Duration
	// skew is Redis's clock minus ours (ms), measured with TIME now and
	// then, so deadlines are stated in Redis's time; syncedAt is when
	// (unix ms, 0 before the first measurement: no deadline is sent).
	skew, syncedAt atomic.Int64
	syncing        atomic.Bool
	// Sealer seals the answers kept for Idempotency-Key replays (the body,
	// which may hold a converted statement or a one-time webhook secret)
	// before they reach Redis, and opens them for a replay; nil keeps them
	// in the clear (tests). The gateway uses the jobs service's key ring
	// (JOB_ENCRYPTION_KEY, pkg/seal).
	Sealer Sealer
	// ChangedKey is the sorted set of accounts whose live usage changed
	// since the metering service last checked their usage alerts
	// (changed.go); DefaultChangedKey unless a test isolates itself. Every
	// Controller on one Redis must use the same key.
	ChangedKey string
}

// ErrVoid: the admission script ran after its deadline and changed nothing.
var ErrVoid = errors.New("admission: the script ran after its deadline and was not applied")

// skewSyncEvery is how often the clock difference to Redis is measured.
const skewSyncEvery = 30 * time.Second

// voidAt is the Redis-clock deadline for a script sent now, or 0 while the
// clock difference is not known yet (then a measurement starts).
func (m *Controller) voidAt() int64 {
	if m.VoidAfter <= 0 {
		return 0
	}
	wall := time.Now().UnixMilli()
	synced := m.syncedAt.Load()
	if wall-synced > skewSyncEvery.Milliseconds() && m.syncing.CompareAndSwap(false, true) {
		go m.syncSkew()
	}
	if synced == 0 {
		return 0
	}
	return wall + m.skew.Load() + m.VoidAfter.Milliseconds()
}

// syncSkew measures Redis's clock against ours, NTP style: the midpoint of
// the round trip against the server's time.
func (m *Controller) syncSkew() {
	defer m.syncing.Store(false)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	t0 := time.Now()
	rt, err := m.rdb.Time(ctx).Result()
	if err != nil {
		return
	}
	t1 := time.Now()
	mid := t0.Add(t1.Sub(t0) / 2)
	m.skew.Store(rt.UnixMilli() - mid.UnixMilli())
	m.syncedAt.Store(t1.UnixMilli())
}

// New returns a Controller on rdb with clock now (time.Now when nil) and a
// VoidAfter of one second.
func New(rdb redis.UniversalClient, now func() time.Time) *Controller {
	if now == nil {
		now = time.Now
	}
	return &Controller{rdb: rdb, now: now, VoidAfter: voidAfter(rdb), ChangedKey: DefaultChangedKey}
}

// Now is the controller's clock: the time Admit counts a request at when
// its At is zero.
func (m *Controller) Now() time.Time { return m.now() }

// voidAfter is the script deadline for rdb: one second, or four fifths of
// the client's read timeout when that is shorter. The deadline must come
// before the client gives up: then a script still queued when the client
// retries (or fails open) can no longer run, and the retry itself, sent
// after the read timeout, never runs as a second admission; the one case
// left, a script that ran but whose reply was lost, is the attempt
// record's (docs/limits.md, "Stalls").
func voidAfter(rdb redis.UniversalClient) time.Duration {
	var rt time.Duration
	switch c := rdb.(type) {
	case *redis.Client:
		rt = c.Options().ReadTimeout
	case *redis.ClusterClient:
		rt = c.Options().ReadTimeout
	}
	if rt > 0 && rt*4/5 < time.Second {
		return rt * 4 / 5
	}
	return time.Second
}

// Keys. The {account} hash tag keeps an account's keys in one Redis Cluster
// slot, which the multi-key script needs.
func bucketKey(acct string) string { return "ll:{" + acct + "}:bucket" }

// LiveKey is the live usage counter of the window starting at start.
func LiveKey(acct string, start time.Time) string {
	return "ll:{" + acct + "}:live:" + start.UTC().Format("20060102")
}

// TestKey is the lifetime test-pool counter.
func TestKey(acct string) string { return "ll:{" + acct + "}:test" }

// windowsKey is the account's index of live windows: each window's key,
// scored by the window's end (unix ms), added when the window counts its
// first units, so the daily usage finds the windows of the last 90 days
// without scanning the keyspace.
func windowsKey(acct string) string { return "ll:{" + acct + "}:windows" }

// WindowKept is how long a live window's counter is kept past its end: for
// the usage reports and invoice reconciliation, and for the daily usage's
// 90 days (GET /v1/usage/daily), whose oldest day may lie in a window that
// ended 90 days ago.
const WindowKept = 92 * 24 * time.Hour

// dayField is the field of a counter that holds the units r's credential
// was counted for on r's day (r.At, or now when r.At is zero): every change
// of the counter's used changes it by the same amount, so a counter's day
// fields always add up to its used (docs/limits.md, "Usage by day").
func dayField(r Request, now time.Time) string {
	at := r.At
	if at.IsZero() {
		at = now
	}
	return dayPrefix + at.UTC().Format(dayLayout) + ":" + r.CredentialID
}

const (
	dayPrefix = "d:"
	dayLayout = "20060102"
)

// windowIndexArgs are the index arguments of the scripts that count units:
// the window's end and the oldest end kept, or empty for the test pool.
func windowIndexArgs(r Request, now time.Time) (end string, trim int64) {
	if r.Test {
		return "", 0
	}
	return strconv.FormatInt(r.Limits.PeriodEnd.UnixMilli(), 10), now.Add(-WindowKept).UnixMilli()
}

func idemKey(acct, scope, key string) string {
	return "ll:{" + acct + "}:idem:" + scope + ":" + key
}

// quotaKey picks the counter a request draws on and its expiry: a live window
// is kept WindowKept past its end; the test pool never expires.
func (m *Controller) quotaKey(r Request, now time.Time) (key string, limit int64, ttl time.Duration) {
	if r.Test {
		return TestKey(r.AccountID), r.Limits.TestQuota, 0
	}
	return LiveKey(r.AccountID, r.Limits.PeriodStart), r.Limits.MonthlyQuota, r.Limits.PeriodEnd.Sub(now) + WindowKept
}

// Admit decides r in one Redis round trip. A Redis error is returned as is:
// the caller fails open.
func (m *Controller) Admit(ctx context.Context, r Request) (Decision, error) {
	return m.run(ctx, r, false)
}

// run runs the admission script; peek asks what a metered request r would
// meet without changing anything.
func (m *Controller) run(ctx context.Context, r Request, peek bool) (Decision, error) {
	now := m.now()
	l := r.Limits
	if l.RatePerSecond <= 0 || l.Burst <= 0 {
		return Decision{}, errors.New("admission: limits without a rate")
	}
	qkey, limit, ttl := m.quotaKey(r, now)
	allowOverage := !r.Test && !l.HardStop && l.OveragePer1000 > 0
	capMilli := int64(-1)
	if l.OverageCapCents != nil {
		capMilli = *l.OverageCapCents * 1000
	}
	ikey := idemKey(r.AccountID, "-", "-")
	if r.IdempotencyKey != "" {
		ikey = idemKey(r.AccountID, r.IdempotencyScope, r.IdempotencyKey)
	}
	mark := changedMember(r)
	attempt, attemptTTL := r.Attempt, AttemptTTL.Milliseconds()
	if peek {
		mark, attemptTTL = "", 0
	}
	if attempt == "" {
		attempt = NewAttempt()
	}
	end, trim := windowIndexArgs(r, now)
	res, err := m.runMarked(ctx, admitScript, mark,
		[]string{bucketKey(r.AccountID), qkey, ikey, attemptKey(r.AccountID, attempt), windowsKey(r.AccountID)},
		now.UnixMilli(), l.RatePerSecond, l.Burst, b2i(r.Metered), limit, b2i(allowOverage),
		l.OveragePer1000, capMilli, ttl.Milliseconds(), b2i(r.IdempotencyKey != ""), r.Fingerprint, InFlightTTL.Milliseconds(),
		unitsOf(r), b2i(peek), m.voidAt(), attemptTTL, dayField(r, now), end, trim,
	).Slice()
	if err != nil {
		return Decision{}, fmt.Errorf("admission: admit: %w", err)
	}
	if len(res) > 0 && Outcome(toInt(res[0])) == void {
		return Decision{}, ErrVoid
	}
	if len(res) < 6 {
		return Decision{}, fmt.Errorf("admission: admit: short reply")
	}
	d := Decision{
		Outcome:      Outcome(toInt(res[0])),
		Limit:        l.Burst,
		Remaining:    int(toInt(res[1])),
		Reset:        time.Duration(toInt(res[2])) * time.Millisecond,
		RetryAfter:   time.Duration(toInt(res[3])) * time.Millisecond,
		QuotaLimit:   limit,
		UsedBefore:   toInt(res[4]),
		OverageUnits: toInt(res[5]),
	}
	if d.Outcome == Admitted && len(res) >= 7 {
		d.PriorRefunded = toInt(res[6]) == 1
	}
	if d.Outcome == Replay && len(res) >= 9 {
		resp := &Response{Status: int(toInt(res[6])), Header: map[string][]string{}}
		if s, ok := res[7].(string); ok {
			_ = json.Unmarshal([]byte(s), &resp.Header)
		}
		if s, ok := res[8].(string); ok {
			resp.Body = []byte(s) // kept in the clear (no Sealer, or an older gateway)
		}
		if len(res) >= 10 {
			if s, ok := res[9].(string); ok {
				if m.Sealer == nil {
					d.StoredErr = ErrStoredUnreadable
				} else if resp.Body, err = m.Sealer.Open([]byte(s), storedAAD(ikey)); err != nil {
					resp.Body, d.StoredErr = nil, ErrStoredUnreadable
				}
			}
		}
		if d.StoredErr == nil {
			d.Stored = resp
		}
	}
	return d, nil
}

// Settle settles an admitted request once its response is known: a response
// that does not count (see Counted) gives its quota unit (and overage) back,
// and an idempotency reservation either keeps the response for 24 hours or,
// for responses a retry should re-run, is released. It is one round trip, or
// none when there is nothing to settle.
func (m *Controller) Settle(ctx context.Context, r Request, d Decision, resp Response, counted, keep bool) error {
	refund := r.Metered && !counted
	if !refund && r.IdempotencyKey == "" {
		return nil
	}
	var sealed []byte
	if keep && r.IdempotencyKey != "" && m.Sealer != nil {
		var err error
		if sealed, err = m.Sealer.Seal(resp.Body, storedAAD(idemKey(r.AccountID, r.IdempotencyScope, r.IdempotencyKey))); err != nil {
			return fmt.Errorf("admission: seal the kept answer: %w", err)
		}
	}
	_, err := m.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		if refund {
			now := m.now()
			qkey, _, _ := m.quotaKey(r, now)
			// Eval, not EvalSha: inside MULTI a missing script could not
			// be retried; the script is a few hundred bytes.
			givebackScript.Eval(ctx, p, []string{qkey}, unitsOf(r), d.OverageUnits*r.Limits.OveragePer1000, dayField(r, now))
		}
		if r.IdempotencyKey != "" {
			k := idemKey(r.AccountID, r.IdempotencyScope, r.IdempotencyKey)
			if keep {
				hdr, _ := json.Marshal(resp.Header)
				if sealed != nil {
					p.HSet(ctx, k, "st", "done", "code", resp.Status, "hdr", string(hdr), "sb", sealed)
				} else {
					p.HSet(ctx, k, "st", "done", "code", resp.Status, "hdr", string(hdr), "body", resp.Body)
				}
				p.PExpire(ctx, k, IdempotencyTTL)
			} else {
				// Released, not deleted: a retry may run (with any body),
				// and its admission learns that this attempt was settled
				// (Decision.PriorRefunded). A reservation left by a gateway
				// that died never gets here and simply expires.
				p.Del(ctx, k)
				p.HSet(ctx, k, "st", "released")
				p.PExpire(ctx, k, IdempotencyTTL)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("admission: finish: %w", err)
	}
	return nil
}

// Counted reports whether a metered response counts against quota: 2xx and
// content-level 400/422 do; authentication failures, 429s and 5xx do not.
func Counted(status int, contentLevel bool) bool {
	switch {
	case status >= 200 && status < 300:
		return true
	case status == 400 || status == 422: // Bad Request, Unprocessable Content
		return contentLevel
	}
	return false
}

// Keep reports whether an idempotent response is stored for replay. 5xx and
// 429 are not: the request did not run to completion, and a retry with the
// same key should run it.
func Keep(status int) bool {
	return status < 500 && status != 429 // Too Many Requests
}

// Usage reads the live window of l and the test pool. Whether a further live
// conversion would be refused is asked of the admission script itself (a
// peek that changes nothing), so the rule that refuses requests and the
// usage summary's overage_blocked cannot drift apart.
func (m *Controller) Usage(ctx context.Context, acct string, l Limits) (Usage, error) {
	live, err := m.rdb.HMGet(ctx, LiveKey(acct, l.PeriodStart), "used", "over").Result()
	if err != nil {
		return Usage{}, fmt.Errorf("admission: usage: %w", err)
	}
	test, err := m.rdb.HGet(ctx, TestKey(acct), "used").Int64()
	if err != nil && !errors.Is(err, redis.Nil) {
		return Usage{}, fmt.Errorf("admission: usage: %w", err)
	}
	u := Usage{Used: anyInt(live[0]), OverageMilli: anyInt(live[1]), TestUsed: test}
	d, err := m.run(ctx, Request{AccountID: acct, Metered: true, Limits: l}, true)
	if err != nil {
		return Usage{}, fmt.Errorf("admission: usage: %w", err)
	}
	u.LiveBlocked = d.Outcome == QuotaExceeded || d.Outcome == CapReached
	return u, nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func toInt(v any) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case string:
		var n int64
		_, _ = fmt.Sscan(x, &n)
		return n
	}
	return 0
}

func anyInt(v any) int64 {
	if v == nil {
		return 0
	}
	return toInt(v)
}

// Reconcile adds n units (conversions), counted while Redis was
// unreachable, to the counter they would have drawn on, accruing overage for those past the
// included volume (spend caps could not be applied during the outage).
func (m *Controller) Reconcile(ctx context.Context, r Request, n int64) error {
	now := m.now()
	qkey, limit, ttl := m.quotaKey(r, now)
	allowOverage := !r.Test && !r.Limits.HardStop && r.Limits.OveragePer1000 > 0
	end, trim := windowIndexArgs(r, now)
	err := m.runMarked(ctx, reconcileScript, changedMember(r), []string{qkey, windowsKey(r.AccountID)}, n, limit, b2i(allowOverage),
		r.Limits.OveragePer1000, ttl.Milliseconds(), dayField(r, now), end, trim).Err()
	if err != nil {
		return fmt.Errorf("admission: reconcile: %w", err)
	}
	return nil
}

// Counter reads the live window starting at periodStart: its usage and the
// overage it accrued (thousandths of a minor unit). A window never written
// reads as zeros.
func (m *Controller) Counter(ctx context.Context, acct string, periodStart time.Time) (used, overageMilli int64, err error) {
	v, err := m.rdb.HMGet(ctx, LiveKey(acct, periodStart), "used", "over").Result()
	if err != nil {
		return 0, 0, fmt.Errorf("admission: counter: %w", err)
	}
	return anyInt(v[0]), anyInt(v[1]), nil
}

// ForgiveOverage sets the overage accrued in the live window starting at
// periodStart back to zero, so a spend cap it reached stops refusing (an
// upgrade forgives overage at the old rate), and returns the window's usage
// at that moment, in one transaction. The window is kept as long as
// admission keeps it: WindowKept past periodEnd.
func (m *Controller) ForgiveOverage(ctx context.Context, acct string, periodStart, periodEnd time.Time) (used int64, err error) {
	key := LiveKey(acct, periodStart)
	var get *redis.StringCmd
	_, err = m.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		get = p.HGet(ctx, key, "used")
		p.HSet(ctx, key, "over", 0)
		p.PExpire(ctx, key, periodEnd.Sub(m.now())+WindowKept)
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return 0, fmt.Errorf("admission: forgive overage: %w", err)
	}
	used, err = get.Int64()
	if err != nil && !errors.Is(err, redis.Nil) {
		return 0, fmt.Errorf("admission: forgive overage: %w", err)
	}
	return used, nil
}

// RefundTTL is how long a refund's reference is remembered: longer than a
// live window is kept (a month and WindowKept past its end), so a repeated
// refund of one reference can never apply twice.
const RefundTTL = 130 * 24 * time.Hour

// Refund gives back n units that r's account was counted for work the
// platform then failed on its own account (a batch item that failed because
// a dependency stayed unavailable), once per ref: a repeated call with the
// same ref changes nothing, so a caller retries freely. r names the counter
// as at admission: its Test flag and Limits (the window the units were
// counted in). Units past the included volume give their overage back. It
// returns the units given back, 0 when ref was refunded before.
func (m *Controller) Refund(ctx context.Context, r Request, ref string, n int64) (int64, error) {
	if n <= 0 || ref == "" {
		return 0, errors.New("admission: refund: no units or no reference")
	}
	now := m.now()
	qkey, limit, _ := m.quotaKey(r, now)
	// Overage accrued before a hard stop was switched on is given back too:
	// the script never gives back more than the counter holds.
	price := int64(0)
	if !r.Test {
		price = r.Limits.OveragePer1000
	}
	got, err := refundScript.Run(ctx, m.rdb, []string{qkey, "ll:{" + r.AccountID + "}:refund:" + ref},
		n, limit, price, RefundTTL.Milliseconds(), dayField(r, now)).Int64()
	if err != nil {
		return 0, fmt.Errorf("admission: refund: %w", err)
	}
	return got, nil
}

// AttemptTTL is how long an admission's attempt record is kept: long
// enough for the client library's retry (within a read timeout) and for an
// Abandon after a stall, short enough that the records of a busy gateway
// stay small (about 100 bytes a metered request).
const AttemptTTL = 30 * time.Second

func attemptKey(acct, attempt string) string { return "ll:{" + acct + "}:att:" + attempt }

// NewAttempt returns a fresh Request.Attempt: 96 random bits.
func NewAttempt() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// Abandon undoes r's admission when its caller got no decision (Admit
// returned an error, and the caller failed open: the request runs and its
// journal counts it). If the script ran after all (its reply was lost to a
// stall), its count and its reservation of the Idempotency-Key are given
// back; either way it can no longer run (ARGV void). It reports whether
// there was something to undo. r.Attempt must be the one Admit was given.
func (m *Controller) Abandon(ctx context.Context, r Request) (bool, error) {
	if r.Attempt == "" {
		return false, errors.New("admission: abandon: the request has no attempt")
	}
	now := m.now()
	qkey, _, _ := m.quotaKey(r, now)
	ikey := idemKey(r.AccountID, "-", "-")
	if r.IdempotencyKey != "" {
		ikey = idemKey(r.AccountID, r.IdempotencyScope, r.IdempotencyKey)
	}
	units := int64(0)
	if r.Metered {
		units = unitsOf(r)
	}
	n, err := abandonScript.Run(ctx, m.rdb, []string{attemptKey(r.AccountID, r.Attempt), qkey, ikey},
		units, r.Limits.OveragePer1000, AttemptTTL.Milliseconds(), dayField(r, now)).Int()
	if err != nil {
		return false, fmt.Errorf("admission: abandon: %w", err)
	}
	return n == 1, nil
}
