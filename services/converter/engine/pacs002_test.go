package engine_test

import (
	"strings"
	"testing"

	"github.com/ledgerlane/platform/services/converter/engine"
	"github.com/ledgerlane/platform/services/converter/statement"
)

const mt199 = "{1:F01NDEAFIHHXXXX0000000000}{2:O1991135221020RBOSGB2LXXXX00000000002210201135N}{3:{121:7a562c67-ca16-48ba-b074-65581be6f001}}{4:\r\n" +
	":20:pacs002bizmsgid+\r\n:21:pc003bzmsgidr01\r\n:79:/REJT/103\r\n/XT99/AC05/\r\n/MREF/pc003bzmsgidr01\r\n/TREF/pain008EndToEnd+\r\n/TEXT/ACCOUNT CLOSED\r\n/TEXT//UETR/7a562c67-ca16-48ba-b074-65581be6f001\r\n-}"

// MT199 (/REJT/) → pacs.002 → MT199 through the engine, and a free-format
// MT199 refused.
func TestMT199ThroughEngine(t *testing.T) {
	res, err := eng.Convert(engine.Request{Input: []byte(mt199), To: "pacs.002"})
	if err != nil {
		t.Fatal(err)
	}
	if res.DetectedType != "MT199" || res.TargetVersion != "pacs.002.001.10" || res.MediaType != "application/xml" {
		t.Fatalf("detected %s, target %s, media %s", res.DetectedType, res.TargetVersion, res.MediaType)
	}
	doc := res.Pages[0]
	for _, want := range []string{"<FIToFIPmtStsRpt>", "<OrgnlMsgId>pc003bzmsgidr01</OrgnlMsgId>", "<OrgnlMsgNmId>MT103</OrgnlMsgNmId>",
		"<OrgnlEndToEndId>pain008EndToEnd+</OrgnlEndToEndId>", "<OrgnlUETR>7a562c67-ca16-48ba-b074-65581be6f001</OrgnlUETR>",
		"<TxSts>RJCT</TxSts>", "<Cd>XT99</Cd>", "<AddtlInf>AC05</AddtlInf>", "<AddtlInf>ACCOUNT CLOSED</AddtlInf>", "<BICFI>RBOSGB2LXXX</BICFI>"} {
		if !strings.Contains(doc, want) {
			t.Errorf("pacs.002 lacks %s:\n%s", want, doc)
		}
	}
	back, err := eng.Convert(engine.Request{Input: []byte(doc), To: "MT299"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(back.Pages[0], "{2:I299NDEAFIHHXXXXN}") ||
		!strings.Contains(back.Pages[0], ":79:/REJT/103\r\n/XT99/AC05\r\n/MREF/pc003bzmsgidr01\r\n/TREF/pain008EndToEnd+\r\n/TEXT/ACCOUNT CLOSED\r\n/TEXT//UETR/7a562c67") {
		t.Errorf("MT299:\n%s", back.Pages[0])
	}
	free := strings.Replace(mt199, "/REJT/103", "PLEASE CALL", 1)
	if _, err := eng.Convert(engine.Request{Input: []byte(free), To: "pacs.002"}); err == nil {
		t.Error("a free-format MT199 became a pacs.002")
	}
	v, err := eng.Validate([]byte(free), "", statement.Options{})
	if err != nil || v.Valid || !strings.Contains(v.Errors[0].Message, "/REJT/") {
		t.Errorf("validate a free-format MT199: %+v %v", v, err)
	}
}
