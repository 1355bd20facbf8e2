package local_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ledgerlane/platform/deploy/local"
)

// sharedSample reads a file of the shared samples (the shared folder sits
// beside the repository), skipping the test without it.
func sharedSample(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "shared", "samples", path))
	if err != nil {
		t.Skipf("shared sample %s not found beside the repository: %v", path, err)
	}
	return string(b)
}

// TestImportsEndToEnd imports statement files into the demo's accounts
// through the gateway (POST /v1/imports, parsed by the converter over
// gRPC) on both stores: a file adds its entries once, the same file again
// adds nothing, the rows list under source=import, and bad input is a 4xx
// naming its field.
func TestImportsEndToEnd(t *testing.T) {
	for _, withDB := range []bool{false, true} {
		name := "memory"
		if withDB {
			name = "postgres"
		}
		t.Run(name, func(t *testing.T) {
			importsEndToEnd(t, stack(t, withDB, func(c *local.Config) { c.SandboxInterval, c.DemoPlan = -1, "scale" }))
		})
	}
}

func importsEndToEnd(t *testing.T, st *local.Stack) {
	keys := map[string]string{}
	for _, k := range st.Keys {
		keys[k.Name] = k.Key
	}
	f := &fin{client: client{t: t, base: st.URL, keys: keys}}
	// 7 EUR entries of 2010-07-21/22: two of 2010-07-22 agree on amount, date
	// and (no) reference, and are kept apart by their ordinal.
	mt940 := sharedSample(t, "mt/php-mt940/Ing_sample")
	euro := st.Demo.AccountIDs.EuroChecking
	imported := func(t *testing.T) []any {
		t.Helper()
		r := f.call("GET", "/v1/transactions?source=import&account_id="+euro+"&start_date=2010-07-01&end_date=2010-07-31&page_size=50", "finance-write", "")
		if r.status != 200 {
			t.Fatalf("list: %d %s", r.status, r.body)
		}
		rows, _ := r.json["data"].([]any)
		return rows
	}
	count := func(d map[string]any, k string) int { n, _ := d[k].(float64); return int(n) }

	t.Run("MT940 twice adds once", func(t *testing.T) {
		f.t = t
		body := jsonBody(map[string]any{"account_id": euro, "message": mt940})
		d := f.ok(f.write("POST", "/v1/imports", "finance-write", body))
		if count(d, "added") != 7 || count(d, "matched") != 0 || count(d, "refused") != 0 || d["detected_type"] != "MT940" {
			t.Fatalf("first import: %v", d)
		}
		// A new Idempotency-Key: a second import, not a replay.
		d = f.ok(f.write("POST", "/v1/imports", "finance-write", body))
		if count(d, "added") != 0 || count(d, "matched") != 7 {
			t.Fatalf("second import: %v", d)
		}
		rows := imported(t)
		if len(rows) != 7 {
			t.Fatalf("%d imported rows, want 7", len(rows))
		}
		for _, r := range rows {
			tx := r.(map[string]any)
			amount := tx["amount"].(map[string]any)
			if tx["source"] != "import" || (tx["date"] != "2010-07-22" && tx["date"] != "2010-07-21") || amount["currency"] != "EUR" || tx["account_id"] != euro {
				t.Fatalf("imported row %v", tx)
			}
		}
	})

	t.Run("the same statement rendered as CSV matches", func(t *testing.T) {
		f.t = t
		// The converter's own CSV of the file: the same dates, signed
		// amounts and references, so the same keys.
		r := f.call("POST", "/v1/convert?to=csv", "conversion-live", mt940, "Content-Type", "text/plain", "Accept", "text/csv")
		if r.status != 200 {
			t.Fatalf("convert: %d %s", r.status, r.body)
		}
		body := jsonBody(map[string]any{"account_id": euro, "message": string(r.body), "from": "csv", "csv_mapping": map[string]any{
			"date": "booking_date", "amount": "amount", "currency_column": "currency", "reference": "reference", "description": "description"}})
		d := f.ok(f.write("POST", "/v1/imports", "finance-write", body))
		if count(d, "added") != 0 || count(d, "matched") != 7 || d["detected_type"] != "csv" {
			t.Fatalf("csv of the same statement: %v", d)
		}
	})

	t.Run("replayed key answers the first import", func(t *testing.T) {
		f.t = t
		body := jsonBody(map[string]any{"account_id": euro, "message": mt940, "from": "MT940"})
		hdr := []string{"Content-Type", "application/json", "Idempotency-Key", "e2e-import-replay"}
		first := f.call("POST", "/v1/imports", "finance-write", body, hdr...)
		again := f.call("POST", "/v1/imports", "finance-write", body, hdr...)
		if first.status != 200 || again.status != 200 || again.header.Get("Idempotency-Replayed") != "true" || string(first.body) != string(again.body) {
			t.Fatalf("replay: %d %d %q", first.status, again.status, again.header.Get("Idempotency-Replayed"))
		}
	})

	t.Run("camt.053", func(t *testing.T) {
		f.t = t
		body := jsonBody(map[string]any{"account_id": euro, "message": sharedSample(t, "mx/genkgo/camt053.v2.minimal.xml")})
		d := f.ok(f.write("POST", "/v1/imports", "finance-write", body))
		if d["detected_type"] != "camt.053" || count(d, "added") != 1 || count(d, "refused") != 0 {
			t.Fatalf("camt import: %v", d)
		}
		d = f.ok(f.write("POST", "/v1/imports", "finance-write", body))
		if count(d, "added") != 0 || count(d, "matched") != 1 {
			t.Fatalf("camt again: %v", d)
		}
	})

	t.Run("entries in another currency are refused row by row", func(t *testing.T) {
		f.t = t
		usd := st.Demo.AccountIDs.Checking
		d := f.ok(f.write("POST", "/v1/imports", "finance-write", jsonBody(map[string]any{"account_id": usd, "message": mt940})))
		if count(d, "added") != 0 || count(d, "matched") != 0 || count(d, "refused") != 7 {
			t.Fatalf("EUR file into a USD account: %v", d)
		}
		rows := d["rows"].([]any)
		if len(rows) != 7 {
			t.Fatalf("rows %v", rows)
		}
		for i, r := range rows {
			row := r.(map[string]any)
			if row["reason"] != "currency_mismatch" || count(row, "row") != i+1 || row["detail"] == "" {
				t.Fatalf("refused row %v", row)
			}
		}
		if rows[2].(map[string]any)["reference"] != "TMG TANGO" {
			t.Fatalf("the third entry's reference: %v", rows[2])
		}
	})

	t.Run("CSV with a column mapping", func(t *testing.T) {
		f.t = t
		file := "Datum;Betrag;Text;Referenz\n01.03.2024;-12,50;Bäckerei;K-1\n02.03.2024;1500,00;Gehalt;K-2\n"
		body := jsonBody(map[string]any{"account_id": euro, "message": file, "from": "csv", "csv_mapping": map[string]any{
			"date": "Datum", "amount": "Betrag", "description": "Text", "reference": "Referenz", "currency": "EUR",
			"date_format": "dmy", "decimal_separator": ",", "delimiter": ";"}})
		d := f.ok(f.write("POST", "/v1/imports", "finance-write", body))
		if count(d, "added") != 2 || d["detected_type"] != "csv" {
			t.Fatalf("csv import: %v", d)
		}
		d = f.ok(f.write("POST", "/v1/imports", "finance-write", body))
		if count(d, "added") != 0 || count(d, "matched") != 2 {
			t.Fatalf("csv again: %v", d)
		}
	})

	t.Run("QBO into the USD account", func(t *testing.T) {
		f.t = t
		body := jsonBody(map[string]any{"account_id": st.Demo.AccountIDs.Checking, "message": sharedSample(t, "ofx/ofxgo/busted_responses_wellsfargo.qfx")})
		d := f.ok(f.write("POST", "/v1/imports", "finance-write", body))
		if d["detected_type"] != "qbo" || count(d, "added") != 1 {
			t.Fatalf("qbo import: %v", d)
		}
		d = f.ok(f.write("POST", "/v1/imports", "finance-write", body))
		if count(d, "added") != 0 || count(d, "matched") != 1 {
			t.Fatalf("qbo again: %v", d)
		}
	})

	t.Run("an entry the bank already synced is matched, not added", func(t *testing.T) {
		f.t = t
		checking := st.Demo.AccountIDs.Checking
		r := f.call("GET", "/v1/transactions?source=bank_sync&pending=false&page_size=1&account_id="+checking, "finance-write", "")
		rows, _ := r.json["data"].([]any)
		if r.status != 200 || len(rows) != 1 {
			t.Fatalf("no bank row: %d %s", r.status, r.body)
		}
		bank := rows[0].(map[string]any)
		amount := bank["amount"].(map[string]any)["amount"].(string)
		file := "date,amount\n" + bank["date"].(string) + "," + amount + "\n"
		body := jsonBody(map[string]any{"account_id": checking, "message": file, "from": "csv",
			"csv_mapping": map[string]any{"date": "date", "amount": "amount", "currency": "USD"}})
		d := f.ok(f.write("POST", "/v1/imports", "finance-write", body))
		if count(d, "added") != 0 || count(d, "matched") != 1 {
			t.Fatalf("bank row import: %v", d)
		}
		// The claim is kept: the same file again is matched by its key.
		d = f.ok(f.write("POST", "/v1/imports", "finance-write", body))
		if count(d, "added") != 0 || count(d, "matched") != 1 {
			t.Fatalf("bank row again: %v", d)
		}
	})

	t.Run("refusals", func(t *testing.T) {
		f.t = t
		tests := []struct {
			name, key string
			body      map[string]any
			status    int
			typ       string
			field     string
		}{
			{"excluded account is like unknown", "finance-redacted", map[string]any{"account_id": st.Demo.ExcludedAccountID, "message": mt940}, 404, "not-found", "account_id"},
			{"unknown account", "finance-write", map[string]any{"account_id": "00000000-0000-4000-8000-000000000000", "message": mt940}, 404, "not-found", "account_id"},
			{"account not a uuid", "finance-write", map[string]any{"account_id": "checking", "message": mt940}, 400, "invalid-input", "account_id"},
			{"no message", "finance-write", map[string]any{"account_id": euro}, 400, "invalid-input", "message"},
			{"garbage file", "finance-write", map[string]any{"account_id": euro, "message": "%PDF-1.4 not a statement"}, 400, "invalid-input", "from"},
			{"broken MT940 names message", "finance-write", map[string]any{"account_id": euro, "message": ":20:X\n:25:1\n:28C:1\n:60F:C991399EUR1,00\n-"}, 400, "invalid-input", "message"},
			{"a file that holds no statement", "finance-write", map[string]any{"account_id": euro, "message": ":20:broken"}, 400, "invalid-input", "message"},
			{"unknown format", "finance-write", map[string]any{"account_id": euro, "message": mt940, "from": "pdf"}, 400, "invalid-input", "from"},
			{"csv without mapping", "finance-write", map[string]any{"account_id": euro, "message": "a,b\n", "from": "csv"}, 400, "invalid-input", "csv_mapping"},
			{"csv mapping names a missing column", "finance-write", map[string]any{"account_id": euro, "message": "a,b\n1,2\n", "from": "csv",
				"csv_mapping": map[string]any{"date": "Date", "amount": "b", "currency": "EUR"}}, 400, "invalid-input", "csv_mapping.date"},
			{"unknown member", "finance-write", map[string]any{"account_id": euro, "message": mt940, "colour": "red"}, 400, "invalid-input", ""},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				f.t = t
				r := f.write("POST", "/v1/imports", tt.key, jsonBody(tt.body))
				r.wantProblem(t, tt.status, tt.typ)
				if tt.field != "" && r.json["field"] != tt.field {
					t.Fatalf("field %v, want %s: %s", r.json["field"], tt.field, r.body)
				}
			})
		}
		f.t = t
		// A read-only credential lacks the scope; a write without a key is refused by the edge.
		f.write("POST", "/v1/imports", "finance-read", jsonBody(map[string]any{"account_id": euro, "message": mt940})).wantProblem(t, 403, "forbidden-scope")
		f.call("POST", "/v1/imports", "finance-write", jsonBody(map[string]any{"account_id": euro, "message": mt940}),
			"Content-Type", "application/json").wantProblem(t, 400, "invalid-input")
		// A body declared as not JSON, and a parameter the route does not
		// take, are refused naming them (docs/api.md).
		r := f.call("POST", "/v1/imports", "finance-write", jsonBody(map[string]any{"account_id": euro, "message": mt940}),
			"Content-Type", "text/plain", "Idempotency-Key", "e2e-import-text")
		r.wantProblem(t, 400, "invalid-input")
		if r.json["field"] != "Content-Type" {
			t.Fatalf("text/plain import: %s", r.body)
		}
		r = f.call("GET", "/v1/transactions?pagesize=3", "finance-write", "")
		r.wantProblem(t, 400, "invalid-input")
		if r.json["field"] != "pagesize" {
			t.Fatalf("unknown parameter: %s", r.body)
		}
		if n := len(imported(t)); n != 7 {
			t.Fatalf("%d imported rows after the refusals, want still 7", n)
		}
	})
}
