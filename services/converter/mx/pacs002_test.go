package mx

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ledgerlane/platform/services/converter/mt"
	"github.com/ledgerlane/platform/services/converter/payment"
	"github.com/ledgerlane/platform/services/converter/statement"
)

const pacs2v10 = "pacs.002.001.10"

// meaningS is what a status report must keep across formats. A reason
// code MT rejects carry as XT99 with the ISO code after it means that code.
func meaningS(p *payment.Payment) map[string]string {
	reason, info := p.StatusReason, p.StatusInfo
	if reason == "XT99" && len(info) > 0 {
		reason, info = info[0], info[1:]
	}
	cut := func(s string) string { // both sides cut references to 16 with '+'
		if len(s) > 16 {
			return s[:15] + "+"
		}
		return s
	}
	return map[string]string{
		"kind": string(p.Kind), "status": p.TransactionStatus, "reason": reason, "info": strings.Join(info, "|"),
		"reference": cut(p.MessageID), "originalMessage": cut(p.OriginalMessageID), "originalInstruction": cut(p.InstructionID),
		"originalEndToEnd": cut(p.EndToEndID), "uetr": p.UETR, "from": bic8(p.Header.From), "to": bic8(p.Header.To),
	}
}

func compareMeaningS(t *testing.T, exp, got map[string]string) {
	t.Helper()
	for k, v := range exp {
		if got[k] != v {
			t.Errorf("%s: expected %q, got %q", k, v, got[k])
		}
	}
}

// TestPacs002FromMTPairs: every MT199 reject → pacs.002 pair converts, the
// output is valid against head.001.001.02 and pacs.002.001.10, and agrees
// with the expected file on meaning.
func TestPacs002FromMTPairs(t *testing.T) {
	for _, in := range pairFiles(t, "cbpr_mt_to_mx/*mt199*pacs*002*.input.fin") {
		t.Run(filepath.Base(in), func(t *testing.T) {
			src := readSample(t, in)
			if typ, _, _ := mt.DetectPayment(src); typ != "MT199" {
				t.Fatalf("detected %q", typ)
			}
			pays, _, err := mt.ParsePayments(src, "MT199")
			if err != nil {
				t.Fatal(err)
			}
			docs, _, err := RenderPayments(pays, typePacs2, pacs2v10)
			if err != nil {
				t.Fatal(err)
			}
			xmllintPayment(t, pacs2v10, docs[0])
			got, _, err := ParsePayments([]byte(docs[0]), typePacs2, "")
			if err != nil {
				t.Fatal(err)
			}
			exp, _, err := ParsePayments(readSample(t, strings.Replace(in, ".input.fin", ".expected.xml", 1)), typePacs2, "")
			if err != nil {
				t.Fatalf("expected file: %v", err)
			}
			compareMeaningS(t, meaningS(exp[0]), meaningS(got[0]))
		})
	}
}

// TestMT199FromPacs002Pairs: every pacs.002 → MT199 pair converts and
// agrees with the expected MT on meaning; the MT converts back to a
// schema-valid pacs.002.001.10.
func TestMT199FromPacs002Pairs(t *testing.T) {
	for _, in := range pairFiles(t, "cbpr_mx_to_mt/*pacs.002*.input.xml") {
		t.Run(filepath.Base(in), func(t *testing.T) {
			pays, _, err := ParsePayments(readSample(t, in), typePacs2, "")
			if err != nil {
				t.Fatal(err)
			}
			pages, _, err := mt.RenderPayments("199", pays, statement.Options{})
			if err != nil {
				t.Fatal(err)
			}
			got, _, err := mt.ParsePayments([]byte(pages[0]), "MT199")
			if err != nil {
				t.Fatalf("%v\n%s", err, pages[0])
			}
			exp, _, err := mt.ParsePayments(readSample(t, strings.Replace(in, ".input.xml", ".expected.fin", 1)), "")
			if err != nil {
				t.Fatalf("expected file: %v", err)
			}
			compareMeaningS(t, meaningS(exp[0]), meaningS(got[0]))
			back, _, err := RenderPayments(got, typePacs2, pacs2v10)
			if err != nil {
				t.Fatal(err)
			}
			xmllintPayment(t, pacs2v10, back[0])
		})
	}
}

func genStatus(r *rand.Rand, xOnly bool) *payment.Payment {
	c := genPayment(r, xOnly)
	p := &payment.Payment{Kind: payment.Status, Header: c.Header, MessageID: c.MessageID, TransactionStatus: "RJCT",
		StatusReason: []string{"AC04", "AC05", "AM04", "XT99", "NARR"}[r.IntN(5)], OriginalMessageID: fmt.Sprintf("ORIG%d", r.IntN(1e9)),
		InstructionID: fmt.Sprintf("INS%d", r.IntN(1e9))}
	if r.IntN(2) == 0 {
		p.OriginalMessageType = []string{"MT103", "MT202"}[r.IntN(2)]
	}
	if r.IntN(2) == 0 {
		p.EndToEndID = fmt.Sprintf("E2E%d", r.IntN(1e12))
	}
	if r.IntN(2) == 0 {
		p.UETR = c.UETR
	}
	if r.IntN(2) == 0 {
		p.StatusInfo = []string{c.Debtor.Name}
		if r.IntN(2) == 0 {
			p.StatusInfo = append(p.StatusInfo, c.Creditor.Name)
		}
	}
	if r.IntN(3) == 0 {
		// A status other than a reject: the gpi status confirmation form.
		p.TransactionStatus = []string{"ACSP", "ACCC", "ACSC", "PDNG", "ACTC"}[r.IntN(5)]
		p.StatusReason = []string{"", "G000", "G001", "G002", "G003", "G004"}[r.IntN(6)]
		p.StatusTime = time.Date(2025, time.Month(1+r.IntN(12)), 1+r.IntN(28), r.IntN(24), r.IntN(60), 0, 0, time.FixedZone("", (r.IntN(27)-13)*3600))
	}
	return p
}

