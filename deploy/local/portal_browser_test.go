package local_test

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// findBrowser is Debian's chromium (or CHROME_PATH); "" when none is found.
func findBrowser() string {
	if p := os.Getenv("CHROME_PATH"); p != "" {
		return p
	}
	for _, name := range []string{"/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// TestPortalInBrowser drives the portal in headless Chromium: sign up, create
// a key and read its secret (shown once), use it against /v1/formats, revoke
// it and see it refused, open the usage page, link a finance sandbox user and
// read its transactions with a credential issued on the link, and look at it phone-sized. Screenshots of each page go to PORTAL_ARTIFACTS
// (default: the test's temporary directory).
func TestPortalInBrowser(t *testing.T) {
	bin := findBrowser()
	if bin == "" {
		t.Skip("no Chromium found (apt-get install chromium, or set CHROME_PATH): skipping the browser test")
	}
	shots := os.Getenv("PORTAL_ARTIFACTS")
	if shots == "" {
		shots = t.TempDir()
	} else if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	st := stack(t, false)

	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.WindowSize(1200, 900),
	}
	actx, cancel := chromedp.NewExecAllocator(t.Context(), opts...)
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	// The first Run starts the browser and ties it to ctx; each step then
	// runs under its own deadline, so a step that waits for what never
	// comes fails on its own, saying where the page was.
	if err := chromedp.Run(ctx); err != nil {
		t.Fatalf("start the browser: %v", err)
	}
	step := func(name string, actions ...chromedp.Action) {
		t.Helper()
		sctx, cancel := context.WithTimeout(ctx, 90*time.Second) // a loaded 2-core machine, every page scanned
		defer cancel()
		if err := chromedp.Run(sctx, actions...); err != nil {
			t.Fatalf("browser (%s): %v; %s", name, err, whereIsThePage(ctx, filepath.Join(shots, "failed-"+strings.ReplaceAll(name, " ", "-")+".png")))
		}
	}

	axeJS := loadAxe(t)
	var a11y []string // serious and critical findings, by page
	shot := func(name string) chromedp.Action {
		return chromedp.ActionFunc(func(ctx context.Context) error {
			var buf []byte // quality 100: PNG
			if err := chromedp.FullScreenshot(&buf, 100).Do(ctx); err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(shots, name+".png"), buf, 0o644); err != nil {
				return err
			}
			found, err := scanPage(ctx, axeJS)
			for _, f := range found {
				a11y = append(a11y, name+": "+f)
			}
			return err
		})
	}
	defer func() {
		if len(a11y) > 0 {
			t.Errorf("accessibility scan (axe-core, WCAG 2 A/AA; serious and critical):\n%s", strings.Join(a11y, "\n"))
		}
	}()
	var secret, listing, tryCurl string
	step("sign up",
		chromedp.Navigate(st.URL+"/portal/"),
		chromedp.WaitVisible(`#email`, chromedp.ByID),
		shot("01-signin"),
		chromedp.Click(`a[href="/portal/signup"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#account_name`, chromedp.ByID),
		chromedp.SendKeys(`#account_name`, "Browser Ltd", chromedp.ByID),
		chromedp.SendKeys(`#name`, "Bea", chromedp.ByID),
		chromedp.SendKeys(`#email`, "bea@example.com", chromedp.ByID),
		chromedp.SendKeys(`#password`, pw, chromedp.ByID),
		shot("02-signup"),
		chromedp.Submit(`#password`, chromedp.ByID),
		chromedp.WaitVisible(`#key-name`, chromedp.ByID),
		shot("03-keys-empty"),
	)
	// Live keys need a verified address: follow the link that arrived by mail.
	verify := mailToken(t, st.Mail, "bea@example.com", verifyLink)
	step("verify and create a key",
		chromedp.Navigate(st.URL+"/portal/verify?t="+verify),
		chromedp.WaitVisible(`#confirm-email`, chromedp.ByID),
		shot("03b-verify"),
		chromedp.Click(`#confirm-email`, chromedp.ByID),
		chromedp.WaitVisible(`p.notice`, chromedp.ByQuery),
		chromedp.Navigate(st.URL+"/portal/keys"),
		chromedp.WaitVisible(`#key-name`, chromedp.ByID),
		chromedp.SendKeys(`#key-name`, "laptop", chromedp.ByID),
		chromedp.Submit(`#key-name`, chromedp.ByID),
		chromedp.WaitVisible(`#new-secret`, chromedp.ByID),
		chromedp.Value(`#new-secret`, &secret, chromedp.ByID),
		chromedp.Text(`#try-curl`, &tryCurl, chromedp.ByID),
		shot("04-key-created"),
	)
	if !strings.HasPrefix(secret, "ak_live_") {
		t.Fatalf("secret %q", secret)
	}
	// A first converted message with nothing but what the page says: its
	// command, pasted into a shell.
	if out := runQuickstart(t, tryCurl); out != nil {
		var answer struct{ Result string }
		if err := json.Unmarshal(out, &answer); err != nil || !strings.Contains(answer.Result, `<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053`) {
			t.Fatalf("the key page's command printed %.600s", out)
		}
	}
	if got := formats(t, st.URL, secret); got != 200 {
		t.Fatalf("/v1/formats with the key made in the browser: %d", got)
	}
	step("keys, usage, people",
		// Reloading shows the prefix only: the secret was shown once.
		chromedp.Navigate(st.URL+"/portal/keys"),
		chromedp.WaitVisible(`#key-name`, chromedp.ByID),
		chromedp.Text(`table`, &listing, chromedp.ByQuery),
		chromedp.Click(`input[name="confirm"]`, chromedp.ByQuery), // a live key: the box first
		chromedp.Click(`button.danger`, chromedp.ByQuery),
		chromedp.WaitVisible(`p.notice`, chromedp.ByQuery),
		shot("05-key-revoked"),
		chromedp.Click(`a[href="/portal/usage"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#limits-title`, chromedp.ByID),
		shot("06-usage"),
		chromedp.Click(`a[href="/portal/people"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#invite-email`, chromedp.ByID),
		chromedp.SendKeys(`#invite-email`, "colleague@example.com", chromedp.ByID),
		chromedp.Submit(`#invite-email`, chromedp.ByID),
		chromedp.WaitVisible(`p.notice`, chromedp.ByQuery),
		shot("06b-people"),
		chromedp.Navigate(st.URL+"/portal/usage"),
		chromedp.WaitVisible(`#limits-title`, chromedp.ByID),
		chromedp.EmulateViewport(390, 844),
		shot("07-usage-phone"),
		fitsWidth("usage"),
		chromedp.Navigate(st.URL+"/portal/payments"),
		chromedp.WaitVisible(`#routing`, chromedp.ByID),
		fitsWidth("payments"),
		chromedp.Navigate(st.URL+"/portal/keys"),
		chromedp.WaitVisible(`#key-name`, chromedp.ByID),
		shot("08-keys-phone"),
		fitsWidth("keys"),
	)
	if !strings.Contains(listing, secret[:12]) || strings.Contains(listing, secret) {
		t.Fatalf("listing after reload: %q", listing)
	}
	waitFormats(t, st.URL, secret, 401)
	var ok bool
	if err := chromedp.Run(ctx, chromedp.Evaluate(`document.body.innerText.includes("revoked 20")`, &ok)); err != nil || !ok {
		t.Fatalf("the page does not show the revocation: %v", err)
	}
	// The key was used before it was revoked: the request log shows it,
	// on a phone too.
	step("requests",
		chromedp.Navigate(st.URL+"/portal/requests"),
		chromedp.WaitVisible(`#requests`, chromedp.ByID),
		shot("08b-requests-phone"),
		fitsWidth("requests"),
		// One route's series, chosen with the form above the chart.
		chromedp.SetValue(`#series`, "r:/v1/formats", chromedp.ByID),
		chromedp.Click(`#series-form button`, chromedp.ByQuery),
		// Not #daily-chart alone: the page before the submit has one too,
		// and a screenshot taken while it navigates never ends. The option
		// is marked selected only by the page that answers the form.
		chromedp.WaitReady(`#series option[selected][value="r:/v1/formats"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#daily-chart`, chromedp.ByID),
		shot("08b2-requests-series-phone"),
		fitsWidth("requests of one route"),
	)
	// Webhooks (docs/webhooks.md), still phone-sized: add a test endpoint
	// (its secret shown once), open it, send a test event and see the
	// attempt.
	recv := newHookReceiver(t)
	var hookSecret string
	step("webhooks",
		chromedp.Navigate(st.URL+"/portal/webhooks?mode=test"),
		chromedp.WaitVisible(`#webhook-url`, chromedp.ByID),
		fitsWidth("webhooks"),
		chromedp.SendKeys(`#webhook-url`, recv.srv.URL+"/browser", chromedp.ByID),
		chromedp.SendKeys(`#webhook-description`, "browser test", chromedp.ByID),
		chromedp.Click(`#create-webhook`, chromedp.ByID),
		chromedp.WaitVisible(`#new-secret`, chromedp.ByID),
		chromedp.Value(`#new-secret`, &hookSecret, chromedp.ByID),
		shot("08c-webhook-created-phone"),
		fitsWidth("webhooks with a new secret"),
		chromedp.Click(`#endpoints a`, chromedp.ByQuery),
		chromedp.WaitVisible(`#send-test`, chromedp.ByID),
		chromedp.Click(`#send-test`, chromedp.ByID),
		chromedp.WaitVisible(`p.notice`, chromedp.ByQuery),
	)
	if !strings.HasPrefix(hookSecret, "whsec_") {
		t.Fatalf("webhook secret %q", hookSecret)
	}
	recv.wait(t, "/browser", 1)
	step("webhook deliveries",
		chromedp.Reload(),
		chromedp.WaitVisible(`#deliveries .attempts`, chromedp.ByQuery),
		shot("08d-webhook-deliveries-phone"),
		fitsWidth("webhook endpoint"),
	)

	// Payment methods (docs/billing.md): an ACH mandate and a card, an
	// upgrade to Scale that runs on introductory limits while the first
	// debit settles, and the card refused as Scale's default (409).
	var state, refusal string
	step("payments",
		chromedp.EmulateViewport(1200, 900),
		chromedp.Navigate(st.URL+"/portal/payments"),
		chromedp.WaitVisible(`#routing`, chromedp.ByID),
		shot("09-payments-empty"),
		chromedp.SendKeys(`#dd-holder`, "Browser Ltd", chromedp.ByID),
		chromedp.SendKeys(`#routing`, "021000021", chromedp.ByID),
		chromedp.SendKeys(`#dd-account`, "000123456789", chromedp.ByID),
		chromedp.Click(`input[name="mandate"]`, chromedp.ByQuery),
		chromedp.Click(`#add-debit`, chromedp.ByID),
		chromedp.WaitVisible(`p.notice`, chromedp.ByQuery),
		chromedp.SendKeys(`#card-holder`, "Bea", chromedp.ByID),
		chromedp.SendKeys(`#card-number`, "4242 4242 4242 4242", chromedp.ByID),
		chromedp.SendKeys(`#exp-month`, "12", chromedp.ByID),
		chromedp.SendKeys(`#exp-year`, "2040", chromedp.ByID),
		chromedp.Click(`#add-card`, chromedp.ByID),
		// Not p.notice: the page before the submit shows one too (the
		// mandate's), and a screenshot taken while it navigates never ends.
		chromedp.WaitVisible(`button[aria-label^="Make default: Visa"]`, chromedp.ByQuery),
		shot("10-payment-methods"),
		chromedp.Navigate(st.URL+"/portal/usage"),
		chromedp.WaitVisible(`#limits-title`, chromedp.ByID),
		chromedp.Click(`input[name="plan"][value="scale"]`, chromedp.ByQuery),
		chromedp.Submit(`input[name="plan"][value="scale"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#confirm-change`, chromedp.ByID),
		shot("11-confirm-scale"),
		chromedp.Click(`#confirm-change`, chromedp.ByID),
		chromedp.WaitVisible(`#usage-payment-state`, chromedp.ByID),
		chromedp.Text(`#usage-payment-state`, &state, chromedp.ByID),
		shot("12-usage-settling"),
		chromedp.Navigate(st.URL+"/portal/payments"),
		chromedp.WaitVisible(`button[aria-label^="Make default: Visa"]`, chromedp.ByQuery),
		chromedp.Click(`button[aria-label^="Make default: Visa"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`p.error`, chromedp.ByQuery),
		chromedp.Text(`p.error`, &refusal, chromedp.ByQuery),
		shot("13-card-default-refused"),
		chromedp.Navigate(st.URL+"/portal/finance"),
		chromedp.WaitVisible(`#fin-name`, chromedp.ByID),
		shot("14-finance-empty"),
	)

	// A test OAuth client: its id and secret shown once, a token by the
	// client-credentials grant, used like a key.
	var clientID, clientSecret string
	step("oauth",
		chromedp.Navigate(st.URL+"/portal/oauth"),
		chromedp.WaitVisible(`#client-name`, chromedp.ByID),
		shot("14b-oauth-empty"),
		chromedp.SendKeys(`#client-name`, "staging CI", chromedp.ByID),
		chromedp.Click(`#create-client`, chromedp.ByID),
		chromedp.WaitVisible(`#new-client-id`, chromedp.ByID),
		chromedp.Value(`#new-client-id`, &clientID, chromedp.ByID),
		chromedp.Value(`#new-secret`, &clientSecret, chromedp.ByID),
		shot("14c-oauth-created"),
	)
	tr := client{t: t, base: st.URL}.call("POST", "/v1/oauth/token", "", "grant_type=client_credentials",
		"Content-Type", "application/x-www-form-urlencoded", "Authorization", basic(clientID, clientSecret))
	tok, _ := tr.json["access_token"].(string)
	if tr.status != 200 || formats(t, st.URL, tok) != 200 {
		t.Fatalf("a token for the client made in the browser: %d %s", tr.status, tr.body)
	}
	if !strings.Contains(state, "settling") || !strings.Contains(refusal, "Direct debit required") {
		t.Fatalf("payment state %q, refusal %q", state, refusal)
	}

	// The finance sandbox (docs/finance-sandbox.md): a test user linked
	// through the MFA institution with its shown test credentials, a test
	// finance credential on the link's grant with its ready command, and a
	// first finance read with it; the page fits a phone.
	var sbxSecret, sbxCurl string
	step("sandbox",
		chromedp.EmulateViewport(1200, 900),
		chromedp.Click(`a[href="/portal/sandbox"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#sbx-name`, chromedp.ByID),
		shot("14d-sandbox-empty"),
		chromedp.SendKeys(`#sbx-name`, "Robin Sandbox", chromedp.ByID),
		chromedp.Click(`#create-sandbox-user`, chromedp.ByID),
		chromedp.WaitVisible(`#sbx-username`, chromedp.ByID),
		chromedp.SetValue(`#sbx-institution`, "ins_quokka", chromedp.ByID),
		chromedp.SendKeys(`#sbx-username`, "user_good", chromedp.ByID),
		chromedp.SendKeys(`#sbx-password`, "pass_good", chromedp.ByID),
		chromedp.Click(`#link-institution`, chromedp.ByID),
		chromedp.WaitVisible(`#mfa-code`, chromedp.ByID),
		shot("14e-sandbox-mfa"),
		chromedp.SendKeys(`#mfa-code`, "1234", chromedp.ByID),
		chromedp.Click(`#send-mfa`, chromedp.ByID),
		chromedp.WaitVisible(`button.issue-sandbox-credential`, chromedp.ByQuery),
		shot("14f-sandbox-linked"),
		chromedp.Click(`button.issue-sandbox-credential`, chromedp.ByQuery),
		chromedp.WaitVisible(`#try-curl`, chromedp.ByID),
		// copy.js ran (CSP script-src 'self'): the copy button shows.
		chromedp.WaitVisible(`button[data-copy="try-curl"]`, chromedp.ByQuery),
		chromedp.Value(`#new-secret`, &sbxSecret, chromedp.ByID),
		chromedp.Text(`#try-curl`, &sbxCurl, chromedp.ByID),
		shot("14g-sandbox-credential"),
		chromedp.EmulateViewport(390, 844),
		shot("14h-sandbox-phone"),
		fitsWidth("sandbox"),
		chromedp.EmulateViewport(1200, 900),
	)
	if !strings.HasPrefix(sbxSecret, "at_test_") || !strings.Contains(sbxCurl, sbxSecret) || !strings.Contains(sbxCurl, "/v1/transactions") {
		t.Fatalf("sandbox credential %q, command %q", sbxSecret[:min(12, len(sbxSecret))], sbxCurl)
	}
	sc := client{t: t, base: st.URL, keys: map[string]string{"sbx": sbxSecret}}
	if r := sc.call("GET", "/v1/transactions?page_size=3", "sbx", ""); r.status != 200 || len(r.json["data"].([]any)) != 3 {
		t.Fatalf("a first finance read with the sandbox credential: %d %s", r.status, r.body)
	}
	// The same read as the page's command.
	if out := runQuickstart(t, sbxCurl); out != nil {
		var page struct{ Data []struct{ ID string } }
		if err := json.Unmarshal(out, &page); err != nil || len(page.Data) == 0 || page.Data[0].ID == "" {
			t.Fatalf("the sandbox page's command printed %.600s", out)
		}
	}

	// Finance credentials: a person joins the demo account (invited), and
	// issues a credential for its finance user under the redacted grant.
	token := demoInvitation(t, st, "browser@demo.example")
	var finSecret string
	step("finance",
		chromedp.Click(`form[action="/portal/signout"] button`, chromedp.ByQuery),
		chromedp.WaitVisible(`#email`, chromedp.ByID),
		chromedp.Navigate(st.URL+"/portal/invite?t="+token),
		chromedp.WaitVisible(`#password`, chromedp.ByID),
		chromedp.SendKeys(`#password`, pw, chromedp.ByID),
		chromedp.Submit(`#password`, chromedp.ByID),
		chromedp.WaitVisible(`#key-name`, chromedp.ByID),
		chromedp.Navigate(st.URL+"/portal/finance"),
		chromedp.WaitVisible(`#fin-name`, chromedp.ByID),
		chromedp.SendKeys(`#fin-name`, "budget app", chromedp.ByID),
		chromedp.SendKeys(`#fin-user`, st.Demo.UserID, chromedp.ByID),
		chromedp.SendKeys(`#fin-grant`, st.Demo.GrantRedactedID, chromedp.ByID),
		chromedp.Click(`#issue-finance`, chromedp.ByID),
		chromedp.WaitVisible(`#new-secret`, chromedp.ByID),
		chromedp.Value(`#new-secret`, &finSecret, chromedp.ByID),
		shot("15-finance-issued"),
	)
	c := client{t: t, base: st.URL, keys: map[string]string{"fin": finSecret}}
	if r := c.call("GET", "/v1/transactions?page_size=3", "fin", ""); !strings.HasPrefix(finSecret, "at_live_") || r.status != 200 {
		t.Fatalf("the finance credential made in the browser: %q %d %s", finSecret[:min(12, len(finSecret))], r.status, r.body)
	}

	// Every page at desktop and phone width, signed in (to the demo
	// account, which has data on most pages) and then signed out: each is
	// scanned for accessibility and must not scroll sideways.
	tour := func(paths ...string) {
		t.Helper()
		for _, path := range paths {
			name := strings.Trim(strings.NewReplacer("/portal", "", "/", "-", "?", "-", "=", "-").Replace(path), "-")
			for _, w := range []struct {
				name          string
				width, height int64
			}{{"desktop", 1200, 900}, {"phone", 390, 844}} {
				step("tour "+path+" "+w.name,
					chromedp.EmulateViewport(w.width, w.height),
					chromedp.Navigate(st.URL+path),
					chromedp.WaitVisible(`h1`, chromedp.ByQuery),
					shot("tour-"+cmp.Or(name, "home")+"-"+w.name),
					fitsWidth(path+" at "+w.name+" width"),
				)
			}
		}
	}
	tour("/portal/keys", "/portal/oauth", "/portal/usage", "/portal/requests", "/portal/webhooks", "/portal/webhooks?mode=test",
		"/portal/payments", "/portal/finance", "/portal/sandbox", "/portal/people")

	// Password reset, signed out: the request form, then the form of the
	// link that arrived by mail.
	step("forgot",
		chromedp.Click(`form[action="/portal/signout"] button`, chromedp.ByQuery),
		chromedp.WaitVisible(`a[href="/portal/forgot"]`, chromedp.ByQuery),
		chromedp.Click(`a[href="/portal/forgot"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#email`, chromedp.ByID),
		chromedp.SendKeys(`#email`, "bea@example.com", chromedp.ByID),
		chromedp.Submit(`#email`, chromedp.ByID),
		chromedp.WaitVisible(`p.notice`, chromedp.ByQuery),
		shot("16-forgot-sent"),
	)
	reset := mailToken(t, st.Mail, "bea@example.com", resetLink)
	step("reset",
		chromedp.Navigate(st.URL+"/portal/reset?t="+reset),
		chromedp.WaitVisible(`#password`, chromedp.ByID),
		chromedp.SendKeys(`#password`, "a brand new passphrase", chromedp.ByID),
		shot("17-reset"),
		chromedp.Submit(`#password`, chromedp.ByID),
		chromedp.WaitVisible(`p.notice`, chromedp.ByQuery),
		shot("18-reset-done"),
	)
	tour("/portal/signin", "/portal/signup", "/portal/forgot")
	t.Logf("screenshots in %s", shots)
}

// runQuickstart runs a page's ready command in a shell, as a developer
// pasting it would, and answers what it printed (which must be JSON); nil,
// saying why, where the shell or curl is missing.
func runQuickstart(t *testing.T, command string) []byte {
	t.Helper()
	for _, tool := range []string{"sh", "curl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Logf("the page's command is not run: no %s on this machine", tool)
			return nil
		}
	}
	out, err := exec.CommandContext(t.Context(), "sh", "-c", command).Output()
	if err != nil || !json.Valid(out) {
		t.Fatalf("the page's command: %v; it printed %.600s", err, out)
	}
	return out
}

