package filefmt_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/ledgerlane/platform/services/converter/filefmt"
	"github.com/ledgerlane/platform/services/converter/statement"
)

func ofxStatement() []*statement.Statement {
	d := func(day int) statement.Date { return statement.Date{Year: 2026, Month: 1, Day: day} }
	a := func(s string) statement.Amount {
		return statement.Amount{Value: decimal.RequireFromString(s), Currency: "EUR"}
	}
	return []*statement.Statement{{
		Reference: "S1",
		Account:   statement.Account{IBAN: "DE89370400440532013000", Currency: "EUR"},
		Balances: []statement.Balance{
			{Type: statement.OpeningBooked, Mark: statement.Credit, Date: d(1), Amount: a("100")},
			{Type: statement.ClosingBooked, Mark: statement.Credit, Date: d(3), Amount: a("74.50")},
		},
		Entries: []statement.Entry{
			{BookingDate: d(2), ValueDate: d(2), Mark: statement.Debit, Amount: a("25.50"), BankReference: "B1",
				Counterparty: statement.Counterparty{Name: "Müller & Sons"}, Remittance: []string{"Invoice <7>"}},
			{BookingDate: d(3), ValueDate: d(3), Mark: statement.Credit, Amount: a("0.00"), CustomerReference: "C2"},
		},
	}}
}

// What filefmt renders as OFX 1.0.2, OFX 2.2.0 or QBO reads back with the
// same dates, amounts, directions and text.
func TestParseOFXRoundTrip(t *testing.T) {
	for _, o := range []filefmt.OFXOptions{{Version: "102"}, {Version: "220"}, {Version: "102", IntuBid: "3000", QBO: true}} {
		t.Run(o.Version+map[bool]string{true: "-qbo"}[o.QBO], func(t *testing.T) {
			doc, _, err := filefmt.RenderOFX(ofxStatement(), o)
			if err != nil {
				t.Fatal(err)
			}
			if !filefmt.DetectOFX([]byte(doc)) {
				t.Fatal("not detected")
			}
			stmts, err := filefmt.ParseOFX([]byte(doc))
			if err != nil {
				t.Fatal(err)
			}
			if len(stmts) != 1 || stmts[0].Account.Currency != "EUR" || len(stmts[0].Entries) != 2 {
				t.Fatalf("read back %+v", stmts)
			}
			for i, want := range ofxStatement()[0].Entries {
				got := stmts[0].Entries[i]
				if got.BookingDate != want.BookingDate || got.Mark != want.Mark || !got.Value.Equal(want.Value) || got.Currency != "EUR" || got.BankReference == "" {
					t.Errorf("entry %d: got %+v, want %+v", i, got, want)
				}
			}
			e := stmts[0].Entries[0]
			// OFX 1.0.2 is ASCII: the renderer transliterates ü to ue.
			if !strings.HasSuffix(e.Counterparty.Name, "ller & Sons") || len(e.Remittance) != 1 || !strings.Contains(e.Remittance[0], "Invoice <7>") {
				t.Errorf("text: %+v", e)
			}
		})
	}
}

func TestParseOFXSamples(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "..", "shared", "samples", "ofx", "ofxgo")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("shared samples not beside the repository: %v", err)
	}
	tests := []struct {
		file     string
		currency string
		entries  int
		first    string // "date mark amount fitid"
		fault    string // a ParseError's field, when the file is refused
	}{
		{"busted_responses_wellsfargo.qfx", "USD", 1, "2020-12-01 D 12.34 202012011", ""},
		{"busted_responses_bmo_v102__no_header_newline.qfx", "CAD", 0, "2018-10-30 C 2042.24 2380370270281083201810302054456", ""},
		{"valid_responses_moneymrkt1_v103.ofx", "USD", 3, "2017-01-17 D 995.4190396554627 2fb2640c-cee3-4643-8ba3-ea21a4d18954", ""},
		{"valid_responses_inv_v202.ofx", "", 0, "", "OFX"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join(dir, tt.file))
			if err != nil {
				t.Fatal(err)
			}
			if !filefmt.DetectOFX(b) {
				t.Fatal("not detected")
			}
			stmts, err := filefmt.ParseOFX(b)
			if tt.fault != "" {
				var pe *statement.ParseError
				if !errors.As(err, &pe) || pe.Field != tt.fault {
					t.Fatalf("want a fault at %s, got %v", tt.fault, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			st := stmts[0]
			if st.Account.Currency != tt.currency || tt.entries > 0 && len(st.Entries) != tt.entries || len(st.Entries) == 0 {
				t.Fatalf("%s with %d entries", st.Account.Currency, len(st.Entries))
			}
			e := st.Entries[0]
			if got := e.BookingDate.String() + " " + string(e.Mark) + " " + e.Value.String() + " " + e.BankReference; got != tt.first {
				t.Fatalf("first entry %q, want %q", got, tt.first)
			}
		})
	}
}

