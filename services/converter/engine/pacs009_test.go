package engine_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/ledgerlane/platform/services/converter/engine"
	"github.com/ledgerlane/platform/services/converter/payment"
	"github.com/ledgerlane/platform/services/converter/statement"
)

const mt202cov = "{1:F01INGBROBUXXXX0000000000}{2:O2020905221020MYMBGB2LXXXX00000000002210200905N}{3:{119:COV}{121:174c245f-2682-4291-ad67-2a41e530cd27}}{4:\r\n" +
	":20:pacs9bizmsgidr01\r\n:21:pcs008bzmsgidr-1\r\n:32A:221020RON26546464,\r\n:52A:MYMBGB2LXXX\r\n:57A:RZBRROBUXXX\r\n:58A:GEBABEBBXXX\r\n" +
	":72:/INS/INGBROBUXXX\r\n/BNF/Invoice 42\r\n:50F:/25698745\r\n1/Debtor Co\r\n2/High Street\r\n3/GB/Epping\r\n:52A:MYMBGB2LXXX\r\n:57A:GEBABEBBXXX\r\n" +
	":59F:/65479512\r\n1/Ardent Finance\r\n2/Main Street\r\n3/RO/Bucharest\r\n:70:/ROC/E2E-UNDERLYING\r\nGoods\r\n:33B:USD100,\r\n-}"

func codes(ws []statement.Warning) map[string]int {
	m := map[string]int{}
	for _, w := range ws {
		m[w.Code]++
	}
	return m
}

// MT202COV → pacs.009 → MT202COV through the engine: detection, the COV
// business service, sequence B in UndrlygCstmrCdtTrf, and back.
func TestMT202COVThroughEngine(t *testing.T) {
	res, err := eng.Convert(engine.Request{Input: []byte(mt202cov), To: "pacs.009"})
	if err != nil {
		t.Fatal(err)
	}
	if res.DetectedType != "MT202COV" || res.TargetVersion != "pacs.009.001.08" || res.MediaType != "application/xml" {
		t.Fatalf("detected %s, target %s, media %s", res.DetectedType, res.TargetVersion, res.MediaType)
	}
	doc := res.Pages[0]
	for _, want := range []string{"<BizSvc>swift.cbprplus.cov.02</BizSvc>", "<FICdtTrf>", "<EndToEndId>pcs008bzmsgidr-1</EndToEndId>",
		"<UndrlygCstmrCdtTrf>", "<Ustrd>Invoice 42</Ustrd>", "<Ustrd>/ROC/E2E-UNDERLYING Goods</Ustrd>", `<InstdAmt Ccy="USD">100</InstdAmt>`,
		"<PrvsInstgAgt1>", "<TwnNm>Bucharest</TwnNm>"} {
		if !strings.Contains(doc, want) {
			t.Errorf("pacs.009 lacks %s:\n%s", want, doc)
		}
	}
	back, err := eng.Convert(engine.Request{Input: []byte(doc), To: "MT202"})
	if err != nil {
		t.Fatal(err)
	}
	if back.DetectedType != "pacs.009" {
		t.Errorf("detected %s", back.DetectedType)
	}
	mt := back.Pages[0]
	for _, want := range []string{"{2:I202INGBROBUXXXXN}", "{119:COV}", ":21:pcs008bzmsgidr-1", ":58A:GEBABEBBXXX", ":72:/INS/INGBROBUXXX\r\n/BNF/Invoice 42",
		":50F:/25698745", ":59F:/65479512", ":70:/ROC/E2E-UNDERLYING Goods", ":33B:USD100,"} {
		if !strings.Contains(mt, want) {
			t.Errorf("MT202COV lacks %q:\n%s", want, mt)
		}
	}
	// MT202COV as a target refuses a core transfer; pacs.008 refuses pacs.009.
	core := strings.Replace(strings.Split(mt202cov, ":50F:")[0], "{3:{119:COV}", "{3:", 1) + "-}"
	if _, err := eng.Convert(engine.Request{Input: []byte(core), To: "MT202COV"}); err == nil {
		t.Error("a core MT202 became an MT202COV")
	}
	if _, err := eng.Convert(engine.Request{Input: []byte(core), To: "pacs.008"}); !errors.Is(err, engine.ErrUnsupported) {
		t.Errorf("MT202 to pacs.008: %v", err)
	}
}

