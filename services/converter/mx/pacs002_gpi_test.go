package mx

import (
	"regexp"
	"strings"
	"testing"

	"github.com/ledgerlane/platform/services/converter/engine"
	"github.com/ledgerlane/platform/services/converter/mt"
	"github.com/ledgerlane/platform/services/converter/payment"
)

// TestGPIStatus: statuses other than a reject travel as MT199/MT299 gpi
// status confirmations (:79: status time, //CODE[/REASON], further lines)
// and as pacs.002 TxSts, StsRsnInf and AccptncDtTm, both ways; the pacs.002
// is schema-valid and the MT written back is the MT read.
func TestGPIStatus(t *testing.T) {
	eng := engine.New(mt.PaymentFormats(), PaymentFormats())
	for _, tc := range []struct {
		name, typ, f79 string
		want           []string
	}{
		{"in progress", "199", "//2105111203+0200\r\n//ACSP/G000\r\n//CHASGB2L",
			[]string{"<TxSts>ACSP</TxSts><StsRsnInf><Rsn><Cd>G000</Cd></Rsn><AddtlInf>CHASGB2L</AddtlInf></StsRsnInf><AccptncDtTm>2021-05-11T12:03:00+02:00</AccptncDtTm>"}},
		{"credited", "199", "//2105111530-0500\r\n//ACCC",
			[]string{"<TxSts>ACCC</TxSts><AccptncDtTm>2021-05-11T15:30:00-05:00</AccptncDtTm>"}},
		{"settled cover", "299", "//2105110900+0000\r\n//ACSC\r\n//USD136480,",
			[]string{"<TxSts>ACSC</TxSts><StsRsnInf><AddtlInf>USD136480,</AddtlInf></StsRsnInf>"}},
		{"pending", "199", "//2105110900+0100\r\n//PDNG/G002",
			[]string{"<TxSts>PDNG</TxSts><StsRsnInf><Rsn><Cd>G002</Cd></Rsn></StsRsnInf>"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := "{1:F01CHASGB2LXXXX0000000000}{2:I" + tc.typ + "TRCKCHZZXXXXN}{3:{121:174c245f-2682-4291-ad67-2a41e530cd27}}{4:\r\n" +
				":20:STATUS-1\r\n:21:P4B2A-006\r\n:79:" + tc.f79 + "\r\n-}"
			res, err := eng.Convert(engine.Request{Input: []byte(in), To: "pacs.002"})
			if err != nil {
				t.Fatal(err)
			}
			doc := res.Pages[0]
			xmllintPayment(t, pacs2v10, doc)
			compact := regexp.MustCompile(`>\s+<`).ReplaceAllString(doc, "><")
			for _, w := range append(tc.want, "<OrgnlInstrId>P4B2A-006</OrgnlInstrId><OrgnlUETR>174c245f-2682-4291-ad67-2a41e530cd27</OrgnlUETR>") {
				if !strings.Contains(compact, w) {
					t.Errorf("pacs.002 lacks %s:\n%s", w, doc)
				}
			}
			back, err := eng.Convert(engine.Request{Input: []byte(doc), To: "MT" + tc.typ})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(back.Pages[0], ":21:P4B2A-006\r\n:79:"+tc.f79+"\r\n-}") || !strings.Contains(back.Pages[0], "{121:174c245f") {
				t.Errorf("MT%s back:\n%s", tc.typ, back.Pages[0])
			}
			for _, w := range back.Warnings {
				if w.Code == payment.CodeFieldDropped {
					t.Errorf("dropped on the way back: %s %s", w.Path, w.Message)
				}
			}
		})
	}
}
