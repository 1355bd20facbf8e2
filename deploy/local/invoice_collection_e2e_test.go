package local_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/ledgerlane/platform/deploy/local"
	"github.com/ledgerlane/platform/services/metering"
	"github.com/ledgerlane/platform/services/metering/billing"
	"github.com/ledgerlane/platform/services/metering/notify"
	"github.com/ledgerlane/platform/services/metering/sandboxpay"
)

// TestInvoiceCollectionThroughThePortal (docs/billing.md, "Collecting an
// invoice"): the demo account's period closes with no payment method, so
// its invoice is open ("awaiting a payment method" on the portal's usage
// page); a mandate whose processor never answers (the sandbox's 0004) is
// added, which collects it at once; the billing tick retries on the moved
// clock at each backoff until the last attempt fails the invoice, the
// account runs at Free limits (GET /v1/usage) and its people get one mail.
func TestInvoiceCollectionThroughThePortal(t *testing.T) {
	for _, withDB := range []bool{false, true} {
		name := map[bool]string{false: "memory", true: "postgres"}[withDB]
		t.Run(name, func(t *testing.T) { invoiceCollectionThroughThePortal(t, withDB) })
	}
}

func invoiceCollectionThroughThePortal(t *testing.T, withDB bool) {
	clock := newStepClock()
	st := stack(t, withDB, func(c *local.Config) { c.Now, c.BillingInterval = clock.Now, 50*time.Millisecond })
	keys := map[string]string{}
	for _, k := range st.Keys {
		keys[k.Name] = k.Key
	}
	c := client{t: t, base: st.URL, keys: keys}
	svc := st.Metering.Billing()

	// waitFor polls the invoice until ok holds for its collection.
	waitFor := func(what string, ok func(billing.InvoiceCollection) bool) billing.Invoice {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			invs, err := svc.Invoices(t.Context(), st.AccountID)
			if err == nil && len(invs) == 1 && ok(invs[0].Collection) {
				return invs[0]
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: invoices %+v %v", what, invs, err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}

	// The period (a month at most) and the close grace pass.
	clock.Add(32 * 24 * time.Hour)
	waitFor("open", func(c billing.InvoiceCollection) bool { return c.State == billing.CollectionOpen })
	// Signed in now: a portal session lasts 12 hours, the retries about 10.
	b := joinDemo(t, st, "payer@demo.example")
	if p := b.get("/portal/usage"); !strings.Contains(p.body, `<td data-label="Payment">awaiting a payment method</td>`) {
		t.Fatalf("usage page with an open invoice: %s", p.body)
	}

	pay := b.get("/portal/payments")
	if p := b.post("/portal/payments", url.Values{"csrf": {pay.csrf(t)}, "type": {"direct_debit"}, "scheme": {"ach"}, "holder_name": {"Demo Company"},
		"routing_number": {"021000021"}, "account_number": {"00012345" + sandboxpay.UnreachableSuffix}, "mandate": {"1"}, "make_default": {"1"}}); p.status != http.StatusSeeOther {
		t.Fatalf("add mandate: %d %s", p.status, p.body)
	}
	inv := waitFor("first attempt", func(c billing.InvoiceCollection) bool { return c.Attempts == 1 && c.LastError != "" })
	if p := b.get("/portal/usage"); !strings.Contains(p.body, `<td data-label="Payment">retrying `) {
		t.Fatalf("usage page while retrying: %s", p.body)
	}
	for attempt := 1; attempt < billing.MaxCollectionAttempts; attempt++ {
		clock.Add(billing.CollectionDelay(attempt))
		inv = waitFor("attempt after backoff", func(c billing.InvoiceCollection) bool { return c.Attempts == attempt+1 })
	}
	inv = waitFor("failed", func(c billing.InvoiceCollection) bool { return c.State == billing.CollectionFailed })
	if p := b.get("/portal/usage"); !strings.Contains(p.body, `<td data-label="Payment">failed</td>`) {
		t.Fatalf("usage page with a failed invoice: %s", p.body)
	}
	u := c.call("GET", "/v1/usage", "conversion-usage", "")
	if u.status != 200 || u.json["payment_state"] != "failed" || u.json["monthly_quota"] != 1000.0 {
		t.Fatalf("usage after the collection failed: %d %s", u.status, u.body)
	}
	ps, err := svc.Payments(t.Context(), st.AccountID)
	if err != nil || len(ps) != 1 || ps[0].State != metering.PaymentFailed || ps[0].ID != inv.Collection.PaymentID || ps[0].AmountCents != inv.TotalCents {
		t.Fatalf("payments %+v %v", ps, err)
	}
	people, err := st.Metering.Identity().PortalUsers(t.Context(), st.AccountID)
	if err != nil {
		t.Fatal(err)
	}
	// More ticks change nothing: one mail per person.
	clock.Add(24 * time.Hour)
	time.Sleep(200 * time.Millisecond)
	mails, err := st.Metering.Notify().Outbox(t.Context(), st.AccountID)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, m := range mails {
		if m.Milestone == notify.MilestonePaymentFailed+ps[0].ID {
			n++
		}
	}
	if n != len(people) {
		t.Fatalf("%d payment failure mails for %d people", n, len(people))
	}
}
