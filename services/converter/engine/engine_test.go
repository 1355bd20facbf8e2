package engine_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/ledgerlane/platform/services/converter/builtin"
	"github.com/ledgerlane/platform/services/converter/engine"
	"github.com/ledgerlane/platform/services/converter/statement"
)

const mt940 = "{1:F01BANKDEFFAXXX0000000000}{2:O9401200260101BANKDEFFAXXX00000000002601011200N}{4:\r\n" +
	":20:STMT1\r\n:25:DE89370400440532013000\r\n:28C:1/1\r\n:60F:C260101EUR100,00\r\n" +
	":61:2601020102D25,50NTRFREF1//BANKREF1\r\n:86:Invoice 42\r\n" +
	":62F:C260102EUR74,50\r\n-}"

// eng is the engine the converter ships.
var eng = builtin.Engine()

func TestFormatsComeFromTheRegistry(t *testing.T) {
	fs := eng.Formats()
	pairs := map[string]bool{}
	for _, f := range fs {
		pairs[f.From+">"+f.To] = true
	}
	for _, want := range []string{"MT940>camt.053", "MT950>camt.053", "MT942>camt.052", "camt.053>MT940", "camt.052>MT942", "MT940>csv", "MT940>ofx", "MT940>qbo", "camt.053>csv"} {
		if !pairs[want] {
			t.Errorf("registry lacks %s (has %v)", want, pairs)
		}
	}
}

func TestConvertDetectsAndRenders(t *testing.T) {
	res, err := eng.Convert(engine.Request{Input: []byte(mt940), To: "camt.053"})
	if err != nil {
		t.Fatal(err)
	}
	if res.DetectedType != "MT940" || res.TargetType != "camt.053" || res.TargetVersion != "camt.053.001.08" || len(res.Pages) != 1 ||
		!strings.Contains(res.Pages[0], "urn:iso:std:iso:20022:tech:xsd:camt.053.001.08") || !strings.Contains(res.Pages[0], ">25.5<") {
		t.Fatalf("result: %+v", res)
	}
	back, err := eng.Convert(engine.Request{Input: []byte(res.Pages[0]), To: "MT940"})
	if err != nil {
		t.Fatal(err)
	}
	if back.DetectedType != "camt.053" || back.DetectedVersion != "camt.053.001.08" || !strings.Contains(back.Pages[0], ":61:2601020102D25,5NTRF") {
		t.Fatalf("round trip: %+v", back)
	}
}

// A full message version as the target means its type with that version.
func TestConvertToFullVersion(t *testing.T) {
	for _, tt := range []struct{ to, option, want string }{
		{"camt.053.001.08", "", "camt.053.001.08"},
		{"CAMT.053.001.02", "", "camt.053.001.02"},
		{"camt.053.001.02", "camt.053.001.02", "camt.053.001.02"},
	} {
		res, err := eng.Convert(engine.Request{Input: []byte(mt940), To: tt.to, Options: statement.Options{TargetVersion: tt.option}})
		if err != nil {
			t.Fatalf("to=%s: %v", tt.to, err)
		}
		if res.TargetType != "camt.053" || res.TargetVersion != tt.want || !strings.Contains(res.Pages[0], "urn:iso:std:iso:20022:tech:xsd:"+tt.want) {
			t.Fatalf("to=%s: %s %s", tt.to, res.TargetType, res.TargetVersion)
		}
	}
}

