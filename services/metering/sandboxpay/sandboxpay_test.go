package sandboxpay_test

import (
	"errors"
	"testing"

	"github.com/ledgerlane/platform/services/metering"
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
		{metering.MethodCard, "4242", metering.PaymentSettled, nil, false},
		{metering.MethodCard, sandboxpay.FailSuffix, metering.PaymentFailed, nil, false},
		{metering.MethodDirectDebit, "6789", metering.PaymentPending, nil, false},
		{metering.MethodCard, sandboxpay.UnreachableSuffix, "", sandboxpay.ErrUnreachable, false},
		{metering.MethodDirectDebit, sandboxpay.UnreachableSuffix, "", sandboxpay.ErrUnreachable, false},
		{metering.MethodCard, sandboxpay.RefuseSuffix, "", metering.ErrPaymentRefused, true},
		{metering.MethodDirectDebit, sandboxpay.RefuseSuffix, "", metering.ErrPaymentRefused, true},
	}
	for _, tc := range tests {
		t.Run(tc.typ+"/"+tc.last4, func(t *testing.T) {
			scheme := metering.SchemeCard
			if tc.typ == metering.MethodDirectDebit {
				scheme = metering.SchemeACH
			}
			c, err := sandboxpay.New().Collect(t.Context(), metering.PaymentMethod{Type: tc.typ, Scheme: scheme, Last4: tc.last4}, metering.Payment{})
			if !errors.Is(err, tc.err) || (err == nil) != (tc.err == nil) {
				t.Fatalf("err %v, want %v", err, tc.err)
			}
			if errors.Is(err, metering.ErrPaymentRefused) != tc.refused {
				t.Fatalf("refused = %v, want %v", !tc.refused, tc.refused)
			}
			if err == nil && c.State != tc.state {
				t.Fatalf("state %s, want %s", c.State, tc.state)
			}
		})
	}
}
