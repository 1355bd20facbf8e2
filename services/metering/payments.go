package metering

import (
	"context"

	"github.com/ledgerlane/platform/services/metering/admission"
)

// Payment states as GET /v1/usage shows them.
const (
	PaymentOK       = "ok"
	PaymentSettling = "settling"
	PaymentFailed   = "failed"
)

// checkPaymentFor refuses a move onto plan to that the account's payment
// methods cannot pay for.
func (s *Service) checkPaymentFor(ctx context.Context, a Account, to Plan) error {
	return nil
}

// paymentState is the account's payment standing.
func (s *Service) paymentState(ctx context.Context, a Account) (string, error) {
	return PaymentOK, nil
}

// paymentLimits adjusts l to the account's payment standing.
func (s *Service) paymentLimits(ctx context.Context, a Account, l admission.Limits) (admission.Limits, error) {
	return l, nil
}