// whereIsThePage says what the browser shows after a failed step, its
// address and the start of its text, and saves a screenshot to shot; it
// gives up after a few seconds (a page stuck navigating answers nothing).
func whereIsThePage(ctx context.Context, shot string) string {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var url, text string
	if err := chromedp.Run(ctx, chromedp.Location(&url), chromedp.Evaluate(`document.body ? document.body.innerText : ""`, &text)); err != nil {
		return "the page does not answer: " + err.Error()
	}
	var buf []byte
	if err := chromedp.Run(ctx, chromedp.CaptureScreenshot(&buf)); err == nil {
		_ = os.WriteFile(shot, buf, 0o644)
	}
	if len(text) > 1500 {
		text = text[:1500] + "…"
	}
	return fmt.Sprintf("the page is %s, showing:\n%s", url, text)
}

// fitsWidth fails when the page is wider than the viewport (a phone would
// have to scroll sideways, and the nav would be cut off).
func fitsWidth(page string) chromedp.Action {
	return chromedp.ActionFunc(func(ctx context.Context) error {
		var widths []int
		if err := chromedp.Evaluate(`[document.documentElement.scrollWidth, window.innerWidth]`, &widths).Do(ctx); err != nil {
			return err
		}
		if len(widths) != 2 || widths[0] > widths[1] {
			return fmt.Errorf("the %s page is %v px wide in a %v px viewport", page, widths[0], widths[1])
		}
		return nil
	})
}

