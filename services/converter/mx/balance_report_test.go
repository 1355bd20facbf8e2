package mx

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ledgerlane/platform/services/converter/engine"
	"github.com/ledgerlane/platform/services/converter/mt"
	"github.com/ledgerlane/platform/services/converter/statement"
)

// reportMeaning is stmtMeaning with what a balance report adds: the
// summary, the statement number and page, the report time and :86:.
func reportMeaning(s *statement.Statement) map[string]string {
	m := stmtMeaning(s)
	m["summary"] = fmt.Sprintf("%t D%d %s C%d %s", s.Summary.Set, s.Summary.DebitCount, s.Summary.DebitTotal, s.Summary.CreditCount, s.Summary.CreditTotal)
	m["number"] = s.StatementNumber + "/" + s.SequenceNumber
	m["info"] = s.Info
	t := s.DateTimeIndicator
	if t.IsZero() {
		t = s.CreatedAt
	}
	m["time"] = t.Format("2006-01-02T15:04-0700")
	return m
}

// TestBalanceReport: the MT941 of mt/testdata converts to camt.052 in both
// versions, schema-valid, with its balances and summary and no
// BALANCE_MISMATCH either way; MT941 → camt.052 → MT941 keeps its meaning
// (the :21: dropped with its warning); a camt.052 with entries is refused
// as MT941 and still becomes an MT942.
func TestBalanceReport(t *testing.T) {
	fin, err := os.ReadFile("../mt/testdata/mt941/balance_report.fin")
	if err != nil {
		t.Fatal(err)
	}
	// The block 4 text alone, as a bank's file export holds it.
	bare := regexp.MustCompile(`(?s)^\{1:[^}]*\}\{2:[^}]*\}\{4:\r\n(.*)-\}.*$`).ReplaceAll(fin, []byte("$1-\r\n"))
	for name, in := range map[string][]byte{"FIN": fin, "bare": bare} {
		t.Run(name, func(t *testing.T) {
			src, _, err := mt.Parse(in, statement.Options{})
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range []string{"camt.052.001.02", "camt.052.001.08"} {
				res, err := testEngine.Convert(engine.Request{Input: in, To: "camt.052", Options: statement.Options{TargetVersion: v}})
				if err != nil {
					t.Fatal(err)
				}
				if res.DetectedType != "MT941" {
					t.Errorf("detected %s", res.DetectedType)
				}
				doc := res.Pages[0]
				xmllint(t, v, doc)
				for _, want := range []string{"<Cd>OPBD</Cd>", "<Cd>CLBD</Cd>", "<Cd>CLAV</Cd>", ">132190.35</Amt>", ">129800</Amt>",
					"<NbOfNtries>12</NbOfNtries>", "<Sum>8470.2</Sum>", "<ElctrncSeqNb>44</ElctrncSeqNb>", "LIMIT EUR 50000 NOT USED"} {
					if !strings.Contains(doc, want) {
						t.Errorf("%s lacks %s", v, want)
					}
				}
				if strings.Contains(doc, "<Ntry>") {
					t.Errorf("%s has entries", v)
				}
				if codes := warningCodes(res.Warnings); codes != "MX_RELATED_REFERENCE_DROPPED" && codes != "MT_MISSING_BLOCK5,MX_RELATED_REFERENCE_DROPPED" {
					t.Errorf("%s warnings: %s", v, codes)
				}
				camt, warns, err := Parse([]byte(doc), typeCamt2, statement.Options{})
				if err != nil || hasCode(warns, CodeBalanceMismatch) {
					t.Fatalf("camt.052 read back: %v %+v", err, warns)
				}
				back, err := testEngine.Convert(engine.Request{Input: []byte(doc), To: "MT941"})
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(back.Pages[0], "{2:I941") || !strings.Contains(back.Pages[0], "\r\n:28:44/1\r\n") {
					t.Errorf("MT941:\n%s", back.Pages[0])
				}
				again, _, err := mt.Parse([]byte(back.Pages[0]), statement.Options{})
				if err != nil {
					t.Fatal(err)
				}
				want := reportMeaning(src[0])
				if name == "FIN" {
					// camt.052 has one creation time: the FIN output time
					// (block 2) rather than :13D:; the MT941 sample is an
					// output message, ours is an input message.
					want["time"] = reportMeaning(camt[0])["time"]
				}
				for k, w := range want {
					if g := reportMeaning(again[0])[k]; g != w {
						t.Errorf("%s round trip %s: %q, want %q", v, k, g, w)
					}
				}
				if again[0].RelatedReference != "" {
					t.Errorf(":21: came back")
				}
			}
		})
	}

	// camt.052 with entries: MT941 refuses naming the entry, MT942 writes it.
	t.Run("with entries", func(t *testing.T) {
		report := readSample(t, filepath.Join(sharedDir(t), "samples", "pairs", "cbpr_mx_to_mt", "c_52_1_c__CBPR+_c.52.1.c_camt.052-CtoD.input.xml"))
		var pe *statement.ParseError
		if _, err := testEngine.Convert(engine.Request{Input: report, To: "MT941"}); !errors.As(err, &pe) || !strings.Contains(pe.Field, "Ntry[1]") || !strings.Contains(pe.Reason, "MT942") {
			t.Errorf("camt.052 with entries to MT941: %v", err)
		}
		if _, err := testEngine.Convert(engine.Request{Input: report, To: "MT942"}); err != nil {
			t.Errorf("camt.052 to MT942: %v", err)
		}
	})
	// A camt.053 is no balance report, and MT941 is no statement.
	for _, pair := range [][2]string{{"camt.053", "MT941"}, {"MT941", "camt.053"}, {"MT941", "MT942"}, {"MT941", "MT940"}} {
		if listed(pair[0], pair[1]) {
			t.Errorf("%s to %s is listed", pair[0], pair[1])
		}
	}
}

func listed(from, to string) bool {
	for _, f := range testEngine.Formats() {
		if f.From == from && f.To == to {
			return true
		}
	}
	return false
}

func warningCodes(ws []statement.Warning) string {
	var codes []string
	for _, w := range ws {
		codes = append(codes, w.Code)
	}
	return strings.Join(codes, ",")
}
