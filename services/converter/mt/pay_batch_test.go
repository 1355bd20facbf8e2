package mt

import (
	"strings"
	"testing"

	"github.com/ledgerlane/platform/services/converter/payment"
	"github.com/ledgerlane/platform/services/converter/statement"
)

// The MT101 options the payment reader had no use for before: the
// instructing party (:50L:), the ordering customer as G (account and BIC)
// in sequence B, :52C:, :21R: and a chained :28D:; they read into the model
// and are written back in the same options.
func TestMT101Options(t *testing.T) {
	in := "{1:F01CORPDEFFAXXX0000000000}{2:I101DEUTDEFFXXXXN}{4:\r\n" +
		":20:REQ-7\r\n:21R:ONE-DEBIT\r\n:28D:2/3\r\n:50L:CUST-4711\r\n:52C:/DE-ACC-9\r\n:30:261130\r\n" +
		":21:A1\r\n:32B:EUR10,\r\n:50G:/DE89370400440532013000\r\nCORPDEFF\r\n:59A:/FR7630006000011234567890189\r\nBNPAFRPP\r\n:71A:SHA\r\n" +
		":21:A2\r\n:23E:RTGS\r\n:32B:USD0,\r\n:50H:/12345\r\nOther Co\r\nMain Street 1\r\n:59:/GB29NWBK60161331926819\r\nSmith Ltd\r\n:33B:EUR20,\r\n:71A:BEN\r\n-}"
	pays, warns, err := ParseBatch([]byte(in), "MT101")
	if err != nil {
		t.Fatal(err)
	}
	p := pays[0]
	if p.Kind != payment.Initiation || p.MessageID != "REQ-7" || p.BatchReference != "ONE-DEBIT" || p.InitiatingParty == nil || p.InitiatingParty.IDs[0].Value != "CUST-4711" || len(p.Transactions) != 2 {
		t.Fatalf("%+v", p)
	}
	a, b := p.Transactions[0], p.Transactions[1]
	if a.Debtor.BIC != "CORPDEFF" || a.Debtor.Account != "DE89370400440532013000" || a.DebtorAgent.Account != "DE-ACC-9" || a.Creditor.BIC != "BNPAFRPP" {
		t.Errorf("transaction 1: %+v %+v", a.Debtor, a.DebtorAgent)
	}
	if b.Debtor.Name != "Other Co" || b.Debtor.Account != "12345" || !b.Amount.Value.IsZero() || b.InstructedAmount.Currency != "EUR" ||
		len(b.InstructionsForNextAgent) != 1 || b.InstructionsForNextAgent[0].Code != "RTGS" || b.ChargeBearer != "CRED" {
		t.Errorf("transaction 2: %+v", b)
	}
	chained := false
	for _, w := range warns {
		chained = chained || w.Code == payment.CodeFieldDropped && strings.Contains(w.Message, "2/3") && w.Line == 4
	}
	if !chained {
		t.Errorf("the chained :28D: is not said: %v", warns)
	}
	pages, _, err := RenderBatch("101", pays, statement.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{":21R:ONE-DEBIT\r\n", ":28D:1/1\r\n", ":50L:CUST-4711\r\n", ":52C:/DE-ACC-9\r\n", ":50G:/DE89370400440532013000\r\nCORPDEFF\r\n",
		":50H:/12345\r\nOther Co\r\nMain Street 1\r\n", ":23E:RTGS\r\n", ":32B:USD0,\r\n", ":33B:EUR20,\r\n", ":71A:BEN\r\n", ":59A:/FR7630006000011234567890189\r\nBNPAFRPP\r\n"} {
		if !strings.Contains(pages[0], want) {
			t.Errorf("no %q in\n%s", want, pages[0])
		}
	}
	if _, _, err := ParseBatch([]byte(pages[0]), "MT101"); err != nil {
		t.Errorf("written MT101 does not read back: %v", err)
	}
}
