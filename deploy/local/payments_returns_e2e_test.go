package local_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Returns through the gateway: MT103 with /RETN/ → pacs.004 (bare),
// pacs.004 → MT202 (JSON) with truncation evidence, strict, validation,
// the pairs in GET /v1/formats, and a return refused as a pacs.008.
func TestPaymentsReturnEndToEnd(t *testing.T) {
	pairs := filepath.Join("..", "..", "..", "shared", "samples", "pairs")
	mt103, err := os.ReadFile(filepath.Join(pairs, "cbpr_mt_to_mx", "p_2_1_2__mt103_pacs_004_B_A.input.fin"))
	if err != nil {
		t.Skipf("shared samples not found beside the repository: %v", err)
	}
	pacs004, err := os.ReadFile(filepath.Join(pairs, "cbpr_mx_to_mt", "p_2_3_1_a__CBPR+_p.2.3.1.a_pacs.004-BtoA.input.xml"))
	if err != nil {
		t.Skipf("shared samples not found beside the repository: %v", err)
	}
	st := stack(t, false)
	keys := map[string]string{}
	for _, k := range st.Keys {
		keys[k.Name] = k.Key
	}
	c := client{t: t, base: st.URL, keys: keys}

	// MT103 /RETN/ → pacs.004.001.09, the bare document with its AppHdr.
	r := c.call("POST", "/v1/convert?to=pacs.004", "conversion-live", string(mt103), "Content-Type", "application/x-swift-mt", "Accept", "application/xml")
	body := string(r.body)
	for _, want := range []string{`<AppHdr xmlns="urn:iso:std:iso:20022:tech:xsd:head.001.001.02">`, "<MsgDefIdr>pacs.004.001.09</MsgDefIdr>",
		`<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pacs.004.001.09">`, "<RtrId>P4B2A-006</RtrId>",
		"<OrgnlInstrId>A2B0506272708</OrgnlInstrId>", "<OrgnlEndToEndId>E2E040445062713+</OrgnlEndToEndId>",
		"<OrgnlUETR>174c245f-2682-4291-ad67-2a41e530cd27</OrgnlUETR>", `<RtrdIntrBkSttlmAmt Ccy="USD">136480</RtrdIntrBkSttlmAmt>`,
		"<IntrBkSttlmDt>2021-05-11</IntrBkSttlmDt>", "<ChrgBr>SHAR</ChrgBr>", "<AnyBIC>ANBTUS44XXX</AnyBIC>", "<TwnNm>Cambridge</TwnNm>",
		"<Cd>AC04</Cd>"} {
		if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "application/xml") || !strings.Contains(body, want) {
			t.Fatalf("MT103 /RETN/ → pacs.004 lacks %s: %d %v %s", want, r.status, r.header, r.body)
		}
	}

	// pacs.004 (.001.13, read with the .001.09 paths) → MT202, JSON.
	env, _ := json.Marshal(map[string]any{"message": string(pacs004), "to": "MT202"})
	r = c.call("POST", "/v1/convert", "conversion-live", string(env), "Content-Type", "application/json")
	meta, _ := r.json["meta"].(map[string]any)
	res, _ := r.json["result"].(string)
	if r.status != 200 || meta["detectedType"] != "pacs.004" || meta["targetType"] != "MT202" ||
		!strings.Contains(res, "{2:I202CLYDGB2SXXXXN}") || !strings.Contains(res, ":32A:221020EUR65784,32\r\n") ||
		!strings.Contains(res, ":72:/RETN/99\r\n/AC04/\r\n/MREF/pacs9bizmsgidr01\r\n/TREF/pacs008EndToEnd+\r\n") ||
		!strings.Contains(res, ":58A:CLYDGB2S") || !strings.Contains(string(r.body), "PAY_TRUNCATED") ||
		!strings.Contains(string(r.body), "PAY_VERSION_UNTESTED") {
		t.Fatalf("pacs.004 → MT202: %d %s", r.status, r.body)
	}

	// strict refuses it: the cut end-to-end reference is a loss.
	env, _ = json.Marshal(map[string]any{"message": string(pacs004), "to": "MT202", "options": map[string]any{"strict": true}})
	c.call("POST", "/v1/convert", "conversion-live", string(env), "Content-Type", "application/json").wantProblem(t, 422, "unprocessable")

	// A return is no pacs.008, and a version we do not write is refused.
	c.call("POST", "/v1/convert?to=pacs.008", "conversion-live", string(mt103), "Content-Type", "application/x-swift-mt").wantProblem(t, 400, "invalid-input")
	c.call("POST", "/v1/convert?to=pacs.004.001.13", "conversion-live", string(mt103), "Content-Type", "application/x-swift-mt").wantProblem(t, 400, "invalid-input")

	// Validation reads a return as its MT type; a pacs.004 is detected.
	env, _ = json.Marshal(map[string]any{"message": string(mt103)})
	v := c.call("POST", "/v1/validate", "conversion-live", string(env), "Content-Type", "application/json")
	if v.status != 200 || v.json["valid"] != true || v.json["detected_type"] != "MT103" {
		t.Fatalf("validate MT103 /RETN/: %d %s", v.status, v.body)
	}
	env, _ = json.Marshal(map[string]any{"message": string(pacs004)})
	v = c.call("POST", "/v1/validate", "conversion-live", string(env), "Content-Type", "application/json")
	if v.status != 200 || v.json["valid"] != true || v.json["detected_type"] != "pacs.004" {
		t.Fatalf("validate pacs.004: %d %s", v.status, v.body)
	}

	f := c.call("GET", "/v1/formats", "conversion-live", "")
	want := map[string]bool{"MT103>pacs.004": true, "MT202>pacs.004": true, "MT205>pacs.004": true,
		"pacs.004>MT103": true, "pacs.004>MT202": true, "pacs.004>MT205": true}
	for _, x := range f.json["formats"].([]any) {
		m := x.(map[string]any)
		delete(want, m["from"].(string)+">"+m["to"].(string))
	}
	if f.status != 200 || len(want) != 0 {
		t.Fatalf("formats lack %v: %s", want, f.body)
	}
}
