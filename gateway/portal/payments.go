package portal

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/pkg/rpc"
	meteringv1 "github.com/ledgerlane/platform/proto/metering/v1"
)

// The payment methods page: the account's cards and direct-debit mandates,
// its payments and payment standing. Metering decides every rule (the
// scheme follows the billing currency; the direct-debit-only plan never has
// a card as its default); this page shows its answers.

type paymentsView struct {
	State           string
	Plan            string
	DirectDebitOnly bool
	Scheme          string // the account's direct-debit scheme: ach, sepa or bacs
	SchemeName      string // e.g. "SEPA Direct Debit (EUR)"
	Currency        string
	Methods         []methodView
	Payments        []paymentView
	// The add forms' values after a refusal (never a full number).
	Holder string
}

type methodView struct {
	ID, Type, Scheme, Brand, Last4, Holder string
	Default                                bool
	Created                                time.Time
}

// Label is how a person recognises the method.
func (m methodView) Label() string {
	if m.Type == "card" {
		return strings.ToUpper(m.Brand[:1]) + m.Brand[1:] + " card ending " + m.Last4
	}
	return strings.ToUpper(m.Scheme) + " direct debit, account ending " + m.Last4
}

type paymentView struct {
	ID, Purpose, Amount, Scheme, State, Reason string
	First                                      bool
	Created, SettleBy                          time.Time
	Resolved                                   *time.Time
}

var schemeNames = map[string]string{"ach": "ACH direct debit (USD)", "sepa": "SEPA Direct Debit (EUR)", "bacs": "Bacs Direct Debit (GBP)"}

func (p *Portal) paymentsView(s *session) (*paymentsView, error) {
	res, err := p.api.billing.ListPaymentMethods(s.ctx, &meteringv1.ListPaymentMethodsRequest{})
	if err != nil {
		return nil, err
	}
	v := &paymentsView{State: res.GetPaymentState(), Plan: res.GetPlan(), DirectDebitOnly: res.GetDirectDebitOnly(),
		Scheme: res.GetDirectDebitScheme(), SchemeName: schemeNames[res.GetDirectDebitScheme()], Currency: res.GetCurrency()}
	for _, m := range res.GetMethods() {
		brand := m.GetBrand()
		if brand == "" {
			brand = "card"
		}
		v.Methods = append(v.Methods, methodView{ID: m.GetId(), Type: m.GetType(), Scheme: m.GetScheme(), Brand: brand,
			Last4: m.GetLast4(), Holder: m.GetHolderName(), Default: m.GetIsDefault(), Created: m.GetCreatedAt().AsTime()})
	}
	for _, pm := range res.GetPayments() {
		pv := paymentView{ID: pm.GetId(), Purpose: pm.GetPurpose(), Amount: money(pm.GetAmountCents(), pm.GetCurrency()),
			Scheme: pm.GetScheme(), State: pm.GetState(), Reason: pm.GetFailureReason(), First: pm.GetFirstDebit(),
			Created: pm.GetCreatedAt().AsTime(), SettleBy: pm.GetSettleBy().AsTime()}
		if pm.ResolvedAt != nil {
			t := pm.GetResolvedAt().AsTime()
			pv.Resolved = &t
		}
		v.Payments = append(v.Payments, pv)
	}
	return v, nil
}

func (p *Portal) renderPayments(w http.ResponseWriter, r *http.Request, s *session, status int, errText, notice, holder string) {
	v, err := p.paymentsView(s)
	if err != nil {
		p.failed(w, r, err)
		return
	}
	v.Holder = holder
	p.render(w, r, status, "payments", view{Title: "Payment methods", Session: s, CSRF: s.GetCsrfToken(), Payments: v, Error: errText, Notice: notice})
}

func (p *Portal) payments(w http.ResponseWriter, r *http.Request, s *session) {
	notice := map[string]string{
		"added":   "The payment method is added.",
		"default": "The default payment method is changed.",
		"removed": "The payment method is removed.",
		"retried": "The payment is being collected again.",
	}[r.URL.Query().Get("done")]
	p.renderPayments(w, r, s, http.StatusOK, "", notice, "")
}

