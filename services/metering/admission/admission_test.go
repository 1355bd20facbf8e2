package admission_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/ledgerlane/platform/pkg/redisconn"
	"github.com/ledgerlane/platform/pkg/seal"
	"github.com/ledgerlane/platform/services/metering/admission"
)

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func setup(t *testing.T) (*admission.Controller, *clock) {
	t.Helper()
	c := &clock{t: time.Date(2026, 5, 10, 12, 0, 0, 0, time.UTC)}
	m := admission.New(redisconn.ForTest(t), c.now)
	// Marks of these random accounts would otherwise sit in a shared
	// server's set for the metering services that run on it.
	m.ChangedKey = "ll:{test}:changed:" + uuid.NewString()
	t.Cleanup(func() { _ = m.DropChanged(context.Background()) })
	return m, c
}

func limits(c *clock) admission.Limits {
	start, end := admission.Period(true, time.Time{}, c.now())
	return admission.Limits{Plan: "starter", RatePerSecond: 1000, Burst: 1000, MonthlyQuota: 5, OveragePer1000: 150,
		Currency: "usd", PeriodStart: start, PeriodEnd: end, TestQuota: admission.TestPool}
}

func admit(t *testing.T, m *admission.Controller, r admission.Request) admission.Decision {
	t.Helper()
	d, err := m.Admit(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestTokenBucket(t *testing.T) {
	m, c := setup(t)
	l := limits(c)
	l.RatePerSecond, l.Burst = 2, 3
	r := admission.Request{AccountID: uuid.NewString(), Limits: l}
	for i := range 3 {
		d := admit(t, m, r)
		if d.Outcome != admission.Admitted || d.Remaining != 2-i || d.Limit != 3 {
			t.Fatalf("request %d: %+v", i, d)
		}
	}
	d := admit(t, m, r)
	if d.Outcome != admission.RateLimited || d.RetryAfter != 500*time.Millisecond || d.Remaining != 0 {
		t.Fatalf("empty bucket: %+v", d)
	}
	c.add(500 * time.Millisecond) // one token back at 2/s
	if d := admit(t, m, r); d.Outcome != admission.Admitted {
		t.Fatalf("after refill: %+v", d)
	}
	c.add(10 * time.Second) // never more than the burst
	if d := admit(t, m, r); d.Remaining != 2 || d.Reset != 500*time.Millisecond {
		t.Fatalf("bucket over-filled: %+v", d)
	}
	// The bucket is per account, not per key: another account is untouched.
	other := r
	other.AccountID = uuid.NewString()
	if d := admit(t, m, other); d.Remaining != 2 {
		t.Fatalf("buckets shared across accounts: %+v", d)
	}
}

func TestQuotaHardStopAndTestPool(t *testing.T) {
	m, c := setup(t)
	acct := uuid.NewString()
	l := limits(c)
	l.HardStop = true
	live := admission.Request{AccountID: acct, Metered: true, Limits: l}
	for i := range 5 {
		d := admit(t, m, live)
		if d.Outcome != admission.Admitted || d.UsedBefore != int64(i) || d.QuotaRemaining() != int64(5-i) {
			t.Fatalf("live %d: %+v", i, d)
		}
	}
	if d := admit(t, m, live); d.Outcome != admission.QuotaExceeded || d.QuotaRemaining() != 0 {
		t.Fatalf("hard stop: %+v", d)
	}
	// The test pool is separate, 250 for the account's whole life.
	test := admission.Request{AccountID: acct, Metered: true, Test: true, Limits: l}
	for i := range admission.TestPool {
		if d := admit(t, m, test); d.Outcome != admission.Admitted || d.QuotaLimit != 250 {
			t.Fatalf("test %d: %+v", i, d)
		}
	}
	if d := admit(t, m, test); d.Outcome != admission.QuotaExceeded {
		t.Fatalf("test pool spent: %+v", d)
	}
	// A new window resets live usage, never the test pool.
	c.add(31 * 24 * time.Hour)
	live.Limits = limits(c)
	live.Limits.HardStop = true
	test.Limits = live.Limits
	if d := admit(t, m, live); d.Outcome != admission.Admitted || d.UsedBefore != 0 {
		t.Fatalf("next window: %+v", d)
	}
	if d := admit(t, m, test); d.Outcome != admission.QuotaExceeded {
		t.Fatalf("test pool must never reset: %+v", d)
	}
	// Unmetered routes never touch quota.
	if d := admit(t, m, admission.Request{AccountID: acct, Test: true, Limits: l}); d.Outcome != admission.Admitted {
		t.Fatalf("unmetered: %+v", d)
	}
}

func TestOverageAndCap(t *testing.T) {
	m, c := setup(t)
	acct := uuid.NewString()
	l := limits(c)
	capCents := int64(1) // 1 cent = 1000 milli-cents; each overage request costs 150
	l.OverageCapCents = &capCents
	r := admission.Request{AccountID: acct, Metered: true, Limits: l}
	for range 5 {
		admit(t, m, r)
	}
	// 6 overage requests accrue 900; the 7th would reach 1050 ≥ 1000: refused.
	for i := range 6 {
		if d := admit(t, m, r); d.Outcome != admission.Admitted || d.OverageUnits != 1 || d.QuotaRemaining() != 0 {
			t.Fatalf("overage %d: %+v", i, d)
		}
	}
	if d := admit(t, m, r); d.Outcome != admission.CapReached {
		t.Fatalf("the request that would reach the cap must be refused: %+v", d)
	}
	u, err := m.Usage(context.Background(), acct, l)
	if err != nil || u.Used != 11 || u.OverageMilli != 900 {
		t.Fatalf("usage %+v %v", u, err)
	}
	// Clearing the cap lets overage flow again.
	r.Limits.OverageCapCents = nil
	if d := admit(t, m, r); d.Outcome != admission.Admitted {
		t.Fatalf("cap cleared: %+v", d)
	}
}

func TestSettleRefundsUncountedResponses(t *testing.T) {
	m, c := setup(t)
	acct := uuid.NewString()
	r := admission.Request{AccountID: acct, Metered: true, Limits: limits(c)}
	for range 6 { // the sixth is overage
		admit(t, m, r)
	}
	d := admit(t, m, r)
	if err := m.Settle(context.Background(), r, d, admission.Response{Status: 502}, admission.Counted(502, true), false); err != nil {
		t.Fatal(err)
	}
	u, _ := m.Usage(context.Background(), acct, r.Limits)
	if u.Used != 6 || u.OverageMilli != 150 {
		t.Fatalf("a 5xx must give back its unit and its overage: %+v", u)
	}
	tests := []struct {
		status       int
		contentLevel bool
		want         bool
	}{
		{200, false, true}, {400, true, true}, {422, true, true}, {400, false, false},
		{401, true, false}, {429, true, false}, {500, true, false}, {503, true, false},
	}
	for _, tt := range tests {
		if got := admission.Counted(tt.status, tt.contentLevel); got != tt.want {
			t.Errorf("Counted(%d, %v) = %v", tt.status, tt.contentLevel, got)
		}
	}
}

func TestIdempotency(t *testing.T) {
	m, c := setup(t)
	acct := uuid.NewString()
	r := admission.Request{AccountID: acct, Metered: true, Limits: limits(c), IdempotencyKey: "k1", Fingerprint: "fp-a"}
	d := admit(t, m, r)
	if d.Outcome != admission.Admitted {
		t.Fatalf("first: %+v", d)
	}
	if d2 := admit(t, m, r); d2.Outcome != admission.InFlight {
		t.Fatalf("duplicate while running: %+v", d2)
	}
	other := r
	other.Fingerprint = "fp-b"
	if d2 := admit(t, m, other); d2.Outcome != admission.IdempotencyConflict {
		t.Fatalf("another body: %+v", d2)
	}
	resp := admission.Response{Status: 201, Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(`{"id":"x"}`)}
	if err := m.Settle(context.Background(), r, d, resp, true, true); err != nil {
		t.Fatal(err)
	}
	rep := admit(t, m, r)
	if rep.Outcome != admission.Replay || rep.Stored.Status != 201 || string(rep.Stored.Body) != `{"id":"x"}` ||
		http.Header(rep.Stored.Header).Get("Content-Type") != "application/json" {
		t.Fatalf("replay: %+v %+v", rep, rep.Stored)
	}
	if d2 := admit(t, m, other); d2.Outcome != admission.IdempotencyConflict {
		t.Fatalf("another body after completion: %+v", d2)
	}
	u, _ := m.Usage(context.Background(), acct, r.Limits)
	if u.Used != 1 {
		t.Fatalf("replays and refusals must not count: used %d", u.Used)
	}
	// A released key (5xx) runs again; a key past 24 hours is forgotten.
	r2 := r
	r2.IdempotencyKey = "k2"
	d = admit(t, m, r2)
	_ = m.Settle(context.Background(), r2, d, admission.Response{Status: 500}, false, admission.Keep(500))
	if d := admit(t, m, r2); d.Outcome != admission.Admitted {
		t.Fatalf("released key: %+v", d)
	}
}

// A record belongs to the credential that made it: the same key and body
// from another credential of the same account (another mode, surface, user
// or grant, or just another key) runs as a request of its own.
func TestIdempotencyScopedToCredential(t *testing.T) {
	m, c := setup(t)
	acct := uuid.NewString()
	base := admission.Request{AccountID: acct, Limits: limits(c), IdempotencyKey: "k", Fingerprint: "fp",
		IdempotencyScope: admission.IdempotencyScope("cred-a", "live", "finance", "user-1", "grant-1")}
	d := admit(t, m, base)
	resp := admission.Response{Status: 200, Header: http.Header{}, Body: []byte(`{"secret":"a"}`)}
	if err := m.Settle(context.Background(), base, d, resp, true, true); err != nil {
		t.Fatal(err)
	}
	if d := admit(t, m, base); d.Outcome != admission.Replay {
		t.Fatalf("same credential must replay: %+v", d)
	}
	others := map[string]string{
		"another key":   admission.IdempotencyScope("cred-b", "live", "finance", "user-1", "grant-1"),
		"another mode":  admission.IdempotencyScope("cred-a", "test", "finance", "user-1", "grant-1"),
		"another grant": admission.IdempotencyScope("cred-a", "live", "finance", "user-1", "grant-2"),
		"another user":  admission.IdempotencyScope("cred-a", "live", "finance", "user-2", "grant-1"),
		"conversion":    admission.IdempotencyScope("cred-a", "live", "conversion", "", ""),
	}
	for name, scope := range others {
		r := base
		r.IdempotencyScope = scope
		if d := admit(t, m, r); d.Outcome != admission.Admitted {
			t.Errorf("%s: want a fresh admission, got outcome %d", name, d.Outcome)
		}
	}
}

func TestIdempotencyExactlyOnceUnderConcurrency(t *testing.T) {
	m, c := setup(t)
	r := admission.Request{AccountID: uuid.NewString(), Limits: limits(c), IdempotencyKey: "same", Fingerprint: "fp"}
	var admitted, inflight atomic.Int32
	var wg sync.WaitGroup
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d, err := m.Admit(context.Background(), r)
			if err != nil {
				t.Error(err)
				return
			}
			switch d.Outcome {
			case admission.Admitted:
				admitted.Add(1)
			case admission.InFlight:
				inflight.Add(1)
			}
		}()
	}
	wg.Wait()
	if admitted.Load() != 1 || inflight.Load() != 49 {
		t.Fatalf("admitted %d, in flight %d; want exactly one execution", admitted.Load(), inflight.Load())
	}
}

