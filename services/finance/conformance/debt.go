package conformance

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/ledgerlane/platform/services/finance"
	"github.com/ledgerlane/platform/services/finance/debt"
)

func dec(s string) *decimal.Decimal {
	d := decimal.RequireFromString(s)
	return &d
}

// sameLiability compares liabilities, decimals by value.
func sameLiability(t *testing.T, want, got debt.Liability) {
	t.Helper()
	eqPtr := func(a, b *decimal.Decimal) bool { return (a == nil) == (b == nil) && (a == nil || a.Equal(*b)) }
	eqDay := func(a, b *time.Time) bool { return (a == nil) == (b == nil) && (a == nil || a.Equal(*b)) }
	if want.AccountID != got.AccountID || want.UserID != got.UserID || !eqPtr(want.APR, got.APR) ||
		!eqPtr(want.PromoAPR, got.PromoAPR) || !eqDay(want.PromoEndsOn, got.PromoEndsOn) ||
		!want.MinPaymentFloor.Equal(got.MinPaymentFloor) || !want.MinPaymentPercent.Equal(got.MinPaymentPercent) ||
		!want.CreatedAt.Equal(got.CreatedAt) || !want.UpdatedAt.Equal(got.UpdatedAt) {
		t.Fatalf("liability mismatch:\nwant %+v\n got %+v", want, got)
	}
}

func testLiabilities(t *testing.T, s Store) {
	ctx := context.Background()
	f := setup(t, s)
	ends := day(90)
	card := debt.Liability{AccountID: f.account, UserID: f.user, APR: dec("24.99"), PromoAPR: dec("0"),
		PromoEndsOn: &ends, MinPaymentFloor: decimal.RequireFromString("35.00"),
		MinPaymentPercent: decimal.RequireFromString("2.5"), CreatedAt: base, UpdatedAt: base}
	loan := debt.Liability{AccountID: f.account2, UserID: f.user, MinPaymentFloor: decimal.RequireFromString("389.51"),
		CreatedAt: base, UpdatedAt: base}
	must(t, s.PutLiability(ctx, card))
	must(t, s.PutLiability(ctx, loan))

	tests := []struct {
		name string
		l    debt.Liability
	}{
		{"another user's account", debt.Liability{AccountID: f.otherAccount, UserID: f.user, CreatedAt: base, UpdatedAt: base}},
		{"missing account", debt.Liability{AccountID: newID(), UserID: f.user, CreatedAt: base, UpdatedAt: base}},
		{"not a uuid", debt.Liability{AccountID: "acct", UserID: f.user, CreatedAt: base, UpdatedAt: base}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := s.PutLiability(ctx, tc.l); !errors.Is(err, finance.ErrNotFound) {
				t.Fatalf("want ErrNotFound, got %v", err)
			}
		})
	}

	got, err := s.ListLiabilities(ctx, f.user)
	must(t, err)
	if len(got) != 2 {
		t.Fatalf("want 2 liabilities, got %d", len(got))
	}
	want := map[string]debt.Liability{card.AccountID: card, loan.AccountID: loan}
	for i, l := range got {
		if i > 0 && got[i-1].AccountID >= l.AccountID {
			t.Errorf("liabilities not ordered by account id")
		}
		sameLiability(t, want[l.AccountID], l)
	}

	// Replacing keeps created_at and takes every other field.
	later := base.Add(time.Hour)
	loan2 := loan
	loan2.APR, loan2.MinPaymentFloor, loan2.UpdatedAt, loan2.CreatedAt = dec("6.9"), decimal.RequireFromString("400"), later, later
	must(t, s.PutLiability(ctx, loan2))
	got, err = s.ListLiabilities(ctx, f.user)
	must(t, err)
	loan2.CreatedAt = base
	for _, l := range got {
		if l.AccountID == loan.AccountID {
			sameLiability(t, loan2, l)
		}
	}
	if other, err := s.ListLiabilities(ctx, f.other); err != nil || len(other) != 0 {
		t.Fatalf("other user: %v %v", other, err)
	}
	if none, err := s.ListLiabilities(ctx, "x"); err != nil || len(none) != 0 {
		t.Fatalf("bad user id: %v %v", none, err)
	}
}
