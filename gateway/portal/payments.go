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
	// Sent is the add form a refusal answers, with what it held (never a
	// full number): only that form is filled in again, and its refused
	// field carries the error (aria-invalid, aria-describedby).
	Sent *sentForm
}

// sentForm is an add form sent back after a refusal.
type sentForm struct {
	Type              string // "card" or "direct_debit"
	Holder            string
	ExpMonth, ExpYear string
	Field, FieldError string
}

// Err returns the error of field if it is the refused one of form typ.
func (f *sentForm) Err(typ, field string) string {
	if f == nil || f.Type != typ || f.Field != field {
		return ""
	}
	return f.FieldError
}

// Value returns what the person typed in a field of form typ.
func (f *sentForm) Value(typ, field string) string {
	if f == nil || f.Type != typ {
		return ""
	}
	return map[string]string{"holder_name": f.Holder, "exp_month": f.ExpMonth, "exp_year": f.ExpYear}[field]
}

// fieldErrors say what is wrong with a payment detail in the person's
// words: metering names the field, and its detail is API text.
var fieldErrors = map[string]string{
	"holder_name":    "Enter the holder's name.",
	"card_number":    "Enter a card number of 12 to 19 digits, as printed on the card.",
	"exp_month":      "Enter the expiry month, a number from 1 to 12.",
	"exp_year":       "Enter the expiry year with four digits; the card must not have expired.",
	"iban":           "Enter an IBAN such as DE89 3704 0044 0532 0130 00; check it for typing errors.",
	"routing_number": "Enter the 9-digit routing number; check it for typing errors.",
	"account_number": "Enter the account number (4 to 17 digits for ACH, 8 for Bacs).",
	"sort_code":      "Enter the 6-digit sort code, such as 12-34-56.",
	"mandate":        "Tick the box to authorise the direct debit mandate.",
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

func (p *Portal) renderPayments(w http.ResponseWriter, r *http.Request, s *session, status int, errText, notice string, sent *sentForm) {
	v, err := p.paymentsView(s)
	if err != nil {
		p.failed(w, r, err)
		return
	}
	v.Sent = sent
	p.render(w, r, status, "payments", view{Title: "Payment methods", Session: s, CSRF: s.GetCsrfToken(), Payments: v, Error: errText, Notice: notice})
}

func (p *Portal) payments(w http.ResponseWriter, r *http.Request, s *session) {
	notice := map[string]string{
		"added":   "The payment method is added.",
		"default": "The default payment method is changed.",
		"removed": "The payment method is removed.",
		"retried": "The payment is being collected again.",
	}[r.URL.Query().Get("done")]
	p.renderPayments(w, r, s, http.StatusOK, "", notice, nil)
}

// paymentRefused renders metering's refusal of a payment action: the
// direct-debit rule as a 409 of its own, bad details as a 400 naming the
// field, anything else as a failure.
func (p *Portal) paymentRefused(w http.ResponseWriter, r *http.Request, s *session, err error, sent *sentForm) {
	pr := rpc.Problem(err)
	switch pr.Type {
	case problem.DirectDebitRequired:
		p.renderPayments(w, r, s, http.StatusConflict,
			"Direct debit required: "+pr.Detail+".", "", sent)
	case problem.InvalidInput:
		text := pr.Detail
		if t, ok := fieldErrors[pr.Field]; ok && sent != nil {
			sent.Field, sent.FieldError = pr.Field, t
			text = "Check the form: " + t
		}
		p.renderPayments(w, r, s, http.StatusBadRequest, text, "", sent)
	case problem.NotFound:
		p.render(w, r, http.StatusNotFound, "message", view{Title: "Not found", Error: "There is no such payment method or payment."})
	case problem.Conflict:
		p.renderPayments(w, r, s, http.StatusConflict, pr.Detail, "", sent)
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
	sent := &sentForm{Type: r.PostFormValue("type"), Holder: r.PostFormValue("holder_name"),
		ExpMonth: strings.TrimSpace(r.PostFormValue("exp_month")), ExpYear: strings.TrimSpace(r.PostFormValue("exp_year"))}
	req := &meteringv1.AddPaymentMethodRequest{Type: sent.Type, Scheme: r.PostFormValue("scheme"),
		HolderName: sent.Holder, CardNumber: r.PostFormValue("card_number"), Iban: r.PostFormValue("iban"),
		RoutingNumber: r.PostFormValue("routing_number"), SortCode: r.PostFormValue("sort_code"),
		AccountNumber: r.PostFormValue("account_number"), MakeDefault: r.PostFormValue("make_default") == "1"}
	refuse := func(field string) {
		sent.Field, sent.FieldError = field, fieldErrors[field]
		p.renderPayments(w, r, s, http.StatusBadRequest, "Check the form: "+sent.FieldError, "", sent)
	}
	var ok bool
	if req.ExpMonth, ok = formInt(r, "exp_month"); !ok {
		refuse("exp_month")
		return
	}
	if req.ExpYear, ok = formInt(r, "exp_year"); !ok {
		refuse("exp_year")
		return
	}
	// A mandate is the holder's authorisation to debit the account: the
	// form asks for it, and nothing is set up without it.
	if req.Type == "direct_debit" && r.PostFormValue("mandate") != "1" {
		refuse("mandate")
		return
	}
	if _, err := p.api.billing.AddPaymentMethod(s.ctx, req); err != nil {
		p.paymentRefused(w, r, s, err, sent)
		return
	}
	http.Redirect(w, r, "/portal/payments?done=added", http.StatusSeeOther)
}

// paymentAction is a button on one payment method or payment: call acts on
// the id in the path; done names the notice the page shows after it.
func (p *Portal) paymentAction(call func(s *session, id string) error, done string) signedIn {
	return func(w http.ResponseWriter, r *http.Request, s *session) {
		if err := call(s, r.PathValue("id")); err != nil {
			p.paymentRefused(w, r, s, err, nil)
			return
		}
		// A retry that settled lifts a payment-failed narrowing of the
		// limits; the others change nothing the edge holds, and forgetting
		// is cheap.
		p.opts.LimitsChanged(s.GetAccountId())
		http.Redirect(w, r, "/portal/payments?done="+done, http.StatusSeeOther)
	}
}

func (p *Portal) setDefaultMethod(s *session, id string) error {
	_, err := p.api.billing.SetDefaultPaymentMethod(s.ctx, &meteringv1.SetDefaultPaymentMethodRequest{MethodId: id})
	return err
}

func (p *Portal) removeMethod(s *session, id string) error {
	_, err := p.api.billing.RemovePaymentMethod(s.ctx, &meteringv1.RemovePaymentMethodRequest{MethodId: id})
	return err
}

func (p *Portal) retry(s *session, id string) error {
	_, err := p.api.billing.RetryPayment(s.ctx, &meteringv1.RetryPaymentRequest{PaymentId: id})
	return err
}
