package engine_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"github.com/ledgerlane/platform/services/converter/engine"
	"github.com/ledgerlane/platform/services/converter/mx"
	"github.com/ledgerlane/platform/services/converter/statement"
)

// camt053 is a camt.053.001.08 with one statement: pgntn is the StmtPgntn
// element (or ""), acctCcy the Acct/Ccy (or ""), ccy the Ccy attribute of
// every amount (or "" for none), bals and ntries the Bal and Ntry elements.
func camt053(pgntn, acctCcy, ccy, bals, ntries string) string {
	acct := "<Acct><Id><IBAN>DE89370400440532013000</IBAN></Id>"
	if acctCcy != "" {
		acct += "<Ccy>" + acctCcy + "</Ccy>"
	}
	acct += "</Acct>"
	attr := ""
	if ccy != "" {
		attr = ` Ccy="` + ccy + `"`
	}
	r := strings.NewReplacer("{CCY}", attr)
	return `<?xml version="1.0" encoding="UTF-8"?>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.08"><BkToCstmrStmt>
<GrpHdr><MsgId>MSG1</MsgId><CreDtTm>2026-03-05T08:00:00+00:00</CreDtTm></GrpHdr>
<Stmt><Id>STMT1</Id>` + pgntn + `<CreDtTm>2026-03-05T08:00:00+00:00</CreDtTm>` + acct + r.Replace(bals) + r.Replace(ntries) + `</Stmt>
</BkToCstmrStmt></Document>`
}

func bal(code, amt, mark, date string) string {
	return `<Bal><Tp><CdOrPrtry><Cd>` + code + `</Cd></CdOrPrtry></Tp><Amt{CCY}>` + amt + `</Amt><CdtDbtInd>` + mark +
		`</CdtDbtInd><Dt><Dt>` + date + `</Dt></Dt></Bal>`
}

func ntry(amt, mark, status string) string {
	return `<Ntry><Amt{CCY}>` + amt + `</Amt><CdtDbtInd>` + mark + `</CdtDbtInd><Sts><Cd>` + status +
		`</Cd></Sts><BookgDt><Dt>2026-03-02</Dt></BookgDt><ValDt><Dt>2026-03-02</Dt></ValDt></Ntry>`
}

func fin940(block4 string) string {
	return "{1:F01BANKDEFFAXXX0000000000}{2:O9401200260101BANKDEFFAXXX00000000002601011200N}{4:\r\n" + block4 + "-}"
}

func warnCodes(ws []statement.Warning) map[string]statement.Warning {
	m := map[string]statement.Warning{}
	for _, w := range ws {
		if _, ok := m[w.Code]; !ok {
			m[w.Code] = w
		}
	}
	return m
}

