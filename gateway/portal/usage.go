package portal

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/pkg/rpc"
	meteringv1 "github.com/ledgerlane/platform/proto/metering/v1"
)

// usageView is the usage page: the period's usage against the included
// volume (drawn as a bar), the test pool, the limits and the plans.
type usageView struct {
	Plan                    string
	Used, Quota, Remaining  int64
	Overage                 int64
	OverageCost             string
	UsedPct, OveragePct     float64 // of the bar's width (barWidths)
	OverageAllowed, Blocked bool
	HardStop                bool
	CapText                 string // the cap in major units for the form; "" when none
	Cap                     string
	Currency                string
	PeriodStart, PeriodEnd  time.Time
	TestUsed, TestQuota     int64
	// NoOverage: the plan stops at its included volume (Free), so it has
	// no overage to stop or cap and the spend controls are not offered.
	NoOverage                  bool
	ScheduledPlan, ScheduledAt string
	PaymentState               string
	Plans                      []planView
	AlertMails                 []alertView
	Invoices                   []invoiceView
	// Daily is the chart of metered conversions per day.
	Daily *usageChart
}

type alertView struct {
	To, Subject string
	Created     time.Time
	Sent        *time.Time
	// Failure is why the last attempt failed ("" when none did); GivenUp:
	// the outbox will not try again.
	Failure string
	GivenUp bool
}

type invoiceView struct {
	Start, End              time.Time
	Plan                    string
	Subtotal, Credit, Total string
	// Payment is how its collection stands, in words.
	Payment string
}

type planView struct {
	ID, Price, Overage string
	Included           int64
	Current            bool
	DirectDebitOnly    bool
}

type confirmView struct {
	From, To, Kind, Charge string
	EffectiveAt            string
	// DirectDebitOnly: the new plan is billed only by direct debit.
	DirectDebitOnly bool
	// Method is the default payment method an upgrade's charge is
	// collected from, as the payments page names it; empty without one.
	Method string
	// DirectDebitDefault: that method is a direct-debit mandate.
	DirectDebitDefault bool
}

// money is an amount of minor units in currency, e.g. "27.00 EUR".
func money(cents int64, currency string) string {
	sign := ""
	if cents < 0 {
		sign, cents = "-", -cents
	}
	return fmt.Sprintf("%s%d.%02d %s", sign, cents/100, cents%100, strings.ToUpper(currency))
}

