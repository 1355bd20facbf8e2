package billing

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

	// Invoice collection (collection.go). Each is one conditional update, so
	// any number of replicas may run them at once.

	// ClaimCollection claims attempt of an invoice's collection: only while
	// the invoice is collecting, its Attempts is attempt-1 and its
	// NextAttemptAt is set and not after now, it sets Attempts to attempt and
	// NextAttemptAt to leaseUntil and answers true; otherwise it changes
	// nothing and answers false. ErrNotFound for an unknown invoice.
	ClaimCollection(ctx context.Context, invoiceID string, attempt int, now, leaseUntil time.Time) (bool, error)
	// RecordCollection sets the invoice's collection to c, only while it is
	// collecting with Attempts equal to attempt (the claimer's); false
	// otherwise.
	RecordCollection(ctx context.Context, invoiceID string, attempt int, c InvoiceCollection) (bool, error)
	// DueCollections returns up to limit collecting invoices whose
	// NextAttemptAt is set and not after now, the earliest first.
	DueCollections(ctx context.Context, now time.Time, limit int) ([]Invoice, error)
	// ReopenCollections makes the account's open invoices collecting, due
	// at now, and answers how many.
	ReopenCollections(ctx context.Context, accountID string, now time.Time) (int, error)
	// ResolveCollection records the outcome of the invoice's payment
	// paymentID: CollectionPaid (from collecting or failed: a retry that
	// settles pays a failed invoice) or CollectionFailed (only from
	// collecting with that PaymentID). It answers false when nothing
	// changed.
	ResolveCollection(ctx context.Context, invoiceID, paymentID, state string) (bool, error)
}
