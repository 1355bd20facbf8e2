package metering

import (
	"context"
	"time"
)

// PaymentStore is the part of the Store behind payment methods and payments
// (payments.go). Methods taking an account id answer ErrNotFound for an
// unknown account unless they say otherwise.
type PaymentStore interface {
	// AddPaymentMethod stores m; when m.IsDefault, the account's other
	// methods stop being the default in the same transaction.
	AddPaymentMethod(ctx context.Context, m PaymentMethod) error
	// PaymentMethods returns the account's methods that were not removed,
	// oldest first; an unknown account has none.
	PaymentMethods(ctx context.Context, accountID string) ([]PaymentMethod, error)
	// GetPaymentMethod returns a method by id, removed ones too.
	GetPaymentMethod(ctx context.Context, id string) (PaymentMethod, error)
	// SetDefaultPaymentMethod makes the method the account's only default,
	// in one transaction; ErrNotFound when it is not one of the account's
	// methods or was removed.
	SetDefaultPaymentMethod(ctx context.Context, accountID, methodID string) error
	// RemovePaymentMethod marks the method removed at at (no longer the
	// default); ErrNotFound when it is not one of the account's methods or
	// was removed already.
	RemovePaymentMethod(ctx context.Context, accountID, methodID string, at time.Time) error
	// CreatePayment stores p; ErrNotFound when its account or method is
	// unknown, ErrConflict when its id exists.
	CreatePayment(ctx context.Context, p Payment) error
	// GetPayment returns a payment by id.
	GetPayment(ctx context.Context, id string) (Payment, error)
	// Payments returns the account's payments, oldest first; an unknown
	// account has none.
	Payments(ctx context.Context, accountID string) ([]Payment, error)
	// DuePayments returns up to limit pending payments whose SettleBy is
	// not after now, the earliest first.
	DuePayments(ctx context.Context, now time.Time, limit int) ([]Payment, error)
	// ResolvePayment moves a pending payment to state (PaymentSettled or
	// PaymentFailed) at at, with reason; it answers false and changes
	// nothing when the payment is not pending (another replica resolved
	// it), and ErrNotFound for an unknown one.
	ResolvePayment(ctx context.Context, id, state, reason string, at time.Time) (bool, error)
	// DelayPayment moves a pending payment's SettleBy; ErrConflict when it
	// is not pending, ErrNotFound for an unknown one.
	DelayPayment(ctx context.Context, id string, settleBy time.Time) error
}
