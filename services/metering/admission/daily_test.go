package admission_test

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/ledgerlane/platform/services/metering/admission"
)

// TestDailyFieldsAddUpToUsed is the property behind GET /v1/usage/daily:
// whatever mix of admissions, uncounted answers given back (Settle),
// refunds, abandons and reconciled journal entries, over several keys,
// days and a window rollover, every counter's day fields add up exactly to
// the used count GET /v1/usage reports, and each key's fields to what was
// counted for it.
func TestDailyFieldsAddUpToUsed(t *testing.T) {
	m, c := setup(t)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(32, 1))
	acct := uuid.NewString()
	creds := []string{"k1", "k2", "k3"}
	type key struct {
		window time.Time
		test   bool
		cred   string
	}
	want := map[key]int64{}
	for step := range 400 {
		if rng.IntN(15) == 0 {
			c.add(time.Duration(12+rng.IntN(60)) * time.Hour) // days pass, and windows roll over
		}
		l := limits(c)
		l.TestQuota = 1 << 30
		r := admission.Request{AccountID: acct, Metered: true, Limits: l, Test: rng.IntN(3) == 0,
			CredentialID: creds[rng.IntN(len(creds))], At: c.now(), Units: int64(1 + rng.IntN(3))}
		k := key{l.PeriodStart, r.Test, r.CredentialID}
		if r.Test {
			k.window = time.Time{}
		}
		switch op := rng.IntN(5); op {
		case 0, 1: // admitted, then counted or given back by Settle
			r.Attempt = admission.NewAttempt()
			d := admit(t, m, r)
			if d.Outcome != admission.Admitted {
				t.Fatalf("step %d: %v", step, d.Outcome)
			}
			counted := op == 0
			if err := m.Settle(ctx, r, d, admission.Response{Status: 200}, counted, true); err != nil {
				t.Fatal(err)
			}
			if counted {
				want[k] += r.Units
			}
		case 2: // counted during an outage, reconciled later
			j := admission.NewJournal()
			j.Add(r)
			if err := j.Flush(ctx, m); err != nil {
				t.Fatal(err)
			}
			want[k] += r.Units
		case 3: // a batch refund of part of what this key counted
			n := min(want[k], int64(1+rng.IntN(2)))
			if n == 0 {
				continue
			}
			got, err := m.Refund(ctx, r, uuid.NewString(), n)
			if err != nil || got != n {
				t.Fatalf("step %d: refund %d gave %d, %v", step, n, got, err)
			}
			want[k] -= n
		case 4: // an admission whose caller gave up, abandoned
			r.Attempt = admission.NewAttempt()
			admit(t, m, r)
			if _, err := m.Abandon(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
		l = limits(c)
		dc, err := m.Daily(ctx, acct, l, c.now().Add(-120*24*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		u, err := m.Usage(ctx, acct, l)
		if err != nil {
			t.Fatal(err)
		}
		got := map[key]int64{}
		for _, w := range append(dc.Live, dc.Test) {
			var sum int64
			for _, d := range w.Days {
				sum += d.Units
				got[key{w.Start, w.Start.IsZero(), d.CredentialID}] += d.Units
			}
			if sum != w.Used {
				t.Fatalf("step %d: window %v: day fields add up to %d, used %d", step, w.Start, sum, w.Used)
			}
		}
		if cur := dc.Live[len(dc.Live)-1]; !cur.Start.Equal(l.PeriodStart) || cur.Used != u.Used || dc.Test.Used != u.TestUsed {
			t.Fatalf("step %d: current window %v used %d, test %d; usage says %d and %d", step, cur.Start, cur.Used, dc.Test.Used, u.Used, u.TestUsed)
		}
		for k, n := range want {
			if got[k] != n {
				t.Fatalf("step %d: %+v counted %d, want %d", step, k, got[k], n)
			}
		}
	}
	if dc, _ := m.Daily(ctx, acct, limits(c), c.now().Add(-120*24*time.Hour)); len(dc.Live) < 2 {
		t.Fatalf("the run never rolled a window over: %d windows", len(dc.Live))
	}
}

// TestDailyGivenBackLeavesNoField: a day whose only request was given back
// (an uncounted answer) keeps no field, so the lifetime test pool holds no
// more fields than days it counted units on.
func TestDailyGivenBackLeavesNoField(t *testing.T) {
	m, c := setup(t)
	ctx := context.Background()
	r := admission.Request{AccountID: uuid.NewString(), Metered: true, Test: true, Limits: limits(c), CredentialID: "k", At: c.now()}
	d := admit(t, m, r)
	if err := m.Settle(ctx, r, d, admission.Response{Status: 503}, false, false); err != nil {
		t.Fatal(err)
	}
	dc, err := m.Daily(ctx, r.AccountID, r.Limits, c.now().Add(-time.Hour))
	if err != nil || len(dc.Test.Days) != 0 || dc.Test.Used != 0 {
		t.Fatalf("after a give-back: %+v, %v", dc.Test, err)
	}
}
