package notify

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"

	"github.com/ledgerlane/platform/pkg/clock"
	"github.com/ledgerlane/platform/pkg/logging"
	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/services/metering/admission/quota"
)

// Outbox delivery defaults: a failed mail is retried after 30 s, then
// after twice as long each time, up to an hour between attempts, for up to
// MailGiveUpAfter from its creation (an SMTP outage of a few hours delays
// mail and loses none; a usage alert three days late is news no more, and
// the links in the portal's mails have expired by then). A permanent
// refusal (ErrMailPermanent: an address the server or the mail library
// refuses, a 5xx) parks the mail at once. A parked mail is never attempted
// again; its reason stays in the outbox (LastError, "given up: …"), shown on
// the portal's usage page and to operators.
const (
	DefaultMailBackoff    = 30 * time.Second
	DefaultMailBackoffMax = time.Hour
	MailGiveUpAfter       = 72 * time.Hour
	mailLease             = 2 * time.Minute
	mailBatch             = 50
)

// mailParked is the next attempt of a parked mail: never.
var mailParked = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)

// Config assembles a Service.
type Config struct {
	Store Store
	// Changes is the set of changed accounts ScanAlerts looks at; nil:
	// ScanAlerts answers unavailable (no usage counters configured).
	Changes Changes
	// MailBackoff is the first retry delay of a failed mail, doubled per
	// attempt up to MailBackoffMax (defaults DefaultMailBackoff and
	// DefaultMailBackoffMax).
	MailBackoff, MailBackoffMax time.Duration
	// Clock defaults to time.Now; Log to discarding.
	Clock func() time.Time
	Log   *slog.Logger
}

// Service checks usage alerts, queues the mails of the other contexts'
// rules and delivers the outbox.
type Service struct {
	cfg Config
	now func() time.Time
	log *slog.Logger
}

// NewService returns a Service from cfg, filling defaults.
func NewService(cfg Config) *Service {
	cfg.Clock, cfg.Log = clock.Or(cfg.Clock), logging.OrDiscard(cfg.Log)
	if cfg.MailBackoff <= 0 {
		cfg.MailBackoff = DefaultMailBackoff
	}
	if cfg.MailBackoffMax <= 0 {
		cfg.MailBackoffMax = DefaultMailBackoffMax
	}
	cfg.MailBackoffMax = max(cfg.MailBackoff, cfg.MailBackoffMax)
	return &Service{cfg: cfg, now: cfg.Clock, log: cfg.Log}
}

// timestamp is the current time in UTC at PostgreSQL's microsecond
// precision, so a value reads back from any Store exactly as it was written.
func (s *Service) timestamp() time.Time {
	return s.now().UTC().Truncate(time.Microsecond)
}

// AccountChanged has the next ScanAlerts check the account: its plan,
// billing limits or payment standing changed, which can reach a milestone
// without new usage (metering.Watcher: the root announces every such
// change here, billing's through the root). A failure is logged: the change
// itself is made, and the account's next counted request marks it again.
func (s *Service) AccountChanged(ctx context.Context, accountID string) {
	if s.cfg.Changes == nil {
		return
	}
	if err := s.cfg.Changes.MarkChanged(ctx, accountID); err != nil {
		s.log.WarnContext(ctx, "account not marked for a usage alert check", "account_id", accountID, "err", err)
	}
}

// milestones are those that standing st has reached.
func milestones(st Standing) []string {
	l := st.Limits
	var out []string
	if l.MonthlyQuota <= 0 {
		return nil
	}
	if st.Used*100 >= l.MonthlyQuota*75 {
		out = append(out, MilestoneUsage75)
	}
	if st.Used*100 >= l.MonthlyQuota*90 {
		out = append(out, MilestoneUsage90)
	}
	if st.Used >= l.MonthlyQuota {
		if st.OverageAllowed {
			out = append(out, MilestoneUsage100Overage)
		} else {
			out = append(out, MilestoneUsage100Stop)
		}
	}
	if st.OverageAllowed && l.OverageCapCents != nil && st.OverageBlocked {
		out = append(out, MilestoneCapReached)
	}
	return out
}

