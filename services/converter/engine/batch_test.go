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

// mt101Two is a request for transfer with two transactions (sequence B)
// for one ordering customer, as a corporate sends it (an input message).
const mt101Two = "{1:F01CORPDEFFAXXX0000000000}{2:I101DEUTDEFFXXXXN}{4:\r\n" +
	":20:BATCH-2026-11\r\n:28D:1/1\r\n:50H:/DE89370400440532013000\r\nMueller GmbH\r\nHauptstrasse 1\r\nDE/Berlin\r\n:30:261130\r\n" +
	":21:INV-1\r\n:32B:EUR1250,50\r\n:57A:BNPAFRPP\r\n:59F:/FR7630006000011234567890189\r\n1/Dupont SARL\r\n2/12 rue de la Paix\r\n3/FR/Paris\r\n:70:Invoice 1\r\n:71A:SHA\r\n" +
	":21:INV-2\r\n:23E:URGP\r\n:32B:EUR99,\r\n:59:/GB29NWBK60161331926819\r\nSmith Ltd\r\nGB/London\r\n:71A:OUR\r\n-}"

// mt204Two is a financial markets direct debit of two debit institutions.
const mt204Two = "{1:F01RBOSGB2LXXXX0000000000}{2:O2040815261020NDEAFIHHXXXX00000000002610200815N}{4:\r\n" +
	":20:XCME REF1\r\n:19:75000,\r\n:30:261021\r\n:57A:FNBCUS44\r\n" +
	":20:XCME REF2\r\n:21:MANDATEREF1\r\n:32B:USD50000,\r\n:53A:MLNYUS33\r\n" +
	":20:XCME REF3\r\n:32B:USD25000,\r\n:53A:/12345\r\nCHASUS33\r\n:72:/REC/second leg\r\n-}"

