package grpcapi_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/pkg/rpc"
	conversionv1 "github.com/ledgerlane/platform/proto/conversion/v1"
	"github.com/ledgerlane/platform/services/converter/engine"
)

func TestValidate(t *testing.T) {
	c := client(t)
	ctx := context.Background()
	tests := []struct {
		name      string
		req       *conversionv1.ValidateRequest
		valid     bool
		errCode   string
		errLine   int32
		errPath   string
		warnCodes []string
		warnLine  int32
	}{
		{name: "valid statement", req: &conversionv1.ValidateRequest{Message: stmt}, valid: true, warnCodes: []string{}},
		{name: "bad date names line and field", req: &conversionv1.ValidateRequest{Message: strings.Replace(stmt, "C260101", "C261301", 1)},
			errCode: engine.CodeInvalidMessage, errLine: 4, errPath: ":60F:"},
		{name: "unbalanced is a warning", req: &conversionv1.ValidateRequest{Message: strings.Replace(stmt, "EUR74,50", "EUR74,60", 1)},
			valid: true, warnCodes: []string{"BALANCE_MISMATCH"}},
		{name: "warnings carry their line", req: &conversionv1.ValidateRequest{Message: strings.Replace(stmt, ":28C:1/1", ":28:1/1", 1)},
			valid: true, warnCodes: []string{"MT_LEGACY_TAG"}, warnLine: 3},
		{name: "unbalanced fails strict", req: &conversionv1.ValidateRequest{Message: strings.Replace(stmt, "EUR74,50", "EUR74,60", 1), Options: &conversionv1.Options{Strict: ptr(true)}},
			errCode: "BALANCE_MISMATCH"},
		{name: "malformed camt names the line", req: &conversionv1.ValidateRequest{From: "camt.053", Message: "<Document xmlns=\"urn:iso:std:iso:20022:tech:xsd:camt.053.001.08\">\n<BkToCstmrStmt>\n<Stmt x>"},
			errCode: engine.CodeInvalidMessage, errLine: 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := c.Validate(ctx, tc.req)
			if err != nil {
				t.Fatal(err)
			}
			if res.GetValid() != tc.valid {
				t.Fatalf("valid = %v, want %v: %v", res.GetValid(), tc.valid, res)
			}
			if tc.errCode != "" {
				if len(res.GetErrors()) == 0 {
					t.Fatalf("no errors: %v", res)
				}
				e := res.GetErrors()[0]
				if e.GetCode() != tc.errCode || e.GetSeverity() != "error" || (tc.errLine > 0 && e.GetLine() != tc.errLine) || (tc.errPath != "" && e.GetPath() != tc.errPath) {
					t.Fatalf("error %v, want code %s line %d path %s", e, tc.errCode, tc.errLine, tc.errPath)
				}
			}
			if tc.warnCodes != nil {
				var got []string
				for _, w := range res.GetWarnings() {
					got = append(got, w.GetCode())
				}
				if strings.Join(got, ",") != strings.Join(tc.warnCodes, ",") {
					t.Fatalf("warnings %v, want %v", got, tc.warnCodes)
				}
				if tc.warnLine > 0 && res.GetWarnings()[0].GetLine() != tc.warnLine {
					t.Fatalf("warning line %d, want %d", res.GetWarnings()[0].GetLine(), tc.warnLine)
				}
			}
		})
	}
	t.Run("detected type", func(t *testing.T) {
		res, err := c.Validate(ctx, &conversionv1.ValidateRequest{Message: stmt})
		if err != nil || res.GetDetectedType() != "MT940" {
			t.Fatalf("%v %v", res, err)
		}
	})
	for name, tc := range map[string]struct {
		req   *conversionv1.ValidateRequest
		field string
	}{
		"empty":        {&conversionv1.ValidateRequest{}, "message"},
		"undetectable": {&conversionv1.ValidateRequest{Message: "hello"}, "from"},
		"unknown from": {&conversionv1.ValidateRequest{Message: stmt, From: "MT799"}, "from"},
		"bad option":   {&conversionv1.ValidateRequest{Message: stmt, Options: &conversionv1.Options{TranslitProfile: "x"}}, "translitProfile"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := c.Validate(ctx, tc.req)
			if p := rpc.Problem(err); p.Type != problem.InvalidInput || p.Field != tc.field {
				t.Fatalf("got %v, want invalid-input on %s", err, tc.field)
			}
		})
	}
}