func TestReconcile(t *testing.T) {
	m, c := setup(t)
	acct := uuid.NewString()
	r := admission.Request{AccountID: acct, Metered: true, Limits: limits(c)}
	for range 3 {
		admit(t, m, r)
	}
	// Four requests went through while Redis was down: two fill the included
	// volume, two are overage.
	if err := m.Reconcile(context.Background(), r, 4); err != nil {
		t.Fatal(err)
	}
	u, _ := m.Usage(context.Background(), acct, r.Limits)
	if u.Used != 7 || u.OverageMilli != 300 {
		t.Fatalf("reconciled usage %+v", u)
	}
}

func TestBatchUnitsAllOrNothing(t *testing.T) {
	m, c := setup(t)
	acct := uuid.NewString()
	capCents := int64(1)
	l := limits(c) // 5 included, 0.15 cents per overage conversion
	l.OverageCapCents = &capCents
	batch := func(n int64) admission.Decision {
		return admit(t, m, admission.Request{AccountID: acct, Metered: true, Units: n, Limits: l})
	}
	if d := batch(3); d.Outcome != admission.Admitted || d.OverageUnits != 0 {
		t.Fatalf("3 of 5: %+v", d)
	}
	// 2 included + 7 overage = 1.05 cents ≥ the cap: refused whole.
	if d := batch(9); d.Outcome != admission.CapReached {
		t.Fatalf("batch over the cap: %+v", d)
	}
	u, _ := m.Usage(context.Background(), acct, l)
	if u.Used != 3 || u.OverageMilli != 0 {
		t.Fatalf("a refused batch must draw nothing: %+v", u)
	}
	d := batch(8) // 2 included + 6 overage = 0.9 cents
	if d.Outcome != admission.Admitted || d.OverageUnits != 6 {
		t.Fatalf("batch within the cap: %+v", d)
	}
	_ = m.Settle(context.Background(), admission.Request{AccountID: acct, Metered: true, Units: 8, Limits: l}, d, admission.Response{Status: 503}, false, false)
	if u, _ := m.Usage(context.Background(), acct, l); u.Used != 3 || u.OverageMilli != 0 {
		t.Fatalf("a refunded batch gives back every unit: %+v", u)
	}
	hard := l
	hard.HardStop = true
	if d := admit(t, m, admission.Request{AccountID: acct, Metered: true, Units: 3, Limits: hard}); d.Outcome != admission.QuotaExceeded {
		t.Fatalf("hard stop, batch that does not fit: %+v", d)
	}
}

