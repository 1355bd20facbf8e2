package local_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Payments through the gateway: MT103 → pacs.008 (bare and JSON), pacs.008 →
// MT103, the pair in GET /v1/formats, and validation of the MT103 network
// rules.
func TestPaymentsEndToEnd(t *testing.T) {
	pairs := filepath.Join("..", "..", "..", "shared", "samples", "pairs")
	mt103, err := os.ReadFile(filepath.Join(pairs, "cbpr_mt_to_mx", "c_53_5__mt103_pacs008_A_B.input.fin"))
	if err != nil {
		t.Skipf("shared samples not found beside the repository: %v", err)
	}
	pacs008, err := os.ReadFile(filepath.Join(pairs, "cbpr_mx_to_mt", "p_2_1_1__CBPR+_p.2.1.1_pacs.008-AtoB.input.xml"))
	if err != nil {
		t.Skipf("shared samples not found beside the repository: %v", err)
	}
	st := stack(t, false)
	keys := map[string]string{}
	for _, k := range st.Keys {
		keys[k.Name] = k.Key
	}
	c := client{t: t, base: st.URL, keys: keys}

	// MT103 → pacs.008, the bare document.
	r := c.call("POST", "/v1/convert?to=pacs.008", "conversion-live", string(mt103), "Content-Type", "application/x-swift-mt", "Accept", "application/xml")
	body := string(r.body)
	if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "application/xml") ||
		!strings.Contains(body, `<AppHdr xmlns="urn:iso:std:iso:20022:tech:xsd:head.001.001.02">`) ||
		!strings.Contains(body, `<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pacs.008.001.08">`) ||
		!strings.Contains(body, "<UETR>174c245f-2682-4291-ad67-2a41e530cd27</UETR>") ||
		!strings.Contains(body, `<IntrBkSttlmAmt Ccy="SGD">500000</IntrBkSttlmAmt>`) {
		t.Fatalf("MT103 → pacs.008: %d %v %s", r.status, r.header, r.body)
	}

	// pacs.008 → MT103 in the JSON envelope, with its meta.
	env, _ := json.Marshal(map[string]any{"message": string(pacs008), "to": "MT103"})
	r = c.call("POST", "/v1/convert", "conversion-live", string(env), "Content-Type", "application/json")
	meta, _ := r.json["meta"].(map[string]any)
	res, _ := r.json["result"].(string)
	if r.status != 200 || meta["detectedType"] != "pacs.008" || meta["detectedVersion"] != "pacs.008.001.12" || meta["targetType"] != "MT103" ||
		!strings.Contains(res, "{2:I103ABNANL2AXXXXN}") || !strings.Contains(res, ":32A:210409EUR15669,38\r\n") ||
		!strings.Contains(res, "{121:8a562c67-ca16-48ba-b074-65581be6f001}") {
		t.Fatalf("pacs.008 → MT103: %d %s", r.status, r.body)
	}

	// strict refuses a conversion that loses something (the street becomes
	// an address line is not a loss; a cut name is).
	long := strings.Replace(string(pacs008), "<Nm>C Consumer</Nm>", "<Nm>"+strings.Repeat("Consumer ", 12)+"</Nm>", 1)
	env, _ = json.Marshal(map[string]any{"message": long, "to": "MT103", "options": map[string]any{"strict": true}})
	c.call("POST", "/v1/convert", "conversion-live", string(env), "Content-Type", "application/json").wantProblem(t, 422, "unprocessable")

	// The pairs are listed by GET /v1/formats.
	f := c.call("GET", "/v1/formats", "conversion-live", "")
	found := 0
	for _, x := range f.json["formats"].([]any) {
		m := x.(map[string]any)
		if m["from"] == "MT103" && m["to"] == "pacs.008" || m["from"] == "pacs.008" && m["to"] == "MT103" {
			found++
		}
	}
	if f.status != 200 || found != 2 {
		t.Fatalf("formats lack the MT103 ⇄ pacs.008 pairs: %s", f.body)
	}

	// Validate names a broken network rule (E13: 71F with OUR) as an error.
	bad := strings.Replace(string(mt103), ":71A:OUR", ":71A:OUR\n:71F:SGD10,", 1)
	env, _ = json.Marshal(map[string]any{"message": bad})
	v := c.call("POST", "/v1/validate", "conversion-live", string(env), "Content-Type", "application/json")
	errs, _ := v.json["errors"].([]any)
	if v.status != 200 || v.json["valid"] != false || v.json["detected_type"] != "MT103" || len(errs) != 1 ||
		errs[0].(map[string]any)["code"] != "PAY_RULE_E13" {
		t.Fatalf("validate: %d %s", v.status, v.body)
	}
}
