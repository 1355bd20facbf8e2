package local_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/ledgerlane/platform/deploy/local"
)

// TestFinancePatchEndToEnd drives PATCH /v1/transactions/{id} through the
// gateway's JSON decoding: tags absent versus [] (absent keeps them, []
// clears them), amount as a string or as the Money object responses carry,
// and the bounds of date.
func TestFinancePatchEndToEnd(t *testing.T) {
	for _, withDB := range []bool{false, true} {
		name := "memory"
		if withDB {
			name = "postgres"
		}
		t.Run(name, func(t *testing.T) {
			// The scale plan's burst (200) covers the test's requests; the
			// starter plan would rate-limit them.
			financePatchEndToEnd(t, stack(t, withDB, func(c *local.Config) { c.SandboxInterval, c.DemoPlan = -1, "scale" }))
		})
	}
}

func financePatchEndToEnd(t *testing.T, st *local.Stack) {
	keys := map[string]string{}
	for _, k := range st.Keys {
		keys[k.Name] = k.Key
	}
	f := &fin{client: client{t: t, base: st.URL, keys: keys}}
	first := func(accountID string) string {
		r := f.call("GET", "/v1/transactions?page_size=1&account_id="+accountID, "finance-write", "")
		data, _ := r.json["data"].([]any)
		if r.status != 200 || len(data) != 1 {
			t.Fatalf("no row on %s: %d %s", accountID, r.status, r.body)
		}
		return data[0].(map[string]any)["id"].(string)
	}
	usdID, eurID := first(st.Demo.AccountIDs.Checking), first(st.Demo.AccountIDs.EuroChecking)

	// patch sends body (a JSON object without expected_version) at the
	// row's current version.
	patch := func(id, body string) resp {
		f.t.Helper()
		v := version(f.tx("finance-write", id))
		return f.write("PATCH", "/v1/transactions/"+id, "finance-write", fmt.Sprintf(`{"expected_version": %d, %s}`, v, body))
	}
	tags := func(tx map[string]any) []string {
		var out []string
		for _, tag := range tx["tags"].([]any) {
			out = append(out, tag.(string))
		}
		return out
	}

	t.Run("tags: absent keeps, [] clears", func(t *testing.T) {
		f.t = t
		tx := f.ok(patch(usdID, `"tags": ["trip", "work"]`))
		if !slices.Equal(tags(tx), []string{"trip", "work"}) {
			t.Fatalf("set: %v", tx["tags"])
		}
		steps := []struct {
			name, body string
			want       []string
			bump       bool
		}{
			{"absent", `"memo": "tags untouched"`, []string{"trip", "work"}, true},
			{"null", `"tags": null`, []string{"trip", "work"}, false},
			{"replace", `"tags": ["work"]`, []string{"work"}, true},
			{"empty array clears", `"tags": []`, nil, true},
			{"clearing again changes nothing", `"tags": []`, nil, false},
		}
		for _, s := range steps {
			before := version(f.tx("finance-write", usdID))
			tx := f.ok(patch(usdID, s.body))
			if !slices.Equal(tags(tx), s.want) {
				t.Errorf("%s: tags %v, want %v", s.name, tx["tags"], s.want)
			}
			if bumped := version(tx) == before+1; bumped != s.bump {
				t.Errorf("%s: version %d -> %d", s.name, before, version(tx))
			}
		}
		patch(usdID, `"tags": [1]`).wantProblem(t, 400, "invalid-input")
		if r := patch(usdID, `"tags": [""]`); r.json["field"] != "tags" {
			t.Errorf("empty tag: %s", r.body)
		}
	})

	t.Run("amount: string or Money object", func(t *testing.T) {
		f.t = t
		tx := f.ok(patch(usdID, `"amount": {"amount": "-20.00", "currency": "USD"}`))
		if m := tx["amount"].(map[string]any); m["amount"] != "-20.00" || m["currency"] != "USD" {
			t.Fatalf("object amount: %v", tx["amount"])
		}
		tx = f.ok(patch(usdID, `"amount": "-21.00"`))
		if m := tx["amount"].(map[string]any); m["amount"] != "-21.00" {
			t.Fatalf("string amount: %v", tx["amount"])
		}
		// The object a read returns goes back as is, changing nothing.
		back := f.ok(patch(usdID, `"amount": `+jsonBody(tx["amount"])))
		if version(back) != version(tx) {
			t.Errorf("echoed amount bumped the version: %v", back)
		}
		eur := f.ok(patch(eurID, `"amount": {"amount": "-3.10", "currency": "EUR"}`))
		if m := eur["amount"].(map[string]any); m["amount"] != "-3.10" || m["currency"] != "EUR" {
			t.Fatalf("EUR object amount: %v", eur["amount"])
		}

		refusals := []struct {
			name, id, body string
			status         int
			typ            string
		}{
			{"object in another currency", usdID, `"amount": {"amount": "-20.00", "currency": "EUR"}`, 422, "field-immutable"},
			{"object in another currency, EUR row", eurID, `"amount": {"amount": "-3.10", "currency": "USD"}`, 422, "field-immutable"},
			{"suffix in another currency", usdID, `"amount": "-20.00 EUR"`, 422, "field-immutable"},
			{"object without currency", usdID, `"amount": {"amount": "-20.00"}`, 400, "invalid-input"},
			{"object without amount", usdID, `"amount": {"currency": "USD"}`, 400, "invalid-input"},
			{"object with a number", usdID, `"amount": {"amount": -20, "currency": "USD"}`, 400, "invalid-input"},
			{"object with an unknown member", usdID, `"amount": {"amount": "-20.00", "currency": "USD", "fx": "1"}`, 400, "invalid-input"},
			{"object with a bad decimal", usdID, `"amount": {"amount": "1e3", "currency": "USD"}`, 400, "invalid-input"},
			{"object with a suffixed amount", usdID, `"amount": {"amount": "-20.00 USD", "currency": "USD"}`, 400, "invalid-input"},
			{"object with a lower-case currency", usdID, `"amount": {"amount": "-20.00", "currency": "usd"}`, 400, "invalid-input"},
			{"object too precise", usdID, `"amount": {"amount": "-20.001", "currency": "USD"}`, 400, "invalid-input"},
			{"a number", usdID, `"amount": -20.5`, 400, "invalid-input"},
			{"an array", usdID, `"amount": ["-20.00"]`, 400, "invalid-input"},
		}
		for _, rc := range refusals {
			r := patch(rc.id, rc.body)
			if r.status != rc.status || r.json["type"] != rc.typ || r.json["field"] != "amount" {
				t.Errorf("%s: %d %s", rc.name, r.status, r.body)
			}
		}
	})

	t.Run("date bounds", func(t *testing.T) {
		f.t = t
		limit := st.Now().UTC().AddDate(1, 0, 0).Format("2006-01-02")
		for _, d := range []string{"1900-01-01", limit} {
			if tx := f.ok(patch(usdID, `"date": "`+d+`"`)); tx["date"] != d {
				t.Errorf("date %s: %v", d, tx["date"])
			}
		}
		for _, d := range []string{"1899-12-31", "0001-01-01", "9999-12-31", "2026-02-30"} {
			r := patch(usdID, `"date": "`+d+`"`)
			if r.status != 400 || r.json["type"] != "invalid-input" || r.json["field"] != "date" {
				t.Errorf("date %s: %d %s", d, r.status, r.body)
			}
		}
	})

	t.Run("a member of the wrong JSON type is named", func(t *testing.T) {
		f.t = t
		tests := []struct{ body, field string }{
			{`"location": 5`, "location"},
			{`"location": {"city": 5}`, "location.city"},
			{`"revert_to_provider": "amount"`, "revert_to_provider"},
			{`"merchant": ["x"]`, "merchant"},
			{`"clear_location": "yes"`, "clear_location"},
		}
		for _, tt := range tests {
			r := patch(usdID, tt.body)
			if r.status != 400 || r.json["type"] != "invalid-input" || r.json["field"] != tt.field {
				t.Errorf("%s: %d %s; want field %s", tt.body, r.status, r.body, tt.field)
			}
		}
		r := f.write("PATCH", "/v1/transactions/"+usdID, "finance-write", `{"expected_version": "abc"}`)
		if r.status != 400 || r.json["field"] != "expected_version" {
			t.Errorf("expected_version as a string: %d %s", r.status, r.body)
		}
	})

	t.Run("page_size 0 is refused, absent is the default", func(t *testing.T) {
		f.t = t
		c := f.call("GET", "/v1/transactions?page_size=0", "finance-read", "")
		if c.status != 400 || c.json["field"] != "page_size" {
			t.Errorf("page_size=0: %d %s", c.status, c.body)
		}
		r := f.call("GET", "/v1/transactions", "finance-read", "")
		if data, _ := r.json["data"].([]any); r.status != 200 || len(data) != 50 {
			t.Errorf("default page: %d, %d rows", r.status, len(data))
		}
	})
}