func (p *Portal) usageView(s *session) (*usageView, []*meteringv1.Plan, error) {
	// The page is what GET /v1/usage answers, beside the account's billing
	// (limits, price list, invoices) and this period's alert mails.
	u, err := p.api.usage.GetUsage(s.ctx, &meteringv1.GetUsageRequest{})
	if err != nil {
		return nil, nil, err
	}
	res, err := p.api.billing.GetBilling(s.ctx, &meteringv1.GetBillingRequest{})
	if err != nil {
		return nil, nil, err
	}
	mails, err := p.api.usage.ListAlertMails(s.ctx, &meteringv1.ListAlertMailsRequest{})
	if err != nil {
		return nil, nil, err
	}
	v := &usageView{Plan: u.GetPlan(), Used: int64(u.GetUsed()), Quota: int64(u.GetMonthlyQuota()), Remaining: int64(u.GetRemaining()),
		OverageAllowed: u.GetOverageAllowed(), Blocked: u.GetOverageBlocked(), HardStop: res.GetLimits().GetHardStop(), Currency: u.GetCurrency(),
		PeriodStart: u.GetPeriodStart().AsTime(), PeriodEnd: u.GetPeriodEnd().AsTime(), TestUsed: int64(u.GetTestUsed()), TestQuota: int64(u.GetTestQuota()),
		PaymentState: u.GetPaymentState()}
	if c := u.GetOverageCapCents(); c != nil && c.GetKind() != nil {
		if n, ok := c.GetKind().(*structpb.Value_NumberValue); ok {
			cents := int64(n.NumberValue)
			v.CapText, v.Cap = fmt.Sprintf("%d.%02d", cents/100, cents%100), money(cents, v.Currency)
		}
	}
	if sp := u.GetScheduledPlan(); sp != nil {
		v.ScheduledPlan = sp.GetStringValue()
		v.ScheduledAt = u.GetScheduledPlanAt().GetStringValue()
	}
	if v.Used > v.Quota {
		v.Overage = v.Used - v.Quota
	}
	var per1000 int64
	for _, pl := range res.GetPlans() {
		if pl.GetId() == v.Plan {
			per1000 = pl.GetOveragePer_1000Cents()
		}
		v.Plans = append(v.Plans, planView{ID: pl.GetId(), Price: money(pl.GetMonthlyPriceCents(), v.Currency),
			Overage: money(pl.GetOveragePer_1000Cents(), v.Currency), Included: pl.GetIncludedConversions(),
			Current: pl.GetId() == v.Plan, DirectDebitOnly: pl.GetDirectDebitOnly()})
	}
	v.OverageCost = money(v.Overage*per1000/1000, v.Currency)
	v.NoOverage = per1000 == 0
	for _, m := range mails.GetAlertMails() {
		a := alertView{To: m.GetTo(), Subject: m.GetSubject(), Created: m.GetCreatedAt().AsTime(),
			Failure: strings.TrimPrefix(m.GetLastError(), "given up: "), GivenUp: m.GetGivenUp()}
		if m.SentAt != nil {
			t := m.GetSentAt().AsTime()
			a.Sent = &t
		}
		v.AlertMails = append(v.AlertMails, a)
	}
	for _, inv := range res.GetInvoices() {
		v.Invoices = append(v.Invoices, invoiceView{Start: inv.GetPeriodStart().AsTime(), End: inv.GetPeriodEnd().AsTime(),
			Plan: inv.GetPlan(), Subtotal: money(inv.GetSubtotalCents(), v.Currency), Credit: money(inv.GetCreditCents(), v.Currency),
			Total: money(inv.GetTotalCents(), v.Currency), Payment: collectionText(inv)})
	}
	v.UsedPct, v.OveragePct = barWidths(v.Used, v.Quota)
	return v, res.GetPlans(), nil
}

// minSliver is the narrowest a non-empty part of the usage bar is drawn, in
// percent of its width: 12 conversions of 250,000 still show.
const minSliver = 0.5

// barWidths splits the usage bar (100 wide) into the included volume used
// and the overage beyond it, in proportion, to a hundredth; a part that is
// not empty is at least minSliver wide, so the bar never reads "nothing
// used" when something was.
func barWidths(used, quota int64) (usedW, overW float64) {
	if used <= 0 {
		return 0, 0
	}
	total := float64(max(quota, used, 1))
	in, over := float64(min(used, quota)), float64(max(used-quota, 0))
	usedW, overW = 100*in/total, 100*over/total
	if in > 0 {
		usedW = max(usedW, minSliver)
	}
	if over > 0 {
		overW = max(overW, minSliver)
	}
	// A sliver made wider is taken from the wider part.
	if excess := usedW + overW - 100; excess > 0 {
		if usedW > overW {
			usedW -= excess
		} else {
			overW -= excess
		}
	}
	usedW = math.Round(usedW*100) / 100
	return usedW, min(math.Round(overW*100)/100, 100-usedW)
}

func (p *Portal) usage(w http.ResponseWriter, r *http.Request, s *session) {
	p.renderUsage(w, r, s, http.StatusOK, "", usageNotice(r.URL.Query().Get("done")))
}

func usageNotice(done string) string {
	switch done {
	case "limits":
		return "Billing limits saved. They apply to requests within seconds."
	case "upgrade":
		return "The plan is upgraded."
	case "downgrade":
		return "The downgrade is scheduled for the end of the period."
	case "canceled":
		return "The scheduled downgrade is canceled."
	}
	return ""
}

