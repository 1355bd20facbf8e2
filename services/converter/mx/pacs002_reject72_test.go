package mx

import (
	"math/rand/v2"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/ledgerlane/platform/services/converter/engine"
	"github.com/ledgerlane/platform/services/converter/mt"
	"github.com/ledgerlane/platform/services/converter/payment"
	"github.com/ledgerlane/platform/services/converter/statement"
)

// TestRejectIn72: an MT103, MT202 or MT205 with /REJT/ in :72: (the reject
// guidelines' form, the funds sent back in the rejected message's type) is a
// pacs.002 RJCT: reason, references, UETR, the amount and date in
// OrgnlTxRef, and a warning for the transfer's fields pacs.002 has no place
// for. Written back as its own type it is the message read; as MT199 it is
// the /REJT/ form of :79:.
func TestRejectIn72(t *testing.T) {
	eng := engine.New(mt.PaymentFormats(), PaymentFormats(), ReturnFormats())
	const uetr = "174c245f-2682-4291-ad67-2a41e530cd27"
	for _, tc := range []struct {
		name, typ, fields string
		want              []string
		dropped           bool // a PAY_FIELD_DROPPED for the transfer's fields
	}{
		{"MT103", "103", ":20:REJ-1\r\n:23B:CRED\r\n:32A:210511USD136480,\r\n:50A:ANBTUS44XXX\r\n:59:/12345\r\nGB ENGINEERING\r\n:71A:SHA\r\n" +
			":72:/REJT/59\r\n/AC04/ACCOUNT CLOSED\r\n/MREF/A2B0506272708\r\n/TREF/E2E040445062713\r\n",
			[]string{"<OrgnlMsgId>A2B0506272708</OrgnlMsgId><OrgnlMsgNmId>MT103</OrgnlMsgNmId></OrgnlGrpInf><OrgnlInstrId>A2B0506272708</OrgnlInstrId><OrgnlEndToEndId>E2E040445062713</OrgnlEndToEndId><OrgnlUETR>" + uetr + "</OrgnlUETR><TxSts>RJCT</TxSts><StsRsnInf><Rsn><Cd>AC04</Cd></Rsn><AddtlInf>ACCOUNT CLOSED</AddtlInf></StsRsnInf>",
				`<OrgnlTxRef><IntrBkSttlmAmt Ccy="USD">136480</IntrBkSttlmAmt><IntrBkSttlmDt>2021-05-11</IntrBkSttlmDt><Dbtr><Pty><Id><OrgId><AnyBIC>ANBTUS44XXX</AnyBIC></OrgId></Id></Pty></Dbtr>`,
				`<Cdtr><Pty><Nm>GB ENGINEERING</Nm></Pty></Cdtr><CdtrAcct><Id><Othr><Id>12345</Id></Othr></Id></CdtrAcct></OrgnlTxRef>`}, true},
		{"MT202", "202", ":20:REJ-2\r\n:21:E2E-ORIG\r\n:32A:210511EUR1000,\r\n:58A:BANKGB2L\r\n" +
			":72:/REJT/99\r\n/AM05/\r\n/MREF/ORIG-202\r\n",
			[]string{"<OrgnlMsgNmId>MT202</OrgnlMsgNmId>", "<OrgnlEndToEndId>E2E-ORIG</OrgnlEndToEndId>", "<TxSts>RJCT</TxSts><StsRsnInf><Rsn><Cd>AM05</Cd>",
				"<Cdtr><Agt><FinInstnId><BICFI>BANKGB2L</BICFI></FinInstnId></Agt></Cdtr></OrgnlTxRef>"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := "{1:F01CHASGB2LXXXX0000000000}{2:I" + tc.typ + "CHASUS33XXXXN}{3:{121:" + uetr + "}}{4:\r\n" + tc.fields + "-}"
			res, err := eng.Convert(engine.Request{Input: []byte(in), To: "pacs.002"})
			if err != nil {
				t.Fatal(err)
			}
			xmllintPayment(t, pacs2v10, res.Pages[0])
			compact := regexp.MustCompile(`>\s+<`).ReplaceAllString(res.Pages[0], "><")
			for _, w := range tc.want {
				if !strings.Contains(compact, w) {
					t.Errorf("pacs.002 lacks %s:\n%s", w, res.Pages[0])
				}
			}
			dropped := false
			for _, w := range res.Warnings {
				dropped = dropped || w.Code == payment.CodeFieldDropped && strings.Contains(w.Message, "rejected transfer")
			}
			if dropped != tc.dropped {
				t.Errorf("a PAY_FIELD_DROPPED for the transfer's fields: %t, want %t: %v", dropped, tc.dropped, res.Warnings)
			}
			// pacs.002 → the rejected message's type: the reject again, from
			// OrgnlTxRef's funds and parties.
			mtAgain, err := eng.Convert(engine.Request{Input: []byte(res.Pages[0]), To: "MT" + tc.typ})
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range strings.Split(tc.fields, "\r\n") {
				if strings.HasPrefix(l, ":71A:") || strings.HasPrefix(l, ":23B:") || strings.HasPrefix(l, ":72:/REJT/") {
					// Charges are dropped in pacs.002, :23B: CRED is the default,
					// and /REJT/nn's field (dropped) comes back as 99.
					continue
				}
				if !strings.Contains(mtAgain.Pages[0], l) {
					t.Errorf("MT%s from pacs.002 lacks %q:\n%s", tc.typ, l, mtAgain.Pages[0])
				}
			}
			// The reject written back in its own type is the message read.
			same, err := eng.Convert(engine.Request{Input: []byte(in), To: "MT" + tc.typ})
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range strings.Split(tc.fields, "\r\n") {
				if strings.HasPrefix(l, ":52") || strings.HasPrefix(l, ":57") {
					continue
				}
				if !strings.Contains(same.Pages[0], l) {
					t.Errorf("MT%s written back lacks %q:\n%s", tc.typ, l, same.Pages[0])
				}
			}
			// pacs.002 → MT199: the /REJT/ form of :79: naming the MT type.
			back, err := eng.Convert(engine.Request{Input: []byte(res.Pages[0]), To: "MT199"})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(back.Pages[0], ":79:/REJT/"+tc.typ+"\r\n") {
				t.Errorf("MT199:\n%s", back.Pages[0])
			}
			// A status without the rejected transfer has no MT103/202 form.
			mt199 := "{1:F01CHASGB2LXXXX0000000000}{2:I199CHASUS33XXXXN}{4:\r\n:20:S\r\n:21:R\r\n:79:/REJT/103\r\n/AC04/\r\n-}"
			st, err := eng.Convert(engine.Request{Input: []byte(mt199), To: "pacs.002"})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := eng.Convert(engine.Request{Input: []byte(st.Pages[0]), To: "MT" + tc.typ}); err == nil || !strings.Contains(err.Error(), "OrgnlTxRef") {
				t.Errorf("a pacs.002 without OrgnlTxRef as MT%s: %v", tc.typ, err)
			}
			// A reject is not a transfer: pacs.008/009 and pacs.004 refuse it.
			to := map[string]string{"103": "pacs.008", "202": "pacs.009"}[tc.typ]
			if _, err := eng.Convert(engine.Request{Input: []byte(in), To: to}); err == nil {
				t.Errorf("a reject became a %s", to)
			}
		})
	}
}

