package metering

import (
	"context"
	"errors"
	"fmt"
	"net/mail"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/services/metering/admission"
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

// ErrMailPermanent marks a Mailer's error that no retry can mend.
var ErrMailPermanent = errors.New("the mail server refused the mail for good")

// mailParked is the next attempt of a parked mail: never.
var mailParked = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)

// GivenUp reports whether the outbox gave m up (it is never attempted
// again).
func (m OutboxMail) GivenUp() bool { return m.SentAt == nil && !m.NextAttemptAt.Before(mailParked) }

// SetMailBackoff changes the outbox's retry delays.
func (s *Service) SetMailBackoff(first, most time.Duration) {
	s.mailBackoff, s.mailBackoffMax = first, most
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

// AddPortalUser adds a person to the account; they receive its usage alerts.
func (s *Service) AddPortalUser(ctx context.Context, accountID, email, name string) (PortalUser, error) {
	addr, err := mail.ParseAddress(strings.TrimSpace(email))
	if err != nil || addr.Name != "" || len(addr.Address) > 254 || !plainAddress.MatchString(addr.Address) {
		return PortalUser{}, problem.New(problem.InvalidInput, "email must be a plain e-mail address").WithField("email")
	}
	name = strings.TrimSpace(name)
	if err := checkName(name); err != nil {
		return PortalUser{}, err
	}
	if _, err := s.store.GetAccount(ctx, accountID); err != nil {
		return PortalUser{}, err
	}
	// The operator who adds a person (meteringctl, the demo) vouches for
	// the address: it counts as verified.
	u := PortalUser{ID: uuid.NewString(), AccountID: accountID, Email: strings.ToLower(addr.Address), Name: name, CreatedAt: s.timestamp(),
		EmailVerified: true}
	if err := s.store.AddPortalUser(ctx, u); err != nil {
		if errors.Is(err, ErrConflict) {
			return PortalUser{}, problem.New(problem.Conflict, "the account already has a user with this e-mail address").WithField("email")
		}
		return PortalUser{}, err
	}
	return u, nil
}

// PortalUsers returns the account's people.
func (s *Service) PortalUsers(ctx context.Context, accountID string) ([]PortalUser, error) {
	return s.store.PortalUsers(ctx, accountID)
}

// milestones are those that usage u under limits l has reached.
func milestones(l admission.Limits, u UsageSummary) []string {
	var out []string
	if l.MonthlyQuota <= 0 {
		return nil
	}
	if u.Used*100 >= l.MonthlyQuota*75 {
		out = append(out, MilestoneUsage75)
	}
	if u.Used*100 >= l.MonthlyQuota*90 {
		out = append(out, MilestoneUsage90)
	}
	if u.Used >= l.MonthlyQuota {
		if u.OverageAllowed {
			out = append(out, MilestoneUsage100Overage)
		} else {
			out = append(out, MilestoneUsage100Stop)
		}
	}
	if u.OverageAllowed && l.OverageCapCents != nil && u.OverageBlocked {
		out = append(out, MilestoneCapReached)
	}
	return out
}

// CheckAlerts puts in the outbox an e-mail to every portal user for each
// milestone the account's usage has reached in the current period and that
// was not mailed yet, and returns how many milestones were new. Any number
// of replicas may run it at once: the store records each milestone once.
func (s *Service) CheckAlerts(ctx context.Context, accountID string) (int, error) {
	l, err := s.Limits(ctx, accountID)
	if err != nil {
		return 0, err
	}
	if l.PaymentState != "" {
		// Milestones count against the plan's volume, not the introductory
		// or Free volume a payment standing narrows it to for a while (the
		// 429's detail and the payment pages say that): otherwise they
		// would fire early and, once a period, never for the plan.
		a, err := s.account(ctx, accountID)
		if err != nil {
			return 0, err
		}
		if l, err = limitsOf(a, s.timestamp()); err != nil {
			return 0, err
		}
	}
	u, err := s.Usage(ctx, accountID)
	if err != nil {
		return 0, err
	}
	reached := milestones(l, u)
	if len(reached) == 0 {
		return 0, nil
	}
	a, err := s.store.GetAccount(ctx, accountID)
	if err != nil {
		return 0, err
	}
	users, err := s.store.PortalUsers(ctx, accountID)
	if err != nil {
		return 0, err
	}
	now := s.timestamp()
	n := 0
	for _, m := range reached {
		subject, body := alertText(a, l, u, m)
		mails := make([]OutboxMail, 0, len(users))
		for _, p := range users {
			mails = append(mails, OutboxMail{
				ID: uuid.NewString(), AccountID: a.ID, Milestone: m, PeriodStart: l.PeriodStart,
				To: p.Email, Subject: subject, Body: "Hello " + p.Name + ",\n\n" + body,
				CreatedAt: now, NextAttemptAt: now,
			})
		}
		created, err := s.store.EnqueueAlert(ctx, Alert{AccountID: a.ID, PeriodStart: l.PeriodStart, Milestone: m, CreatedAt: now}, mails)
		if err != nil {
			return n, fmt.Errorf("enqueue alert: %w", err)
		}
		if created {
			n++
			s.log.InfoContext(ctx, "usage alert queued", "account_id", a.ID, "milestone", m, "recipients", len(mails))
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
// account when it counts live usage, and the Service when it changes the
// rest), so an idle account costs it nothing. An account stays marked when
// its check fails, and when it changed again during the check: the next
// tick checks it. Any number of replicas may run it at once: the store
// records each milestone once.
func (s *Service) ScanAlerts(ctx context.Context) (int, error) {
	if s.counters == nil {
		return 0, problem.New(problem.Unavailable, "usage counters are not configured: alerts need them")
	}
	n := 0
	var errs []error
	for cursor := uint64(0); ; {
		page, next, err := s.counters.Changed(ctx, cursor, alertBatch)
		if err != nil {
			return n, errors.Join(append(errs, fmt.Errorf("scan alerts: %w", err))...)
		}
		for _, c := range page {
			k, err := s.CheckAlerts(ctx, c.AccountID)
			n += k
			switch {
			case errors.Is(err, ErrNotFound):
				s.orphanMark(ctx, c)
				continue
			case err != nil:
				errs = append(errs, fmt.Errorf("account %s: %w", c.AccountID, err))
				continue
			}
			if _, err := s.counters.Checked(ctx, c); err != nil {
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
func (s *Service) orphanMark(ctx context.Context, c admission.Changed) {
	removed, err := s.counters.Orphan(ctx, c, time.Now(), orphanAfter)
	switch {
	case err != nil:
		s.log.WarnContext(ctx, "orphan usage alert mark not handled", "account_id", c.AccountID, "err", err)
	case removed:
		s.log.DebugContext(ctx, "orphan usage alert mark removed", "account_id", c.AccountID)
	}
}

// markForAlerts has the next ScanAlerts check the account: its plan,
// billing limits or payment standing changed, which can reach a milestone
// (a lowered cap, a hard stop, Free limits after a failed payment) without
// new usage. A failure is logged: the change itself is made, and the
// account's next counted request marks it again.
func (s *Service) markForAlerts(ctx context.Context, accountID string) {
	if s.counters == nil {
		return
	}
	if err := s.counters.MarkChanged(ctx, accountID); err != nil {
		s.log.WarnContext(ctx, "account not marked for a usage alert check", "account_id", accountID, "err", err)
	}
}

// alertText is a milestone's subject and body. It carries no link and no
// token of any kind: only numbers and what to do in words.
func alertText(a Account, l admission.Limits, u UsageSummary, m string) (subject, body string) {
	period := fmt.Sprintf("the billing period %s to %s", l.PeriodStart.Format(time.DateOnly), l.PeriodEnd.Format(time.DateOnly))
	used := fmt.Sprintf("%s has used %d of the %d live conversions included in its %s plan for %s.",
		a.Name, u.Used, l.MonthlyQuota, l.Plan, period)
	rate := formatMinor(l.OveragePer1000, Currency(l.Currency))
	switch m {
	case MilestoneUsage75, MilestoneUsage90:
		pct := map[string]string{MilestoneUsage75: "75", MilestoneUsage90: "90"}[m]
		subject = fmt.Sprintf("%s%% of your included conversions used", pct)
		body = used + "\n\n"
		if u.OverageAllowed {
			body += fmt.Sprintf("Past the included volume, conversions continue as overage at %s per 1,000 (pre-tax).\n", rate)
		} else {
			body += "Past the included volume, live conversions will be refused until the period resets.\n"
		}
	case MilestoneUsage100Overage:
		subject = "Included conversions used: overage has started"
		body = used + "\n\n" + fmt.Sprintf("Further live conversions are billed as overage at %s per 1,000 (pre-tax) until %s.\n",
			rate, l.PeriodEnd.Format(time.DateOnly))
	case MilestoneUsage100Stop:
		subject = "Included conversions used: live conversions are paused"
		body = used + "\n\n" + fmt.Sprintf("The hard stop is on, so live conversions are refused until the period resets on %s, "+
			"the hard stop is turned off or the plan is upgraded.\n", l.PeriodEnd.Format(time.DateOnly))
	case MilestoneCapReached:
		subject = "Overage spend cap reached: live conversions are paused"
		body = used + "\n\n" + fmt.Sprintf("Overage has reached the spend cap of %s (pre-tax), so live conversions are refused "+
			"until the cap is raised or cleared, the plan is upgraded or the period resets on %s.\n",
			formatMinor(derefOr(l.OverageCapCents, 0), Currency(l.Currency)), l.PeriodEnd.Format(time.DateOnly))
	}
	body += "\nYou can review usage and billing settings in the portal.\n\n-- Ledgerlane billing\n"
	return subject, body
}

func derefOr(p *int64, def int64) int64 {
	if p == nil {
		return def
	}
	return *p
}

// DeliverMail sends the outbox's due mails through m and returns how many
// were sent. A mail that fails is retried later with a growing delay; one
// whose sender died is retried once its lease of two minutes has passed.
// Any number of replicas may run it: a claimed mail is leased to one.
func (s *Service) DeliverMail(ctx context.Context, m Mailer) (int, error) {
	now := s.timestamp()
	mails, err := s.store.ClaimMail(ctx, now, mailLease, mailBatch)
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
			if err := s.store.RetryMail(ctx, om.ID, next, reason); err != nil {
				errs = append(errs, err)
			}
			continue
		}
		if err := s.store.MarkMailSent(ctx, om.ID, s.timestamp()); err != nil {
			errs = append(errs, err)
			continue
		}
		sent++
	}
	return sent, errors.Join(errs...)
}

// backoff is the delay before the attempt after the attempts-th.
func (s *Service) backoff(attempts int) time.Duration {
	d := s.mailBackoff
	for i := 1; i < attempts && d < s.mailBackoffMax; i++ {
		d *= 2
	}
	return min(d, s.mailBackoffMax)
}

// Outbox returns the account's alert mails, sent ones too.
func (s *Service) Outbox(ctx context.Context, accountID string) ([]OutboxMail, error) {
	return s.store.Outbox(ctx, accountID)
}