// renderUsage shows the usage page, with errText (and where to go about it,
// when next is given) or notice at the top.
func (p *Portal) renderUsage(w http.ResponseWriter, r *http.Request, s *session, status int, errText, notice string, next ...*link) {
	v, _, err := p.usageView(s)
	if err != nil {
		p.failed(w, r, err)
		return
	}
	if v.Daily, err = p.usageChart(s, r.URL.Query().Get("range"), r.URL.Query().Get("key")); err != nil {
		p.failed(w, r, err)
		return
	}
	pv := view{Title: "Usage and billing", Session: s, CSRF: s.GetCsrfToken(), Usage: v, Error: errText, Notice: notice}
	if len(next) > 0 {
		pv.ErrorLink = next[0]
	}
	p.render(w, r, status, "usage", pv)
}

// setLimits: the hard stop checkbox and the cap field (empty clears it),
// in the billing currency's major units.
func (p *Portal) setLimits(w http.ResponseWriter, r *http.Request, s *session) {
	hard := r.PostFormValue("hard_stop") == "1"
	req := &meteringv1.SetBillingLimitsRequest{HardStop: &hard}
	capText := strings.TrimSpace(r.PostFormValue("cap"))
	if capText == "" {
		req.ClearOverageCap = true
	} else {
		cents, ok := parseMoney(capText)
		if !ok {
			p.renderUsage(w, r, s, http.StatusBadRequest, "The spend cap must be an amount such as 50 or 12.50.", "")
			return
		}
		req.OverageCapCents = &cents
	}
	_, err := p.api.billing.SetBillingLimits(s.ctx, req)
	if err != nil {
		if pr := rpc.Problem(err); pr.Type == problem.InvalidInput {
			p.renderUsage(w, r, s, http.StatusBadRequest, pr.Detail, "")
			return
		}
		p.failed(w, r, err)
		return
	}
	p.opts.LimitsChanged(s.GetAccountId())
	http.Redirect(w, r, "/portal/usage?done=limits", http.StatusSeeOther)
}

// parseMoney reads "12", "12.5" or "12.50" as minor units (at most 2^31-1).
func parseMoney(s string) (int32, bool) {
	whole, frac, _ := strings.Cut(s, ".")
	if whole == "" || len(frac) > 2 || strings.Trim(whole+frac, "0123456789") != "" || len(whole) > 8 {
		return 0, false
	}
	for len(frac) < 2 {
		frac += "0"
	}
	n, err := strconv.ParseInt(whole+frac, 10, 32)
	return int32(n), err == nil
}

