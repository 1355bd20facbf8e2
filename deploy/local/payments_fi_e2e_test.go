package local_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Financial institution transfers through the gateway: MT202COV → pacs.009
// (bare), pacs.009 → MT202 (JSON), the MT202/205 (COV) ⇄ pacs.009 pairs in
// GET /v1/formats, strict, and validation of the MT202 network rules.
func TestPaymentsInstitutionEndToEnd(t *testing.T) {
	pairs := filepath.Join("..", "..", "..", "shared", "samples", "pairs")
	mt202cov, err := os.ReadFile(filepath.Join(pairs, "cbpr_mt_to_mx", "c_29_2_2__mt202_pacs_009COV_A_B.input.fin"))
	if err != nil {
		t.Skipf("shared samples not found beside the repository: %v", err)
	}
	pacs009, err := os.ReadFile(filepath.Join(pairs, "cbpr_mx_to_mt", "p_2_2_1__CBPR+_p.2.2.1_pacs.009-CtoD.input.xml"))
	if err != nil {
		t.Skipf("shared samples not found beside the repository: %v", err)
	}
	st := stack(t, false)
	keys := map[string]string{}
	for _, k := range st.Keys {
		keys[k.Name] = k.Key
	}
	c := client{t: t, base: st.URL, keys: keys}

	// MT202COV → pacs.009 COV, the bare document.
	r := c.call("POST", "/v1/convert?to=pacs.009", "conversion-live", string(mt202cov), "Content-Type", "application/x-swift-mt", "Accept", "application/xml")
	body := string(r.body)
	for _, want := range []string{`<AppHdr xmlns="urn:iso:std:iso:20022:tech:xsd:head.001.001.02">`, "<BizSvc>swift.cbprplus.cov.02</BizSvc>",
		`<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pacs.009.001.08">`, "<UETR>174c245f-2682-4291-ad67-2a41e530cd27</UETR>",
		`<IntrBkSttlmAmt Ccy="RON">26546464</IntrBkSttlmAmt>`, "<UndrlygCstmrCdtTrf>", "<Nm>Ardent Finance</Nm>"} {
		if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "application/xml") || !strings.Contains(body, want) {
			t.Fatalf("MT202COV → pacs.009 lacks %s: %d %v %s", want, r.status, r.header, r.body)
		}
	}

	// pacs.009 → MT202 in the JSON envelope, with its meta and the cut
	// EndToEndId marked with '+' and reported.
	env, _ := json.Marshal(map[string]any{"message": string(pacs009), "to": "MT202"})
	r = c.call("POST", "/v1/convert", "conversion-live", string(env), "Content-Type", "application/json")
	meta, _ := r.json["meta"].(map[string]any)
	res, _ := r.json["result"].(string)
	if r.status != 200 || meta["detectedType"] != "pacs.009" || meta["detectedVersion"] != "pacs.009.001.11" || meta["targetType"] != "MT202" ||
		!strings.Contains(res, "{2:I202HELSFIHHXXXXN}") || !strings.Contains(res, ":32A:200803EUR654489,98\r\n") ||
		!strings.Contains(res, ":21:pacs009EndToEnd+\r\n") || !strings.Contains(res, ":58A:EVSEFIHHXXX\r\n") ||
		!strings.Contains(string(r.body), "PAY_TRUNCATED") {
		t.Fatalf("pacs.009 → MT202: %d %s", r.status, r.body)
	}

	// strict refuses it: the cut reference is a loss.
	env, _ = json.Marshal(map[string]any{"message": string(pacs009), "to": "MT202", "options": map[string]any{"strict": true}})
	c.call("POST", "/v1/convert", "conversion-live", string(env), "Content-Type", "application/json").wantProblem(t, 422, "unprocessable")

	// A financial institution transfer is no pacs.008.
	c.call("POST", "/v1/convert?to=pacs.008", "conversion-live", string(mt202cov), "Content-Type", "application/x-swift-mt").wantProblem(t, 400, "invalid-input")

	// The pairs are listed by GET /v1/formats.
	f := c.call("GET", "/v1/formats", "conversion-live", "")
	want := map[string]bool{"MT202>pacs.009": true, "MT202COV>pacs.009": true, "MT205>pacs.009": true, "MT205COV>pacs.009": true,
		"pacs.009>MT202": true, "pacs.009>MT202COV": true, "pacs.009>MT205": true, "pacs.009>MT205COV": true}
	for _, x := range f.json["formats"].([]any) {
		m := x.(map[string]any)
		delete(want, m["from"].(string)+">"+m["to"].(string))
	}
	if f.status != 200 || len(want) != 0 {
		t.Fatalf("formats lack %v: %s", want, f.body)
	}

	// Validate names a broken network rule (C81: 56a without 57a) as an error.
	bad := strings.Replace(string(mt202cov), ":57A:RZBRROBUXXX", ":56A:RZBRROBUXXX", 1)
	env, _ = json.Marshal(map[string]any{"message": bad})
	v := c.call("POST", "/v1/validate", "conversion-live", string(env), "Content-Type", "application/json")
	errs, _ := v.json["errors"].([]any)
	if v.status != 200 || v.json["valid"] != false || v.json["detected_type"] != "MT202COV" || len(errs) != 1 ||
		errs[0].(map[string]any)["code"] != "PAY_RULE_C81" {
		t.Fatalf("validate: %d %s", v.status, v.body)
	}
}

