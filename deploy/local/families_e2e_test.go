package local_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMessageFamiliesEndToEnd (issue 29): the exceptions-and-investigations,
// cash-management and customer and interbank instruction (MT101 ⇄ pain.001,
// MT204 ⇄ pacs.010) families convert both ways through the gateway,
// synchronously and in a batch job, from the shared CBPR+ inputs: each MT
// input becomes its camt document (answered in its namespace, with the
// business application header), each camt input its MT, and a batch of them
// all completes with every item ok.
func TestMessageFamiliesEndToEnd(t *testing.T) {
	pairs := filepath.Join("..", "..", "..", "shared", "samples", "pairs")
	if _, err := os.Stat(pairs); err != nil {
		t.Skipf("shared samples not found beside the repository: %v", err)
	}
	read := func(dir, name string) string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(pairs, dir, name))
		if err != nil {
			t.Skipf("shared sample %s: %v", name, err)
		}
		return string(b)
	}
	toMX := []struct{ input, to, namespace string }{
		{"c_29_2_2__mt192_camt_056_A_D.input.fin", "camt.056", "camt.056.001.08"},
		{"c_56_4_1__mt296_camt_029_E_B.input.fin", "camt.029", "camt.029.001.09"},
		{"c_105_1_1__mt190_camt_105_B_A.input.fin", "camt.105", "camt.105.001.02"},
		{"c_106_3_1_b__mt191_camt_106_C_B.input.fin", "camt.106", "camt.106.001.02"},
		{"c_58_1_1__mt210_camt_057_A_B.input.fin", "camt.057", "camt.057.001.06"},
		{"c_60_1_1__mt920_camt_060_A_B.input.fin", "camt.060", "camt.060.001.05"},
		{"c_107_1_1__mt110_camt_107_A_B.input.fin", "camt.107", "camt.107.001.01"},
		{"c_108_1_1__mt111_camt_108_A_B.input.fin", "camt.108", "camt.108.001.01"},
		{"c_109_1_1__mt112_camt_109_A_B.input.fin", "camt.109", "camt.109.001.01"},
		{"pn_01_1_1__mt101_pain_001_A_B.input.fin", "pain.001", "pain.001.001.09"},
		{"pc_10_1_1__mt204_pacs_010_E_F.input.fin", "pacs.010", "pacs.010.001.03"},
	}
	toMT := []struct{ input, to, block2 string }{
		{"c_29_1_2__CBPR+_c.29.1.2_camt.056-AtoB.input.xml", "MT192", "{2:I192"},
		{"c_29_1_2__CBPR+_c.29.1.2_camt.029-BtoA.input.xml", "MT196", "{2:I196"},
		{"c_58_1_1__CBPR+_c.58.1.1_camt.057-CdtrtoC.input.xml", "MT210", "{2:I210"},
		{"c_108_1_2__CBPR+_c.108.1.2_camt.108-AtoB.input.xml", "MT111", "{2:I111"},
		// cbpr_mx_to_mt has no pain.001 or pacs.010 input: the expected
		// documents of the MT101 and MT204 pairs are the MX sources.
		{"../cbpr_mt_to_mx/pn_01_1_1__mt101_pain_001_A_B.expected.xml", "MT101", "{2:I101"},
		{"../cbpr_mt_to_mx/pc_10_1_1__mt204_pacs_010_C_D.expected.xml", "MT204", "{2:I204"},
	}
	st := stack(t, false)
	keys := map[string]string{}
	for _, k := range st.Keys {
		keys[k.Name] = k.Key
	}
	c := client{t: t, base: st.URL, keys: keys}

	type item struct {
		Message string `json:"message"`
	}
	var batch []item
	var batchTo string
	for _, tc := range toMX {
		in := read("cbpr_mt_to_mx", tc.input)
		r := c.call("POST", "/v1/convert?to="+tc.to, "conversion-live", in, "Content-Type", "application/x-swift-mt", "Accept", "application/xml")
		body := string(r.body)
		if r.status != 200 || !strings.Contains(body, `xmlns="urn:iso:std:iso:20022:tech:xsd:`+tc.namespace+`"`) ||
			!strings.Contains(body, "urn:iso:std:iso:20022:tech:xsd:head.001.001.02") {
			t.Errorf("%s → %s: %d %s", tc.input, tc.to, r.status, truncate(body, 600))
		}
		if tc.to == "camt.056" {
			batch, batchTo = append(batch, item{in}), tc.to
		}
	}
	for _, tc := range toMT {
		in := read("cbpr_mx_to_mt", tc.input)
		r := c.call("POST", "/v1/convert?to="+tc.to, "conversion-live", in, "Content-Type", "application/xml", "Accept", "text/plain")
		if body := string(r.body); r.status != 200 || !strings.Contains(body, tc.block2) {
			t.Errorf("%s → %s: %d %s", tc.input, tc.to, r.status, truncate(body, 600))
		}
	}
	// An MT101 of two transactions converts to pain.001; back to MT101 it is
	// written (FIN's one-transaction rule is a warning) and strict refuses it.
	in101 := read("cbpr_mt_to_mx", "pn_01_1_1__mt101_pain_001_A_B.input.fin")
	i, j := strings.Index(in101, ":21:REF501"), strings.LastIndex(in101, "-}")
	two := in101[:j] + strings.Replace(in101[i:j], "REF501", "REF502", 1) + in101[j:]
	r := c.call("POST", "/v1/convert?to=pain.001", "conversion-live", two, "Content-Type", "application/x-swift-mt", "Accept", "application/xml")
	if r.status != 200 || strings.Count(string(r.body), "<CdtTrfTxInf>") != 2 {
		t.Fatalf("MT101 of two transactions → pain.001: %d %s", r.status, truncate(string(r.body), 600))
	}
	pain := string(r.body)
	if r = c.call("POST", "/v1/convert?to=MT101", "conversion-live", pain, "Content-Type", "application/xml", "Accept", "text/plain"); r.status != 200 || strings.Count(string(r.body), ":21:REF50") != 2 {
		t.Errorf("pain.001 of two transactions → MT101: %d %s", r.status, truncate(string(r.body), 600))
	}
	env, _ := json.Marshal(map[string]any{"message": pain, "to": "MT101", "options": map[string]any{"strict": true}})
	c.call("POST", "/v1/convert", "conversion-live", string(env), "Content-Type", "application/json").wantProblem(t, 422, "unprocessable")
	// MT104 is refused by name, with the reason.
	mt104 := strings.Replace(strings.Replace(in101, "O101", "O104", 1), ":28D:1/1\n", "", 1)
	if r = c.call("POST", "/v1/convert?to=pain.001", "conversion-live", mt104, "Content-Type", "application/x-swift-mt"); r.status != 400 || !strings.Contains(string(r.body), "direct debit") {
		t.Errorf("MT104: %d %s", r.status, truncate(string(r.body), 600))
	}
	f := c.call("GET", "/v1/formats", "conversion-live", "")
	listed := map[string]bool{}
	for _, x := range f.json["formats"].([]any) {
		m := x.(map[string]any)
		listed[fmt.Sprint(m["from"], ">", m["to"])] = true
	}
	for _, pair := range []string{"MT101>pain.001", "pain.001>MT101", "MT204>pacs.010", "pacs.010>MT204"} {
		if !listed[pair] {
			t.Errorf("GET /v1/formats lacks %s", pair)
		}
	}

	// The MT192 inputs as a batch of three, and the MT101 as a batch of two.
	runBatch := func(to string, items []item, want string) {
		t.Helper()
		b, _ := json.Marshal(map[string]any{"to": to, "items": items})
		r := c.call("POST", "/v1/convert/batch", "conversion-live", string(b))
		id, _ := r.json["id"].(string)
		if r.status != 202 || id == "" {
			t.Fatalf("batch: %d %s", r.status, r.body)
		}
		deadline := time.Now().Add(30 * time.Second)
		for {
			r = c.call("GET", "/v1/jobs/"+id, "conversion-live", "")
			if r.json["status"] == "completed" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the batch did not complete: %s", r.body)
			}
			time.Sleep(50 * time.Millisecond)
		}
		if fmt.Sprint(r.json["succeeded_count"]) != fmt.Sprint(len(items)) || !strings.Contains(string(r.body), want) {
			t.Fatalf("batch job to %s: %s", to, truncate(string(r.body), 800))
		}
	}
	runBatch(batchTo, append(batch, batch[0], batch[0]), "camt.056.001.08")
	mt101 := item{read("cbpr_mt_to_mx", "pn_01_1_1__mt101_pain_001_A_B.input.fin")}
	runBatch("pain.001", []item{mt101, mt101}, "pain.001.001.09")
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