// pacs.009 → MT202 cuts what does not fit, marks the cut with '+', gives
// one PAY_TRUNCATED per cut, and strict refuses it.
func TestPacs009TruncationAndStrict(t *testing.T) {
	res, err := eng.Convert(engine.Request{Input: []byte(mt202cov), To: "pacs.009"})
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Replace(res.Pages[0], "<EndToEndId>pcs008bzmsgidr-1</EndToEndId>", "<EndToEndId>END-TO-END-REFERENCE-OF-35-CHARS-XX</EndToEndId>", 1)
	long = strings.Replace(long, "<Ustrd>Invoice 42</Ustrd>", "<Ustrd>"+strings.Repeat("Invoice 4242 ", 10)+"</Ustrd><Ustrd>"+strings.Repeat("Credit 77 ", 10)+"</Ustrd>", 1)
	out, err := eng.Convert(engine.Request{Input: []byte(long), To: "MT202"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.Pages[0], ":21:END-TO-END-REFE+") {
		t.Errorf("no marked :21::\n%s", out.Pages[0])
	}
	var cuts []string
	for _, w := range out.Warnings {
		if w.Code == payment.CodeTruncated {
			cuts = append(cuts, w.Path+": "+w.Message)
		}
	}
	if len(cuts) != 2 || !strings.Contains(cuts[0], "PmtId/EndToEndId (35 characters) cut to 16 in :21:") || !strings.Contains(cuts[1], "does not fit in 6 lines") {
		t.Errorf("truncation evidence: %q", cuts)
	}
	_, err = eng.Convert(engine.Request{Input: []byte(long), To: "MT202", Options: statement.Options{Strict: true}})
	var se *engine.StrictError
	if !errors.As(err, &se) {
		t.Fatalf("strict: %v", err)
	}
}

// Validate applies the MT202 network rules: mandatory fields (T13) are
// errors with line and field; C81 and T26 are findings marked invalid.
func TestMT202Validate(t *testing.T) {
	v, err := eng.Validate([]byte(":20:REF//1\r\n:21:REL\r\n:32A:250101EUR1,\r\n:56A:CHASUS33\r\n:58A:BNPAFRPP\r\n"), "", statement.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, is := range v.Errors {
		got[is.Code] = true
	}
	if v.Valid || v.DetectedType != "MT202" || !got[payment.CodeRuleC81] || !got[payment.CodeRuleT26] {
		t.Errorf("validate: %+v", v)
	}
	v, err = eng.Validate([]byte(":20:REF\r\n:21:REL\r\n:32A:250101EUR1,\r\n:58A:BNPAFRPP\r\n:72:/BNF/x\r\n"), "", statement.Options{})
	if err != nil || !v.Valid {
		t.Fatalf("a valid MT202: %+v %v", v, err)
	}
	v, err = eng.Validate([]byte("{1:F01BANKDEFFXXXX0000000000}{2:I205BANKGB2LXXXXN}{4:\r\n:20:REF\r\n:32A:250101JPY1,5\r\n:58A:BNPAFRPP\r\n-}"), "", statement.Options{})
	if err != nil || v.Valid || v.DetectedType != "MT205" || !strings.Contains(v.Errors[0].Message, "C03") {
		t.Fatalf("JPY with decimals: %+v %v", v, err)
	}
	v, err = eng.Validate([]byte("{1:F01BANKDEFFXXXX0000000000}{2:I205BANKGB2LXXXXN}{4:\r\n:20:REF\r\n:32A:250101EUR1,\r\n:58A:BNPAFRPP\r\n-}"), "", statement.Options{})
	if err != nil || v.Valid || !strings.Contains(v.Errors[0].Message, "T13: mandatory field :21:") {
		t.Fatalf("no :21:: %+v %v", v, err)
	}
	_ = codes
}
