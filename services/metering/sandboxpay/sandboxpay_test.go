package sandboxpay_test

import (
	"errors"
	"testing"

	"github.com/ledgerlane/platform/services/metering"
	"github.com/ledgerlane/platform/services/metering/billing"
	"github.com/ledgerlane/platform/services/metering/sandboxpay"
)

// TestCollectBySuffix: the sandbox's outcome follows the method's last four
// characters, for cards and direct debits alike where the table says so.
func TestCollectBySuffix(t *testing.T) {
	tests := []struct {
		typ, last4 string
		state      string
		err        error
		refused    bool
	}{
		{billing.MethodCard, "4242", billing.PaymentSettled, nil, false},
		{billing.MethodCard, sandboxpay.FailSuffix, metering.PaymentFailed, nil, false},
		{billing.MethodDirectDebit, "6789", billing.PaymentPending, nil, false},
		{billing.MethodCard, sandboxpay.UnreachableSuffix, "", sandboxpay.ErrUnreachable, false},
		{billing.MethodDirectDebit, sandboxpay.UnreachableSuffix, "", sandboxpay.ErrUnreachable, false},
		{billing.MethodCard, sandboxpay.RefuseSuffix, "", billing.ErrPaymentRefused, true},
		{billing.MethodDirectDebit, sandboxpay.RefuseSuffix, "", billing.ErrPaymentRefused, true},
	}
	for _, tc := range tests {
		t.Run(tc.typ+"/"+tc.last4, func(t *testing.T) {
			scheme := billing.SchemeCard
			if tc.typ == billing.MethodDirectDebit {
				scheme = billing.SchemeACH
			}
			c, err := sandboxpay.New().Collect(t.Context(), billing.PaymentMethod{Type: tc.typ, Scheme: scheme, Last4: tc.last4}, billing.Payment{})
			if !errors.Is(err, tc.err) || (err == nil) != (tc.err == nil) {
				t.Fatalf("err %v, want %v", err, tc.err)
			}
			if errors.Is(err, billing.ErrPaymentRefused) != tc.refused {
				t.Fatalf("refused = %v, want %v", !tc.refused, tc.refused)
			}
			if err == nil && c.State != tc.state {
				t.Fatalf("state %s, want %s", c.State, tc.state)
			}
		})
	}
}
