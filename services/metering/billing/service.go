// Package billing holds the metering service's billing: the plan changes
// (billing.go: an upgrade at once, a downgrade at the period's end), the
// invoices that close each period (invoices.go), their collection
// (collection.go), payment methods and payments (payments.go, the details'
// parsers in paymentdetails.go, the business-day Calendar) and the payment
// standing that narrows an account's limits (Standing). docs/billing.md has
// the rules and why.
//
// It may import the metering root (accounts, the price list, store errors:
// through its Accounts port, which metering.Service implements), notify
// (the PaymentFailure its Notices port queues, the money format of invoice
// lines) and admission/quota (the quota period); never the reverse: calls run
// billing → root, and the root reads the payment standing through its
// metering.PaymentStanding port, which Standing implements over this
// package's Store alone, so the root is built before this package's Service.
// Nothing here imports a database driver, Redis, gRPC or net/http: the
// PaymentProcessor, the Counters and the Store are ports.
package billing

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/ledgerlane/platform/pkg/clock"
	"github.com/ledgerlane/platform/pkg/logging"
	"github.com/ledgerlane/platform/services/metering"
	"github.com/ledgerlane/platform/services/metering/notify"
)

// Store is what billing keeps: plan changes, the limits history, credit and
// invoices (BillingStore), payment methods, payments and invoice collection
// (PaymentStore). memory and postgres implement it (billing.go in each),
// checked by the conformance suite.
type Store interface {
	BillingStore
	PaymentStore
}

// Accounts is what billing uses of metering's accounts: metering.Service.
type Accounts interface {
	// Account reads an account as stored; metering.ErrNotFound for an
	// unknown one.
	Account(ctx context.Context, id string) (metering.Account, error)
	// CurrentAccount reads an account with a scheduled downgrade that has
	// come due applied.
	CurrentAccount(ctx context.Context, id string) (metering.Account, error)
	// AccountChanged announces that the account's plan or payment standing
	// changed (the usage alerts look at it again).
	AccountChanged(ctx context.Context, accountID string)
}

// Counters is what billing reads and writes of the usage counters
// (admission.Controller).
type Counters interface {
	// Counter reads the live window starting at periodStart: its usage and
	// the overage it accrued (thousandths of a minor unit).
	Counter(ctx context.Context, acct string, periodStart time.Time) (used, overageMilli int64, err error)
	// ForgiveOverage sets the window's accrued overage back to zero and
	// returns its usage at that moment.
	ForgiveOverage(ctx context.Context, acct string, periodStart, periodEnd time.Time) (used int64, err error)
}

// Notices queues the e-mails the billing rules send: notify.Service.
type Notices interface {
	PaymentFailed(ctx context.Context, f notify.PaymentFailure) error
}

// Config assembles a Service.
type Config struct {
	Store    Store
	Accounts Accounts
	// Counters are the usage counters (plan changes carry usage over,
	// invoices bill overage); nil: upgrades and invoices answer
	// unavailable.
	Counters Counters
	// PaymentProcessor moves payments (sandboxpay, a deployment's
	// adapter); nil: payment methods cannot be added and nothing is
	// collected.
	PaymentProcessor PaymentProcessor
	// Calendar dates direct-debit settlements (the zero Calendar: weekends
	// only).
	Calendar Calendar
	// CloseGrace is how long after its end a period is invoiced (zero:
	// DefaultCloseGrace; negative: at once).
	CloseGrace time.Duration
	// Notices queues the mails of the billing rules (a failed payment's);
	// nil: none are queued.
	Notices Notices
	// Clock defaults to time.Now; Log to discarding.
	Clock metering.Clock
	Log   *slog.Logger
}

// Service applies the billing rules.
type Service struct {
	store     Store
	accounts  Accounts
	counters  Counters
	processor PaymentProcessor
	calendar  Calendar
	// closeGrace: how long after its end a period is invoiced.
	closeGrace time.Duration
	notices    Notices
	now        metering.Clock
	log        *slog.Logger
}

// NewService returns a Service from cfg, filling defaults.
func NewService(cfg Config) *Service {
	grace := cfg.CloseGrace
	switch {
	case grace == 0:
		grace = DefaultCloseGrace
	case grace < 0:
		grace = 0
	}
	return &Service{store: cfg.Store, accounts: cfg.Accounts, counters: cfg.Counters, processor: cfg.PaymentProcessor,
		calendar: cfg.Calendar, closeGrace: grace, notices: cfg.Notices, now: clock.Or(cfg.Clock), log: logging.OrDiscard(cfg.Log)}
}

// timestamp is the current time in UTC at PostgreSQL's microsecond precision,
// so a value reads back from any Store exactly as it was written.
func (s *Service) timestamp() time.Time {
	return s.now().UTC().Truncate(time.Microsecond)
}

// countersUnreachable logs a failed read or write of the usage counters,
// unless the caller gave up first (a client gone, a stopping service).
func (s *Service) countersUnreachable(ctx context.Context, err error) {
	if ctx.Err() == nil {
		s.log.WarnContext(ctx, "usage counters unreachable", "err", err)
	}
}

// Standing is the accounts' payment standing, which metering's limits read
// (metering.PaymentStanding). It needs only the Store, so the wiring builds
// it before the root and the root before this package's Service.
type Standing struct {
	store interface {
		Payments(ctx context.Context, accountID string) ([]Payment, error)
	}
}

// NewStanding returns the Standing over store.
func NewStanding(store Store) Standing { return Standing{store: store} }

// PaymentState is the account's payment standing (metering.PaymentOK,
// PaymentSettling or PaymentFailed) from its payments; an unknown account
// has none, so its standing is ok.
func (st Standing) PaymentState(ctx context.Context, accountID string) (string, error) {
	ps, err := st.store.Payments(ctx, accountID)
	if err != nil {
		return "", fmt.Errorf("payments: %w", err)
	}
	return standing(ps), nil
}
