package engine_test

import (
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/ledgerlane/platform/services/converter/engine"
	"github.com/ledgerlane/platform/services/converter/payment"
	"github.com/ledgerlane/platform/services/converter/statement"
)

// One message of each cash management family, as FIN output messages.
var cashMessages = map[string]string{
	"MT210": "{1:F01NDEAFIHHXXXX0000000000}{2:O2100925221020OKOYFIHHXXXX00000000002210200925N}{4:\r\n" +
		":20:cmt057bizmsgidr\r\n:25:25698745\r\n:30:221025\r\n:21:ITM-021\r\n:32B:EUR125650,\r\n" +
		":50F:/NOTPROVIDED\r\n1/NT Asset Management\r\n2/50 Bank Street\r\n3/GB/London\r\n-}",
	"MT920": "{1:F01ABNANL2AXXXX0000000000}{2:O9200725221020INGBROBUXXXX00000000002210200725N}{4:\r\n" +
		":20:3948\r\n:12:942\r\n:25:123-45678\r\n:34F:CHFD1000000,\r\n:34F:CHFC100000,\r\n-}",
	"MT110": "{1:F01RBSSGBKCXXXX0000000000}{2:O1100905221020MYMBGB2LXXXX00000000002210200905N}{4:\r\n" +
		":20:camt107bzmsgidr1\r\n:21:102145\r\n:30:221020\r\n:32B:GBP25250,\r\n:50F:/60779854\r\n1/Debtor Co\r\n2/High Street\r\n3/GB/Epping\r\n" +
		":59F:1/Ardent Finance\r\n2/Main Street\r\n3/GB/London\r\n-}",
	"MT111": "{1:F01RBSSGBKCXXXX0000000000}{2:O1111005221020MYMBGB2LXXXX00000000002210201005N}{4:\r\n" +
		":20:camt108bzmsgidr1\r\n:21:102145\r\n:30:221020\r\n:32B:GBP25250,\r\n:59:Ardent Finance\r\nMain Street\r\nGB/London\r\n:75:/RequestedByCustomer/\r\n-}",
	"MT112": "{1:F01MYMBGB2LXXXX0000000000}{2:O1121005221020RBSSGBKCXXXX00000000002210201005N}{4:\r\n" +
		":20:camt109bzmsgidr1\r\n:21:102145\r\n:30:221020\r\n:32B:GBP25250,\r\n:59:Ardent Finance\r\nMain Street\r\nGB/London\r\n:76:/Rejected/Payer Request\r\n-}",
}

var cashMX = map[string]string{"MT210": "camt.057", "MT920": "camt.060", "MT110": "camt.107", "MT111": "camt.108", "MT112": "camt.109"}

