package local_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ledgerlane/platform/deploy/local"
	"github.com/ledgerlane/platform/services/metering"
	"github.com/ledgerlane/platform/services/metering/billing"
	"github.com/ledgerlane/platform/services/metering/sandboxpay"
)

// Payment methods and settlement through the whole stack (docs/billing.md,
// "Payment methods"): the sandbox processor, the settlement step of the
// metering service's billing tick on a moved clock, and the limits the
// gateway enforces.

// joinDemo signs a new person into the demo account through an invitation
// (the demo owner has no password), as a browser would.
func joinDemo(t *testing.T, st *local.Stack, email string) *browser {
	t.Helper()
	token := demoInvitation(t, st, email)
	b := newBrowser(t, st.URL)
	form := b.get("/portal/invite?t=" + token)
	if p := b.post("/portal/invite", url.Values{"csrf": {form.csrf(t)}, "invitation": {token}, "password": {pw}}); p.status != http.StatusSeeOther {
		t.Fatalf("accept: %d %s", p.status, p.body)
	}
	return b
}

// demoInvitation invites email into the demo account and returns the
// invitation token its mail carries.
func demoInvitation(t *testing.T, st *local.Stack, email string) string {
	t.Helper()
	ctx := t.Context()
	people := st.Metering.Identity()
	users, err := people.PortalUsers(ctx, st.AccountID)
	if err != nil || len(users) == 0 {
		t.Fatalf("demo people: %v %v", users, err)
	}
	if _, err := people.Invite(ctx, st.AccountID, users[0], email, st.URL+"/portal/invite?t="); err != nil {
		t.Fatal(err)
	}
	mails, err := st.Metering.Notify().Outbox(ctx, st.AccountID)
	if err != nil {
		t.Fatal(err)
	}
	var token string
	for _, m := range mails {
		if got := inviteLink.FindStringSubmatch(m.Body); got != nil && m.To == email {
			token = got[1]
		}
	}
	if token == "" {
		t.Fatalf("no invitation for %s in the outbox", email)
	}
	return token
}