func TestParseOFXFaults(t *testing.T) {
	wrap := func(trn string) string {
		return "OFXHEADER:100\n\n<OFX>\n<BANKMSGSRSV1><STMTTRNRS><STMTRS>\n<CURDEF>EUR\n<BANKTRANLIST>\n<STMTTRN>\n" + trn +
			"\n</STMTTRN>\n</BANKTRANLIST>\n</STMTRS></STMTTRNRS></BANKMSGSRSV1>\n</OFX>\n"
	}
	tests := []struct {
		name, doc, field string
		line             int
	}{
		{"no OFX element", "OFXHEADER:100\n", "OFX", 1},
		{"truncated", "<OFX>\n<BANKMSGSRSV1>\n", "OFX", 2},
		{"stray closing tag", "<OFX>\n</STMTRS>\n</OFX>", "STMTRS", 2},
		{"a second root", "<OFX>text\n<X>1\n</OFX>", "X", 2},
		{"bad name", "<OFX>\n<a b>\n</OFX>", "a b", 2},
		{"no statement", "<OFX>\n<SIGNONMSGSRSV1>\n<SONRS>\n<CODE>0\n</SONRS>\n</SIGNONMSGSRSV1>\n</OFX>", "OFX", 0},
		{"no currency", "<OFX><STMTRS><BANKTRANLIST></BANKTRANLIST></STMTRS></OFX>", "STMTRS/CURDEF", 1},
		{"no posting date", wrap("<TRNAMT>1.00"), "STMTTRN/DTPOSTED", 7},
		{"impossible date", wrap("<DTPOSTED>20260230\n<TRNAMT>1.00"), "STMTTRN/DTPOSTED", 8},
		{"bad amount", wrap("<DTPOSTED>20260130\n<TRNAMT>1e3"), "STMTTRN/TRNAMT", 9},
		{"bad currency", wrap("<DTPOSTED>20260130\n<TRNAMT>1\n<CURRENCY>\n<CURSYM>euro\n</CURRENCY>"), "STMTTRN/CURRENCY/CURSYM", 11},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := filefmt.ParseOFX([]byte(tt.doc))
			var pe *statement.ParseError
			if !errors.As(err, &pe) || pe.Field != tt.field || pe.Line != tt.line {
				t.Fatalf("want a fault at line %d field %q, got %#v", tt.line, tt.field, err)
			}
		})
	}
	stmts, err := filefmt.ParseOFX([]byte(wrap("<DTPOSTED>20260130120000[-5:EST]\n<DTUSER>20260129\n<TRNAMT>-1,50\n<CURRENCY>\n<CURSYM>USD\n</CURRENCY>\n<PAYEE>\n<NAME>Shop\n</PAYEE>")))
	if err != nil {
		t.Fatal(err)
	}
	e := stmts[0].Entries[0]
	if e.BookingDate.String() != "2026-01-30" || e.ValueDate.String() != "2026-01-29" || e.Value.String() != "1.5" || e.Mark != statement.Debit ||
		e.Currency != "USD" || e.Counterparty.Name != "Shop" {
		t.Fatalf("entry %+v", e)
	}
}

// FuzzParseOFX: no input panics or loops, and whatever is read is a
// well-formed entry.
func FuzzParseOFX(f *testing.F) {
	doc, _, _ := filefmt.RenderOFX(ofxStatement(), filefmt.OFXOptions{Version: "102"})
	f.Add(doc)
	doc, _, _ = filefmt.RenderOFX(ofxStatement(), filefmt.OFXOptions{Version: "220"})
	f.Add(doc)
	f.Add("<OFX><STMTRS><CURDEF>EUR<BANKTRANLIST><STMTTRN><DTPOSTED>20260101<TRNAMT>-1</STMTTRN></BANKTRANLIST></STMTRS></OFX>")
	f.Fuzz(func(t *testing.T, doc string) {
		stmts, err := filefmt.ParseOFX([]byte(doc))
		if err != nil {
			var pe *statement.ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("unclassified error %T %v", err, err)
			}
			return
		}
		for _, st := range stmts {
			for _, e := range st.Entries {
				if e.BookingDate.IsZero() || e.Value.IsNegative() || (e.Mark != statement.Credit && e.Mark != statement.Debit) || len(e.Currency) != 3 {
					t.Fatalf("bad entry %+v", e)
				}
			}
		}
	})
}
