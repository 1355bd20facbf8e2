package notify

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ledgerlane/platform/services/metering/admission"
)

// The texts the templates must produce, as the service wrote them before
// they were templates (fmt.Sprintf): the move changed no mail.

func wantAlert(name, account string, l admission.Limits, used int64, allowed bool, m string) (subject, body string) {
	period := fmt.Sprintf("the billing period %s to %s", l.PeriodStart.Format(time.DateOnly), l.PeriodEnd.Format(time.DateOnly))
	usedLine := fmt.Sprintf("%s has used %d of the %d live conversions included in its %s plan for %s.",
		account, used, l.MonthlyQuota, l.Plan, period)
	rate := FormatMinor(l.OveragePer1000, l.Currency)
	switch m {
	case MilestoneUsage75, MilestoneUsage90:
		pct := map[string]string{MilestoneUsage75: "75", MilestoneUsage90: "90"}[m]
		subject = fmt.Sprintf("%s%% of your included conversions used", pct)
		body = usedLine + "\n\n"
		if allowed {
			body += fmt.Sprintf("Past the included volume, conversions continue as overage at %s per 1,000 (pre-tax).\n", rate)
		} else {
			body += "Past the included volume, live conversions will be refused until the period resets.\n"
		}
	case MilestoneUsage100Overage:
		subject = "Included conversions used: overage has started"
		body = usedLine + "\n\n" + fmt.Sprintf("Further live conversions are billed as overage at %s per 1,000 (pre-tax) until %s.\n",
			rate, l.PeriodEnd.Format(time.DateOnly))
	case MilestoneUsage100Stop:
		subject = "Included conversions used: live conversions are paused"
		body = usedLine + "\n\n" + fmt.Sprintf("The hard stop is on, so live conversions are refused until the period resets on %s, "+
			"the hard stop is turned off or the plan is upgraded.\n", l.PeriodEnd.Format(time.DateOnly))
	case MilestoneCapReached:
		subject = "Overage spend cap reached: live conversions are paused"
		c := int64(0)
		if l.OverageCapCents != nil {
			c = *l.OverageCapCents
		}
		body = usedLine + "\n\n" + fmt.Sprintf("Overage has reached the spend cap of %s (pre-tax), so live conversions are refused "+
			"until the cap is raised or cleared, the plan is upgraded or the period resets on %s.\n",
			FormatMinor(c, l.Currency), l.PeriodEnd.Format(time.DateOnly))
	}
	body += "\nYou can review usage and billing settings in the portal.\n\n-- Ledgerlane billing\n"
	return subject, "Hello " + name + ",\n\n" + body
}

func TestAlertTexts(t *testing.T) {
	capCents := int64(1234)
	l := admission.Limits{Plan: "starter", MonthlyQuota: 25_000, OveragePer1000: 140, OverageCapCents: &capCents, Currency: "eur",
		PeriodStart: time.Date(2026, 3, 14, 9, 30, 0, 0, time.UTC), PeriodEnd: time.Date(2026, 4, 14, 9, 30, 0, 0, time.UTC)}
	for _, m := range []string{MilestoneUsage75, MilestoneUsage90, MilestoneUsage100Overage, MilestoneUsage100Stop, MilestoneCapReached} {
		for _, allowed := range []bool{true, false} {
			st := Standing{AccountName: `Acme "Ltd"`, Limits: l, Used: 19_000, OverageAllowed: allowed}
			subject, body, err := render(usageAlertMail, usageAlert{Standing: st, Milestone: m, Name: "Ann"})
			if err != nil {
				t.Fatal(err)
			}
			ws, wb := wantAlert("Ann", `Acme "Ltd"`, l, 19_000, allowed, m)
			if subject != ws || body != wb {
				t.Errorf("%s (overage %v):\n%q\n%q\nwant\n%q\n%q", m, allowed, subject, body, ws, wb)
			}
		}
	}
}