// paymentRefused renders metering's refusal of a payment action: the
// direct-debit rule as a 409 of its own, bad details as a 400 naming the
// field, anything else as a failure.
func (p *Portal) paymentRefused(w http.ResponseWriter, r *http.Request, s *session, err error, holder string) {
	pr := rpc.Problem(err)
	switch pr.Type {
	case problem.DirectDebitRequired:
		p.renderPayments(w, r, s, http.StatusConflict,
			"Direct debit required: "+pr.Detail+".", "", holder)
	case problem.InvalidInput:
		p.renderPayments(w, r, s, http.StatusBadRequest, pr.Detail, "", holder)
	case problem.NotFound:
		p.render(w, r, http.StatusNotFound, "message", view{Title: "Not found", Error: "There is no such payment method or payment."})
	case problem.Conflict:
		p.renderPayments(w, r, s, http.StatusConflict, pr.Detail, "", holder)
	default:
		p.failed(w, r, err)
	}
}

// formInt reads an optional whole number field; ok is false when it is
// present and not one.
func formInt(r *http.Request, name string) (int32, bool) {
	v := strings.TrimSpace(r.PostFormValue(name))
	if v == "" {
		return 0, true
	}
	n, err := strconv.ParseInt(v, 10, 32)
	return int32(n), err == nil
}

func (p *Portal) addPaymentMethod(w http.ResponseWriter, r *http.Request, s *session) {
	holder := r.PostFormValue("holder_name")
	req := &meteringv1.AddPaymentMethodRequest{Type: r.PostFormValue("type"), Scheme: r.PostFormValue("scheme"),
		HolderName: holder, CardNumber: r.PostFormValue("card_number"), Iban: r.PostFormValue("iban"),
		RoutingNumber: r.PostFormValue("routing_number"), SortCode: r.PostFormValue("sort_code"),
		AccountNumber: r.PostFormValue("account_number"), MakeDefault: r.PostFormValue("make_default") == "1"}
	var ok bool
	if req.ExpMonth, ok = formInt(r, "exp_month"); !ok {
		p.renderPayments(w, r, s, http.StatusBadRequest, "The expiry month must be a number from 1 to 12.", "", holder)
		return
	}
	if req.ExpYear, ok = formInt(r, "exp_year"); !ok {
		p.renderPayments(w, r, s, http.StatusBadRequest, "The expiry year must be a four-digit year.", "", holder)
		return
	}
	// A mandate is the holder's authorisation to debit the account: the
	// form asks for it, and nothing is set up without it.
	if req.Type == "direct_debit" && r.PostFormValue("mandate") != "1" {
		p.renderPayments(w, r, s, http.StatusBadRequest, "Tick the box to authorise the direct debit mandate.", "", holder)
		return
	}
	if _, err := p.api.billing.AddPaymentMethod(s.ctx, req); err != nil {
		p.paymentRefused(w, r, s, err, holder)
		return
	}
	http.Redirect(w, r, "/portal/payments?done=added", http.StatusSeeOther)
}

func (p *Portal) defaultPaymentMethod(w http.ResponseWriter, r *http.Request, s *session) {
	_, err := p.api.billing.SetDefaultPaymentMethod(s.ctx, &meteringv1.SetDefaultPaymentMethodRequest{MethodId: r.PathValue("id")})
	if err != nil {
		p.paymentRefused(w, r, s, err, "")
		return
	}
	http.Redirect(w, r, "/portal/payments?done=default", http.StatusSeeOther)
}

func (p *Portal) removePaymentMethod(w http.ResponseWriter, r *http.Request, s *session) {
	_, err := p.api.billing.RemovePaymentMethod(s.ctx, &meteringv1.RemovePaymentMethodRequest{MethodId: r.PathValue("id")})
	if err != nil {
		p.paymentRefused(w, r, s, err, "")
		return
	}
	http.Redirect(w, r, "/portal/payments?done=removed", http.StatusSeeOther)
}

func (p *Portal) retryPayment(w http.ResponseWriter, r *http.Request, s *session) {
	_, err := p.api.billing.RetryPayment(s.ctx, &meteringv1.RetryPaymentRequest{PaymentId: r.PathValue("id")})
	if err != nil {
		p.paymentRefused(w, r, s, err, "")
		return
	}
	if p.opts.LimitsChanged != nil {
		p.opts.LimitsChanged(s.GetAccountId())
	}
	http.Redirect(w, r, "/portal/payments?done=retried", http.StatusSeeOther)
}