// The usage summary's "blocked" and the refusal of the next live request are
// one rule: for any quota, usage, hard stop and cap, Usage says LiveBlocked
// exactly when the next metered live request is refused for quota or cap.
func TestLiveBlockedIsAdmissionsRule(t *testing.T) {
	m, c := setup(t)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 300 {
		l := limits(c)
		l.MonthlyQuota = int64(rng.IntN(4))
		l.HardStop = rng.IntN(4) == 0
		if rng.IntN(5) == 0 {
			l.OveragePer1000 = 0
		}
		if rng.IntN(2) == 0 {
			cp := int64(rng.IntN(3))
			l.OverageCapCents = &cp
		}
		acct := uuid.NewString()
		r := admission.Request{AccountID: acct, Metered: true, Limits: l}
		for range rng.IntN(6) {
			admit(t, m, r) // spend some of the quota, and overage
		}
		u, err := m.Usage(context.Background(), acct, l)
		if err != nil {
			t.Fatal(err)
		}
		before := u
		d := admit(t, m, r)
		refused := d.Outcome == admission.QuotaExceeded || d.Outcome == admission.CapReached
		if u.LiveBlocked != refused {
			t.Fatalf("case %d: %+v with usage %+v: LiveBlocked %v, next request outcome %d", i, l, before, u.LiveBlocked, d.Outcome)
		}
	}
}

