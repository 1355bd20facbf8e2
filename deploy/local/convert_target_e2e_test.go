package local_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A full message version as the target means its type at that version; a
// target version that says otherwise is refused naming targetVersion.
func TestConvertToAFullMessageVersion(t *testing.T) {
	st := stack(t, false)
	keys := map[string]string{}
	for _, k := range st.Keys {
		keys[k.Name] = k.Key
	}
	c := client{t: t, base: st.URL, keys: keys}
	msg, err := os.ReadFile(filepath.Join("..", "..", "..", "shared", "samples", "mt", "php-mt940", "Ing_sample"))
	if err != nil {
		t.Skipf("shared samples not found beside the repository: %v", err)
	}
	for _, v := range []string{"camt.053.001.02", "camt.053.001.08"} {
		r := c.call("POST", "/v1/convert?to="+v, "conversion-live", string(msg), "Content-Type", "text/plain", "Accept", "application/xml")
		if r.status != 200 || !strings.Contains(string(r.body), "urn:iso:std:iso:20022:tech:xsd:"+v) {
			t.Fatalf("to=%s: %d %.300s", v, r.status, r.body)
		}
	}
	r := c.call("POST", "/v1/convert?to=camt.053.001.08&toVersion=camt.053.001.02", "conversion-live", string(msg), "Content-Type", "text/plain")
	r.wantProblem(t, 400, "invalid-input")
	if r.json["field"] != "targetVersion" {
		t.Fatalf("conflict names %v: %s", r.json["field"], r.body)
	}
}