// TestIntroLimitsThroughTheGateway: the demo account upgrades to Scale with
// an ACH mandate; while the first debit settles the gateway enforces the
// introductory volume (429 at 50,000 of Scale's 2,000,000), GET /v1/usage
// says settling; the clock moves past the settlement date, the billing tick
// settles the debit, and the gateway lets conversions through again.
func TestIntroLimitsThroughTheGateway(t *testing.T) {
	clock := newStepClock()
	st, err := local.Start(context.Background(), local.Config{
		HTTPAddr: "127.0.0.1:0", RedisURL: os.Getenv("TEST_REDIS_URL"), NATSURL: os.Getenv("TEST_NATS_URL"),
		Log: slog.New(slog.DiscardHandler), Now: clock.Now, DemoPlan: metering.PlanGrowth,
		DemoUsage: metering.IntroIncluded - 1, BillingInterval: 100 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	keys := map[string]string{}
	for _, k := range st.Keys {
		keys[k.Name] = k.Key
	}
	c := client{t: t, base: st.URL, keys: keys}

	b := joinDemo(t, st, "payer@demo.example")
	pay := b.get("/portal/payments")
	if pay.status != 200 || !strings.Contains(pay.body, "ACH direct debit (USD)") || !strings.Contains(pay.body, `id="routing"`) {
		t.Fatalf("payments page: %d %s", pay.status, pay.body)
	}
	tok := pay.csrf(t)
	if p := b.post("/portal/payments", url.Values{"csrf": {tok}, "type": {"direct_debit"}, "scheme": {"ach"}, "holder_name": {"Demo Company"},
		"routing_number": {"021000021"}, "account_number": {"000123456789"}, "mandate": {"1"}, "make_default": {"1"}}); p.status != http.StatusSeeOther {
		t.Fatalf("add mandate: %d %s", p.status, p.body)
	}
	if p := b.post("/portal/plan", url.Values{"csrf": {tok}, "plan": {"scale"}, "confirm": {"1"}}); p.status != http.StatusSeeOther {
		t.Fatalf("upgrade: %d %s", p.status, p.body)
	}
	u := c.call("GET", "/v1/usage", "conversion-usage", "")
	if u.status != 200 || u.json["plan"] != "scale" || u.json["payment_state"] != "settling" || u.json["monthly_quota"] != float64(metering.IntroIncluded) ||
		u.json["overage_allowed"] != false {
		t.Fatalf("usage while settling: %d %s", u.status, u.body)
	}
	msg, err := os.ReadFile(filepath.Join("..", "..", "..", "shared", "samples", "mt", "php-mt940", "Ing_sample"))
	if err != nil {
		t.Fatal(err)
	}
	convert := func() resp {
		clock.Add(50 * time.Millisecond)
		return c.call("POST", "/v1/convert?to=camt.053", "conversion-live", string(msg), "Content-Type", "text/plain")
	}
	if r := convert(); r.status != 200 || r.header.Get("X-Quota-Limit") != "50000" {
		t.Fatalf("the last introductory conversion: %d %v %s", r.status, r.header, r.body)
	}
	r := convert()
	r.wantProblem(t, 429, "quota-exceeded")
	if d, _ := r.json["detail"].(string); !strings.Contains(d, "introductory quota of 50000") || !strings.Contains(d, "first direct debit settles") {
		t.Fatalf("the refusal must say why: %s", r.body)
	}
	if p := b.get("/portal/usage"); !strings.Contains(p.body, "<strong>settling</strong>") {
		t.Fatalf("usage page: %s", p.body)
	}

	// Six business days are at most ten calendar days away.
	clock.Add(10 * 24 * time.Hour)
	deadline := time.Now().Add(20 * time.Second)
	for {
		u = c.call("GET", "/v1/usage", "conversion-usage", "")
		if u.json["payment_state"] == "ok" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not settled: %s", u.body)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if u.json["monthly_quota"] != 2_000_000.0 || u.json["overage_allowed"] != true {
		t.Fatalf("usage after settlement: %s", u.body)
	}
	// The gateway picks the plan's limits up within its credential TTL.
	for {
		r := convert()
		if r.status == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("still refused after settlement: %d %s", r.status, r.body)
		}
		time.Sleep(100 * time.Millisecond)
	}
	ps, err := st.Metering.Billing().Payments(t.Context(), st.AccountID)
	if err != nil || len(ps) != 1 || ps[0].State != billing.PaymentSettled || !ps[0].FirstDebit {
		t.Fatalf("payments %+v %v", ps, err)
	}
}

var methodAction = regexp.MustCompile(`action="/portal/payments/([0-9a-f-]{36})/(default|remove)"`)

// TestPortalPaymentMethods: the scheme follows the currency; a card cannot
// be the default on Scale (409, shown on the page), nor can Scale be reached
// without a direct-debit default; a failed first debit (the sandbox's 0002)
// puts the account at Free limits until a retry settles; another account
// can touch none of it.
func TestPortalPaymentMethods(t *testing.T) {
	// The walk moves the clock 20 days and must stay inside one billing
	// period (calendar months): what a period's close does with a failed
	// debit is TestFailedUpgradeIsCollectedOnce's (services/metering).
	clock := &stepClock{t: time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)}
	st := stack(t, false, func(c *local.Config) { c.Now, c.BillingInterval = clock.Now, 100*time.Millisecond })
	a := newBrowser(t, st.URL)
	tok := a.signUp("payer@example.com", pw, "Payer Ltd").csrf(t)

	card := url.Values{"csrf": {tok}, "type": {"card"}, "holder_name": {"Pat Payer"}, "card_number": {"4242 4242 4242 4242"},
		"exp_month": {"12"}, "exp_year": {"2040"}, "make_default": {"1"}}
	if p := a.post("/portal/payments", card); p.status != http.StatusSeeOther {
		t.Fatalf("add card: %d %s", p.status, p.body)
	}
	// Scale without a direct-debit default: 409 on the usage page.
	p := a.post("/portal/plan", url.Values{"csrf": {tok}, "plan": {"scale"}, "confirm": {"1"}})
	if p.status != http.StatusConflict || !strings.Contains(p.errorText(), "Direct debit required") {
		t.Fatalf("upgrade with a card: %d %q", p.status, p.errorText())
	}
	// A scheme that is not the currency's names its field; bad details are
	// tied to their input (aria-invalid, aria-describedby), said in words
	// rather than as the API's field id, and the form keeps the holder.
	for _, tc := range []struct {
		form url.Values
		want string
	}{
		{url.Values{"scheme": {"sepa"}, "iban": {"DE89 3704 0044 0532 0130 00"}}, "scheme"},
		{url.Values{"scheme": {"ach"}, "routing_number": {"021000022"}, "account_number": {"1234"}}, "routing"},
		{url.Values{"scheme": {"ach"}, "routing_number": {"021000021"}}, "dd-account"},
	} {
		tc.form.Set("csrf", tok)
		tc.form.Set("type", "direct_debit")
		tc.form.Set("holder_name", "Pat")
		tc.form.Set("mandate", "1")
		p := a.post("/portal/payments", tc.form)
		if p.status != 400 {
			t.Fatalf("%v: %d %q", tc.form, p.status, p.errorText())
		}
		if tc.want == "scheme" {
			if !strings.Contains(p.errorText(), "scheme") {
				t.Fatalf("%v: %q", tc.form, p.errorText())
			}
			continue
		}
		if !strings.Contains(p.body, `aria-invalid="true" aria-describedby="`+tc.want+`-error"`) || !strings.Contains(p.body, `id="`+tc.want+`-error"`) ||
			strings.Contains(p.errorText(), "_number") || !strings.Contains(p.body, `id="dd-holder" name="holder_name" type="text" required maxlength="200" autocomplete="name" value="Pat"`) {
			t.Fatalf("%v: the error is not tied to %s, or the holder is lost: %q\n%s", tc.form, tc.want, p.errorText(), p.body)
		}
	}
	// A bad card number: tied to the card number, the card form keeps the
	// name and expiry (never the number), the direct-debit form stays empty.
	bad := url.Values{"csrf": {tok}, "type": {"card"}, "holder_name": {"Pat Payer"}, "card_number": {"4242 4242 4242 4241"},
		"exp_month": {"12"}, "exp_year": {"2040"}}
	p = a.post("/portal/payments", bad)
	if p.status != 400 || strings.Contains(p.errorText(), "card_number") || !strings.Contains(p.errorText(), "card number") ||
		!strings.Contains(p.body, `aria-invalid="true" aria-describedby="card-number-error"`) ||
		!strings.Contains(p.body, `autocomplete="cc-name" value="Pat Payer"`) || !strings.Contains(p.body, `autocomplete="cc-exp-month" value="12"`) ||
		strings.Contains(p.body, "4241") || !strings.Contains(p.body, `autocomplete="name" value=""`) {
		t.Fatalf("bad card number: %d %q\n%s", p.status, p.errorText(), p.body)
	}
	// A mandate that will fail (sandbox 0002), then Scale.
	if p := a.post("/portal/payments", url.Values{"csrf": {tok}, "type": {"direct_debit"}, "scheme": {"ach"}, "holder_name": {"Pat"},
		"routing_number": {"021000021"}, "account_number": {"98765" + sandboxpay.FailSuffix}, "mandate": {"1"}, "make_default": {"1"}}); p.status != http.StatusSeeOther {
		t.Fatalf("add mandate: %d %s", p.status, p.body)
	}
	if p := a.post("/portal/plan", url.Values{"csrf": {tok}, "plan": {"scale"}, "confirm": {"1"}}); p.status != http.StatusSeeOther {
		t.Fatalf("upgrade: %d %s", p.status, p.body)
	}
	page := a.get("/portal/payments")
	ids := map[string]string{} // method id -> action seen
	for _, m := range methodAction.FindAllStringSubmatch(page.body, -1) {
		ids[m[1]] += m[2]
	}
	var cardID, debitID string
	for id, acts := range ids {
		if strings.Contains(acts, "default") {
			cardID = id // only the card is offered "make default"
		} else {
			debitID = id
		}
	}
	if cardID == "" || debitID == "" || !strings.Contains(page.body, "first direct debit") || !strings.Contains(page.body, "<strong>settling</strong>") {
		t.Fatalf("payments page: %v\n%s", ids, page.body)
	}
	p = a.post("/portal/payments/"+cardID+"/default", url.Values{"csrf": {tok}})
	if p.status != http.StatusConflict || !strings.Contains(p.errorText(), "Direct debit required") || !strings.Contains(p.errorText(), "a card cannot be its default") {
		t.Fatalf("card as default on scale: %d %q", p.status, p.errorText())
	}
	card.Set("card_number", "5555 5555 5555 4444")
	if p := a.post("/portal/payments", card); p.status != http.StatusConflict {
		t.Fatalf("adding a card as default on scale: %d %q", p.status, p.errorText())
	}
	if p := a.post("/portal/payments/"+debitID+"/remove", url.Values{"csrf": {tok}}); p.status != http.StatusConflict {
		t.Fatalf("removing scale's direct debit: %d %q", p.status, p.errorText())
	}

	// Tenant isolation: B sees none of A's methods and cannot act on them.
	bb := newBrowser(t, st.URL)
	btok := bb.signUp("other@example.com", pw, "Other Ltd").csrf(t)
	if p := bb.get("/portal/payments"); strings.Contains(p.body, cardID) || strings.Contains(p.body, "Pat") {
		t.Fatal("B sees A's payment methods")
	}
	for _, path := range []string{"/portal/payments/" + cardID + "/default", "/portal/payments/" + debitID + "/remove"} {
		if p := bb.post(path, url.Values{"csrf": {btok}}); p.status != 404 {
			t.Fatalf("B on %s: %d", path, p.status)
		}
	}
	if p := a.post("/portal/payments/"+cardID+"/default", url.Values{}); p.status != 403 {
		t.Fatalf("without a CSRF token: %d", p.status)
	}

	// The first debit fails on its date: Free limits, shown on the page.
	// (Ten days outlive the session: sign in again.)
	clock.Add(10 * 24 * time.Hour)
	if p := a.signIn("payer@example.com", pw); p.status != http.StatusSeeOther {
		t.Fatalf("sign in: %d", p.status)
	}
	tok = a.get("/portal/payments").csrf(t)
	var failedID string
	deadline := time.Now().Add(20 * time.Second)
	for failedID == "" {
		if time.Now().After(deadline) {
			t.Fatal("the debit did not fail")
		}
		time.Sleep(50 * time.Millisecond)
		page = a.get("/portal/payments")
		if m := regexp.MustCompile(`action="/portal/payments/([0-9a-f-]{36})/retry"`).FindStringSubmatch(page.body); m != nil {
			failedID = m[1]
		}
	}
	if !strings.Contains(page.body, "<strong>failed</strong>") || !strings.Contains(page.body, "the bank refused the debit") {
		t.Fatalf("after the failure: %s", page.body)
	}
	if u := a.get("/portal/usage"); !strings.Contains(u.body, "<strong>failed</strong>") || !strings.Contains(u.body, "of 1000 included") {
		t.Fatalf("usage after the failure: %s", u.body)
	}
	// A good mandate, the default, and a retry: it settles and Scale's
	// limits are back.
	if p := a.post("/portal/payments", url.Values{"csrf": {tok}, "type": {"direct_debit"}, "scheme": {"ach"}, "holder_name": {"Pat"},
		"routing_number": {"021000021"}, "account_number": {"1234567890"}, "mandate": {"1"}, "make_default": {"1"}}); p.status != http.StatusSeeOther {
		t.Fatalf("second mandate: %d %s", p.status, p.body)
	}
	if p := a.post("/portal/payments/"+failedID+"/retry", url.Values{"csrf": {tok}}); p.status != http.StatusSeeOther {
		t.Fatalf("retry: %d %s", p.status, p.body)
	}
	clock.Add(10 * 24 * time.Hour)
	if p := a.signIn("payer@example.com", pw); p.status != http.StatusSeeOther {
		t.Fatalf("sign in: %d", p.status)
	}
	for {
		if u := a.get("/portal/usage"); strings.Contains(u.body, "of 2000000 included") && strings.Contains(u.body, "<strong>ok</strong>") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the retry did not settle")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

var financeSecret = regexp.MustCompile(`id="new-secret" type="text" readonly value="(at_live_[a-z2-7]+)"`)

// TestPortalFinanceCredentials: a person of the demo account issues a
// finance credential for its finance user under the redacted grant, uses it,
// and sees it refused once revoked; another account's user or grant is
// refused naming the field.
func TestPortalFinanceCredentials(t *testing.T) {
	st := stack(t, false)
	b := joinDemo(t, st, "fin@demo.example")
	page := b.get("/portal/finance")
	if page.status != 200 || !strings.Contains(page.body, "writes_enabled") || !strings.Contains(page.body, "transactions:write") {
		t.Fatalf("finance page: %d %s", page.status, page.body)
	}
	tok := page.csrf(t)
	form := url.Values{"csrf": {tok}, "name": {"budget app"}, "finance_user_id": {st.Demo.UserID}, "grant_id": {st.Demo.GrantRedactedID},
		"kind": {"at"}, "mode": {"live"}, "scope": metering.FinanceReadScopes()}
	p := b.post("/portal/finance", form)
	m := financeSecret.FindStringSubmatch(p.body)
	if p.status != 200 || m == nil {
		t.Fatalf("issue: %d %s", p.status, p.body)
	}
	secret := m[1]
	c := client{t: t, base: st.URL, keys: map[string]string{"new": secret}}
	r := c.call("GET", "/v1/transactions?page_size=5", "new", "")
	if r.status != 200 || strings.Contains(string(r.body), `"location":{`) {
		t.Fatalf("transactions with the portal's credential: %d %s", r.status, r.body)
	}
	if again := b.get("/portal/finance"); strings.Contains(again.body, secret) || !strings.Contains(again.body, secret[:12]) ||
		!strings.Contains(again.body, st.Demo.GrantRedactedID) {
		t.Fatal("the listing must show the prefix and grant, never the secret")
	}
	form.Set("grant_id", "00000000-0000-0000-0000-000000000000")
	if p := b.post("/portal/finance", form); p.status != 400 || !strings.Contains(p.errorText(), "grant") {
		t.Fatalf("a grant that is not the user's: %d %q", p.status, p.errorText())
	}
	// Another account cannot issue for the demo's user.
	other := newBrowser(t, st.URL)
	otok := other.signUpVerified(st.Mail, "x@example.com", pw, "X Ltd").csrf(t)
	form.Set("csrf", otok)
	form.Set("grant_id", st.Demo.GrantRedactedID)
	if p := other.post("/portal/finance", form); p.status != 400 || !strings.Contains(p.errorText(), "finance user") {
		t.Fatalf("another account's user: %d %q", p.status, p.errorText())
	}
	id := regexp.MustCompile(`action="/portal/finance/([0-9a-f-]{36})/revoke"`).FindStringSubmatch(b.get("/portal/finance").body)
	if id == nil {
		t.Fatal("no revoke form")
	}
	if p := other.post("/portal/finance/"+id[1]+"/revoke", url.Values{"csrf": {otok}}); p.status != 404 {
		t.Fatalf("another account revoking: %d", p.status)
	}
	if p := b.post("/portal/finance/"+id[1]+"/revoke", url.Values{"csrf": {tok}}); p.status != http.StatusSeeOther {
		t.Fatalf("revoke: %d", p.status)
	}
	deadline := time.Now().Add(15 * time.Second)
	for c.call("GET", "/v1/transactions?page_size=1", "new", "").status != 401 {
		if time.Now().After(deadline) {
			t.Fatal("the revoked credential still works")
		}
		time.Sleep(100 * time.Millisecond)
	}
}
