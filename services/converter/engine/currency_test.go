package engine_test

import (
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/ledgerlane/platform/services/converter/engine"
	"github.com/ledgerlane/platform/services/converter/mx"
	"github.com/ledgerlane/platform/services/converter/statement"
)

// A camt statement whose balances or entries are in several currencies
// never comes out as MT with amounts relabelled to one currency: every MT
// statement target refuses it, naming the element in the other currency.
func TestSeveralCurrenciesRefused(t *testing.T) {
	camt, err := eng.Convert(engine.Request{Input: []byte(mt940), To: "camt.053"})
	if err != nil {
		t.Fatal(err)
	}
	doc := camt.Pages[0]
	entryUSD := strings.Replace(doc, `<Amt Ccy="EUR">25.5</Amt>`, `<Amt Ccy="USD">25.5</Amt>`, 1)
	if entryUSD == doc {
		t.Fatalf("no entry amount to change:\n%s", doc)
	}
	closingUSD := regexp.MustCompile(`(?s)(<Cd>CLBD</Cd>.*?<Amt Ccy=")EUR`).ReplaceAllString(doc, "${1}USD")
	if closingUSD == doc {
		t.Fatalf("no closing balance to change:\n%s", doc)
	}
	for _, tc := range []struct{ name, in, elem string }{
		{"entry", entryUSD, "BkToCstmrStmt/Stmt[1]/Ntry[1]/Amt/@Ccy"},
		{"balance", closingUSD, "BkToCstmrStmt/Stmt[1]/Bal[2]/Amt/@Ccy"},
	} {
		for _, to := range []string{"MT940", "MT950"} {
			_, err := eng.Convert(engine.Request{Input: []byte(tc.in), To: to})
			var pe *statement.ParseError
			if !errors.As(err, &pe) || pe.Field != tc.elem || !strings.Contains(pe.Reason, "EUR and USD") || !strings.Contains(pe.Reason, "never relabelled") {
				t.Errorf("%s to %s: %v", tc.name, to, err)
			}
		}
	}
	// One currency converts as before.
	if _, err := eng.Convert(engine.Request{Input: []byte(doc), To: "MT940"}); err != nil {
		t.Errorf("one currency: %v", err)
	}
	// An MT source in several currencies (a balance in another) is named by
	// its line and field.
	mixed := strings.Replace(mt940, ":62F:C260102EUR74,50", ":62F:C260102USD74,50", 1)
	_, err = eng.Convert(engine.Request{Input: []byte(mixed), To: "MT940"})
	var pe *statement.ParseError
	if !errors.As(err, &pe) || pe.Field != ":62F:" || pe.Line != 8 || strings.Contains(pe.Reason, "Bal[") || !strings.Contains(pe.Reason, "EUR and USD") {
		t.Errorf("MT source in two currencies: %#v", err)
	}
}

// A statement that does not balance gets BALANCE_MISMATCH from camt input
// as from MT input, with the same code.
func TestBalanceMismatchFromCamtAsFromMT(t *testing.T) {
	bad := strings.Replace(mt940, ":62F:C260102EUR74,50", ":62F:C260102EUR75,50", 1)
	fromMT, err := eng.Convert(engine.Request{Input: []byte(bad), To: "camt.053"})
	if err != nil {
		t.Fatal(err)
	}
	if !hasCode(fromMT.Warnings, mx.CodeBalanceMismatch) {
		t.Fatalf("MT input: no %s: %v", mx.CodeBalanceMismatch, fromMT.Warnings)
	}
	fromCamt, err := eng.Convert(engine.Request{Input: []byte(fromMT.Pages[0]), To: "MT940"})
	if err != nil {
		t.Fatal(err)
	}
	if !hasCode(fromCamt.Warnings, mx.CodeBalanceMismatch) {
		t.Errorf("camt input: no %s: %v", mx.CodeBalanceMismatch, fromCamt.Warnings)
	}
	v, err := eng.Validate([]byte(fromMT.Pages[0]), "", statement.Options{})
	if err != nil || len(v.Warnings) == 0 || !hasIssue(v.Warnings, mx.CodeBalanceMismatch) {
		t.Errorf("validate camt: %+v %v", v, err)
	}
}

// A placeholder written where an MT header needs a BIC is warned: a camt
// statement that names no servicer or receiver becomes an MT whose blocks 1
// and 2 hold NOTPROVIDED, and the answer says so.
func TestHeaderPlaceholderWarned(t *testing.T) {
	camt, err := eng.Convert(engine.Request{Input: []byte(strings.Replace(mt940, "BANKDEFFAXXX", "NOTPROVIXDED", 2)), To: "camt.053"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := eng.Convert(engine.Request{Input: []byte(camt.Pages[0]), To: "MT940"})
	if err != nil {
		t.Fatal(err)
	}
	warned := false
	for _, w := range res.Warnings {
		warned = warned || w.Code == "MT_FIELD_DEFAULTED" && strings.Contains(w.Message, "placeholder NOTPROVIDED") && strings.HasSuffix(w.Path, "{1:} {2:}")
	}
	if !strings.Contains(res.Pages[0], "{1:F01NOTPROVIXDED") || !warned {
		t.Errorf("placeholder not warned: %v\n%s", res.Warnings, res.Pages[0])
	}
	// With both BICs there is nothing to warn.
	named, err := eng.Convert(engine.Request{Input: []byte(mt940), To: "camt.053"})
	if err != nil {
		t.Fatal(err)
	}
	res, err = eng.Convert(engine.Request{Input: []byte(named.Pages[0]), To: "MT940"})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range res.Warnings {
		if strings.Contains(w.Message, "placeholder") {
			t.Errorf("named BICs warned: %v", w)
		}
	}
}

func hasIssue(is []engine.Issue, code string) bool {
	for _, i := range is {
		if i.Code == code {
			return true
		}
	}
	return false
}