// loadAxe reads axe-core (pinned in testdata/axe; `npm ci` there, which
// .ci/run does, or AXE_CORE_JS) for scanPage; "" skips the scans with the
// reason logged.
func loadAxe(t *testing.T) string {
	p := os.Getenv("AXE_CORE_JS")
	if p == "" {
		p = filepath.Join("testdata", "axe", "node_modules", "axe-core", "axe.min.js")
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Logf("accessibility scan skipped: %v (run npm ci in deploy/local/testdata/axe)", err)
		return ""
	}
	return string(b)
}

// scanPage runs axe-core on the page the browser shows and returns its
// serious and critical WCAG 2 A and AA violations, each with the rule, its
// help text and the first elements it names. The script is injected over
// the DevTools protocol, which the portal's CSP (script-src 'self') does
// not govern; the page itself still runs no inline script.
func scanPage(ctx context.Context, axeJS string) ([]string, error) {
	if axeJS == "" {
		return nil, nil
	}
	var loaded bool
	if err := chromedp.Evaluate(`typeof axe !== "undefined"`, &loaded).Do(ctx); err != nil {
		return nil, err
	}
	if !loaded {
		if err := chromedp.Evaluate(axeJS+"\n;true", &loaded).Do(ctx); err != nil {
			return nil, fmt.Errorf("load axe-core: %w", err)
		}
	}
	var found []string
	err := chromedp.Evaluate(`axe.run(document, {runOnly: {type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]}, resultTypes: ["violations"]})
		.then(r => r.violations.filter(v => v.impact === "serious" || v.impact === "critical")
			.map(v => v.impact + " " + v.id + " (" + v.help + "): " + v.nodes.slice(0, 3).map(n => n.target.join(" ")).join(", ")))`,
		&found, func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }).Do(ctx)
	return found, err
}