// TestAbandon: an admission that ran but whose caller got no decision is
// undone by the journal's flush (its count given back, its key free); one
// abandoned before its script ran can never run; the client library's
// retry of an admission that ran is answered as the first run, unchanged.
func TestAbandon(t *testing.T) {
	m, c := setup(t)
	ctx := context.Background()
	r := admission.Request{AccountID: uuid.NewString(), Metered: true, Limits: limits(c), IdempotencyKey: "k", Fingerprint: "fp",
		Attempt: admission.NewAttempt()}
	first := admit(t, m, r)
	if again := admit(t, m, r); first.Outcome != admission.Admitted || again.Outcome != admission.Admitted ||
		again.UsedBefore != first.UsedBefore {
		t.Fatalf("the retry of one attempt: %+v then %+v", first, again)
	}
	if u, _ := m.Usage(ctx, r.AccountID, r.Limits); u.Used != 1 {
		t.Fatalf("one attempt run twice counted %d", u.Used)
	}
	other := r
	other.Attempt = admission.NewAttempt()
	if d := admit(t, m, other); d.Outcome != admission.InFlight {
		t.Fatalf("another attempt with the key: %v", d.Outcome)
	}
	j := admission.NewJournal()
	j.Abandon(r)
	if err := j.Flush(ctx, m); err != nil || j.Abandons() != 0 {
		t.Fatalf("flush: %v, %d left", err, j.Abandons())
	}
	if u, _ := m.Usage(ctx, r.AccountID, r.Limits); u.Used != 0 {
		t.Fatalf("abandoned, still counted %d", u.Used)
	}
	if _, err := m.Admit(ctx, r); !errors.Is(err, admission.ErrVoid) {
		t.Fatalf("an abandoned attempt ran again: %v", err)
	}
	if d := admit(t, m, other); d.Outcome != admission.Admitted {
		t.Fatalf("the key after the abandon: %v", d.Outcome)
	}
	// Abandoned before it ran: it never does.
	late := admission.Request{AccountID: r.AccountID, Metered: true, Limits: r.Limits, Attempt: admission.NewAttempt()}
	if undone, err := m.Abandon(ctx, late); err != nil || undone {
		t.Fatalf("abandon before the script: %v %v", undone, err)
	}
	if _, err := m.Admit(ctx, late); !errors.Is(err, admission.ErrVoid) {
		t.Fatalf("the abandoned attempt ran: %v", err)
	}
	if u, _ := m.Usage(ctx, r.AccountID, r.Limits); u.Used != 1 {
		t.Fatalf("usage %d, want the other attempt's 1", u.Used)
	}
}

