package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/ledgerlane/platform/services/metering"
)

func TestBillingCommands(t *testing.T) {
	c := newCtl(t)
	a, err := c.svc.CreateAccount(t.Context(), "Acme", metering.PlanGrowth, metering.EUR)
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		args    []string
		wantOut string
		wantErr string
	}{
		{args: []string{"plan", "change", "--account", a.ID, "--plan", "starter"}, wantOut: "downgrade"},
		{args: []string{"plan", "list", "--account", a.ID}, wantOut: "growth"},
		{args: []string{"plan", "cancel", "--account", a.ID}, wantOut: "canceled"},
		{args: []string{"plan", "cancel", "--account", a.ID}, wantErr: "no downgrade is scheduled"},
		{args: []string{"plan", "change", "--account", a.ID, "--plan", "scale"}, wantErr: "direct-debit-required"},
		{args: []string{"plan", "change", "--account", a.ID, "--plan", "gold"}, wantErr: "unknown plan"},
		{args: []string{"user", "add", "--account", a.ID, "--email", "ann@example.com", "--name", "Ann"}, wantOut: "ann@example.com"},
		{args: []string{"user", "list", "--account", a.ID}, wantOut: "Ann"},
		{args: []string{"credit", "grant", "--account", a.ID, "--cents", "500"}, wantOut: "granted 500"},
		{args: []string{"credit", "grant", "--account", a.ID, "--cents", "x"}, wantErr: "cents"},
		{args: []string{"invoice", "list", "--account", a.ID}},
		{args: []string{"invoice", "close", "--account", a.ID}, wantErr: "usage counters are not configured"},
		{args: []string{"invoice", "list", "--account", "00000000-0000-0000-0000-000000000000"}, wantErr: "not found"},
	}
	for _, st := range steps {
		var out, errOut bytes.Buffer
		err := run(t.Context(), st.args, &out, &errOut, c.open)
		switch {
		case st.wantErr != "" && (err == nil || !strings.Contains(describe(err), st.wantErr)):
			t.Fatalf("%v: error %v, want %q", st.args, err, st.wantErr)
		case st.wantErr == "" && err != nil:
			t.Fatalf("%v: %v (%s)", st.args, err, errOut.String())
		case !strings.Contains(out.String(), st.wantOut):
			t.Fatalf("%v: output %q, want %q", st.args, out.String(), st.wantOut)
		}
	}
}
