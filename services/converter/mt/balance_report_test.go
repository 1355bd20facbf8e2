package mt

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/ledgerlane/platform/services/converter/statement"
)

// mt941FIN is the MT941 of testdata (an output message from COBADEFF); its
// block 4 text alone is what a bank's file export holds.
func mt941FIN(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("testdata/mt941/balance_report.fin")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestBalanceReport: an MT941 is detected from block 2, a header line or
// its fields, read into a report with its balances, summary and :13D:
// (no BALANCE_MISMATCH, :28: is its own tag), and written back the same.
func TestBalanceReport(t *testing.T) {
	fin := mt941FIN(t)
	for _, tc := range []struct{ name, in, typ string }{
		{"FIN", fin, "MT941"},
		{"header line", "941\n:20:A\n:25:1\n:28:1\n:62F:C240101EUR1,\n-", "MT941"},
		{"bare with summary", ":20:A\n:25:1\n:28:1\n:60F:C240101EUR1,\n:90C:1EUR4,\n:62F:C240102EUR5,\n-", "MT941"},
		{"bare with :13D:", ":20:A\n:25:1\n:28:1\n:13D:2401021200+0100\n:62F:C240102EUR5,\n-", "MT941"},
		{"entries and :13D:", ":20:A\n:25:1\n:28C:1\n:13D:2401011200+0000\n:61:240101C1,NMSCX\n-", "MT942"},
		{"entries and summary", ":20:A\n:25:1\n:28C:1\n:60F:C240101EUR1,\n:61:240101C1,NMSCX\n:90C:1EUR1,\n:62F:C240101EUR2,\n-", "MT940"},
	} {
		if typ, _, _ := Detect([]byte(tc.in)); typ != tc.typ {
			t.Errorf("%s: detected %q, want %s", tc.name, typ, tc.typ)
		}
	}

	stmts, warns, err := parse([]byte(fin), statement.Options{}, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range warns {
		if w.Code != CodeMissingBlock5 {
			t.Errorf("warning %s: %s", w.Code, w.Message)
		}
	}
	st := stmts[0]
	if st.Kind != statement.KindReport || st.Reference != "BALREP240315-17" || st.RelatedReference != "REQ920-4711" ||
		st.Account.IBAN != "DE89370400440532013000" || st.Account.Currency != "EUR" || st.StatementNumber != "44" || st.SequenceNumber != "1" ||
		st.DateTimeIndicator.Format("2006-01-02T15:04-0700") != "2024-03-15T17:00+0100" || st.Account.Servicer != "COBADEFF" {
		t.Errorf("report: %+v", st)
	}
	var types []string
	for _, b := range st.Balances {
		types = append(types, string(b.Type)+" "+string(b.Mark)+b.Value.String()+" "+b.Date.String())
	}
	if got := strings.Join(types, ", "); got != "OPBD C125430.55 2024-03-14, CLBD C132190.35 2024-03-15, CLAV C130000 2024-03-15, FWAV C131500 2024-03-18, FWAV C129800 2024-03-19" {
		t.Errorf("balances: %s", got)
	}
	if s := st.Summary; !s.Set || s.DebitCount != 12 || s.DebitTotal.String() != "8470.2" || s.CreditCount != 7 || s.CreditTotal.String() != "15230" {
		t.Errorf("summary: %+v", s)
	}

	// Without entries the balances need not meet; an MT940 without entries
	// whose balances differ is still a mismatch.
	_, warns, _ = parse([]byte(":20:A\n:25:1\n:28:1\n:60F:C240101EUR1,\n:62F:C240102EUR5,\n-"), statement.Options{}, "941")
	if hasCode(warns, CodeBalance) || hasCode(warns, CodeLegacyTag) || hasCode(warns, CodeMissingField) {
		t.Errorf("balance report: %+v", warns)
	}
	if _, warns := mustParse(t, ":20:A\n:25:1\n:28C:1\n:60F:C240101EUR1,\n:62F:C240102EUR5,\n-", statement.Options{}); !hasCode(warns, CodeBalance) {
		t.Errorf("MT940 without entries not checked: %+v", warns)
	}
	if _, warns, _ := parse([]byte(":20:A\n:25:1\n:28:1\n:60F:C240101EUR1,\n-"), statement.Options{}, "941"); !hasCode(warns, CodeMissingField) {
		t.Errorf("MT941 without :62F: not flagged: %+v", warns)
	}

	pages, rw, err := Render("941", stmts, statement.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rw) != 0 {
		t.Errorf("render warnings: %+v", rw)
	}
	want := "{1:F01COBADEFFXXXX0000000000}{2:I941ABNANL2AXXXXN}{4:\r\n:20:BALREP240315-17\r\n:21:REQ920-4711\r\n:25:DE89370400440532013000\r\n" +
		":28:44/1\r\n:13D:2403151700+0100\r\n:60F:C240314EUR125430,55\r\n:90D:12EUR8470,2\r\n:90C:7EUR15230,\r\n:62F:C240315EUR132190,35\r\n" +
		":64:C240315EUR130000,\r\n:65:C240318EUR131500,\r\n:65:C240319EUR129800,\r\n:86:BALANCE REPORT 15.03.2024 17.00 CET\r\nLIMIT EUR 50000 NOT USED\r\n-}"
	if len(pages) != 1 || pages[0] != want {
		t.Errorf("MT941:\n%q\nwant\n%q", pages, want)
	}

	// A statement with entries is refused naming its first :61:; one
	// without a booked balance cannot be written.
	withEntries, _ := mustParse(t, ":20:A\n:25:1\n:28C:1\n:60F:C240101EUR1,\n:61:240101C1,NMSCX\n:62F:C240101EUR2,\n-", statement.Options{})
	var pe *statement.ParseError
	if _, _, err := Render("941", withEntries, statement.Options{}); !errors.As(err, &pe) || pe.Field != ":61:" || pe.Line != 5 || !strings.Contains(pe.Reason, "MT942") {
		t.Errorf("entries: %v", err)
	}
	noBalance := []*statement.Statement{{Kind: statement.KindReport, Reference: "R", Account: statement.Account{Other: "1", Currency: "EUR"},
		Balances: []statement.Balance{{Type: statement.ClosingAvailable, Mark: statement.Credit, Date: statement.Date{Year: 2024, Month: 1, Day: 2}}}}}
	if _, _, err := Render("941", noBalance, statement.Options{}); !errors.As(err, &pe) || !strings.Contains(pe.Reason, ":62F:") {
		t.Errorf("no booked balance: %v", err)
	}
	// Interim balances stand in for the booked and available ones.
	interim := []*statement.Statement{{Kind: statement.KindReport, Reference: "R", Account: statement.Account{Other: "1", Currency: "EUR"},
		Balances: []statement.Balance{
			{Type: statement.InterimBooked, Mark: statement.Debit, Date: statement.Date{Year: 2024, Month: 1, Day: 2}, Amount: statement.Amount{Value: decimal.RequireFromString("7.5")}},
			{Type: statement.InterimAvailable, Mark: statement.Credit, Date: statement.Date{Year: 2024, Month: 1, Day: 2}, Amount: statement.Amount{Value: decimal.RequireFromString("100")}},
		}}}
	pages, rw, err = Render("941", interim, statement.Options{})
	if err != nil || !strings.Contains(pages[0], ":62F:D240102EUR7,5\r\n:64:C240102EUR100,\r\n") || !hasCode(rw, CodeBalanceDerived) {
		t.Errorf("interim: %v %+v\n%s", err, rw, pages)
	}
}

// MT970 to MT973 are detected by block 2 and refused with the reason, also
// when read as another type.
func TestNettingRefused(t *testing.T) {
	for _, typ := range []string{"970", "971", "972", "973"} {
		in := "{1:F01COBADEFFXXXX0000000000}{2:I" + typ + "ABNANL2AXXXXN}{4:\r\n:20:NET1\r\n:25:1\r\n:28C:1\r\n:60F:C240101EUR1,\r\n:62F:C240101EUR1,\r\n-}"
		if got, _, ok := Detect([]byte(in)); !ok || got != "MT"+typ {
			t.Errorf("MT%s detected as %q", typ, got)
		}
		var pe *statement.ParseError
		for _, hint := range []string{"", typ} {
			if _, _, err := parse([]byte(in), statement.Options{}, hint); !errors.As(err, &pe) || !strings.HasPrefix(pe.Reason, "MT"+typ+" (") || !strings.Contains(pe.Reason, "CBPR+") {
				t.Errorf("MT%s: %v", typ, err)
			}
		}
		// Bare text named as the type by the caller is refused too.
		if _, _, err := parse([]byte(":20:NET1\n:25:1\n:28C:1\n:62F:C240101EUR1,\n-"), statement.Options{}, typ); !errors.As(err, &pe) || pe.Message != 1 {
			t.Errorf("bare MT%s: %v", typ, err)
		}
	}
}