// TestJournalCountsUnits: usage served while Redis was unreachable is
// journalled by units: a batch of 100 items is 100 conversions, not one
// request (the fault suite's 50 concurrent duplicates under a Redis that
// timed out counted 49 for one 100-item batch).
func TestJournalCountsUnits(t *testing.T) {
	m, c := setup(t)
	ctx := context.Background()
	r := admission.Request{AccountID: uuid.NewString(), Metered: true, Limits: limits(c)}
	j := admission.NewJournal()
	batch := r
	batch.Units = 100
	j.Add(batch)
	j.Add(r)
	if got := j.Size(); got != 101 {
		t.Fatalf("journal holds %d units, want 101", got)
	}
	if err := j.Flush(ctx, m); err != nil {
		t.Fatal(err)
	}
	if u, _ := m.Usage(ctx, r.AccountID, r.Limits); u.Used != 101 {
		t.Fatalf("usage %d after the flush, want 101", u.Used)
	}
}

// TestKeptAnswersSealed: with a Sealer the kept answer is stored sealed,
// bound to its record, and a replay opens it; a ring that no longer holds
// the key answers the replay as unreadable rather than running it again.
func TestKeptAnswersSealed(t *testing.T) {
	m, c := setup(t)
	ctx := context.Background()
	m.Sealer = seal.NewRandomKeyring()
	r := admission.Request{AccountID: uuid.NewString(), Limits: limits(c), IdempotencyKey: "k", Fingerprint: "fp"}
	d := admit(t, m, r)
	if err := m.Settle(ctx, r, d, admission.Response{Status: 200, Body: []byte("whsec_secret")}, true, true); err != nil {
		t.Fatal(err)
	}
	if d := admit(t, m, r); d.Outcome != admission.Replay || d.Stored == nil || string(d.Stored.Body) != "whsec_secret" {
		t.Fatalf("replay: %+v", d)
	}
	m.Sealer = seal.NewRandomKeyring() // the key was rotated out
	if d := admit(t, m, r); d.Outcome != admission.Replay || d.Stored != nil || !errors.Is(d.StoredErr, admission.ErrStoredUnreadable) {
		t.Fatalf("replay under another ring: %+v", d)
	}
}
