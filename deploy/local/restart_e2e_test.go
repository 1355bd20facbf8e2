package local_test

import (
	"testing"

	"github.com/ledgerlane/platform/deploy/local"
)

// TestRestartOnOneDatabase: `make run` with DATABASE_URL starts again on the
// database an earlier start seeded. The second start seeds a fresh demo
// account and user beside the first; its demo keys work, and so do the
// first start's, each on its own user's data only.
func TestRestartOnOneDatabase(t *testing.T) {
	var first local.Config
	st1 := stack(t, true, func(c *local.Config) { c.SandboxInterval = -1; first = *c })
	keys1 := keyMap(st1)
	if err := st1.Close(); err != nil {
		t.Fatalf("close the first start: %v", err)
	}
	st2 := stack(t, true, func(c *local.Config) {
		c.SandboxInterval = -1
		c.FinanceSchema, c.MeteringSchema = first.FinanceSchema, first.MeteringSchema
	})
	if st2.AccountID == st1.AccountID || st2.Demo.UserID == st1.Demo.UserID || st2.Demo.GrantReadID == st1.Demo.GrantReadID {
		t.Fatalf("the second start reused the first's demo: account %s, user %s", st2.AccountID, st2.Demo.UserID)
	}
	keys2 := keyMap(st2)
	c2 := client{t: t, base: st2.URL, keys: keys2}

	t.Run("the second start's keys work", func(t *testing.T) {
		c2.t = t
		for _, k := range []string{"finance-read", "finance-write", "finance-redacted"} {
			if r := c2.call("GET", "/v1/transactions?page_size=1", k, ""); r.status != 200 || len(r.json["data"].([]any)) != 1 {
				t.Errorf("%s: %d %s", k, r.status, r.body)
			}
		}
		if r := c2.call("GET", "/v1/accounts/"+st2.Demo.AccountIDs.Checking+"/balances", "finance-read", ""); r.status != 200 {
			t.Errorf("own account's balances: %d %s", r.status, r.body)
		}
		if r := c2.call("GET", "/v1/formats", "conversion-live", ""); r.status != 200 {
			t.Errorf("conversion-live: %d %s", r.status, r.body)
		}
	})

	t.Run("the first start's keys still work, on the first user only", func(t *testing.T) {
		c1 := client{t: t, base: st2.URL, keys: keys1}
		if r := c1.call("GET", "/v1/accounts/"+st1.Demo.AccountIDs.Checking+"/balances", "finance-read", ""); r.status != 200 {
			t.Errorf("first user's balances: %d %s", r.status, r.body)
		}
		c1.call("GET", "/v1/accounts/"+st2.Demo.AccountIDs.Checking+"/balances", "finance-read", "").
			wantProblem(t, 404, "not-found")
	})
}

func keyMap(st *local.Stack) map[string]string {
	keys := map[string]string{}
	for _, k := range st.Keys {
		keys[k.Name] = k.Key
	}
	return keys
}