func TestPaymentFailedText(t *testing.T) {
	f := PaymentFailure{AccountName: "Acme Ltd", AmountCents: 2900, Currency: "usd", Purpose: "upgrade to growth",
		Method: "ACH direct debit", Reason: "insufficient funds", FreeIncluded: 1000, FreeRate: 5}
	subject, body, err := render(paymentFailedMail, paymentFailed{PaymentFailure: f, Name: "Ann"})
	if err != nil {
		t.Fatal(err)
	}
	wb := "Hello Ann,\n\n" + fmt.Sprintf("A payment of %s (%s) from %s by %s failed: %s.\n\n"+
		"Until a payment settles, %s runs at Free limits: %d live conversions in the billing period, %d requests per second, no overage.\n\n"+
		"To lift them, add or choose another payment method and retry the payment on the payment methods page of the portal.\n\n-- Ledgerlane\n",
		"$29.00", f.Purpose, f.AccountName, f.Method, f.Reason, f.AccountName, f.FreeIncluded, f.FreeRate)
	if ws := "A payment failed: Acme Ltd runs at Free limits"; subject != ws || body != wb {
		t.Errorf("got\n%q\n%q\nwant\n%q\n%q", subject, body, ws, wb)
	}
}

func TestPersonalTexts(t *testing.T) {
	exp := time.Date(2026, 3, 21, 9, 30, 0, 0, time.UTC)
	l := Link{AccountID: "a", AccountName: `Acme "Ltd"`, To: "ann@example.com", Inviter: "bob@example.com",
		URL: "https://portal.example/portal/x?t=pi_abc", Expires: exp}
	at := exp.Format("2006-01-02 15:04 UTC")
	for _, tc := range []struct {
		name          string
		mail          func(Link, time.Time) (OutboxMail, error)
		milestone     string
		subject, body string
	}{
		{"invitation", Invitation, MilestoneInvite, "You are invited to " + l.AccountName + " on Ledgerlane",
			fmt.Sprintf("Hello,\n\n%s invited you to the Ledgerlane account %q.\n\nChoose a password to join (the link works until %s):\n\n%s%s\n\n"+
				"If you did not expect this, ignore this e-mail.\n\n-- Ledgerlane\n", l.Inviter, l.AccountName, at, l.URL, "")},
		{"reset", PasswordReset, MilestonePasswordReset, "Reset your Ledgerlane password",
			fmt.Sprintf("Hello,\n\nsomeone asked to reset the password of %s for the Ledgerlane account %q.\n\n"+
				"Choose a new password here (the link works once, until %s):\n\n%s%s\n\n"+
				"Setting it signs you out everywhere. If you did not ask for this, ignore this e-mail: your password stays as it is.\n\n-- Ledgerlane\n",
				l.To, l.AccountName, at, l.URL, "")},
		{"verification", Verification, MilestoneVerifyEmail, "Confirm your e-mail address for Ledgerlane",
			fmt.Sprintf("Hello,\n\nplease confirm that %s is your address for the Ledgerlane account %q.\n\n"+
				"Confirm it here (the link works once, until %s):\n\n%s%s\n\n"+
				"Until then the portal creates test keys only. If you did not sign up, ignore this e-mail.\n\n-- Ledgerlane\n",
				l.To, l.AccountName, at, l.URL, "")},
	} {
		m, err := tc.mail(l, exp)
		if err != nil {
			t.Fatal(err)
		}
		if m.Subject != tc.subject || m.Body != tc.body || m.Milestone != tc.milestone || m.To != l.To || m.AccountID != "a" ||
			!m.CreatedAt.Equal(exp) || !m.NextAttemptAt.Equal(exp) || !m.PeriodStart.Equal(exp) || m.ID == "" {
			t.Errorf("%s: %+v\nwant %q\n%q", tc.name, m, tc.subject, tc.body)
		}
	}
}

// TestPersonalGreeting: a person who gave a name is greeted by it; one who
// did not, without a gap before the comma.
func TestPersonalGreeting(t *testing.T) {
	for _, mail := range []func(Link, time.Time) (OutboxMail, error){PasswordReset, Verification} {
		for name, want := range map[string]string{"Ann Lee": "Hello Ann Lee,\n\n", "": "Hello,\n\n"} {
			m, err := mail(Link{AccountName: "A", To: "ann@example.com", Name: name, URL: "https://x/t"}, time.Unix(0, 0))
			if err != nil || !strings.HasPrefix(m.Body, want) {
				t.Errorf("name %q: %q, %v", name, m.Body, err)
			}
		}
	}
}
