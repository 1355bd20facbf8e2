package main

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/ledgerlane/platform/services/metering"
	"github.com/ledgerlane/platform/services/metering/sandboxpay"
)

var firstID = regexp.MustCompile(`(?m)^([0-9a-f-]{36})\s`)

func TestPaymentCommands(t *testing.T) {
	c := newCtl(t)
	c.processor = sandboxpay.New()
	c.svc = newServices(c.store, metering.Config{}, c.processor)
	a, err := c.svc.CreateAccount(t.Context(), "Acme", metering.PlanScale, metering.EUR)
	if err != nil {
		t.Fatal(err)
	}
	runOK := func(args ...string) string {
		t.Helper()
		var out, errOut bytes.Buffer
		if err := run(t.Context(), args, &out, &errOut, c.open); err != nil {
			t.Fatalf("%v: %v (%s)", args, describe(err), errOut.String())
		}
		return out.String()
	}
	runErr := func(want string, args ...string) {
		t.Helper()
		var out, errOut bytes.Buffer
		err := run(t.Context(), args, &out, &errOut, c.open)
		if err == nil || !strings.Contains(describe(err), want) {
			t.Fatalf("%v: error %v, want %q", args, err, want)
		}
	}
	runErr("scheme", "payment-method", "add", "--account", a.ID, "--type", "direct_debit", "--scheme", "ach", "--holder", "Acme",
		"--routing-number", "021000021", "--account-number", "12345678")
	runErr("direct-debit-required", "payment-method", "add", "--account", a.ID, "--type", "card", "--holder", "Acme",
		"--card-number", "4242424242424242", "--exp-month", "12", "--exp-year", "2040", "--default")
	out := runOK("payment-method", "add", "--account", a.ID, "--type", "direct_debit", "--scheme", "sepa", "--holder", "Acme",
		"--iban", "DE89 3704 0044 0532 0130 00", "--default")
	if !strings.Contains(out, "3000") || !strings.Contains(out, "true") || strings.Contains(out, "DE89370400440532013000") {
		t.Fatalf("add: %s", out)
	}
	card := firstID.FindStringSubmatch(runOK("payment-method", "add", "--account", a.ID, "--type", "card", "--holder", "Acme",
		"--card-number", "4242 4242 4242 4242", "--exp-month", "12", "--exp-year", "2040"))[1]
	runErr("direct-debit-required", "payment-method", "default", "--account", a.ID, "--id", card)
	if out := runOK("payment-method", "list", "--account", a.ID); strings.Count(out, "\n") != 3 {
		t.Fatalf("list: %s", out)
	}
	runOK("payment-method", "remove", "--account", a.ID, "--id", card)
	if out := runOK("payment", "list", "--account", a.ID); !strings.Contains(out, "payment_state: ok") {
		t.Fatalf("payments: %s", out)
	}
	runErr("no such payment", "payment", "force", "--id", "00000000-0000-0000-0000-000000000000", "--outcome", "settle")
	runErr("usage", "payment", "force", "--id", "x")
	if out := runOK("payment", "settle-due"); !strings.Contains(out, "resolved 0") {
		t.Fatalf("settle-due: %s", out)
	}
	if out := runOK("invoice", "collect-due"); !strings.Contains(out, "made 0 collection attempts") {
		t.Fatalf("collect-due: %s", out)
	}
}
