package engine_test

import (
	"errors"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/ledgerlane/platform/services/converter/engine"
	"github.com/ledgerlane/platform/services/converter/statement"
)

// An MT941 goes through the shipped engine: detected (FIN and bare text,
// ahead of the payment and cash detectors), listed, converted to camt.052
// and back, normalized and validated.
func TestBalanceReportThroughEngine(t *testing.T) {
	fin, err := os.ReadFile("../mt/testdata/mt941/balance_report.fin")
	if err != nil {
		t.Fatal(err)
	}
	bare := regexp.MustCompile(`(?s)^\{1:[^}]*\}\{2:[^}]*\}\{4:\r\n(.*)-\}.*$`).ReplaceAll(fin, []byte("$1-\r\n"))
	listed := map[string]bool{}
	for _, f := range eng.Formats() {
		listed[f.From+">"+f.To] = true
	}
	for _, pair := range []string{"MT941>camt.052", "camt.052>MT941", "MT941>MT941"} {
		if !listed[pair] {
			t.Errorf("formats do not list %s", pair)
		}
	}
	for name, in := range map[string][]byte{"FIN": fin, "bare": bare} {
		res, err := eng.Convert(engine.Request{Input: in, To: "camt.052"})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if res.DetectedType != "MT941" || res.TargetVersion != "camt.052.001.08" || !strings.Contains(res.Pages[0], "<Cd>CLBD</Cd>") {
			t.Errorf("%s: detected %s, target %s", name, res.DetectedType, res.TargetVersion)
		}
		back, err := eng.Convert(engine.Request{Input: []byte(res.Pages[0]), To: "MT941"})
		if err != nil || !strings.Contains(back.Pages[0], ":62F:C240315EUR132190,35\r\n") {
			t.Errorf("%s back: %v %v", name, err, back)
		}
		if v, err := eng.Validate(in, "", statement.Options{}); err != nil || !v.Valid || v.DetectedType != "MT941" {
			t.Errorf("%s validate: %+v %v", name, v, err)
		}
	}
	norm, err := eng.Normalize(bare, "", statement.Options{})
	if err != nil || !strings.Contains(norm.Pages[0], "{2:I941") || !strings.Contains(norm.Pages[0], ":28:44/1\r\n") {
		t.Errorf("normalize: %v %+v", err, norm)
	}
	// Strict: the :21: camt.052 cannot carry fails the conversion.
	var se *engine.StrictError
	if _, err := eng.Convert(engine.Request{Input: fin, To: "camt.052", Options: statement.Options{Strict: true}}); !errors.As(err, &se) {
		t.Errorf("strict: %v", err)
	}
}

// MT970 to MT973 are detected by type and refused by name, with the reason
// and what to use instead, by every statement target; validate says the same.
func TestNettingRefusedThroughEngine(t *testing.T) {
	instead := map[string]string{"MT970": "MT940", "MT971": "MT941", "MT972": "MT942", "MT973": "MT920"}
	for typ, alt := range instead {
		in := []byte("{1:F01COBADEFFXXXX0000000000}{2:O" + typ[2:] + "1705240315COBADEFFXXXX00000000002403151705N}{4:\r\n" +
			":20:NET240315\r\n:25:DE89370400440532013000\r\n:28C:12/1\r\n:60F:C240314EUR100,\r\n:62F:C240315EUR100,\r\n-}")
		for _, to := range []string{"camt.053", "camt.052", "MT940", "MT941", "MT942", "MT950", "csv", "ofx", "qbo"} {
			_, err := eng.Convert(engine.Request{Input: in, To: to})
			if !errors.Is(err, engine.ErrUnsupported) || !strings.Contains(err.Error(), typ+" to "+to+": "+typ+" (") ||
				!strings.Contains(err.Error(), "CBPR+") || !strings.Contains(err.Error(), alt) {
				t.Errorf("%s to %s: %v", typ, to, err)
			}
		}
		v, err := eng.Validate(in, "", statement.Options{})
		if err != nil || v.Valid || v.DetectedType != typ || v.Errors[0].Code != engine.CodeInvalidMessage || !strings.Contains(v.Errors[0].Message, typ+" (") {
			t.Errorf("validate %s: %+v %v", typ, v, err)
		}
		// Named as a statement type it is still refused, by the reader.
		var pe *statement.ParseError
		if _, err := eng.Convert(engine.Request{Input: in, From: "MT940", To: "camt.053"}); !errors.As(err, &pe) || !strings.HasPrefix(pe.Reason, typ) {
			t.Errorf("%s read as MT940: %v", typ, err)
		}
		if _, err := eng.Parse(in, "", statement.Options{}); !errors.As(err, &pe) {
			t.Errorf("parse %s: %v", typ, err)
		}
	}
}