func TestNormalize(t *testing.T) {
	c := client(t)
	ctx := context.Background()
	res, err := c.Normalize(ctx, &conversionv1.NormalizeRequest{Message: "Bank header line\n" + stmt})
	if err != nil {
		t.Fatal(err)
	}
	got := res.GetMessage()
	if res.GetDetectedType() != "MT940" || !strings.Contains(got, ":20:STMT1\r\n") || strings.Contains(got, "header") || strings.Contains(got, "ü") {
		t.Fatalf("normalized: %q", got)
	}
	// Normalizing is idempotent: a normalized message is its own normal form.
	again, err := c.Normalize(ctx, &conversionv1.NormalizeRequest{Message: got})
	if err != nil || again.GetMessage() != got {
		t.Fatalf("not idempotent:\n%q\n%q (%v)", got, again.GetMessage(), err)
	}
	v, err := c.Validate(ctx, &conversionv1.ValidateRequest{Message: got})
	if err != nil || !v.GetValid() {
		t.Fatalf("normalized message does not validate: %v %v", v, err)
	}

	dir := filepath.Join("..", "..", "..", "..", "shared", "samples", "mx", "genkgo")
	for _, tc := range []struct {
		file, version string
		changed       bool
	}{
		{"camt053.v2.minimal.xml", "camt.053.001.02", false},
		{"camt053.v8.xml", "camt.053.001.08", false},
		{"camt053.v4.xml", "camt.053.001.08", true},
	} {
		t.Run(tc.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(dir, tc.file))
			if err != nil {
				t.Skipf("shared samples: %v", err)
			}
			res, err := c.Normalize(ctx, &conversionv1.NormalizeRequest{Message: string(data)})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(res.GetMessage(), "urn:iso:std:iso:20022:tech:xsd:"+tc.version) {
				t.Fatalf("not written as %s: %.300s", tc.version, res.GetMessage())
			}
			changed := false
			for _, w := range res.GetWarnings() {
				changed = changed || w.GetCode() == engine.CodeVersionChanged
			}
			if changed != tc.changed {
				t.Fatalf("version-changed warning %v, want %v: %v", changed, tc.changed, res.GetWarnings())
			}
		})
	}
}

func TestEnrich(t *testing.T) {
	c := client(t)
	ctx := context.Background()
	msg := "{1:F01COBADEFFAXXX0000000000}{2:O9401200260102COBADEFFAXXX00000000002601021200N}{4:\n" +
		":20:STMT1\n:25P:DE89370400440532013000\nDEUTDEFF500\n:28C:1/1\n:60F:C260101EUR100,00\n" +
		":61:2601020102C25,50NTRFREF1\n:86:166?00GUTSCHRIFT?20Invoice 1?30NWBKGB2L?31GB29NWBK60161331926819?32Max Muster\n" +
		":61:2601020102C1,00NTRFREF2\n:86:166?00GUTSCHRIFT?20Invoice 2?30NWBKGB2L?31GB29NWBK60161331926810?32Max Muster\n" +
		":62F:C260102EUR126,50\n-}"
	res, err := c.Enrich(ctx, &conversionv1.EnrichRequest{Message: msg, Options: &conversionv1.Options{Field86Profile: "german"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.GetMessage() != msg || res.GetDetectedType() != "MT940" {
		t.Fatalf("message or type changed: %v", res)
	}
	type iban struct {
		iban, path, cc, bank string
		valid                bool
	}
	var ibans []iban
	for _, i := range res.GetIbans() {
		ibans = append(ibans, iban{i.GetIban(), i.GetPath(), i.GetCountryCode(), i.GetBankCode(), i.GetValid()})
	}
	wantIBANs := []iban{
		{"DE89370400440532013000", "statement[1]/account", "DE", "37040044", true},
		{"GB29NWBK60161331926819", "statement[1]/entry[1]/counterparty", "GB", "NWBK", true},
		{"GB29NWBK60161331926810", "statement[1]/entry[2]/counterparty", "GB", "NWBK", false},
	}
	if len(ibans) != len(wantIBANs) {
		t.Fatalf("ibans %+v", ibans)
	}
	for k := range wantIBANs {
		if ibans[k] != wantIBANs[k] {
			t.Errorf("iban %d: %+v, want %+v", k, ibans[k], wantIBANs[k])
		}
	}
	var bics []string
	for _, b := range res.GetBics() {
		bics = append(bics, b.GetBic()+" "+b.GetPath()+" "+b.GetCountryCode())
	}
	// The second NWBKGB2L is the same BIC: listed once, where first found.
	if got := strings.Join(bics, "|"); got != "COBADEFF statement[1]/account/servicer DE|DEUTDEFF500 statement[1]/account/owner DE|NWBKGB2L statement[1]/entry[1]/counterparty GB" {
		t.Fatalf("bics %s", got)
	}
	if _, err := c.Enrich(ctx, &conversionv1.EnrichRequest{Message: strings.Replace(msg, "C260101", "C261301", 1)}); rpc.Problem(err).Type != problem.InvalidInput {
		t.Fatalf("a message that does not parse: %v", err)
	}
}
