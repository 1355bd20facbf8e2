package billing

import (
	"context"
	"github.com/ledgerlane/platform/services/metering"
	"time"
)

// Plan change kinds.
const (
	ChangeUpgrade   = "upgrade"
	ChangeDowngrade = "downgrade"
)

// PlanChange is one change of an account's plan. An upgrade takes effect
// when it is asked for (EffectiveAt == RequestedAt); a downgrade at the end of
// the period it was asked in, and may be canceled until then.
type PlanChange struct {
	ID          string // UUID
	AccountID   string
	Kind        string // ChangeUpgrade or ChangeDowngrade
	FromPlan    string
	ToPlan      string
	RequestedAt time.Time
	EffectiveAt time.Time
	// ChargeCents is what an upgrade adds to the period's invoice: the flat
	// price difference of the two plans, pre-tax, in the billing currency.
	ChargeCents int64
	// UsedAtChange is the period's live usage when an upgrade took effect:
	// overage up to it, accrued at the old rate, is forgiven.
	UsedAtChange int64
	CanceledAt   *time.Time
}

// LimitChange is one entry of an account's billing limits history: the hard
// stop and overage cap in force from At on.
type LimitChange struct {
	AccountID       string
	At              time.Time
	HardStop        bool
	OverageCapCents *int64
}

// Invoice line kinds.
const (
	LineFlat    = "flat"
	LineUpgrade = "upgrade"
	LineOverage = "overage"
)

// InvoiceLine is one charge of an invoice; amounts are pre-tax minor units.
type InvoiceLine struct {
	Kind        string `json:"kind"`
	Description string `json:"description"`
	// Quantity: conversions for an overage line, else 1.
	Quantity    int64 `json:"quantity"`
	AmountCents int64 `json:"amount_cents"`
}

// Invoice is what one account owes for one period [PeriodStart, PeriodEnd).
// There is exactly one per account and PeriodStart.
type Invoice struct {
	ID          string // UUID
	AccountID   string
	PeriodStart time.Time
	PeriodEnd   time.Time
	// PlanID is the plan in force at the end of the period.
	PlanID   string
	Currency metering.Currency
	Lines    []InvoiceLine
	// SubtotalCents is the sum of the lines; CreditCents the account credit
	// applied (never more than the subtotal); TotalCents what is due.
	SubtotalCents int64
	CreditCents   int64
	TotalCents    int64
	// OverageCapCents is the spend cap in force at the period's end, which
	// the overage line never exceeds (nil: none).
	OverageCapCents *int64
	CreatedAt       time.Time
	// Collection is how collecting TotalCents stands (collection.go).
	Collection InvoiceCollection
}

// BillingStore is the part of the Store behind plan changes and invoices. Every method that takes an account id answers ErrNotFound
// for an unknown one, unless it says otherwise.
type BillingStore interface {
	// AccountsDueForClose returns, by id, up to limit ids greater than
	// afterID of the accounts whose NextCloseAt is nil or not after due
	// (the closing job pages through them; an index serves it, so the job
	// costs nothing per account that has nothing to close).
	AccountsDueForClose(ctx context.Context, due time.Time, afterID string, limit int) ([]string, error)
	// SetNextClose sets the account's NextCloseAt.
	SetNextClose(ctx context.Context, accountID string, at time.Time) error
	// Upgrade, in one transaction and only while the account is on
	// ch.FromPlan (ErrConflict otherwise): sets its plan to ch.ToPlan and
	// its billing anchor to anchor, cancels a scheduled downgrade (at
	// ch.RequestedAt) and records ch.
	Upgrade(ctx context.Context, ch PlanChange, anchor time.Time) error
	// ScheduleDowngrade, in one transaction and only while the account is
	// on ch.FromPlan (ErrConflict otherwise): schedules ch.ToPlan at
	// ch.EffectiveAt, canceling a downgrade scheduled before, and records ch.
	ScheduleDowngrade(ctx context.Context, ch PlanChange) error
	// CancelDowngrade cancels the downgrade that is scheduled after at and
	// returns it; ErrNotFound when there is none.
	CancelDowngrade(ctx context.Context, accountID string, at time.Time) (PlanChange, error)
	// PlanChanges returns the account's changes that were not canceled,
	// by EffectiveAt then RequestedAt.
	PlanChanges(ctx context.Context, accountID string) ([]PlanChange, error)
	// LimitChanges returns the account's billing limits history, oldest first.
	LimitChanges(ctx context.Context, accountID string) ([]LimitChange, error)
	// GrantCredit adds cents (positive) to the account's credit.
	GrantCredit(ctx context.Context, accountID string, cents int64) error
	// CreateInvoice stores inv unless the account already has an invoice
	// for inv.PeriodStart: then it returns that one and created false, and
	// changes nothing. A new invoice takes the account's credit in the same
	// transaction: CreditCents = min(credit, SubtotalCents), TotalCents =
	// SubtotalCents - CreditCents, and the credit shrinks by CreditCents.
	CreateInvoice(ctx context.Context, inv Invoice) (_ Invoice, created bool, _ error)
	// Invoices returns the account's invoices, oldest period first.
	Invoices(ctx context.Context, accountID string) ([]Invoice, error)
}
