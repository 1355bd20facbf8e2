package admission_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/google/uuid"

	"github.com/ledgerlane/platform/services/metering/admission"
)

// TestRefund: units given back for work the platform failed leave the
// counter as if they had never been counted (overage included), once per
// reference, and never below zero.
func TestRefund(t *testing.T) {
	cases := []struct {
		name      string
		test      bool
		admitted  int64 // units admitted first (the quota is 5, overage 150 per 1000)
		refunds   []int64
		wantBack  []int64
		wantUsed  int64
		wantOver  int64 // thousandths of a minor unit
		sameRefID bool  // every refund under one reference
	}{
		{name: "within the quota", admitted: 3, refunds: []int64{2}, wantBack: []int64{2}, wantUsed: 1},
		{name: "a repeated reference changes nothing", admitted: 3, refunds: []int64{2, 2}, wantBack: []int64{2, 0}, wantUsed: 1, sameRefID: true},
		{name: "overage units give their overage back", admitted: 8, refunds: []int64{4}, wantBack: []int64{4}, wantUsed: 4},
		{name: "part of the overage", admitted: 8, refunds: []int64{2}, wantBack: []int64{2}, wantUsed: 6, wantOver: 150},
		{name: "two references", admitted: 8, refunds: []int64{1, 1}, wantBack: []int64{1, 1}, wantUsed: 6, wantOver: 150},
		{name: "never below zero", admitted: 2, refunds: []int64{5}, wantBack: []int64{2}, wantUsed: 0},
		{name: "the test pool", test: true, admitted: 10, refunds: []int64{4}, wantBack: []int64{4}, wantUsed: 6},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, c := setup(t)
			ctx := context.Background()
			r := admission.Request{AccountID: uuid.NewString(), Test: tc.test, Metered: true, Limits: limits(c), Units: tc.admitted}
			if d := admit(t, m, r); d.Outcome != admission.Admitted {
				t.Fatalf("admit: %+v", d)
			}
			ref := uuid.NewString()
			for i, n := range tc.refunds {
				if !tc.sameRefID {
					ref = uuid.NewString()
				}
				back, err := m.Refund(ctx, r, ref, n)
				if err != nil || back != tc.wantBack[i] {
					t.Fatalf("refund %d of %d: %d %v, want %d", i, n, back, err, tc.wantBack[i])
				}
			}
			u, err := m.Usage(ctx, r.AccountID, r.Limits)
			if err != nil {
				t.Fatal(err)
			}
			used := u.Used
			if tc.test {
				used = u.TestUsed
			}
			if used != tc.wantUsed || u.OverageMilli != tc.wantOver {
				t.Fatalf("used %d overage %d, want %d and %d", used, u.OverageMilli, tc.wantUsed, tc.wantOver)
			}
		})
	}
	t.Run("no reference or no units", func(t *testing.T) {
		m, c := setup(t)
		r := admission.Request{AccountID: uuid.NewString(), Metered: true, Limits: limits(c)}
		for _, tc := range []struct {
			ref string
			n   int64
		}{{"", 1}, {"x", 0}, {"x", -1}} {
			if _, err := m.Refund(context.Background(), r, tc.ref, tc.n); err == nil {
				t.Errorf("refund %q %d: no error", tc.ref, tc.n)
			}
		}
	})
}

// TestRefundProperty: whatever is admitted and refunded, in any order, the
// counter never goes below zero, overage never below zero nor above what the
// units past the quota accrued, and a refund takes back exactly
// min(units, used) once per reference.
func TestRefundProperty(t *testing.T) {
	m, c := setup(t)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(11, 12))
	l := limits(c) // quota 5, overage 150 per 1000
	for round := range 20 {
		r := admission.Request{AccountID: uuid.NewString(), Metered: true, Limits: l}
		var used int64
		for step := range 12 {
			if rng.IntN(2) == 0 {
				r.Units = int64(1 + rng.IntN(4))
				if d := admit(t, m, r); d.Outcome != admission.Admitted {
					t.Fatalf("round %d step %d: admit %+v", round, step, d)
				}
				used += r.Units
				continue
			}
			n := int64(1 + rng.IntN(6))
			back, err := m.Refund(ctx, r, uuid.NewString(), n)
			if err != nil {
				t.Fatal(err)
			}
			if want := min(n, used); back != want {
				t.Fatalf("round %d step %d: refund %d of %d used gave back %d, want %d", round, step, n, used, back, want)
			}
			used -= back
			u, err := m.Usage(ctx, r.AccountID, l)
			if err != nil {
				t.Fatal(err)
			}
			maxOver := max(0, u.Used-l.MonthlyQuota) * l.OveragePer1000
			if u.Used != used || u.OverageMilli < 0 || u.OverageMilli > maxOver {
				t.Fatalf("round %d step %d: used %d (want %d), overage %d (0..%d)", round, step, u.Used, used, u.OverageMilli, maxOver)
			}
		}
	}
}
