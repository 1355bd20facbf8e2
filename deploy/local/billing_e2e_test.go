package local_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ledgerlane/platform/deploy/local"
	"github.com/ledgerlane/platform/services/metering"
	"github.com/ledgerlane/platform/services/metering/mailsink"
)

// TestBillingEndToEnd drives usage past 75 % and 90 % of the included volume
// through the gateway and sees exactly two e-mails arrive over SMTP at the
// in-process server (and as .eml files in LOCAL_MAIL_DIR); the second is
// sent while that server is down and arrives once it is back. Then plan
// changes show in GET /v1/usage: an upgrade at once, a downgrade scheduled
// for the period's end.
func TestBillingEndToEnd(t *testing.T) {
	for _, withDB := range []bool{false, true} {
		name := map[bool]string{false: "memory", true: "postgres"}[withDB]
		t.Run(name, func(t *testing.T) { billingEndToEnd(t, withDB) })
	}
}

func billingEndToEnd(t *testing.T, withDB bool) {
	dir := t.TempDir()
	st := stack(t, withDB, func(c *local.Config) {
		c.DemoPlan, c.DemoUsage = metering.PlanFree, 749 // Free includes 1,000: 75 % is 750, 90 % is 900
		c.MailDir, c.BillingInterval = dir, 200*time.Millisecond
	})
	keys := map[string]string{}
	for _, k := range st.Keys {
		keys[k.Name] = k.Key
	}
	c := client{t: t, base: st.URL, keys: keys}

	u := c.call("GET", "/v1/usage", "conversion-usage", "")
	if u.status != 200 || u.json["plan"] != "free" || u.json["used"] != 749.0 || u.json["payment_state"] != "ok" ||
		!strings.Contains(string(u.body), `"scheduled_plan":null`) || !strings.Contains(string(u.body), `"scheduled_plan_at":null`) {
		t.Fatalf("usage: %d %s", u.status, u.body)
	}

	// 75 %: one conversion.
	if r := c.call("POST", "/v1/convert?to=camt.053", "conversion-live", ":20:X", "Content-Type", "text/plain"); r.status == 429 || r.status >= 500 {
		t.Fatalf("convert: %d %s", r.status, r.body)
	}
	first := waitMail(t, st.Mail, 1)
	if !strings.Contains(string(first[0].Data), "75% of your included conversions used") || first[0].To[0] != local.DemoUserEmail {
		t.Fatalf("first mail: %s", first[0].Data)
	}

	// The server has the mail; wait until the outbox has recorded it as sent
	// too, or closing the server now would fail the sender's session and the
	// mail would rightly be sent again (delivery is at least once).
	deadline := time.Now().Add(10 * time.Second)
	for {
		out, err := st.Metering.Notify().Outbox(t.Context(), st.AccountID)
		if err == nil && len(out) == 1 && out[0].SentAt != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the first mail is not recorded as sent: %+v %v", out, err)
		}
		time.Sleep(20 * time.Millisecond)
	}

	// The mail server goes down; 90 %: a batch of 150 items (one unit each).
	addr := st.Mail.Addr()
	if err := st.Mail.Close(); err != nil {
		t.Fatal(err)
	}
	items := make([]map[string]string, 150)
	for i := range items {
		items[i] = map[string]string{"message": ":20:X"}
	}
	body, _ := json.Marshal(map[string]any{"to": "camt.053", "items": items})
	if r := c.call("POST", "/v1/convert/batch", "conversion-all", string(body), "Content-Type", "application/json"); r.status != 202 {
		t.Fatalf("batch: %d %s", r.status, r.body)
	}
	if u := c.call("GET", "/v1/usage", "conversion-usage", ""); u.json["used"] != 900.0 {
		t.Fatalf("usage after the batch: %s", u.body)
	}
	time.Sleep(1500 * time.Millisecond) // the alert is queued and its first sends fail
	back, err := mailsink.Start(addr, dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = back.Close() })
	second := waitMail(t, back, 1)
	if !strings.Contains(string(second[0].Data), "90% of your included conversions used") {
		t.Fatalf("second mail: %s", second[0].Data)
	}
	time.Sleep(time.Second) // nothing else arrives
	if n := len(st.Mail.Messages()) + len(back.Messages()); n != 2 {
		t.Fatalf("%d mails, want exactly 2", n)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.eml"))
	if len(files) != 2 {
		t.Fatalf("%d .eml files, want 2", len(files))
	}
	for _, f := range files {
		b, _ := os.ReadFile(f)
		if strings.Contains(strings.ToLower(string(b)), "http") || strings.Contains(string(b), keys["conversion-live"]) {
			t.Fatalf("a link or credential in %s:\n%s", f, b)
		}
	}

	// An upgrade shows at once and carries usage; a downgrade waits for the
	// period's end.
	ctx := t.Context()
	svc := st.Metering.Billing()
	if _, err := svc.ChangePlan(ctx, st.AccountID, metering.PlanGrowth); err != nil {
		t.Fatal(err)
	}
	u = c.call("GET", "/v1/usage", "conversion-usage", "")
	if u.json["plan"] != "growth" || u.json["used"] != 900.0 || u.json["monthly_quota"] != 250_000.0 {
		t.Fatalf("usage after the upgrade: %s", u.body)
	}
	ch, err := svc.ChangePlan(ctx, st.AccountID, metering.PlanStarter)
	if err != nil {
		t.Fatal(err)
	}
	u = c.call("GET", "/v1/usage", "conversion-usage", "")
	at, _ := u.json["scheduled_plan_at"].(string)
	when, perr := time.Parse(time.RFC3339Nano, at)
	if u.json["plan"] != "growth" || u.json["scheduled_plan"] != "starter" || perr != nil || !when.Equal(ch.EffectiveAt) ||
		at != u.json["period_end"] {
		t.Fatalf("usage with a downgrade scheduled: %s", u.body)
	}
	if _, err := svc.CancelDowngrade(ctx, st.AccountID); err != nil {
		t.Fatal(err)
	}
	if u := c.call("GET", "/v1/usage", "conversion-usage", ""); u.json["scheduled_plan"] != nil {
		t.Fatalf("usage after canceling: %s", u.body)
	}
}

// waitMail waits up to 15 s for sink to hold n messages and returns them.
func waitMail(t *testing.T, sink *mailsink.Sink, n int) []mailsink.Message {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		if m := sink.Messages(); len(m) >= n {
			return m
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%d mails arrived, want %d", len(sink.Messages()), n)
	return nil
}
