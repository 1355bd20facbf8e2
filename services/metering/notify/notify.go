// Package notify is the metering service's mail: the usage alerts (which
// milestones an account's usage has reached, each mailed once per billing
// period), the mail outbox every e-mail of the service goes through (usage
// alerts, payment failures, and the personal mails identity queues with
// their tokens: invitations, password resets, address verification), its
// delivery with retries, backoff and giving up, and the texts of all of
// them (text/template files embedded from mails/).
//
// It owns the Alert and OutboxMail records and their Store; the Mailer port
// is how a mail leaves (smtpmail over SMTP; mailsink receives it in tests
// and the local stack). It imports no other metering package but
// admission/quota (the limits and a changed account's mark; the set itself
// is its Changes port, admission.Controller, wired by server.New): the
// account's standing reaches it through the Meter port, which the metering
// root implements, and the accounts' people through its Store.
package notify

import (
	"context"
	"errors"
	"time"

	"github.com/ledgerlane/platform/services/metering/admission/quota"
)

// Usage alert milestones: each is mailed at most once per account and
// billing period, to every portal user of the account.
const (
	MilestoneUsage75         = "usage_75"
	MilestoneUsage90         = "usage_90"
	MilestoneUsage100Overage = "usage_100_overage"
	MilestoneUsage100Stop    = "usage_100_hard_stop"
	MilestoneCapReached      = "overage_cap_reached"
)

// Milestones of the other mails in the outbox.
const (
	// MilestonePaymentFailed prefixes the milestone of a failed payment's
	// e-mail; the payment id follows, so each failure mails once.
	MilestonePaymentFailed = "payment_failed:"
	// MilestoneInvite marks an invitation.
	MilestoneInvite = "invite"
	// MilestonePasswordReset marks a password reset mail.
	MilestonePasswordReset = "password-reset"
	// MilestoneVerifyEmail marks an address verification mail.
	MilestoneVerifyEmail = "verify-email"
)

// PersonalMail reports whether an outbox milestone is a mail to one person
// (an invitation, a reset link) rather than a usage alert.
func PersonalMail(milestone string) bool {
	return milestone == MilestoneInvite || milestone == MilestonePasswordReset || milestone == MilestoneVerifyEmail
}

// Alert records that a usage milestone was reached in a period; it exists
// at most once per account, period and milestone.
type Alert struct {
	AccountID   string
	PeriodStart time.Time
	Milestone   string
	CreatedAt   time.Time
}

// OutboxMail is one e-mail waiting to be sent, or sent (SentAt).
type OutboxMail struct {
	ID            string // UUID
	AccountID     string
	Milestone     string
	PeriodStart   time.Time
	To            string
	Subject       string
	Body          string
	CreatedAt     time.Time
	NextAttemptAt time.Time
	Attempts      int
	SentAt        *time.Time
	LastError     string
}

// GivenUp reports whether the outbox gave m up (it is never attempted
// again).
func (m OutboxMail) GivenUp() bool { return m.SentAt == nil && !m.NextAttemptAt.Before(mailParked) }

// Recipient is a person who receives an account's mail.
type Recipient struct {
	Email string
	Name  string
}

// Store persists alerts and the outbox. memory and postgres implement it
// beside metering.Store; conformance checks both. Errors are metering's
// store errors (metering.ErrNotFound for an unknown account or mail).
type Store interface {
	// Recipients returns the people of the account who receive its mail
	// (its portal users), oldest first.
	Recipients(ctx context.Context, accountID string) ([]Recipient, error)
	// EnqueueAlert records a and puts mails in the outbox, in one
	// transaction, unless the account already has an alert for
	// a.PeriodStart and a.Milestone: then it adds nothing and answers false.
	EnqueueAlert(ctx context.Context, a Alert, mails []OutboxMail) (bool, error)
	// Alerts returns the account's alerts, oldest first.
	Alerts(ctx context.Context, accountID string) ([]Alert, error)
	// ClaimMail returns up to limit unsent mails due at now, oldest first,
	// and moves their next attempt to now+lease and counts the attempt, so
	// no other sender claims them while this one tries.
	ClaimMail(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]OutboxMail, error)
	// MarkMailSent records that a mail was handed to the mail server.
	MarkMailSent(ctx context.Context, id string, at time.Time) error
	// RetryMail records a failed attempt and when to try again.
	RetryMail(ctx context.Context, id string, next time.Time, lastErr string) error
	// Outbox returns the account's mails, sent ones too, oldest first.
	Outbox(ctx context.Context, accountID string) ([]OutboxMail, error)
}

// Standing is what the usage alerts read of an account.
type Standing struct {
	AccountName string
	// Limits are those the milestones count against: the plan's, whatever
	// the account's payment standing (a failed payment narrows the limits
	// for a while; the milestones would otherwise fire early and, once a
	// period, never for the plan).
	Limits quota.Limits
	// Used is the period's live usage; OverageAllowed and OverageBlocked
	// are metering's usage summary's.
	Used                           int64
	OverageAllowed, OverageBlocked bool
}

// ErrUnknownAccount is what a Meter answers (wrapped) for an account it
// does not have.
var ErrUnknownAccount = errors.New("notify: unknown account")

// Meter reads an account's standing: metering.Service.
type Meter interface {
	AlertStanding(ctx context.Context, accountID string) (Standing, error)
}

// Changes is the set of accounts whose usage, plan, limits or payment
// standing changed since their last alert check (admission.Controller).
// The counters mark usage as they count it; Service.AccountChanged marks
// the other changes.
type Changes interface {
	MarkChanged(ctx context.Context, accountID string) error
	Changed(ctx context.Context, cursor uint64, count int64) ([]quota.Changed, uint64, error)
	Checked(ctx context.Context, c quota.Changed) (bool, error)
	Orphan(ctx context.Context, c quota.Changed, now time.Time, after time.Duration) (bool, error)
}

// Mail is one message for a Mailer. ID is stable across retries (the
// outbox row), so an adapter can make it the Message-ID.
type Mail struct {
	ID      string
	To      string
	Subject string
	Body    string // plain text
}

// Mailer hands a mail to a mail server. smtpmail is the SMTP adapter.
type Mailer interface {
	Send(ctx context.Context, m Mail) error
}

// ErrMailPermanent marks a Mailer's error that no retry can mend.
var ErrMailPermanent = errors.New("the mail server refused the mail for good")