// TestRejectIn72Properties generates MT103, MT202 and MT205 rejects (/REJT/
// in :72:) and converts each MT → pacs.002 → MT199 and MT → MT (its own
// type): every field of the status that differs must be explained by a
// warning, and the pacs.002 is schema-valid (every 20th).
func TestRejectIn72Properties(t *testing.T) {
	r := rand.New(rand.NewPCG(72, 15))
	n := 150
	if testing.Short() {
		n = 30
	}
	type canonJ struct {
		Status, Reason, Info, Ref, OrigMsg, OrigType, OrigInstr, OrigE2E, UETR, Amount, Date, Debtor, Creditor string
	}
	who := func(pt *payment.Party, ag *payment.Agent) string {
		switch {
		case pt != nil:
			return pt.Name + "|" + bic8(pt.BIC) + "|" + pt.Account
		case ag != nil:
			return "FI|" + bic8(ag.BIC) + "|" + ag.Account
		}
		return ""
	}
	canonOf := func(p *payment.Payment) canonJ {
		return canonJ{p.TransactionStatus, p.StatusReason, strings.Join(p.StatusInfo, "|"), p.MessageID, p.OriginalMessageID,
			p.OriginalMessageType, p.InstructionID, p.EndToEndID, p.UETR, p.Amount.Currency + p.Amount.Value.String(), p.SettlementDate.String(),
			who(p.Debtor, p.DebtorFI), who(p.Creditor, p.CreditorFI)}
	}
	lossy := []string{payment.CodeTruncated, payment.CodeTransliterated}
	// MT199 has no field for the rejected funds (PAY_FIELD_DROPPED).
	expl := map[string][]string{"Info": lossy, "Ref": lossy, "OrigMsg": lossy, "OrigInstr": lossy, "OrigE2E": lossy,
		"Amount": {payment.CodeFieldDropped}, "Date": {payment.CodeFieldDropped},
		"Debtor":   {payment.CodeFieldDropped, payment.CodeTruncated, payment.CodeTransliterated},
		"Creditor": {payment.CodeFieldDropped, payment.CodeTruncated, payment.CodeTransliterated}}
	check := func(i int, what string, a, b canonJ, warns []statement.Warning, detail string) {
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
			for _, c := range expl[name] {
				ok = ok || codes[c]
			}
			if !ok {
				t.Errorf("case %d %s: %s changed without a warning that explains it: %q → %q\n%v\n%s", i, what, name, va.Field(f).String(), vb.Field(f).String(), warns, detail)
			}
		}
	}
	for i := range n {
		customer := i%3 == 0
		typ := "103"
		if !customer {
			typ = []string{"202", "205"}[i%2]
		}
		gen := genReturn(r, i%4 != 0, customer)
		pages, _, err := mt.RenderReturns(typ, []*payment.Payment{gen}, statement.Options{})
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		src := strings.Replace(pages[0], ":72:/RETN/", ":72:/REJT/", 1)
		s1, w1, err := mt.ParsePayments([]byte(src), "")
		if err != nil {
			t.Fatalf("case %d: %v\n%s", i, err, src)
		}
		if s1[0].Kind != payment.Status || s1[0].MT != typ {
			t.Fatalf("case %d: read as %s MT%s", i, s1[0].Kind, s1[0].MT)
		}
		// MT → pacs.002 → MT199.
		docs, w2, err := RenderPayments(s1, typePacs2, pacs2v10)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if i%20 == 0 {
			xmllintPayment(t, pacs2v10, docs[0])
		}
		s2, w3, err := ParsePayments([]byte(docs[0]), typePacs2, "")
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		mt199, w4, err := mt.RenderPayments("199", s2, statement.Options{})
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		s3, w5, err := mt.ParsePayments([]byte(mt199[0]), "MT199")
		if err != nil {
			t.Fatalf("case %d: %v\n%s", i, err, mt199[0])
		}
		all := append(append(append(append(w1, w2...), w3...), w4...), w5...)
		check(i, "MT→pacs.002→MT199", canonOf(s1[0]), canonOf(s3[0]), all, src+"\n--\n"+mt199[0])
		// MT → MT of its own type: nothing may change.
		same, v1, err := mt.RenderPayments(typ, s1, statement.Options{})
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		s4, v2, err := mt.ParsePayments([]byte(same[0]), "MT"+typ)
		if err != nil {
			t.Fatalf("case %d: %v\n%s", i, err, same[0])
		}
		check(i, "MT→MT", canonOf(s1[0]), canonOf(s4[0]), append(v1, v2...), src+"\n--\n"+same[0])
		// pacs.002 → MT (the rejected type) → pacs.002.
		back, x1, err := mt.RenderPayments(typ, s2, statement.Options{})
		if err != nil {
			t.Fatalf("case %d: %v\n%s", i, err, docs[0])
		}
		s5, x2, err := mt.ParsePayments([]byte(back[0]), "MT"+typ)
		if err != nil {
			t.Fatalf("case %d: %v\n%s", i, err, back[0])
		}
		docs2, x3, err := RenderPayments(s5, typePacs2, pacs2v10)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		s6, x4, err := ParsePayments([]byte(docs2[0]), typePacs2, "")
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		check(i, "pacs.002→MT→pacs.002", canonOf(s2[0]), canonOf(s6[0]), append(append(append(x1, x2...), x3...), x4...), docs[0]+"\n--\n"+back[0])
	}
}