// changePlan shows what a change means and asks to confirm it; with
// confirm=1 it makes the change.
func (p *Portal) changePlan(w http.ResponseWriter, r *http.Request, s *session) {
	to := r.PostFormValue("plan")
	if r.PostFormValue("confirm") != "1" {
		v, plans, err := p.usageView(s)
		if err != nil {
			p.failed(w, r, err)
			return
		}
		var from, next *meteringv1.Plan
		for _, pl := range plans {
			if pl.GetId() == v.Plan {
				from = pl
			}
			if pl.GetId() == to {
				next = pl
			}
		}
		if from == nil || next == nil {
			p.renderUsage(w, r, s, http.StatusBadRequest, "Choose one of the plans.", "")
			return
		}
		c := &confirmView{From: from.GetId(), To: next.GetId(), DirectDebitOnly: next.GetDirectDebitOnly()}
		switch d := next.GetMonthlyPriceCents() - from.GetMonthlyPriceCents(); {
		case to == v.Plan && v.ScheduledPlan != "":
			c.Kind = "cancel"
		case to == v.Plan:
			p.renderUsage(w, r, s, http.StatusConflict, "The account is already on the "+to+" plan.", "")
			return
		case next.GetIncludedConversions() > from.GetIncludedConversions():
			c.Kind, c.Charge, c.EffectiveAt = "upgrade", money(max(d, 0), v.Currency), "now"
			// Where the charge goes, said before it is confirmed.
			pv, err := p.paymentsView(s)
			if err != nil {
				p.failed(w, r, err)
				return
			}
			for _, m := range pv.Methods {
				if m.Default {
					c.Method, c.DirectDebitDefault = m.Label(), m.Type == "direct_debit"
				}
			}
		default:
			c.Kind, c.EffectiveAt = "downgrade", v.PeriodEnd.UTC().Format("2006-01-02 15:04 UTC")
		}
		p.render(w, r, http.StatusOK, "confirm", view{Title: "Change plan", Session: s, CSRF: s.GetCsrfToken(), Confirm: c})
		return
	}
	res, err := p.api.billing.ChangePlan(s.ctx, &meteringv1.ChangePlanRequest{Plan: to})
	if err != nil {
		pr := rpc.Problem(err)
		if pr.Type == problem.DirectDebitRequired {
			p.renderUsage(w, r, s, http.StatusConflict, "Direct debit required: "+pr.Detail+".", "",
				&link{Href: "/portal/payments", Text: "Add a bank account on the Payment methods page"})
			return
		}
		if pr.Type == problem.InvalidInput || pr.Type == problem.Conflict || pr.Type == problem.Unprocessable {
			p.renderUsage(w, r, s, http.StatusBadRequest, pr.Detail, "")
			return
		}
		p.failed(w, r, err)
		return
	}
	p.opts.LimitsChanged(s.GetAccountId())
	done := res.GetKind()
	if res.GetCanceled() {
		done = "canceled"
	}
	http.Redirect(w, r, "/portal/usage?done="+done, http.StatusSeeOther)
}

// collectionText says how an invoice's collection stands (docs/billing.md,
// "Collecting an invoice").
func collectionText(inv *meteringv1.Invoice) string {
	switch inv.GetCollectionState() {
	case "open":
		return "awaiting a payment method"
	case "collecting":
		if inv.GetNextAttemptAt() != nil {
			return "retrying " + inv.GetNextAttemptAt().AsTime().UTC().Format("2006-01-02 15:04 UTC")
		}
		return "collecting"
	case "":
		return ""
	}
	return inv.GetCollectionState() // paid, failed
}

// usageChart draws the metered conversions per day (GET /v1/usage/daily):
// the current period, or the last 90 days with rng "90"; every key, or the
// account's key id key. A key id that is not the account's shows every key,
// as an unknown one would.
func (p *Portal) usageChart(s *session, rng, key string) (*usageChart, error) {
	q := &meteringv1.GetDailyUsageRequest{CredentialId: key}
	if rng == "90" {
		q.Days = proto.Int32(90)
	}
	res, err := p.api.usage.GetDailyUsage(s.ctx, q)
	if err != nil && key != "" && rpc.Problem(err).Type == problem.NotFound {
		q.CredentialId, key = "", ""
		res, err = p.api.usage.GetDailyUsage(s.ctx, q)
	}
	if err != nil {
		return nil, err
	}
	c := newUsageChart(res)
	c.Period, c.Key = q.Days == nil, key
	keys, err := p.api.creds.ListKeys(s.ctx, &meteringv1.ListKeysRequest{})
	if err != nil {
		return nil, err
	}
	names := credNames{}
	for _, k := range keys.GetKeys() {
		name := k.GetName() + " (" + k.GetPrefix() + "…)"
		names[k.GetId()] = name
		c.Keys = append(c.Keys, seriesOption{Value: k.GetId(), Label: name + ", " + k.GetMode()})
	}
	c.KeyName = names.name(key)
	for _, t := range res.GetCredentials() {
		name := names.name(t.GetCredentialId())
		if t.GetCredentialId() == "" {
			name = "a batch's refund, key unknown"
		}
		c.Credentials = append(c.Credentials, totalRow{Name: name, Mode: t.GetMode(), Count: int64(t.GetUnits())})
	}
	return c, nil
}