// Confirmations through the gateway: MT910 → camt.054 (bare), camt.054 →
// MT900 (JSON), the pairs in GET /v1/formats, a debit refused as MT910, and
// validation of MT910's rule C06.
func TestPaymentsConfirmationEndToEnd(t *testing.T) {
	pairs := filepath.Join("..", "..", "..", "shared", "samples", "pairs")
	mt910, err := os.ReadFile(filepath.Join(pairs, "cbpr_mt_to_mx", "c_54_1_1__mt910_camt_054_C_D.input.fin"))
	if err != nil {
		t.Skipf("shared samples not found beside the repository: %v", err)
	}
	camt054, err := os.ReadFile(filepath.Join(pairs, "cbpr_mx_to_mt", "c_54_3_1__CBPR+_c.54.3.1_camt.054-BtoA.input.xml"))
	if err != nil {
		t.Skipf("shared samples not found beside the repository: %v", err)
	}
	st := stack(t, false)
	keys := map[string]string{}
	for _, k := range st.Keys {
		keys[k.Name] = k.Key
	}
	c := client{t: t, base: st.URL, keys: keys}

	r := c.call("POST", "/v1/convert?to=camt.054", "conversion-live", string(mt910), "Content-Type", "application/x-swift-mt", "Accept", "application/xml")
	for _, want := range []string{`<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.054.001.08">`, "<CdtDbtInd>CRDT</CdtDbtInd>",
		`<Amt Ccy="USD">500000</Amt>`, "<DtTm>2014-01-23T14:26:00+01:00</DtTm>", "<InstrId>494936/DEV</InstrId>"} {
		if r.status != 200 || !strings.Contains(string(r.body), want) {
			t.Fatalf("MT910 → camt.054 lacks %s: %d %s", want, r.status, r.body)
		}
	}

	env, _ := json.Marshal(map[string]any{"message": string(camt054), "to": "MT900"})
	r = c.call("POST", "/v1/convert", "conversion-live", string(env), "Content-Type", "application/json")
	meta, _ := r.json["meta"].(map[string]any)
	res, _ := r.json["result"].(string)
	if r.status != 200 || meta["detectedType"] != "camt.054" || meta["targetType"] != "MT900" ||
		!strings.Contains(res, "{2:I900SCBLSG22XXXXN}") || !strings.Contains(res, ":21:pacs9bizmsgidr01\r\n") ||
		!strings.Contains(res, ":25:AWA15457\r\n") || !strings.Contains(res, ":32A:200806JPY165486600,\r\n") {
		t.Fatalf("camt.054 → MT900: %d %s", r.status, r.body)
	}
	env, _ = json.Marshal(map[string]any{"message": string(camt054), "to": "MT910"})
	c.call("POST", "/v1/convert", "conversion-live", string(env), "Content-Type", "application/json").wantProblem(t, 400, "invalid-input")

	f := c.call("GET", "/v1/formats", "conversion-live", "")
	want := map[string]bool{"MT900>camt.054": true, "MT910>camt.054": true, "camt.054>MT900": true, "camt.054>MT910": true}
	for _, x := range f.json["formats"].([]any) {
		m := x.(map[string]any)
		delete(want, m["from"].(string)+">"+m["to"].(string))
	}
	if f.status != 200 || len(want) != 0 {
		t.Fatalf("formats lack %v: %s", want, f.body)
	}

	bad := strings.Replace(string(mt910), ":52A:BKAUATWW", ":56D:NOBODY", 1)
	bad = strings.Replace(bad, ":56A:BKTRUS33", "", 1)
	env, _ = json.Marshal(map[string]any{"message": bad})
	v := c.call("POST", "/v1/validate", "conversion-live", string(env), "Content-Type", "application/json")
	errs, _ := v.json["errors"].([]any)
	if v.status != 200 || v.json["valid"] != false || v.json["detected_type"] != "MT910" || len(errs) != 1 ||
		errs[0].(map[string]any)["code"] != "PAY_RULE_C06" {
		t.Fatalf("validate: %d %s", v.status, v.body)
	}
}

