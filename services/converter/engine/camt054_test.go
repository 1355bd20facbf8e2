package engine_test

import (
	"strings"
	"testing"

	"github.com/ledgerlane/platform/services/converter/engine"
	"github.com/ledgerlane/platform/services/converter/payment"
	"github.com/ledgerlane/platform/services/converter/statement"
)

const mt910 = "{1:F01YOURBANKXXXX0000000000}{2:O9100725221020INGBROBUXXXX00000000002210200725N}{4:\r\n" +
	":20:C11126C9224\r\n:21:494936/DEV\r\n:25:6-9412771\r\n:13D:1401231426+0100\r\n:32A:140123USD500000,\r\n:52A:BKAUATWW\r\n:56A:BKTRUS33\r\n:72:/ACC/PLEASE ADVISE\r\n-}"

// MT910 → camt.054 → MT910 through the engine, and the kind checks.
func TestMT910ThroughEngine(t *testing.T) {
	res, err := eng.Convert(engine.Request{Input: []byte(mt910), To: "camt.054"})
	if err != nil {
		t.Fatal(err)
	}
	if res.DetectedType != "MT910" || res.TargetVersion != "camt.054.001.08" || res.MediaType != "application/xml" {
		t.Fatalf("detected %s, target %s, media %s", res.DetectedType, res.TargetVersion, res.MediaType)
	}
	doc := res.Pages[0]
	for _, want := range []string{"<MsgDefIdr>camt.054.001.08</MsgDefIdr>", "<BkToCstmrDbtCdtNtfctn>", "<CdtDbtInd>CRDT</CdtDbtInd>",
		"<DtTm>2014-01-23T14:26:00+01:00</DtTm>", "<Dt>2014-01-23</Dt>", "<InstrId>494936/DEV</InstrId>", "<Id>6-9412771</Id>",
		"<BICFI>BKAUATWW</BICFI>", "<IntrmyAgt1>", "<AddtlTxInf>/ACC/PLEASE ADVISE</AddtlTxInf>"} {
		if !strings.Contains(doc, want) {
			t.Errorf("camt.054 lacks %s:\n%s", want, doc)
		}
	}
	back, err := eng.Convert(engine.Request{Input: []byte(doc), To: "MT910"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"{2:I910YOURBANKXXXXN}", ":20:C11126C9224", ":21:494936/DEV", ":25:6-9412771", ":13D:1401231426+0100",
		":32A:140123USD500000,", ":52A:BKAUATWW", ":56A:BKTRUS33", ":72:/ACC/PLEASE ADVISE"} {
		if !strings.Contains(back.Pages[0], want) {
			t.Errorf("MT910 lacks %q:\n%s", want, back.Pages[0])
		}
	}
	// A credit is no MT900; a confirmation is no pacs.009.
	if _, err := eng.Convert(engine.Request{Input: []byte(doc), To: "MT900"}); err == nil {
		t.Error("a credit confirmation became an MT900")
	}
	if _, err := eng.Convert(engine.Request{Input: []byte(mt910), To: "pacs.009"}); err == nil {
		t.Error("an MT910 became a pacs.009")
	}
	// strict refuses the long account cut to 35 in :25:.
	long := strings.Replace(doc, "<Id>6-9412771</Id>", "<Id>"+strings.Repeat("7", 34)+"</Id>", 1)
	long = strings.Replace(long, "<MsgId>C11126C9224</MsgId>", "<MsgId>"+strings.Repeat("M", 30)+"</MsgId>", 1)
	out, err := eng.Convert(engine.Request{Input: []byte(long), To: "MT910"})
	if err != nil || !strings.Contains(out.Pages[0], ":20:MMMMMMMMMMMMMMM+") {
		t.Fatalf("cut :20:: %v", err)
	}
	if _, err := eng.Convert(engine.Request{Input: []byte(long), To: "MT910", Options: statement.Options{Strict: true}}); err == nil {
		t.Error("strict let a cut reference pass")
	}
	// Validate: C06 (MT910 needs 50a or 52a) is an invalid finding.
	v, err := eng.Validate([]byte(strings.Replace(mt910, ":52A:BKAUATWW\r\n", "", 1)), "", statement.Options{})
	if err != nil || v.Valid || v.Errors[0].Code != payment.CodeRuleC06 {
		t.Fatalf("validate: %+v %v", v, err)
	}
}