// CheckAlerts puts in the outbox an e-mail to every recipient of the
// account for each milestone its usage (read through m) has reached in the
// current period and that was not mailed yet, and returns how many
// milestones were new. Any number of replicas may run it at once: the
// store records each milestone once.
func (s *Service) CheckAlerts(ctx context.Context, m Meter, accountID string) (int, error) {
	st, err := m.AlertStanding(ctx, accountID)
	if err != nil {
		return 0, err
	}
	reached := milestones(st)
	if len(reached) == 0 {
		return 0, nil
	}
	people, err := s.cfg.Store.Recipients(ctx, accountID)
	if err != nil {
		return 0, err
	}
	now := s.timestamp()
	n := 0
	for _, ms := range reached {
		mails := make([]OutboxMail, 0, len(people))
		for _, p := range people {
			subject, body, err := render(usageAlertMail, usageAlert{Standing: st, Milestone: ms, Name: p.Name})
			if err != nil {
				return n, err
			}
			mails = append(mails, OutboxMail{
				ID: uuid.NewString(), AccountID: accountID, Milestone: ms, PeriodStart: st.Limits.PeriodStart,
				To: p.Email, Subject: subject, Body: body, CreatedAt: now, NextAttemptAt: now,
			})
		}
		created, err := s.cfg.Store.EnqueueAlert(ctx, Alert{AccountID: accountID, PeriodStart: st.Limits.PeriodStart, Milestone: ms, CreatedAt: now}, mails)
		if err != nil {
			return n, fmt.Errorf("enqueue alert: %w", err)
		}
		if created {
			n++
			s.log.InfoContext(ctx, "usage alert queued", "account_id", accountID, "milestone", ms, "recipients", len(mails))
		}
	}
	return n, nil
}

// alertBatch is about how many accounts ScanAlerts reads from Redis at a
// time; orphanAfter is how long a mark of an account this store does not
// have stays before ScanAlerts removes it.
const (
	alertBatch  = 500
	orphanAfter = 10 * time.Minute
)

// ScanAlerts runs CheckAlerts for the accounts whose usage, plan, billing
// limits or payment standing changed since they were last checked (the set
// admission.Controller keeps in Redis: the admission script marks an
// account when it counts live usage, and metering when it changes the
// rest), so an idle account costs it nothing. An account stays marked when
// its check fails, and when it changed again during the check: the next
// tick checks it. Any number of replicas may run it at once: the store
// records each milestone once.
func (s *Service) ScanAlerts(ctx context.Context, m Meter) (int, error) {
	if s.cfg.Changes == nil {
		return 0, problem.New(problem.Unavailable, "usage counters are not configured: alerts need them")
	}
	n := 0
	var errs []error
	for cursor := uint64(0); ; {
		page, next, err := s.cfg.Changes.Changed(ctx, cursor, alertBatch)
		if err != nil {
			return n, errors.Join(append(errs, fmt.Errorf("scan alerts: %w", err))...)
		}
		for _, c := range page {
			k, err := s.CheckAlerts(ctx, m, c.AccountID)
			n += k
			switch {
			case errors.Is(err, ErrUnknownAccount):
				s.orphanMark(ctx, c)
				continue
			case err != nil:
				errs = append(errs, fmt.Errorf("account %s: %w", c.AccountID, err))
				continue
			}
			if _, err := s.cfg.Changes.Checked(ctx, c); err != nil {
				errs = append(errs, fmt.Errorf("account %s: %w", c.AccountID, err))
			}
		}
		if next == 0 || ctx.Err() != nil {
			break
		}
		cursor = next
	}
	return n, errors.Join(errs...)
}

// orphanMark hands a mark of an account this store does not have to the
// counters, which remove it once it has sat unchanged for orphanAfter
// (admission.Controller.Orphan says why not at once). The wait is in wall
// time, not the service's clock: it is about other processes, which a
// test's moved clock does not move.
func (s *Service) orphanMark(ctx context.Context, c quota.Changed) {
	removed, err := s.cfg.Changes.Orphan(ctx, c, time.Now(), orphanAfter)
	switch {
	case err != nil:
		s.log.WarnContext(ctx, "orphan usage alert mark not handled", "account_id", c.AccountID, "err", err)
	case removed:
		s.log.DebugContext(ctx, "orphan usage alert mark removed", "account_id", c.AccountID)
	}
}