func TestConvertErrors(t *testing.T) {
	tests := []struct {
		name string
		req  engine.Request
		want func(error) bool
	}{
		{"unknown target", engine.Request{Input: []byte(mt940), To: "pdf"}, func(err error) bool { return errors.Is(err, engine.ErrUnsupported) }},
		{"unknown source", engine.Request{Input: []byte(mt940), From: "MT103", To: "camt.053"}, func(err error) bool { return errors.Is(err, engine.ErrUnsupported) }},
		{"pair not registered", engine.Request{Input: []byte(mt940), From: "MT940", To: "camt.052"}, func(err error) bool { return errors.Is(err, engine.ErrUnsupported) }},
		{"undetectable", engine.Request{Input: []byte("hello"), To: "camt.053"}, func(err error) bool { return errors.Is(err, engine.ErrUndetectable) }},
		{"unknown target version", engine.Request{Input: []byte(mt940), To: "camt.053", Options: statement.Options{TargetVersion: "camt.053.001.99"}}, func(err error) bool { return errors.Is(err, engine.ErrUnsupported) }},
		{"bad field", engine.Request{Input: []byte(strings.Replace(mt940, ":60F:C260101EUR100,00", ":60F:C261301EUR100,00", 1)), To: "camt.053"}, func(err error) bool {
			var pe *statement.ParseError
			return errors.As(err, &pe) && pe.Field != "" && pe.Line > 0
		}},
		{"full version as target conflicting with targetVersion", engine.Request{Input: []byte(mt940), To: "camt.053.001.08", Options: statement.Options{TargetVersion: "camt.053.001.02"}}, func(err error) bool {
			var fe *engine.FieldError
			return errors.As(err, &fe) && fe.Field == "targetVersion"
		}},
		{"unknown full version as target", engine.Request{Input: []byte(mt940), To: "camt.053.001.99"}, func(err error) bool { return errors.Is(err, engine.ErrUnsupported) }},
		{"qbo without intuBid", engine.Request{Input: []byte(mt940), To: "qbo"}, func(err error) bool {
			var fe *engine.FieldError
			return errors.As(err, &fe) && fe.Field == "intuBid"
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := eng.Convert(tt.req)
			if err == nil || !tt.want(err) {
				t.Fatalf("got %v", err)
			}
		})
	}
}

func TestStrictTurnsLossyWarningsIntoErrors(t *testing.T) {
	// An umlaut cannot travel in the SWIFT X character set: MT output warns,
	// and strict refuses.
	in := strings.Replace(mt940, ":86:Invoice 42", ":86:Invoice 42", 1)
	res, err := eng.Convert(engine.Request{Input: []byte(in), To: "camt.053"})
	if err != nil {
		t.Fatal(err)
	}
	mx := strings.Replace(res.Pages[0], "Invoice 42", "Rechnung Müller 42", 1)
	lossy, err := eng.Convert(engine.Request{Input: []byte(mx), To: "MT940"})
	if err != nil {
		t.Fatal(err)
	}
	var sawLossy bool
	for _, w := range lossy.Warnings {
		sawLossy = sawLossy || w.Lossy
	}
	if !sawLossy {
		t.Fatalf("transliteration must warn: %+v", lossy.Warnings)
	}
	_, err = eng.Convert(engine.Request{Input: []byte(mx), To: "MT940", Options: statement.Options{Strict: true}})
	var se *engine.StrictError
	if !errors.As(err, &se) || len(se.Warnings) == 0 {
		t.Fatalf("strict: %v", err)
	}
}

func TestValidateOptions(t *testing.T) {
	tests := []struct {
		o     statement.Options
		field string
	}{
		{statement.Options{}, ""},
		{statement.Options{TranslitProfile: "german", Field86Profile: "german", DateFormat: "dmy", OFXVersion: "220", IntuBid: "3000"}, ""},
		{statement.Options{TranslitProfile: "french"}, "translitProfile"},
		{statement.Options{Field86Profile: "x"}, "field86Profile"},
		{statement.Options{DateFormat: "iso"}, "dateFormat"},
		{statement.Options{OFXVersion: "211"}, "ofxVersion"},
		{statement.Options{IntuBid: "12a"}, "intuBid"},
	}
	for _, tt := range tests {
		err := engine.ValidateOptions(tt.o)
		var fe *engine.FieldError
		if tt.field == "" && err != nil || tt.field != "" && (!errors.As(err, &fe) || fe.Field != tt.field) {
			t.Errorf("ValidateOptions(%+v) = %v, want field %q", tt.o, err, tt.field)
		}
	}
}

// TestHeadScan: a scan runs once per input whatever number of detectors ask
// for it, also past the scans Head keeps inline.
func TestHeadScan(t *testing.T) {
	h := &engine.Head{Input: []byte("abc")}
	keys := []*engine.ScanKey{{Name: "a"}, {Name: "b"}, {Name: "c"}, {Name: "d"}}
	runs := map[*engine.ScanKey]int{}
	for range 3 {
		for i, k := range keys {
			got := h.Scan(k, func(input []byte) any { runs[k]++; return string(input) + string(rune('0'+i)) })
			if want := "abc" + string(rune('0'+i)); got != want {
				t.Fatalf("scan %s = %v, want %s", k.Name, got, want)
			}
		}
	}
	for _, k := range keys {
		if runs[k] != 1 {
			t.Errorf("scan %s ran %d times, want once", k.Name, runs[k])
		}
	}
}
