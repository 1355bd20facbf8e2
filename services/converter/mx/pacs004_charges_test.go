package mx

import (
	"regexp"
	"strings"
	"testing"

	"github.com/ledgerlane/platform/services/converter/mt"
	"github.com/ledgerlane/platform/services/converter/payment"
	"github.com/ledgerlane/platform/services/converter/statement"
)

// mt103Return is an MT103 return (/RETN/) with the given :33B:, :71A: and
// charge lines.
func mt103Return(f33B, f71A, charges string) string {
	s := "{1:F01CHASGB2LXXXX0000000000}{2:I103CHASUS33XXXXN}{3:{121:174c245f-2682-4291-ad67-2a41e530cd27}}{4:\r\n" +
		":20:RET-1\r\n:23B:CRED\r\n:32A:210511USD1000,\r\n"
	if f33B != "" {
		s += ":33B:" + f33B + "\r\n"
	}
	return s + ":50A:ANBTUS44XXX\r\n:59:GB ENGINEERING\r\n:71A:" + f71A + "\r\n" + charges +
		":72:/RETN/99\r\n/AC04/\r\n/MREF/A2B0506272708\r\n/TREF/E2E040445062713\r\n-}"
}

// TestReturnCharges: an MT103 return's :33B: (the original instructed
// amount) is RtrdInstdAmt and its :71F: / :71G: are ChrgsInf, the returning
// bank's (the sender's) or the receiver's, both ways; MT202/205 returns have
// no charges field and say so.
func TestReturnCharges(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []string // in the compacted pacs.004
		back     []string // in the MT103 written back from it
		dropped  string   // the one PAY_FIELD_DROPPED path expected
	}{
		{
			name: "SHA with the returning bank's charges",
			in:   mt103Return("USD1025,", "SHA", ":71F:USD25,\r\n"),
			want: []string{`<RtrdIntrBkSttlmAmt Ccy="USD">1000</RtrdIntrBkSttlmAmt>`, `<RtrdInstdAmt Ccy="USD">1025</RtrdInstdAmt>`,
				`<ChrgBr>SHAR</ChrgBr><ChrgsInf><Amt Ccy="USD">25</Amt><Agt><FinInstnId><BICFI>CHASGB2LXXX</BICFI></FinInstnId></Agt></ChrgsInf>`},
			back: []string{":33B:USD1025,", ":71A:SHA", ":71F:USD25,"},
		},
		{
			name: "BEN with two deductions",
			in:   mt103Return("USD1040,", "BEN", ":71F:USD25,\r\n:71F:USD15,\r\n"),
			want: []string{`<ChrgBr>CRED</ChrgBr><ChrgsInf><Amt Ccy="USD">25</Amt>`, `</ChrgsInf><ChrgsInf><Amt Ccy="USD">15</Amt>`},
			back: []string{":71A:BEN", ":71F:USD25,\r\n:71F:USD15,"},
		},
		{
			name: "OUR with the receiver's charges",
			in:   mt103Return("", "OUR", ":71G:USD10,\r\n"),
			want: []string{`<ChrgBr>DEBT</ChrgBr><ChrgsInf><Amt Ccy="USD">10</Amt><Agt><FinInstnId><BICFI>CHASUS33XXX</BICFI>`},
			back: []string{":71A:OUR", ":71G:USD10,"},
		},
		{
			// RtrChain's Party40Choice has no account: it is reported, and the
			// document stays schema-valid (it had a PtyAcct the XSD refuses).
			name:    "creditor account",
			in:      strings.Replace(mt103Return("", "SHA", ""), ":59:GB ENGINEERING", ":59:/12345\r\nGB ENGINEERING", 1),
			want:    []string{`<Cdtr><Pty><Nm>GB ENGINEERING</Nm></Pty></Cdtr>`},
			dropped: "TxInf/RtrChain/Cdtr/Pty (account)",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ps, w0, err := mt.ParseReturns([]byte(tc.in), "")
			if err != nil {
				t.Fatal(err)
			}
			docs, w1, err := RenderReturns(ps, pacs4v09)
			if err != nil {
				t.Fatal(err)
			}
			xmllintPayment(t, pacs4v09, docs[0])
			for _, w := range append(w0, w1...) {
				if w.Code == payment.CodeFieldDropped && w.Path != tc.dropped {
					t.Errorf("dropped: %s %s", w.Path, w.Message)
				}
			}
			compact := regexp.MustCompile(`>\s+<`).ReplaceAllString(docs[0], "><")
			for _, w := range tc.want {
				if !strings.Contains(compact, w) {
					t.Errorf("pacs.004 lacks %s:\n%s", w, docs[0])
				}
			}
			back, _, err := ParseReturns([]byte(docs[0]))
			if err != nil {
				t.Fatal(err)
			}
			pages, _, err := mt.RenderReturns("103", back, statement.Options{})
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.back {
				if !strings.Contains(pages[0], w) {
					t.Errorf("MT103 lacks %q:\n%s", w, pages[0])
				}
			}
		})
	}
	// An MT202 return has no :71F:/:71G:: ChrgsInf of a pacs.004 is dropped with a warning.
	ps, _, err := mt.ParseReturns([]byte(mt103Return("USD1025,", "SHA", ":71F:USD25,\r\n")), "")
	if err != nil {
		t.Fatal(err)
	}
	docs, _, err := RenderReturns(ps, pacs4v09)
	if err != nil {
		t.Fatal(err)
	}
	back, _, err := ParseReturns([]byte(docs[0]))
	if err != nil {
		t.Fatal(err)
	}
	pages, warns, err := mt.RenderReturns("202", back, statement.Options{})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, w := range warns {
		found = found || w.Code == payment.CodeFieldDropped && strings.Contains(w.Path, "ChrgsInf")
	}
	if !found || strings.Contains(pages[0], ":71F:") {
		t.Errorf("MT202 return: charges not reported as dropped: %v\n%s", warns, pages[0])
	}
}