// PaymentFailure is a failed payment of an account, as its mail tells it.
type PaymentFailure struct {
	AccountID   string
	AccountName string
	PaymentID   string
	PeriodStart time.Time
	AmountCents int64
	Currency    string
	Purpose     string
	// Method is how it was to be paid: "card" or "SEPA direct debit".
	Method string
	Reason string
	// FreeIncluded and FreeRate are the Free limits the account runs at
	// until a payment settles.
	FreeIncluded int64
	FreeRate     int
}

// PaymentFailed tells the account's people that a payment failed and what
// that means for their limits (once per payment, whatever the number of
// replicas). Like every alert it carries no link and no token.
func (s *Service) PaymentFailed(ctx context.Context, f PaymentFailure) error {
	people, err := s.cfg.Store.Recipients(ctx, f.AccountID)
	if err != nil {
		return err
	}
	now := s.timestamp()
	milestone := MilestonePaymentFailed + f.PaymentID
	mails := make([]OutboxMail, 0, len(people))
	for _, p := range people {
		subject, body, err := render(paymentFailedMail, paymentFailed{PaymentFailure: f, Name: p.Name})
		if err != nil {
			return err
		}
		mails = append(mails, OutboxMail{ID: uuid.NewString(), AccountID: f.AccountID, Milestone: milestone,
			PeriodStart: f.PeriodStart, To: p.Email, Subject: subject, Body: body, CreatedAt: now, NextAttemptAt: now})
	}
	_, err = s.cfg.Store.EnqueueAlert(ctx, Alert{AccountID: f.AccountID, PeriodStart: f.PeriodStart, Milestone: milestone, CreatedAt: now}, mails)
	return err
}

// DeliverMail sends the outbox's due mails through m and returns how many
// were sent. A mail that fails is retried later with a growing delay; one
// whose sender died is retried once its lease of two minutes has passed.
// Any number of replicas may run it: a claimed mail is leased to one.
func (s *Service) DeliverMail(ctx context.Context, m Mailer) (int, error) {
	now := s.timestamp()
	mails, err := s.cfg.Store.ClaimMail(ctx, now, mailLease, mailBatch)
	if err != nil {
		return 0, fmt.Errorf("claim mail: %w", err)
	}
	sent := 0
	var errs []error
	for _, om := range mails {
		if err := m.Send(ctx, Mail{ID: om.ID, To: om.To, Subject: om.Subject, Body: om.Body}); err != nil {
			next, reason := s.timestamp().Add(s.backoff(om.Attempts)), err.Error()
			switch {
			case errors.Is(err, ErrMailPermanent):
				next, reason = mailParked, "given up: "+reason
			case next.Sub(om.CreatedAt) > MailGiveUpAfter:
				next, reason = mailParked, fmt.Sprintf("given up after %d attempts over %s: %s",
					om.Attempts, s.timestamp().Sub(om.CreatedAt).Round(time.Minute), reason)
			}
			s.log.WarnContext(ctx, "usage alert mail not sent", "mail_id", om.ID, "attempt", om.Attempts, "next", next, "err", err)
			if err := s.cfg.Store.RetryMail(ctx, om.ID, next, reason); err != nil {
				errs = append(errs, err)
			}
			continue
		}
		if err := s.cfg.Store.MarkMailSent(ctx, om.ID, s.timestamp()); err != nil {
			errs = append(errs, err)
			continue
		}
		sent++
	}
	return sent, errors.Join(errs...)
}

// backoff is the delay before the attempt after the attempts-th.
func (s *Service) backoff(attempts int) time.Duration {
	d := s.cfg.MailBackoff
	for i := 1; i < attempts && d < s.cfg.MailBackoffMax; i++ {
		d *= 2
	}
	return min(d, s.cfg.MailBackoffMax)
}

// Outbox returns the account's mails, sent ones too.
func (s *Service) Outbox(ctx context.Context, accountID string) ([]OutboxMail, error) {
	return s.cfg.Store.Outbox(ctx, accountID)
}

// Alerts returns the account's alerts, oldest first.
func (s *Service) Alerts(ctx context.Context, accountID string) ([]Alert, error) {
	return s.cfg.Store.Alerts(ctx, accountID)
}