// TestPacs002RoundTripProperties converts generated rejects pacs.002 →
// MT199/MT299 → pacs.002 and MT → pacs.002 → MT; every difference must be
// explained by a warning; the pacs.002 written is schema-valid (every 20th).
func TestPacs002RoundTripProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 199))
	n := 150
	if testing.Short() {
		n = 30
	}
	type canonS struct {
		Status, Reason, Info, Ref, OrigMsg, OrigType, OrigInstr, OrigE2E, UETR, Time string
	}
	canon := func(p *payment.Payment) canonS {
		tm := ""
		if !p.StatusTime.IsZero() {
			tm = p.StatusTime.Format(time.RFC3339)
		}
		return canonS{p.TransactionStatus, p.StatusReason, strings.Join(p.StatusInfo, "|"), p.MessageID, p.OriginalMessageID,
			p.OriginalMessageType, p.InstructionID, p.EndToEndID, p.UETR, tm}
	}
	lossy := []string{payment.CodeTruncated, payment.CodeTransliterated}
	// A gpi status confirmation (statuses other than RJCT) has no place for
	// the original message's id beside :21:, its name or the end-to-end id
	// (PAY_FIELD_DROPPED); a status time it lacks is the report's
	// (PAY_FIELD_DEFAULTED).
	dropped := append([]string{payment.CodeFieldDropped}, lossy...)
	explainsS := map[string][]string{"Info": lossy, "Ref": lossy, "OrigMsg": dropped, "OrigInstr": lossy, "OrigE2E": dropped,
		"OrigType": {payment.CodeFieldDropped}, "Time": {payment.CodeFieldDefaulted, payment.CodeFieldDropped}}
	check := func(i int, a, b canonS, warns []statement.Warning, detail string) {
		t.Helper()
		codes := map[string]bool{}
		for _, w := range warns {
			codes[w.Code] = true
		}
		va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
		for f := 0; f < va.NumField(); f++ {
			name := va.Type().Field(f).Name
			if va.Field(f).String() == vb.Field(f).String() {
				continue
			}
			ok := false
			for _, c := range explainsS[name] {
				ok = ok || codes[c]
			}
			if !ok {
				t.Errorf("case %d: %s changed without a warning that explains it: %q → %q\n%v\n%s", i, name, va.Field(f).String(), vb.Field(f).String(), warns, detail)
			}
		}
	}
	for i := range n {
		gen := genStatus(r, i%2 == 1)
		typ := []string{"199", "299"}[i%2]
		rt := paymentRoundTrip(t, i, gen, typePacs2, pacs2v10, typ)
		check(i, canon(rt.mx1), canon(rt.mx2), rt.mxWarns, rt.mtPage)
		if i%20 == 0 {
			xmllintPayment(t, pacs2v10, rt.mxDocs[0])
			xmllintPayment(t, pacs2v10, rt.mxDocs[1])
		}
		a, b := canon(rt.mt1), canon(rt.mt2)
		check(i, a, b, rt.mtWarns, rt.mtPages[0]+"\n--\n"+rt.mtPages[1])
		if rt.mt2.MT != typ {
			t.Errorf("case %d: read back as MT%s", i, rt.mt2.MT)
		}
		if i%20 == 0 {
			xmllintPayment(t, pacs2v10, rt.mtMX)
		}
	}
}

// TestPacs002Kinds: the targets refuse other kinds, a free-format MT199 is
// no status, and pacs.002 with a status other than RJCT has no MT199 form.
func TestPacs002Kinds(t *testing.T) {
	s := genStatus(rand.New(rand.NewPCG(5, 6)), true)
	if _, _, err := mt.RenderPayments("103", []*payment.Payment{s}, statement.Options{}); err == nil {
		t.Error("a status written as MT103")
	}
	if _, _, err := RenderPayments([]*payment.Payment{s}, typePacs9, pacs9v08); err == nil {
		t.Error("a status written as pacs.009")
	}
	fi := genFI(rand.New(rand.NewPCG(5, 6)), true, false)
	if _, _, err := RenderPayments([]*payment.Payment{fi}, typePacs2, pacs2v10); err == nil {
		t.Error("a transfer written as pacs.002")
	}
	if _, _, err := mt.RenderPayments("199", []*payment.Payment{fi}, statement.Options{}); err == nil {
		t.Error("a transfer written as MT199")
	}
	s.TransactionStatus = "ACCEPTED"
	if _, _, err := mt.RenderPayments("199", []*payment.Payment{s}, statement.Options{}); err == nil || !strings.Contains(err.Error(), "4 letters") {
		t.Errorf("a status of 8 letters as MT199: %v", err)
	}
	free := "{1:F01BANKDEFFXXXX0000000000}{2:I199BANKGB2LXXXXN}{4:\r\n:20:A\r\n:21:B\r\n:79:PLEASE CALL US\r\n-}"
	if _, _, err := mt.ParsePayments([]byte(free), ""); err == nil || !strings.Contains(err.Error(), "/REJT/") {
		t.Errorf("free-format MT199: %v", err)
	}
}