// Every cash management type is detected (FIN, bare block 4 text, MX),
// listed by GET /v1/formats, converted both ways, and refused where it
// should be.
func TestCashThroughEngine(t *testing.T) {
	listed := map[string]bool{}
	for _, f := range eng.Formats() {
		listed[f.From+">"+f.To] = true
	}
	bare := regexp.MustCompile(`^\{1:[^}]*\}\{2:[^}]*\}\{4:\r\n`)
	for mtType, msg := range cashMessages {
		mxType := cashMX[mtType]
		for _, pair := range []string{mtType + ">" + mxType, mxType + ">" + mtType, mtType + ">" + mtType, mxType + ">" + mxType} {
			if !listed[pair] {
				t.Errorf("formats do not list %s", pair)
			}
		}
		res, err := eng.Convert(engine.Request{Input: []byte(msg), To: mxType})
		if err != nil {
			t.Fatalf("%s: %v", mtType, err)
		}
		if res.DetectedType != mtType || !strings.HasPrefix(res.TargetVersion, mxType+".001.") || !strings.Contains(res.Pages[0], "<MsgDefIdr>"+res.TargetVersion+"</MsgDefIdr>") {
			t.Errorf("%s: detected %s, target %s", mtType, res.DetectedType, res.TargetVersion)
		}
		back, err := eng.Convert(engine.Request{Input: []byte(res.Pages[0]), To: mtType})
		if err != nil {
			t.Fatalf("%s back: %v", mxType, err)
		}
		if back.DetectedType != mxType || !strings.Contains(back.Pages[0], "{2:I"+mtType[2:]) {
			t.Errorf("%s: detected %s\n%s", mxType, back.DetectedType, back.Pages[0])
		}
		// Bare block 4 text is detected from its fields.
		text := strings.TrimSuffix(bare.ReplaceAllString(msg, ""), "-}") + "-"
		if r, err := eng.Convert(engine.Request{Input: []byte(text), To: mxType}); err != nil || r.DetectedType != mtType {
			t.Errorf("bare %s: %v", mtType, err)
		}
		// Another family's target is refused, never "unknown target".
		if _, err := eng.Convert(engine.Request{Input: []byte(msg), To: "pacs.008"}); !errors.Is(err, engine.ErrUnsupported) {
			t.Errorf("%s to pacs.008: %v", mtType, err)
		}
	}
	// Strict refuses the reference cut to 16, lenient warns with the MX path.
	notice, _ := eng.Convert(engine.Request{Input: []byte(cashMessages["MT210"]), To: "camt.057"})
	long := strings.ReplaceAll(notice.Pages[0], "cmt057bizmsgidr", "cmt057bizmsgidr-and-more")
	long = strings.Replace(long, "NT Asset Management", "Société Générale Müller", 1)
	res, err := eng.Convert(engine.Request{Input: []byte(long), To: "MT210"})
	if err != nil {
		t.Fatal(err)
	}
	codes := map[string]string{}
	for _, w := range res.Warnings {
		codes[w.Code] = w.Path
	}
	if !strings.Contains(res.Pages[0], ":20:cmt057bizmsgidr+") || !strings.Contains(codes[payment.CodeTruncated], "GrpHdr/MsgId") {
		t.Errorf("cut :20:: %v\n%s", res.Warnings, res.Pages[0])
	}
	if !strings.Contains(res.Pages[0], "1/Societe Generale Muller") || codes[payment.CodeTransliterated] == "" && !hasCode(res.Warnings, payment.CodeTransliterated) {
		t.Errorf("transliteration: %v\n%s", res.Warnings, res.Pages[0])
	}
	var se *engine.StrictError
	if _, err := eng.Convert(engine.Request{Input: []byte(long), To: "MT210", Options: statement.Options{Strict: true}}); !errors.As(err, &se) {
		t.Errorf("strict let a cut reference pass: %v", err)
	}
	// camt.058 is detected and refused with its reason.
	camt058 := `<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.058.001.08"><NtfctnToRcvCxlAdvc/></Document>`
	if _, err := eng.Convert(engine.Request{Input: []byte(camt058), To: "MT210"}); err == nil || !strings.Contains(err.Error(), "camt.058") || !strings.Contains(err.Error(), "not converted") {
		t.Errorf("camt.058: %v", err)
	}
	if v, err := eng.Validate([]byte(camt058), "", statement.Options{}); err != nil || v.Valid || v.DetectedType != "camt.058" {
		t.Errorf("validate camt.058: %+v %v", v, err)
	}
	// MT210 rule C06: :50a: and :52a: together are an invalid finding.
	c06 := strings.Replace(cashMessages["MT210"], "3/GB/London\r\n", "3/GB/London\r\n:52A:CITIGB2L\r\n", 1)
	if v, err := eng.Validate([]byte(c06), "", statement.Options{}); err != nil || v.Valid || v.Errors[0].Code != payment.CodeRuleC06 {
		t.Errorf("validate C06: %+v %v", v, err)
	}
}

func hasCode(ws []statement.Warning, code string) bool {
	for _, w := range ws {
		if w.Code == code {
			return true
		}
	}
	return false
}