// MT101 and MT204 are detected (FIN, bare block 4 text, MX), listed by GET
// /v1/formats, and convert both ways; an MT101 with several transactions
// converts to pain.001, and back to MT101 it warns (strict refuses it).
func TestBatchThroughEngine(t *testing.T) {
	listed := map[string]bool{}
	for _, f := range eng.Formats() {
		listed[f.From+">"+f.To] = true
	}
	bare := regexp.MustCompile(`^\{1:[^}]*\}\{2:[^}]*\}\{4:\r\n`)
	for _, tc := range []struct {
		msg, mt, mx string
		txs         int
	}{{mt101Two, "MT101", "pain.001", 2}, {mt204Two, "MT204", "pacs.010", 2}} {
		for _, pair := range []string{tc.mt + ">" + tc.mx, tc.mx + ">" + tc.mt, tc.mt + ">" + tc.mt, tc.mx + ">" + tc.mx} {
			if !listed[pair] {
				t.Errorf("formats do not list %s", pair)
			}
		}
		res, err := eng.Convert(engine.Request{Input: []byte(tc.msg), To: tc.mx})
		if err != nil {
			t.Fatalf("%s: %v", tc.mt, err)
		}
		doc := res.Pages[0]
		if res.DetectedType != tc.mt || !strings.Contains(doc, "<MsgDefIdr>"+res.TargetVersion+"</MsgDefIdr>") ||
			strings.Count(doc, "<EndToEndId>") != tc.txs || strings.Count(doc, "<UETR>") != tc.txs {
			t.Errorf("%s: detected %s, target %s\n%s", tc.mt, res.DetectedType, res.TargetVersion, doc)
		}
		// Every transaction gets a UETR (CBPR+ requires it), generated with a warning.
		if !hasCode(res.Warnings, payment.CodeUETRGenerated) {
			t.Errorf("%s: no %s: %v", tc.mt, payment.CodeUETRGenerated, res.Warnings)
		}
		back, err := eng.Convert(engine.Request{Input: []byte(doc), To: tc.mt})
		if err != nil {
			t.Fatalf("%s back: %v", tc.mx, err)
		}
		if back.DetectedType != tc.mx || !strings.Contains(back.Pages[0], "{2:I"+tc.mt[2:]) || len(back.Pages) != 1 {
			t.Errorf("%s: detected %s\n%s", tc.mx, back.DetectedType, back.Pages[0])
		}
		text := strings.TrimSuffix(bare.ReplaceAllString(tc.msg, ""), "-}") + "-"
		if r, err := eng.Convert(engine.Request{Input: []byte(text), To: tc.mx}); err != nil || r.DetectedType != tc.mt {
			t.Errorf("bare %s: %v", tc.mt, err)
		}
		if _, err := eng.Convert(engine.Request{Input: []byte(tc.msg), To: "pacs.008"}); !errors.Is(err, engine.ErrUnsupported) {
			t.Errorf("%s to pacs.008: %v", tc.mt, err)
		}
		// Normalize: the type to itself.
		if r, err := eng.Convert(engine.Request{Input: []byte(tc.msg), To: tc.mt}); err != nil || !strings.Contains(r.Pages[0], "{2:I"+tc.mt[2:]) {
			t.Errorf("%s to itself: %v", tc.mt, err)
		}
	}

	// pain.001 with two transactions → MT101: written, with the warning
	// naming FIN's rule; strict refuses it.
	pain, err := eng.Convert(engine.Request{Input: []byte(mt101Two), To: "pain.001"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := eng.Convert(engine.Request{Input: []byte(pain.Pages[0]), To: "MT101"})
	if err != nil {
		t.Fatal(err)
	}
	var multi *statement.Warning
	for i, w := range res.Warnings {
		if w.Code == payment.CodeMT101Multiple && strings.Contains(w.Message, "November 2026") {
			multi = &res.Warnings[i]
		}
	}
	if multi == nil || strings.Count(res.Pages[0], "\r\n:21:") != 2 {
		t.Errorf("no one-transaction warning: %v\n%s", res.Warnings, res.Pages[0])
	}
	var se *engine.StrictError
	if _, err := eng.Convert(engine.Request{Input: []byte(pain.Pages[0]), To: "MT101", Options: statement.Options{Strict: true}}); !errors.As(err, &se) ||
		!hasCode(se.Warnings, payment.CodeMT101Multiple) {
		t.Errorf("strict wrote an MT101 with two transactions: %v", err)
	}
	// One transaction is what FIN takes: no warning, strict passes.
	one := regexp.MustCompile(`(?s)\r\n:21:INV-2.*:71A:OUR`).ReplaceAllString(mt101Two, "")
	p1, err := eng.Convert(engine.Request{Input: []byte(one), To: "pain.001"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Convert(engine.Request{Input: []byte(p1.Pages[0]), To: "MT101", Options: statement.Options{Strict: true}}); err != nil {
		t.Errorf("strict MT101 of one transaction: %v", err)
	}

	// Truncation names the MX path, transliteration is counted, strict refuses both.
	long := strings.Replace(p1.Pages[0], "<EndToEndId>INV-1</EndToEndId>", "<EndToEndId>INV-1-with-a-much-longer-id</EndToEndId>", 1)
	long = strings.Replace(long, "Dupont SARL", "Dupont Société Anonyme", 1)
	res, err = eng.Convert(engine.Request{Input: []byte(long), To: "MT101"})
	if err != nil {
		t.Fatal(err)
	}
	paths := map[string]string{}
	for _, w := range res.Warnings {
		paths[w.Code] = w.Path
	}
	if !strings.Contains(res.Pages[0], ":21:INV-1-with-a-mu+") || !strings.Contains(paths[payment.CodeTruncated], "PmtInf/CdtTrfTxInf[1]/PmtId/EndToEndId") ||
		!strings.Contains(res.Pages[0], "1/Dupont Societe Anonyme") || !hasCode(res.Warnings, payment.CodeTransliterated) {
		t.Errorf("truncation and transliteration: %v\n%s", res.Warnings, res.Pages[0])
	}
	if _, err := eng.Convert(engine.Request{Input: []byte(long), To: "MT101", Options: statement.Options{Strict: true}}); !errors.As(err, &se) {
		t.Errorf("strict let a cut reference pass: %v", err)
	}

	// Validation findings name the line and field.
	bad := strings.Replace(mt101Two, ":23E:URGP", ":23E:FAST", 1)
	v, err := eng.Validate([]byte(bad), "", statement.Options{})
	if err != nil || v.Valid || v.DetectedType != "MT101" || v.Errors[0].Code != engine.CodeInvalidMessage || v.Errors[0].Path != ":23E:" || v.Errors[0].Line != 19 {
		t.Errorf("validate :23E:: %+v %v", v, err)
	}
	noDebtor := regexp.MustCompile(`:50H:[^:]*`).ReplaceAllString(mt101Two, "")
	if v, err := eng.Validate([]byte(noDebtor), "", statement.Options{}); err != nil || v.Valid || !strings.Contains(v.Errors[0].Message, "D61") {
		t.Errorf("validate without ordering customer: %+v %v", v, err)
	}
	sum := strings.Replace(mt204Two, ":19:75000,", ":19:75001,", 1)
	if v, err := eng.Validate([]byte(sum), "", statement.Options{}); err != nil || !v.Valid || len(v.Warnings) == 0 || !strings.Contains(v.Warnings[0].Message, "C01") {
		t.Errorf("validate :19:: %+v %v", v, err)
	}
	// A network rule names its line and field: :36: without :33B: (D54).
	d54 := strings.Replace(mt101Two, ":71A:OUR\r\n", ":71A:OUR\r\n:36:1,1\r\n", 1)
	v, err = eng.Validate([]byte(d54), "", statement.Options{})
	if err != nil || len(v.Warnings) == 0 {
		t.Fatalf("validate D54: %+v %v", v, err)
	}
	if w := v.Warnings[len(v.Warnings)-1]; w.Code != payment.CodeNonstandard || w.Line != 25 || !strings.HasSuffix(w.Path, "field :36:") || !strings.Contains(w.Message, "D54") {
		t.Errorf("validate D54: %+v", v)
	}
	mixed := strings.Replace(mt204Two, ":32B:USD25000,", ":32B:EUR25000,", 1)
	if v, err := eng.Validate([]byte(mixed), "", statement.Options{}); err != nil || v.Valid || !strings.Contains(v.Errors[0].Message, "C02") {
		t.Errorf("validate mixed currencies: %+v %v", v, err)
	}
}

// MT104, MT107 and pacs.003 are detected and refused by name with the
// reason, as a conversion and as a validation.
func TestDirectDebitsRefusedByName(t *testing.T) {
	mt104 := "{1:F01CORPDEFFAXXX0000000000}{2:I104DEUTDEFFXXXXN}{4:\r\n:20:DD1\r\n:30:261130\r\n:21:A\r\n:32B:EUR1,\r\n:59:/1\r\nX\r\n-}"
	mt107 := strings.Replace(mt104, "I104", "I107", 1)
	pacs003 := `<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pacs.003.001.08"><FIToFICstmrDrctDbt/></Document>`
	for _, tc := range []struct{ in, typ, to string }{
		{mt104, "MT104", "pacs.003"}, {mt107, "MT107", "pacs.003"}, {pacs003, "pacs.003", "MT104"}, {pacs003, "pacs.003", "MT107"},
		{mt104, "MT104", "pain.001"}, {pacs003, "pacs.003", "MT101"}, {mt107, "MT107", "MT107"},
	} {
		_, err := eng.Convert(engine.Request{Input: []byte(tc.in), To: tc.to})
		if !errors.Is(err, engine.ErrUnsupported) || !strings.Contains(err.Error(), payment.RefusedDirectDebit) {
			t.Errorf("%s to %s: %v", tc.typ, tc.to, err)
		}
		v, err := eng.Validate([]byte(tc.in), "", statement.Options{})
		if err != nil || v.Valid || v.DetectedType != tc.typ || !strings.Contains(v.Errors[0].Message, "direct debit") {
			t.Errorf("validate %s: %+v %v", tc.typ, v, err)
		}
	}
	for _, f := range eng.Formats() {
		if f.From == "MT104" || f.From == "MT107" || f.From == "pacs.003" || f.To == "pacs.003" {
			t.Errorf("formats list %s > %s", f.From, f.To)
		}
	}
}