// TestStatementFidelity covers the statement defects found on real bank
// files (issue 15, item 8). Each case failed before its fix.
func TestStatementFidelity(t *testing.T) {
	const std = ":20:STMT1\r\n:25:DE89370400440532013000\r\n"
	for _, tc := range []struct {
		name, in, to string
		opts         statement.Options
		// want and not are substrings the first page must and must not hold.
		want, not []string
		// warn and noWarn are warning codes that must and must not be there.
		warn, noWarn []string
	}{
		{
			// PgNb 0 was "not page 1", so the opening came back as :60M:
			// without any warning.
			name: "PgNb 0 is the first page",
			in: camt053("<StmtPgntn><PgNb>0</PgNb><LastPgInd>true</LastPgInd></StmtPgntn>", "EUR", "EUR",
				bal("OPBD", "100", "CRDT", "2026-03-01")+bal("CLBD", "90", "CRDT", "2026-03-02"), ntry("10", "DBIT", "BOOK")),
			to:     "MT940",
			want:   []string{":60F:C260301EUR100,", ":62F:C260302EUR90,", ":28C:", "/0\r\n"},
			not:    []string{":60M:", ":62M:"},
			warn:   []string{"MX_PAGE_NUMBER_ZERO"},
			noWarn: []string{"BALANCE_MARKING_CHANGED", "BALANCE_MISMATCH"},
		},
		{
			name: "PgNb 001 is the first page too",
			in: camt053("<StmtPgntn><PgNb>001</PgNb><LastPgInd>true</LastPgInd></StmtPgntn>", "EUR", "EUR",
				bal("OPBD", "100", "CRDT", "2026-03-01")+bal("CLBD", "100", "CRDT", "2026-03-02"), ""),
			to:   "MT940",
			want: []string{":60F:C260301EUR100,"},
			not:  []string{":60M:"},
		},
		{
			// "?32Mueller " + "GmbH" was joined as MuellerGmbH.
			name: "german :86: keeps a space at a line's end",
			in: fin940(std + ":28C:1/1\r\n:60F:C260301EUR100,00\r\n:61:2603020302D10,00NTRFNONREF\r\n" +
				":86:166?00GUTSCHRIFT?20Rechnung 4711?32Mueller \r\nGmbH?33 \r\n:62F:C260302EUR90,00\r\n"),
			to:     "camt.053",
			opts:   statement.Options{Field86Profile: "german"},
			want:   []string{"<Nm>Mueller GmbH</Nm>"},
			not:    []string{"MuellerGmbH"},
			noWarn: []string{"BALANCE_MISMATCH"},
		},
		{
			name: "german :86: SEPA remittance keeps a space at a line's end",
			in: fin940(std + ":28C:1/1\r\n:60F:C260301EUR100,00\r\n:61:2603020302D10,00NTRFNONREF\r\n" +
				":86:166?00SEPA?20EREF+E2E1 SVWZ+Rechnung \r\n?21Nr 4711\r\n:62F:C260302EUR90,00\r\n"),
			to:   "camt.053",
			opts: statement.Options{Field86Profile: "german"},
			want: []string{"<Ustrd>Rechnung Nr 4711</Ustrd>", "<EndToEndId>E2E1</EndToEndId>"},
		},
		{
			// The derived :62F: took the creation day (2026-03-05).
			name: "derived closing of a statement without entries has the statement's date",
			in:   camt053("", "EUR", "EUR", bal("OPBD", "100", "CRDT", "2026-03-02"), ""),
			to:   "MT940",
			want: []string{":60F:C260302EUR100,", ":62F:C260302EUR100,"},
			not:  []string{"260305EUR"},
			warn: []string{"MT_BALANCE_DERIVED"},
		},
		{
			name: "camt balances that do not add up",
			in: camt053("", "EUR", "EUR", bal("OPBD", "100", "CRDT", "2026-03-01")+bal("CLBD", "95", "CRDT", "2026-03-02"),
				ntry("10", "DBIT", "BOOK")),
			to:   "MT940",
			warn: []string{"BALANCE_MISMATCH"},
		},
		{
			name: "camt balances that add up, a pending entry aside",
			in: camt053("", "EUR", "EUR", bal("OPBD", "100", "CRDT", "2026-03-01")+bal("CLBD", "90", "CRDT", "2026-03-02"),
				ntry("10", "DBIT", "BOOK")+ntry("7.5", "CRDT", "PDNG")),
			to:     "camt.053",
			noWarn: []string{"BALANCE_MISMATCH"},
		},
		{
			name: "camt debit balances that add up",
			in: camt053("", "EUR", "EUR", bal("OPBD", "5", "DBIT", "2026-03-01")+bal("CLBD", "15.25", "DBIT", "2026-03-02"),
				ntry("10.25", "DBIT", "BOOK")),
			to:     "MT940",
			noWarn: []string{"BALANCE_MISMATCH"},
		},
		{
			// camt said nothing of :60M:/:62M: it could not carry.
			name:   "an intermediate opening on an unpaginated statement",
			in:     fin940(std + ":28C:7\r\n:60M:C260301EUR100,00\r\n:61:2603020302D10,00NTRFNONREF\r\n:62F:C260302EUR90,00\r\n"),
			to:     "camt.053",
			warn:   []string{"BALANCE_MARKING_CHANGED"},
			noWarn: []string{"BALANCE_MISMATCH"},
		},
		{
			name: "an intermediate opening on page 1",
			in:   fin940(std + ":28C:7/1\r\n:60M:C260301EUR100,00\r\n:62M:C260301EUR100,00\r\n"),
			to:   "camt.053",
			want: []string{"<PgNb>1</PgNb>", "<LastPgInd>false</LastPgInd>"},
			warn: []string{"BALANCE_MARKING_CHANGED"},
		},
		{
			name:   "paged MT statement keeps its marks",
			in:     fin940(std + ":28C:7/2\r\n:60M:C260301EUR100,00\r\n:62F:C260301EUR100,00\r\n"),
			to:     "camt.053",
			want:   []string{"<PgNb>2</PgNb>", "<LastPgInd>true</LastPgInd>"},
			noWarn: []string{"BALANCE_MARKING_CHANGED"},
		},
		{
			name:   "camt.053.001.02 with one statement keeps the marks in MsgPgntn",
			in:     fin940(std + ":28C:7/2\r\n:60M:C260301EUR100,00\r\n:62M:C260301EUR100,00\r\n"),
			to:     "camt.053.001.02",
			want:   []string{"<MsgPgntn><PgNb>2</PgNb><LastPgInd>false</LastPgInd></MsgPgntn>"},
			noWarn: []string{"BALANCE_MARKING_CHANGED"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := eng.Convert(engine.Request{Input: []byte(tc.in), To: tc.to, Options: tc.opts})
			if err != nil {
				t.Fatal(err)
			}
			out := strings.Join(res.Pages, "\n")
			// Markup is compared without the writer's indentation.
			compact := regexp.MustCompile(`>\s+<`).ReplaceAllString(out, "><")
			for _, w := range tc.want {
				if !strings.Contains(out, w) && !strings.Contains(compact, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(out, n) {
					t.Errorf("output has %q:\n%s", n, out)
				}
			}
			got := warnCodes(res.Warnings)
			for _, c := range tc.warn {
				if _, ok := got[c]; !ok {
					t.Errorf("no %s warning (have %v)", c, res.Warnings)
				}
			}
			for _, c := range tc.noWarn {
				if w, ok := got[c]; ok {
					t.Errorf("unexpected %s: %s %s", c, w.Path, w.Message)
				}
			}
		})
	}
}

// TestGermanTrailingSpaceNotReported: a space kept at a :86: line's end is
// not reported as removed (it was MT_TRAILING_SPACE, "nothing lost").
func TestGermanTrailingSpaceNotReported(t *testing.T) {
	in := fin940(":20:STMT1\r\n:25:DE89370400440532013000\r\n:28C:1/1\r\n:60F:C260301EUR100,00\r\n" +
		":61:2603020302D10,00NTRFNONREF\r\n:86:166?00GUTSCHRIFT?32Mueller \r\nGmbH\r\n:62F:C260302EUR90,00\r\n")
	res, err := eng.Convert(engine.Request{Input: []byte(in), To: "camt.053", Options: statement.Options{Field86Profile: "german"}})
	if err != nil {
		t.Fatal(err)
	}
	if w, ok := warnCodes(res.Warnings)["MT_TRAILING_SPACE"]; ok {
		t.Errorf("MT_TRAILING_SPACE for a kept space: %s", w.Path)
	}
	// The plain profile joins lines with a line break: the space is padding.
	res, err = eng.Convert(engine.Request{Input: []byte(in), To: "camt.053"})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := warnCodes(res.Warnings)["MT_TRAILING_SPACE"]; !ok {
		t.Errorf("plain profile: no MT_TRAILING_SPACE")
	}
}

// TestStatementRefusalsNameTheSource: every refusal of a statement names
// where the user can fix it: the MT message, line and field, or the camt
// statement's line.
func TestStatementRefusalsNameTheSource(t *testing.T) {
	noBalance := "{1:F01BANKDEFFAXXX0000000000}{2:O9401200260101BANKDEFFAXXX00000000002601011200N}{4:\r\n" +
		":20:A\r\n:25:DE89370400440532013000\r\n:28C:1/1\r\n:62F:C260302EUR90,00\r\n-}" +
		"{1:F01BANKDEFFAXXX0000000000}{2:O9401200260101BANKDEFFAXXX00000000002601011200N}{4:\r\n" +
		":20:B\r\n:25:DE89370400440532013000\r\n:28C:2/1\r\n-}"
	bigAmount := fin940(":20:STMT1\r\n:25:DE89370400440532013000\r\n:28C:1/1\r\n:60F:C260301EUR100,00\r\n" +
		":61:2603020302D1234567890123456789,NTRFNONREF\r\n:62F:C260302EUR90,00\r\n")
	report := "{1:F01BANKDEFFAXXX0000000000}{2:O9421200260101BANKDEFFAXXX00000000002601011200N}{4:\r\n" +
		":20:R1\r\n:25:DE89370400440532013000\r\n:28C:1/1\r\n:13D:2603021200+0100\r\n-}"
	noCcy := camt053("", "", "", bal("OPBD", "100", "CRDT", "2026-03-01"), "")
	for _, tc := range []struct {
		name, in, to string
		opts         statement.Options
		msg, line    int
		field        string
	}{
		{"MT940 without balance to camt.053", noBalance, "camt.053", statement.Options{}, 2, 7, ":60a:"},
		{"MT940 amount over 18 digits to camt.053", bigAmount, "camt.053", statement.Options{}, 1, 6, ":61:"},
		{"MT942 without currency to OFX", report, "ofx", statement.Options{}, 1, 2, ":34F:"},
		{"MT942 without currency to QBO", report, "qbo", statement.Options{IntuBid: "3000"}, 1, 2, ":34F:"},
		{"MT942 without currency to MT940", report, "MT942", statement.Options{}, 1, 2, ":34F:"},
		{"camt.053 without currency to OFX", noCcy, "ofx", statement.Options{}, 0, 4, "BkToCstmrStmt/Stmt[1]/Acct/Ccy"},
		{"camt.053 without currency to camt.053", noCcy, "camt.053", statement.Options{}, 0, 4, "Stmt[1]/Bal[1]/Amt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := eng.Convert(engine.Request{Input: []byte(tc.in), To: tc.to, Options: tc.opts})
			var pe *statement.ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("want a ParseError, got %v", err)
			}
			if pe.Message != tc.msg || pe.Line != tc.line || pe.Field != tc.field {
				t.Errorf("got message %d, line %d, field %q (%v); want %d, %d, %q", pe.Message, pe.Line, pe.Field, err, tc.msg, tc.line, tc.field)
			}
		})
	}
}