// Rejects through the gateway: MT199 (/REJT/) → pacs.002, pacs.002 → MT199,
// the pairs in GET /v1/formats, and a free-format MT199 refused.
func TestPaymentsStatusEndToEnd(t *testing.T) {
	pairs := filepath.Join("..", "..", "..", "shared", "samples", "pairs")
	mt199, err := os.ReadFile(filepath.Join(pairs, "cbpr_mt_to_mx", "p_3_1_2__mt199_pacs_002_B_A.input.fin"))
	if err != nil {
		t.Skipf("shared samples not found beside the repository: %v", err)
	}
	pacs002, err := os.ReadFile(filepath.Join(pairs, "cbpr_mx_to_mt", "p_2_3_1_b__CBPR+_p.2.3.1.b_pacs.002_DtoA.input.xml"))
	if err != nil {
		t.Skipf("shared samples not found beside the repository: %v", err)
	}
	st := stack(t, false)
	keys := map[string]string{}
	for _, k := range st.Keys {
		keys[k.Name] = k.Key
	}
	c := client{t: t, base: st.URL, keys: keys}

	r := c.call("POST", "/v1/convert?to=pacs.002", "conversion-live", string(mt199), "Content-Type", "application/x-swift-mt", "Accept", "application/xml")
	for _, want := range []string{`<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pacs.002.001.10">`, "<TxSts>RJCT</TxSts>",
		"<Cd>XT99</Cd>", "<AddtlInf>AC05</AddtlInf>", "<OrgnlUETR>7a562c67-ca16-48ba-b074-65581be6f001</OrgnlUETR>"} {
		if r.status != 200 || !strings.Contains(string(r.body), want) {
			t.Fatalf("MT199 → pacs.002 lacks %s: %d %s", want, r.status, r.body)
		}
	}

	env, _ := json.Marshal(map[string]any{"message": string(pacs002), "to": "MT199"})
	r = c.call("POST", "/v1/convert", "conversion-live", string(env), "Content-Type", "application/json")
	meta, _ := r.json["meta"].(map[string]any)
	res, _ := r.json["result"].(string)
	if r.status != 200 || meta["detectedType"] != "pacs.002" || meta["targetType"] != "MT199" ||
		!strings.Contains(res, "{2:I199CLYDGB2SXXXXN}") || !strings.Contains(res, ":79:/REJT/99\r\n/AC04/\r\n/MREF/pcs008bzmsgidr-1\r\n") {
		t.Fatalf("pacs.002 → MT199: %d %s", r.status, r.body)
	}

	f := c.call("GET", "/v1/formats", "conversion-live", "")
	want := map[string]bool{"MT199>pacs.002": true, "MT299>pacs.002": true, "pacs.002>MT199": true, "pacs.002>MT299": true}
	for _, x := range f.json["formats"].([]any) {
		m := x.(map[string]any)
		delete(want, m["from"].(string)+">"+m["to"].(string))
	}
	if f.status != 200 || len(want) != 0 {
		t.Fatalf("formats lack %v: %s", want, f.body)
	}

	free := strings.Replace(string(mt199), "/REJT/99", "PLEASE CALL US", 1)
	c.call("POST", "/v1/convert?to=pacs.002", "conversion-live", free, "Content-Type", "application/x-swift-mt").wantProblem(t, 400, "invalid-input")
}
