package local_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPaymentsStatusMoreEndToEnd runs issue 15's later conversions through
// the gateway: a gpi status confirmation (MT199, ACSP) ⇄ pacs.002, an
// MT103 reject (/REJT/ in :72:) → pacs.002 → MT103, an MT200 → pacs.009,
// and an MT940 with FIN blocks → camt.053 in the SWIFT envelope with its
// AppHdr; the formats list the new pairs.
func TestPaymentsStatusMoreEndToEnd(t *testing.T) {
	pairs := filepath.Join("..", "..", "..", "shared", "samples", "pairs", "cbpr_mt_to_mx")
	mt200, err := os.ReadFile(filepath.Join(pairs, "pc_09_1_1__mt200_pacs_009_A_B.input.fin"))
	if err != nil {
		t.Skipf("shared samples not found beside the repository: %v", err)
	}
	mt940, err := os.ReadFile(filepath.Join(pairs, "c_53_1_1__mt940_camt_053_B_D.input.fin"))
	if err != nil {
		t.Skipf("shared samples not found beside the repository: %v", err)
	}
	st := stack(t, false)
	keys := map[string]string{}
	for _, k := range st.Keys {
		keys[k.Name] = k.Key
	}
	c := client{t: t, base: st.URL, keys: keys}
	const uetr = "174c245f-2682-4291-ad67-2a41e530cd27"

	gpi := "{1:F01CHASGB2LXXXX0000000000}{2:I199TRCKCHZZXXXXN}{3:{121:" + uetr + "}}{4:\r\n:20:STATUS-1\r\n:21:P4B2A-006\r\n" +
		":79://2105111203+0200\r\n//ACSP/G000\r\n-}"
	r := c.call("POST", "/v1/convert?to=pacs.002", "conversion-live", gpi, "Content-Type", "application/x-swift-mt", "Accept", "application/xml")
	for _, want := range []string{"<TxSts>ACSP</TxSts>", "<Cd>G000</Cd>", "<AccptncDtTm>2021-05-11T12:03:00+02:00</AccptncDtTm>", "<OrgnlUETR>" + uetr + "</OrgnlUETR>"} {
		if r.status != 200 || !strings.Contains(string(r.body), want) {
			t.Fatalf("gpi MT199 → pacs.002 lacks %s: %d %s", want, r.status, r.body)
		}
	}
	back := c.call("POST", "/v1/convert?to=MT199", "conversion-live", string(r.body), "Content-Type", "application/xml", "Accept", "text/plain")
	if back.status != 200 || !strings.Contains(string(back.body), ":79://2105111203+0200\r\n//ACSP/G000\r\n-}") {
		t.Fatalf("pacs.002 ACSP → MT199: %d %s", back.status, back.body)
	}

	reject := "{1:F01CHASGB2LXXXX0000000000}{2:I103CHASUS33XXXXN}{3:{121:" + uetr + "}}{4:\r\n:20:REJ-1\r\n:23B:CRED\r\n" +
		":32A:210511USD136480,\r\n:50A:ANBTUS44XXX\r\n:59:GB ENGINEERING\r\n:71A:SHA\r\n:72:/REJT/99\r\n/AC04/\r\n/MREF/A2B0506272708\r\n-}"
	r = c.call("POST", "/v1/convert?to=pacs.002", "conversion-live", reject, "Content-Type", "application/x-swift-mt", "Accept", "application/xml")
	for _, want := range []string{"<TxSts>RJCT</TxSts>", "<OrgnlMsgNmId>MT103</OrgnlMsgNmId>", `<IntrBkSttlmAmt Ccy="USD">136480</IntrBkSttlmAmt>`} {
		if r.status != 200 || !strings.Contains(string(r.body), want) {
			t.Fatalf("MT103 /REJT/ → pacs.002 lacks %s: %d %s", want, r.status, r.body)
		}
	}
	back = c.call("POST", "/v1/convert?to=MT103", "conversion-live", string(r.body), "Content-Type", "application/xml", "Accept", "text/plain")
	if back.status != 200 || !strings.Contains(string(back.body), ":72:/REJT/99\r\n/AC04/\r\n/MREF/A2B0506272708") {
		t.Fatalf("pacs.002 → MT103 reject: %d %s", back.status, back.body)
	}

	r = c.call("POST", "/v1/convert?to=pacs.009", "conversion-live", string(mt200), "Content-Type", "application/x-swift-mt", "Accept", "application/xml")
	if r.status != 200 || !strings.Contains(string(r.body), "<CdtrAgt>") || !strings.Contains(string(r.body), "<EndToEndId>NOTPROVIDED</EndToEndId>") {
		t.Fatalf("MT200 → pacs.009: %d %s", r.status, r.body)
	}

	r = c.call("POST", "/v1/convert?to=camt.053", "conversion-live", string(mt940), "Content-Type", "application/x-swift-mt", "Accept", "application/xml")
	for _, want := range []string{`<Envelope xmlns="urn:swift:xsd:envelope">`, "<BizMsgIdr>Stmnt-100-01</BizMsgIdr>", "<MsgDefIdr>camt.053.001.08</MsgDefIdr>",
		`<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.08">`} {
		if r.status != 200 || !strings.Contains(string(r.body), want) {
			t.Fatalf("MT940 → camt.053 lacks %s: %d %s", want, r.status, r.body)
		}
	}

	f := c.call("GET", "/v1/formats", "conversion-live", "")
	want := map[string]bool{"MT103>pacs.002": true, "pacs.002>MT103": true, "MT202>pacs.002": true, "MT200>pacs.009": true}
	for _, x := range f.json["formats"].([]any) {
		m := x.(map[string]any)
		delete(want, m["from"].(string)+">"+m["to"].(string))
	}
	if f.status != 200 || len(want) != 0 {
		t.Fatalf("formats lack %v: %s", want, f.body)
	}
}
