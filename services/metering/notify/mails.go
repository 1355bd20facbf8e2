package notify

import (
	"embed"
	"fmt"
	"strings"
	"text/template"
	"time"

	"github.com/google/uuid"
)

// The texts of every mail are text/template files in mails/, one per mail,
// each defining "subject" and "body". A usage alert or a payment failure
// carries no link and no token of any kind: only numbers and what to do in
// words. The personal mails carry the one link their token is for.

//go:embed mails/*.tmpl
var mailFiles embed.FS

// The mails.
var (
	usageAlertMail    = parseMail("usage_alert.tmpl")
	paymentFailedMail = parseMail("payment_failed.tmpl")
	invitationMail    = parseMail("invitation.tmpl")
	passwordResetMail = parseMail("password_reset.tmpl")
	verificationMail  = parseMail("verification.tmpl")
)

var mailFuncs = template.FuncMap{
	"money": FormatMinor,
	"date":  func(t time.Time) string { return t.Format(time.DateOnly) },
	// minute is how the personal mails say until when their link works.
	"minute": func(t time.Time) string { return t.Format("2006-01-02 15:04 UTC") },
}

func parseMail(name string) *template.Template {
	return template.Must(template.New(name).Funcs(mailFuncs).Option("missingkey=error").ParseFS(mailFiles, "mails/"+name))
}

// render executes a mail's subject and body.
func render(t *template.Template, data any) (subject, body string, err error) {
	var sb, bb strings.Builder
	if err := t.ExecuteTemplate(&sb, "subject", data); err != nil {
		return "", "", fmt.Errorf("mail %s: %w", t.Name(), err)
	}
	if err := t.ExecuteTemplate(&bb, "body", data); err != nil {
		return "", "", fmt.Errorf("mail %s: %w", t.Name(), err)
	}
	return sb.String(), bb.String(), nil
}

// usageAlert is the data of usage_alert.tmpl.
type usageAlert struct {
	Standing
	Milestone string
	Name      string // the recipient's
}

// Rate is the overage price per 1,000 conversions.
func (a usageAlert) Rate() string { return FormatMinor(a.Limits.OveragePer1000, a.Limits.Currency) }

// Cap is the spend cap.
func (a usageAlert) Cap() string {
	var c int64
	if a.Limits.OverageCapCents != nil {
		c = *a.Limits.OverageCapCents
	}
	return FormatMinor(c, a.Limits.Currency)
}

// paymentFailed is the data of payment_failed.tmpl.
type paymentFailed struct {
	PaymentFailure
	Name string // the recipient's
}

// Amount is the payment's amount.
func (p paymentFailed) Amount() string { return FormatMinor(p.AmountCents, p.Currency) }

// Link is the data of a personal mail: one person, one link.
type Link struct {
	AccountID   string
	AccountName string
	// To is the person's address, Name their name when they gave one.
	To, Name string
	// Inviter is the address of who invited them (an invitation only).
	Inviter string
	// URL is the link: the portal's page followed by the token.
	URL     string
	Expires time.Time
}

// personal renders a personal mail of milestone into an outbox mail queued
// at now.
func personal(t *template.Template, milestone string, l Link, now time.Time) (OutboxMail, error) {
	subject, body, err := render(t, l)
	if err != nil {
		return OutboxMail{}, err
	}
	return OutboxMail{ID: uuid.NewString(), AccountID: l.AccountID, Milestone: milestone, PeriodStart: now, To: l.To,
		Subject: subject, Body: body, CreatedAt: now, NextAttemptAt: now}, nil
}

// Invitation is the mail of an invitation to an account, queued at now.
func Invitation(l Link, now time.Time) (OutboxMail, error) {
	return personal(invitationMail, MilestoneInvite, l, now)
}

// PasswordReset is the mail of a password reset link, queued at now.
func PasswordReset(l Link, now time.Time) (OutboxMail, error) {
	return personal(passwordResetMail, MilestonePasswordReset, l, now)
}

// Verification is the mail of an address verification link, queued at now.
func Verification(l Link, now time.Time) (OutboxMail, error) {
	return personal(verificationMail, MilestoneVerifyEmail, l, now)
}

// FormatMinor renders minor units of a billing currency ("usd", "eur",
// "gbp") as an amount with its symbol, e.g. $1.50 or €0.75: for e-mails
// and invoice lines, never for arithmetic.
func FormatMinor(minor int64, currency string) string {
	sym := map[string]string{"usd": "$", "eur": "€", "gbp": "£"}[currency]
	return fmt.Sprintf("%s%d.%02d", sym, minor/100, minor%100)
}
