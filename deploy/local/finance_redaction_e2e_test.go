package local_test

import (
	"strings"
	"testing"
)

// TestFinanceRedactionEndToEnd is the reported leak, over HTTP on the demo
// data: the redacted grant hides connection.institution, so no connection,
// sync-status line or balance may name a bank, not even in the failing
// Fidelity connection's error message or in bank-given account names
// (docs/privacy.md). The full per-route check is
// services/finance/grpcapi/redaction_test.go.
func TestFinanceRedactionEndToEnd(t *testing.T) {
	st := financeStack(t, false)
	keys := map[string]string{}
	for _, k := range st.Keys {
		keys[k.Name] = k.Key
	}
	c := client{t: t, base: st.URL, keys: keys}
	a := st.Demo.AccountIDs
	paths := []string{"/v1/connections", "/v1/sync-status"}
	for _, id := range []string{a.Checking, a.Savings, a.CreditCard, a.RewardsCard, a.Mortgage, a.EuroChecking} {
		paths = append(paths, "/v1/accounts/"+id+"/balances")
	}
	banks := []string{"chase", "fidelity", "elan", "rocket", "n26"}
	for _, p := range paths {
		open := c.call("GET", p, "finance-read", "")
		r := c.call("GET", p, "finance-redacted", "")
		if r.status != 200 || open.status != 200 {
			t.Fatalf("%s: %d / %d %s", p, r.status, open.status, r.body)
		}
		if !strings.Contains(string(r.body), "connection.institution") {
			t.Errorf("%s: redacted_fields does not name connection.institution: %s", p, r.body)
		}
		body := strings.ToLower(string(r.body))
		for _, bank := range banks {
			if strings.Contains(body, bank) {
				t.Errorf("%s names %q under the redacting grant: %s", p, bank, r.body)
			}
		}
	}
	// The open grant still sees the Fidelity error message.
	if r := c.call("GET", "/v1/connections", "finance-read", ""); !strings.Contains(string(r.body), "Fidelity needs you") {
		t.Errorf("open grant: %s", r.body)
	}
}