// TestBalanceMarkingProperty: over generated statements, MT940 → camt.053 →
// MT940 and camt.053 → MT940 → camt.053 in both camt versions, any change of
// the first/intermediate marking of the opening or closing balance comes
// with a BALANCE_MARKING_CHANGED warning.
func TestBalanceMarkingProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 8))
	marks := regexp.MustCompile(`:(60|62)([FM]):`)
	mtMarks := func(pages []string) string {
		first := marks.FindAllStringSubmatch(pages[0], -1)
		last := marks.FindAllStringSubmatch(pages[len(pages)-1], -1)
		if len(first) == 0 || len(last) == 0 {
			return ""
		}
		return first[0][2] + last[len(last)-1][2]
	}
	warned := func(ws ...[]statement.Warning) bool {
		for _, l := range ws {
			if _, ok := warnCodes(l)["BALANCE_MARKING_CHANGED"]; ok {
				return true
			}
		}
		return false
	}
	for i := range 200 {
		v := []string{"camt.053.001.02", "camt.053.001.08"}[i%2]
		// MT940 → camt.053 → MT940.
		seq := []string{"", "/0", "/1", "/2", "/3"}[r.IntN(5)]
		om, cm := "FM"[r.IntN(2):][:1], "FM"[r.IntN(2):][:1]
		n := r.IntN(3)
		var b strings.Builder
		fmt.Fprintf(&b, ":20:S%d\r\n:25:DE89370400440532013000\r\n:28C:%d%s\r\n:60%s:C260301EUR100,00\r\n", i, 1+r.IntN(99), seq, om)
		for range n {
			b.WriteString(":61:2603020302D10,00NTRFNONREF\r\n")
		}
		fmt.Fprintf(&b, ":62%s:C260302EUR%d,00\r\n", cm, 100-10*n)
		in := fin940(b.String())
		camt, err := eng.Convert(engine.Request{Input: []byte(in), To: "camt.053", Options: statement.Options{TargetVersion: v}})
		if err != nil {
			t.Fatalf("case %d: %v\n%s", i, err, in)
		}
		back, err := eng.Convert(engine.Request{Input: []byte(camt.Pages[0]), To: "MT940"})
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if got := mtMarks(back.Pages); got != om+cm && !warned(camt.Warnings, back.Warnings) {
			t.Errorf("case %d (%s, :28C: seq %q): :60%s:/:62%s: came back as %s without BALANCE_MARKING_CHANGED", i, v, seq, om, cm, got)
		}
		// camt.053 → MT940 → camt.053.
		pg := []string{"", "0", "1", "2"}[r.IntN(4)]
		pgntn := ""
		if pg != "" {
			pgntn = "<StmtPgntn><PgNb>" + pg + "</PgNb><LastPgInd>" + []string{"true", "false"}[r.IntN(2)] + "</LastPgInd></StmtPgntn>"
		}
		src := camt053(pgntn, "EUR", "EUR", bal("OPBD", "100", "CRDT", "2026-03-01")+bal("CLBD", "100", "CRDT", "2026-03-02"), "")
		before, _, err := mx.Parse([]byte(src), "camt.053", statement.Options{})
		if err != nil {
			t.Fatal(err)
		}
		mtOut, err := eng.Convert(engine.Request{Input: []byte(src), To: "MT940"})
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		again, err := eng.Convert(engine.Request{Input: []byte(strings.Join(mtOut.Pages, "\r\n")), To: "camt.053", Options: statement.Options{TargetVersion: v}})
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		after, _, err := mx.Parse([]byte(again.Pages[0]), "camt.053", statement.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, typ := range []statement.BalanceType{statement.OpeningBooked, statement.ClosingBooked} {
			x, _ := before[0].Balance(typ)
			y, _ := after[0].Balance(typ)
			if x.Intermediate != y.Intermediate && !warned(mtOut.Warnings, again.Warnings) {
				t.Errorf("case %d (%s, %s): %s intermediate %t came back %t without BALANCE_MARKING_CHANGED", i, v, pgntn, typ, x.Intermediate, y.Intermediate)
			}
		}
	}
}
