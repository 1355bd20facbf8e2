// Package smtpmail is the metering service's notify.Mailer over SMTP, on
// the go-mail client library: STARTTLS (required unless the configuration
// says otherwise), SMTP AUTH PLAIN when a username is set, and a timeout on
// every connection. Retries with backoff are the outbox's (notify.Service
// DeliverMail): a mail that fails here stays in the outbox and is tried
// again, so an SMTP outage delays mail and loses none.
package smtpmail

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	gomail "github.com/wneessen/go-mail"

	"github.com/ledgerlane/platform/services/metering/notify"
)

// TLS policies.
const (
	TLSRequired      = "required"      // STARTTLS or fail (production)
	TLSOpportunistic = "opportunistic" // STARTTLS when offered
	TLSNone          = "none"          // plain text (the local stack's in-process server)
)

// Config is where and as whom mail is sent. Username and Password may be
// empty (no authentication); Password is never logged.
type Config struct {
	Addr     string // host:port of the submission server, e.g. smtp.example.com:587
	From     string // envelope and header sender, e.g. billing@ledgerlane.dev
	Username string
	Password string
	TLS      string        // TLSRequired (default), TLSOpportunistic or TLSNone
	Timeout  time.Duration // per connection; default 10 s
}

// Mailer sends each mail over one SMTP connection.
type Mailer struct {
	cfg  Config
	host string
	port int
}

var _ notify.Mailer = (*Mailer)(nil)

// New checks cfg and returns a Mailer; nothing is dialled until Send.
func New(cfg Config) (*Mailer, error) {
	host, p, err := net.SplitHostPort(cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("smtp address %q: %w", cfg.Addr, err)
	}
	port, err := strconv.Atoi(p)
	if err != nil {
		return nil, fmt.Errorf("smtp address %q: bad port", cfg.Addr)
	}
	if cfg.From == "" {
		return nil, fmt.Errorf("smtp: a sender address is required")
	}
	switch cfg.TLS {
	case "":
		cfg.TLS = TLSRequired
	case TLSRequired, TLSOpportunistic, TLSNone:
	default:
		return nil, fmt.Errorf("smtp: TLS policy %q is not required, opportunistic or none", cfg.TLS)
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Second
	}
	return &Mailer{cfg: cfg, host: host, port: port}, nil
}

// Send delivers m to the server, or returns why not.
func (s *Mailer) Send(ctx context.Context, m notify.Mail) error {
	// No default User-Agent: it carries a link, and alert mails carry none.
	msg := gomail.NewMsg(gomail.WithNoDefaultUserAgent())
	msg.SetUserAgent("Ledgerlane billing")
	if err := msg.From(s.cfg.From); err != nil {
		return fmt.Errorf("smtp: from: %w", err)
	}
	if err := msg.To(m.To); err != nil {
		return fmt.Errorf("smtp: to: %w: %w", notify.ErrMailPermanent, err)
	}
	msg.Subject(m.Subject)
	msg.SetDate()
	// The outbox id, stable across retries, lets a receiver drop a copy a
	// lost acknowledgement made us send twice.
	msg.SetMessageIDWithValue(m.ID + "@ledgerlane")
	msg.SetBodyString(gomail.TypeTextPlain, m.Body)

	policy := map[string]gomail.TLSPolicy{TLSRequired: gomail.TLSMandatory, TLSOpportunistic: gomail.TLSOpportunistic, TLSNone: gomail.NoTLS}[s.cfg.TLS]
	opts := []gomail.Option{gomail.WithPort(s.port), gomail.WithTimeout(s.cfg.Timeout), gomail.WithTLSPolicy(policy)}
	if s.cfg.Username != "" {
		opts = append(opts, gomail.WithSMTPAuth(gomail.SMTPAuthPlain), gomail.WithUsername(s.cfg.Username), gomail.WithPassword(s.cfg.Password))
	}
	c, err := gomail.NewClient(s.host, opts...)
	if err != nil {
		return fmt.Errorf("smtp: %w", err)
	}
	if err := c.DialAndSendWithContext(ctx, msg); err != nil {
		var se *gomail.SendError
		if errors.As(err, &se) && !se.IsTemp() && se.Reason == gomail.ErrSMTPRcptTo {
			// The server refused the recipient for good (a 5xx to RCPT TO).
			return fmt.Errorf("smtp: send to %s: %w: %w", s.cfg.Addr, notify.ErrMailPermanent, err)
		}
		return fmt.Errorf("smtp: send to %s: %w", s.cfg.Addr, err)
	}
	return nil
}
