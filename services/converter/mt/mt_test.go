package mt

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/ledgerlane/platform/services/converter/engine"
	"github.com/ledgerlane/platform/services/converter/statement"
)

func d(y, m, day int) statement.Date {
	return statement.Date{Year: y, Month: timeMonth(byte(m)), Day: day}
}

func mustParse(t *testing.T, in string, opts statement.Options) ([]*statement.Statement, []statement.Warning) {
	t.Helper()
	st, w, err := Parse([]byte(in), opts)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return st, w
}

func TestEntryLine(t *testing.T) {
	tests := []struct {
		name, line  string
		value, book statement.Date
		mark        statement.Mark
		rev         bool
		funds       string
		amount      string
		typ, ref    string
		bankRef     string
		supp        string
		warn        string
	}{
		{"plain", "2401020102C100,50NTRFREF1//BANK1\nSUPP", d(2024, 1, 2), d(2024, 1, 2), "C", false, "", "100.5", "NTRF", "REF1", "BANK1", "SUPP", ""},
		{"rollover forward", "2312300102D1,NMSCNONREF", d(2023, 12, 30), d(2024, 1, 2), "D", false, "", "1", "NMSC", "NONREF", "", "", ""},
		{"rollover back", "2401021230D1,NMSCNONREF", d(2024, 1, 2), d(2023, 12, 30), "D", false, "", "1", "NMSC", "NONREF", "", "", ""},
		{"no entry date", "240102C5,S103X", d(2024, 1, 2), d(2024, 1, 2), "C", false, "", "5", "S103", "X", "", "", ""},
		{"RC is a debit", "2401020102RC7,NTRFNONREF", d(2024, 1, 2), d(2024, 1, 2), "D", true, "", "7", "NTRF", "NONREF", "", "", ""},
		{"RD is a credit", "240102RD7,NTRFNONREF", d(2024, 1, 2), d(2024, 1, 2), "C", true, "", "7", "NTRF", "NONREF", "", "", ""},
		{"RC with funds code", "0709040904RCR204,88NRTINONREF", d(2007, 9, 4), d(2007, 9, 4), "D", true, "R", "204.88", "NRTI", "NONREF", "", "", ""},
		{"funds code", "240102CD20,NMSC1//2", d(2024, 1, 2), d(2024, 1, 2), "C", false, "D", "20", "NMSC", "1", "2", "", ""},
		{"decimal point", "240102C20.5NMSCX", d(2024, 1, 2), d(2024, 1, 2), "C", false, "", "20.5", "NMSC", "X", "", "", CodeDecimalPoint},
		{"no comma", "240102C20NMSCX", d(2024, 1, 2), d(2024, 1, 2), "C", false, "", "20", "NMSC", "X", "", "", CodeAmountNoComma},
		{"lower case", "240102c20,NMSCX", d(2024, 1, 2), d(2024, 1, 2), "C", false, "", "20", "NMSC", "X", "", "", CodeLowerCase},
		{"blank entry date", "240312    DD212,39NMSCNONREF//", d(2024, 3, 12), d(2024, 3, 12), "D", false, "D", "212.39", "NMSC", "NONREF", "", "", CodeBlankEntryDate},
		{"wrapped amount", "1811261126CR\n30,00N062NONREF", d(2018, 11, 26), d(2018, 11, 26), "C", false, "R", "30", "N062", "NONREF", "", "", CodeFieldWrapped},
		{"long reference", "110527D1213,28N0440121470966      W.P. Jansen", d(2011, 5, 27), d(2011, 5, 27), "D", false, "", "1213.28", "N044", "0121470966", "", "W.P. Jansen", CodeFieldTooLong},
		{"no type", "2011301130CN220000,00//19239782213", d(2020, 11, 30), d(2020, 11, 30), "C", false, "N", "220000", "", "", "19239782213", "", CodeNonstandardType},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := ":20:X\n:25:1\n:28C:1\n:60F:C240101EUR0,\n:61:" + tc.line + "\n-"
			st, warns := mustParse(t, in, statement.Options{})
			e := st[0].Entries[0]
			if e.ValueDate != tc.value || e.BookingDate != tc.book || e.Mark != tc.mark || e.Reversal != tc.rev || e.FundsCode != tc.funds {
				t.Errorf("got %s/%s %s rev=%v funds=%q", e.ValueDate, e.BookingDate, e.Mark, e.Reversal, e.FundsCode)
			}
			if !e.Value.Equal(decimal.RequireFromString(tc.amount)) || e.Currency != "EUR" {
				t.Errorf("amount %s %s, want %s", e.Value, e.Currency, tc.amount)
			}
			if e.TransactionType != tc.typ || e.CustomerReference != tc.ref || e.BankReference != tc.bankRef || e.Supplementary != tc.supp {
				t.Errorf("got type %q ref %q bank %q supp %q", e.TransactionType, e.CustomerReference, e.BankReference, e.Supplementary)
			}
			if tc.warn != "" && !hasCode(warns, tc.warn) {
				t.Errorf("no %s warning in %+v", tc.warn, warns)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, in string
		line     int
		field    string
	}{
		{"bad value date", ":20:X\n:25:1\n:28C:1\n:60F:C240101EUR0,\n:61:24AB02C1,NMSCX\n-", 5, ":61:"},
		{"bad mark", ":20:X\n:25:1\n:28C:1\n:60F:C240101EUR0,\n:61:240102X1,NMSCX\n-", 5, ":61:"},
		{"bad currency", ":20:X\n:25:1\n:28C:1\n:60F:C240101E1R0,\n-", 4, ":60F:"},
		{"bad amount", ":20:X\n:25:1\n:28C:1\n:60F:C240101EUR1,2,3\n-", 4, ":60F:"},
		{"bad month", ":20:X\n:25:1\n:28C:1\n:62F:C241301EUR0,\n-", 4, ":62F:"},
		{"second message", ":20:X\n:25:1\n:28C:1\n:60F:C240101EUR0,\n-\n:20:Y\n:25:1\n:28C:1\n:60F:C240101EUR0;\n-", 9, ":60F:"},
		{"nothing", "hello\nworld", 1, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := Parse([]byte(tc.in), statement.Options{})
			var pe *statement.ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("got %v, want a ParseError", err)
			}
			if pe.Line != tc.line || pe.Field != tc.field {
				t.Errorf("got line %d field %q (%v), want line %d field %q", pe.Line, pe.Field, err, tc.line, tc.field)
			}
			if tc.name == "second message" && pe.Message != 2 {
				t.Errorf("message %d, want 2", pe.Message)
			}
		})
	}
}

func TestStructure(t *testing.T) {
	fin := "{1:F01ABNANL2AXXXX0000000000}{2:O9401200240102ABNANL2AXXXX00000000002401021200N}{3:{108:X}}{4:\r\n" +
		":20:A\r\n:25:NL91ABNA0417164300\r\n:28C:1/1\r\n:60F:C240101EUR10,\r\n:61:240102C5,NTRFX\r\n:86:one\r\ntwo\r\n:62F:C240102EUR15,\r\n-}{5:{CHK:123}}\r\n" +
		"{1:F01ABNANL2AXXXX0000000000}{2:I940RECVDEFFXXXXN}{4:\r\n:20:B\r\n:25:1\r\n:28C:2\r\n:60F:C240102EUR15,\r\n:62F:C240102EUR15,\r\n-}"
	st, warns := mustParse(t, fin, statement.Options{})
	if len(st) != 2 {
		t.Fatalf("%d statements", len(st))
	}
	if st[0].Account.IBAN != "NL91ABNA0417164300" || st[0].Account.Servicer != "ABNANL2A" || st[0].Entries[0].Info != "one\ntwo" {
		t.Errorf("first: %+v", st[0])
	}
	if st[1].Reference != "B" || st[1].Account.Other != "1" {
		t.Errorf("second: %+v", st[1])
	}
	if !hasCode(warns, CodeMissingBlock5) {
		t.Errorf("missing block 5 not reported: %+v", warns)
	}

	// php-mt940 style: bank header lines, no separators, :62M: then :20:.
	bare := "0000 01INGBNL2AXXXX00001\n940 00\n:20:A\n:25:1\n:28C:1/1\n:60F:C240101EUR10,\n:61:240102C5,NTRFX\n:62M:C240102EUR15,\n:20:A\n:25:1\n:28C:1/2\n:60M:C240102EUR15,\n:62F:C240102EUR15,\n"
	st, warns = mustParse(t, bare, statement.Options{})
	if len(st) != 2 || st[0].LastPage || !st[1].LastPage || st[1].SequenceNumber != "2" {
		t.Fatalf("pages: %d", len(st))
	}
	if b, _ := st[1].Balance(statement.OpeningBooked); !b.Intermediate {
		t.Error(":60M: not intermediate")
	}
	if !hasCode(warns, CodeHeaderLines) {
		t.Errorf("header lines not reported: %+v", warns)
	}

	// Byte-order mark and CR-only line ends.
	st, _ = mustParse(t, "\ufeff:20:A\r:25:1\r:28C:1\r:60F:C240101EUR10,\r:62F:C240101EUR10,\r-", statement.Options{})
	if st[0].Reference != "A" || len(st[0].Balances) != 2 {
		t.Errorf("BOM/CR: %+v", st[0])
	}

	// Statement-level :86: after the closing balance; :64: and :65:.
	st, _ = mustParse(t, ":20:A\n:25:1\n:28C:1\n:60F:C240101EUR10,\n:62F:D240102EUR1,\n:64:C240102EUR2,\n:65:C240103EUR3,\n:65:C240104EUR4,\n:86:stmt info\n-", statement.Options{})
	if st[0].Info != "stmt info" || len(st[0].Balances) != 5 {
		t.Errorf("got %+v", st[0])
	}
}

func TestMT942(t *testing.T) {
	in := "{1:F01BANKDEFFXXXX0000000000}{2:I942RECVDEFFXXXXN}{4:\r\n:20:R1\r\n:25:DE89370400440532013000\r\n:28C:5/1\r\n:34F:EURD100,\r\n:34F:EURC200,\r\n:13D:2401021530+0100\r\n" +
		":61:240102C250,NTRFX\r\n:86:text\r\n:90D:0EUR0,\r\n:90C:1EUR250,\r\n-}"
	typ, _, ok := Detect([]byte(in))
	if !ok || typ != "MT942" {
		t.Fatalf("detected %q %v", typ, ok)
	}
	st, _ := mustParse(t, in, statement.Options{})
	s := st[0]
	if s.Kind != statement.KindReport || s.FloorLimitDebit.Value.String() != "100" || s.FloorLimitCredit.Value.String() != "200" {
		t.Errorf("floor limits %+v %+v", s.FloorLimitDebit, s.FloorLimitCredit)
	}
	if _, off := s.DateTimeIndicator.Zone(); off != 3600 || s.DateTimeIndicator.Hour() != 15 {
		t.Errorf(":13D: %v", s.DateTimeIndicator)
	}
	if !s.Summary.Set || s.Summary.CreditCount != 1 || !s.Summary.CreditTotal.Equal(decimal.NewFromInt(250)) {
		t.Errorf("summary %+v", s.Summary)
	}
	pages, _, err := Render("942", st, statement.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"{2:I942", ":34F:EURD100,\r\n:34F:EURC200,\r\n", ":13D:2401021530+0100\r\n", ":90C:1EUR250,\r\n", ":61:2401020102C250,NTRFX\r\n:86:text\r\n"} {
		if !strings.Contains(pages[0], want) {
			t.Errorf("output lacks %q:\n%s", want, pages[0])
		}
	}
	back, _ := mustParse(t, pages[0], statement.Options{})
	if back[0].Account.Servicer != "BANKDEFF" || back[0].Reference != "R1" {
		t.Errorf("round trip: %+v", back[0])
	}
}

func TestDetect(t *testing.T) {
	tests := []struct{ in, typ string }{
		{"{1:F01X}{2:O9501200240102ABNANL2AXXXX00000000002401021200N}{4:\n:20:A\n-}", "MT950"},
		{"{1:F01X}{2:I940X}{4:\n:20:A\n-}", "MT940"},
		{":20:A\n:25:1\n:28C:1\n:60F:C240101EUR1,\n:61:240101C1,NMSCX\n:62F:C240101EUR2,\n-", "MT940"},
		{":20:A\n:25:1\n:28C:1\n:34F:EUR0,\n:13D:2401011200+0000\n-", "MT942"},
		{"0000 01INGBNL2AXXXX00001\n940 00\n:20:A\n", "MT940"},
		{"{1:F01X}{2:I103X}{4:\n:20:A\n-}", ""},
		{"<?xml version=\"1.0\"?><Document/>", ""},
		{"date,amount\n2024-01-01,1.00\n", ""},
	}
	for _, tc := range tests {
		typ, _, ok := Detect([]byte(tc.in))
		if typ != tc.typ || ok != (tc.typ != "") {
			t.Errorf("%q: got %q %v, want %q", tc.in, typ, ok, tc.typ)
		}
	}
}

func TestBalanceMismatch(t *testing.T) {
	_, warns := mustParse(t, ":20:A\n:25:1\n:28C:1\n:60F:C240101EUR10,\n:61:240102D3,NTRFX\n:62F:C240102EUR8,\n-", statement.Options{})
	w, ok := warning(warns, CodeBalance)
	if !ok || !w.Lossy {
		t.Fatalf("no lossy %s: %+v", CodeBalance, warns)
	}
	_, warns = mustParse(t, ":20:A\n:25:1\n:28C:1\n:60F:C240101EUR10,\n:61:240102D13,NTRFX\n:62F:D240102EUR3,\n-", statement.Options{})
	if hasCode(warns, CodeBalance) {
		t.Errorf("balanced statement flagged: %+v", warns)
	}
}

func TestTransliteration(t *testing.T) {
	tests := []struct {
		profile, in, want string
		n                 int
	}{
		{"base", "Müller & Söhne café", "Muller . Sohne cafe", 4},
		{"german", "Müller & Söhne Straße ÄÖÜ", "Mueller . Soehne Strasse AeOeUe", 7},
		{"base", "plain (text) O'Neil +1 a/b-c?:.,", "plain (text) O'Neil +1 a/b-c?:.,", 0},
		{"base", "Zürich €5 日本", "Zurich .5 ..", 4},
		{"german", "Łódź", "Lodz", 3},
	}
	for _, tc := range tests {
		tl := translit{german: tc.profile == "german"}
		if got := tl.apply(tc.in); got != tc.want || tl.n != tc.n {
			t.Errorf("%s %q: got %q (%d), want %q (%d)", tc.profile, tc.in, got, tl.n, tc.want, tc.n)
		}
	}
	st := genStatement(newRand(3), 1)
	st.Entries[0].Info = "Grüße aus Köln"
	pages, warns, err := Render("940", []*statement.Statement{st}, statement.Options{TranslitProfile: "german"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(pages[0], ":86:Gruesse aus Koeln\r\n") {
		t.Errorf("output:\n%s", pages[0])
	}
	w, ok := warning(warns, CodeTransliterated)
	if !ok || !strings.HasPrefix(w.Message, "3 ") {
		t.Errorf("warning %+v", w)
	}
}

func TestGerman86(t *testing.T) {
	in := ":20:STARTUMS\n:25:12345678/1020304050\n:28C:0\n:60F:C170914EUR100,\n:61:170914D23,15NMSC\n" +
		":86:105?00SEPA-BASISLASTSCHRIFT?10931?20EREF+E2E-1?21MREF+M-77 CRED+DE98ZZ?22Z09999999999?23SVWZ+Rechnung 12?24ABWA+Max Muster?30BYLADEM1001?31DE\n02120300000000202051?32Peter Pan?33 und Co?34992\n:62F:C170914EUR76,85\n-"
	st, _ := mustParse(t, in, statement.Options{Field86Profile: "german"})
	e := st[0].Entries[0]
	want := statement.Entry{
		GVC: "105", PostingText: "SEPA-BASISLASTSCHRIFT", Primanota: "931", TextKeyAddition: "992",
		EndToEndID: "E2E-1", MandateID: "M-77", CreditorID: "DE98ZZZ09999999999", UltimateDebtor: "Max Muster",
		Remittance:   []string{"Rechnung 12"},
		Counterparty: statement.Counterparty{Name: "Peter Pan und Co", IBAN: "DE02120300000000202051", BIC: "BYLADEM1001"},
	}
	check := func(e statement.Entry) {
		t.Helper()
		if e.GVC != want.GVC || e.PostingText != want.PostingText || e.Primanota != want.Primanota || e.TextKeyAddition != want.TextKeyAddition ||
			e.EndToEndID != want.EndToEndID || e.MandateID != want.MandateID || e.CreditorID != want.CreditorID ||
			e.UltimateDebtor != want.UltimateDebtor || strings.Join(e.Remittance, "|") != "Rechnung 12" || e.Counterparty != want.Counterparty || e.Info != "" {
			t.Errorf("got %+v", e)
		}
	}
	check(e)
	// And back: the structured :86: is written from the fields and reads
	// back the same.
	pages, warns, err := Render("940", st, statement.Options{Field86Profile: "german"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(pages[0], ":86:105?00SEPA-BASISLASTSCHRIFT?10931?20") {
		t.Errorf("output:\n%s", pages[0])
	}
	for _, l := range strings.Split(pages[0], "\r\n") {
		if len(l) > 65+4 {
			t.Errorf("line too long: %q", l)
		}
	}
	if hasCode(warns, CodeDropped) || hasCode(warns, CodeTruncated) {
		t.Errorf("unexpected loss: %+v", warns)
	}
	back, _ := mustParse(t, pages[0], statement.Options{Field86Profile: "german"})
	check(back[0].Entries[0])

	// Plain profile carries the parties as /CODE/value pairs while there is
	// room, and says what it could not carry.
	st[0].Entries[0].Info = ""
	pages, warns, _ = Render("940", st, statement.Options{})
	if !strings.Contains(strings.ReplaceAll(pages[0], "\r\n", ""), "/EREF/E2E-1/MARF/M-77/CSID/DE98ZZZ09999999999/NAME/Peter Pan und Co/IBAN/DE02120300000000202051/BIC/BYLADEM1001/ULTD/Max Muster") {
		t.Errorf("plain profile output:\n%s", pages[0])
	}
	if hasCode(warns, CodeDropped) {
		t.Errorf("plain profile with room: %+v", warns)
	}
	st[0].Entries[0].Remittance = []string{strings.Repeat("R", 65*6)}
	_, warns, _ = Render("940", st, statement.Options{})
	if w, ok := warning(warns, CodeDropped); !ok || !strings.Contains(w.Message, "counterparty") || !w.Lossy {
		t.Errorf("plain profile without room: %+v", warns)
	}

	// Without SEPA tags the remittance subfields are kept one per line.
	st, _ = mustParse(t, strings.Replace(in, ":86:105?00SEPA-BASISLASTSCHRIFT?10931?20EREF+E2E-1?21MREF+M-77 CRED+DE98ZZ?22Z09999999999?23SVWZ+Rechnung 12?24ABWA+Max Muster", ":86:051?00Gutschrift?20ONE?21TWO", 1), statement.Options{Field86Profile: "german"})
	if e := st[0].Entries[0]; strings.Join(e.Remittance, "|") != "ONE|TWO" || e.GVC != "051" {
		t.Errorf("got %+v", e)
	}
	pages, _, _ = Render("940", st, statement.Options{Field86Profile: "german"})
	if !strings.Contains(pages[0], "?20ONE?21TWO?30") {
		t.Errorf("output:\n%s", pages[0])
	}
}

func TestRenderFIN(t *testing.T) {
	st := genStatement(newRand(5), 2)
	st.Account.Servicer = "DEUTDEFF500"
	pages, _, err := Render("950", []*statement.Statement{st}, statement.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p := pages[0]
	if !strings.HasPrefix(p, "{1:F01DEUTDEFFX5000000000000}{2:I950NOTPROVIXDEDN}{4:\r\n:20:") || !strings.HasSuffix(p, "\r\n-}") {
		t.Errorf("envelope:\n%s", p)
	}
	if strings.Contains(p, ":86:") {
		t.Error("MT950 has no :86:")
	}
	for _, l := range strings.Split(block4(p), "\r\n") {
		for i := 0; i < len(l); i++ {
			if !xSet[l[i]] {
				t.Fatalf("character %q outside X in %q", l[i], l)
			}
		}
	}
}

// testEngine has this package's formats only.
var testEngine = engine.New(Formats())

func TestRegistered(t *testing.T) {
	var pairs []string
	for _, f := range testEngine.Formats() {
		pairs = append(pairs, f.From+">"+f.To)
	}
	all := strings.Join(pairs, " ")
	for _, want := range []string{"MT940>MT940", "MT950>MT940", "MT940>MT950", "MT942>MT942"} {
		if !strings.Contains(all, want) {
			t.Errorf("registry lacks %s: %s", want, all)
		}
	}
	res, err := testEngine.Convert(engine.Request{Input: []byte(":20:A\n:25:1\n:28C:1\n:60F:C240101EUR1,\n:61:240101C1,NMSCX\n:62F:C240101EUR2,\n-"), To: "MT940"})
	if err != nil {
		t.Fatal(err)
	}
	if res.DetectedType != "MT940" || len(res.Pages) != 1 {
		t.Errorf("result %+v", res)
	}
	_, err = testEngine.Convert(engine.Request{Input: []byte(":20:A\n:25:1\n:28C:1\n:60F:C240101EUR1,\n:61:240101C1,NMSCX\n:86:Müller\n:62F:C240101EUR2,\n-"), To: "MT940", Options: statement.Options{Strict: true}})
	var se *engine.StrictError
	if !errors.As(err, &se) {
		t.Errorf("strict with transliteration: %v", err)
	}
}

// TestRenderFromSparseModel: a statement as a camt parser may produce it
// (no opening balance, entry without value date, odd references) still
// renders to MT that reads back, with the gaps reported.
func TestRenderFromSparseModel(t *testing.T) {
	st := &statement.Statement{
		Kind: statement.KindStatement, MessageID: "MSG-0001-ABCDEFGHIJK", StatementNumber: "20240000123",
		Account:  statement.Account{Other: "12345", Currency: "EUR", Servicer: "COBADEFFXXX"},
		Balances: []statement.Balance{{Type: statement.ClosingBooked, Mark: statement.Credit, Date: d(2024, 2, 1), Amount: statement.Amount{Value: decimal.RequireFromString("90.5"), Currency: "EUR"}}, {Type: statement.ForwardAvailable, Mark: statement.Credit, Date: d(2024, 2, 2), Amount: statement.Amount{Value: decimal.NewFromInt(1), Currency: "EUR"}}},
		Entries: []statement.Entry{
			{BookingDate: d(2024, 2, 1), Mark: statement.Debit, Amount: statement.Amount{Value: decimal.RequireFromString("9.50"), Currency: "EUR"}, CustomerReference: "A//B", EndToEndID: "E2E"},
		},
	}
	pages, warns, err := Render("950", []*statement.Statement{st}, statement.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, code := range []string{CodeBalanceDerived, CodeDefaulted, CodeDropped, CodeTruncated, CodeTransliterated} {
		if !hasCode(warns, code) {
			t.Errorf("no %s in %+v", code, warns)
		}
	}
	back, _ := mustParse(t, pages[0], statement.Options{})
	b := back[0]
	if open, _ := b.Balance(statement.OpeningBooked); open.Value.String() != "100" || open.Mark != statement.Credit {
		t.Errorf("derived opening %+v", open)
	}
	e := b.Entries[0]
	if e.ValueDate != d(2024, 2, 1) || e.CustomerReference != "A/.B" || e.Value.String() != "9.5" || b.Account.Servicer != "COBADEFF" {
		t.Errorf("entry %+v", e)
	}
	if b.StatementNumber != "00123" || b.Reference != "MSG-0001-ABCDEFG" {
		t.Errorf("header %q %q", b.StatementNumber, b.Reference)
	}

	st.Entries[0].Value = decimal.RequireFromString("12345678901234567")
	if _, _, err := Render("940", []*statement.Statement{st}, statement.Options{}); err == nil {
		t.Error("an amount over 15 characters must fail, not be cut")
	}
}

// TestOwnerBIC: :25P: carries the account owner's BIC on its second line.
func TestOwnerBIC(t *testing.T) {
	const rest = "\n:28C:1\n:60F:C240101EUR10,\n:62F:C240101EUR10,\n-"
	cases := []struct {
		name, field, bic, code string
	}{
		{"bic", ":25P:DE89370400440532013000\nCOBADEFFXXX", "COBADEFFXXX", ""},
		{"bic8", ":25P:12345\nCOBADEFF", "COBADEFF", ""},
		{"lower case", ":25P:12345\ncobadeff", "COBADEFF", CodeNonstandardValue},
		{"not a bic", ":25P:12345\nNOT A BIC", "", CodeDropped},
		{"no second line", ":25P:12345", "", ""},
		{"option without letter", ":25:12345", "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st, warns := mustParse(t, ":20:A\n"+tc.field+rest, statement.Options{})
			if got := st[0].Account.OwnerBIC; got != tc.bic {
				t.Errorf("OwnerBIC %q, want %q", got, tc.bic)
			}
			if tc.code != "" && !hasCode(warns, tc.code) {
				t.Errorf("no %s warning: %+v", tc.code, warns)
			}
			pages, rw, err := Render("940", st, statement.Options{})
			if err != nil {
				t.Fatal(err)
			}
			want := ":25:"
			if tc.bic != "" {
				want = ":25P:" + st[0].Account.Other + st[0].Account.IBAN + "\r\n" + tc.bic + "\r\n"
			}
			if !strings.Contains(pages[0], want) {
				t.Errorf("rendered %q, want it to hold %q", pages[0], want)
			}
			if hasCode(rw, CodeDropped) {
				t.Errorf("render dropped something: %+v", rw)
			}
		})
	}
}

// TestHeaderTypeBytes: the detector's in-place reading of a bank header line
// answers as headerType does on the line made a string.
func TestHeaderTypeBytes(t *testing.T) {
	for _, line := range []string{"940", "940 00", "942", ":942:", " 950 01 ", "950x", "94", "", "941 00", "940\t00", "0000 01INGBNL2AXXXX00001", ": 940 :"} {
		want := headerType(strings.TrimSpace(line))
		if got := headerTypeBytes(bytes.TrimSpace([]byte(line))); got != want {
			t.Errorf("headerTypeBytes(%q) = %q, headerType says %q", line, got, want)
		}
	}
}

// The detectors run on every MT conversion: recognising a statement with a
// bank header reads it in place.
func TestDetectAllocations(t *testing.T) {
	in := []byte("0000 01INGBNL2AXXXX00001\n0000 01INGBNL2AXXXX00001\n940 00\n:20:MPBZ\n:25:0000000000\n:28C:000\n:60F:C100722EUR0,00\n:62F:C100723EUR0,00\n-\n")
	if typ, _, ok := Detect(in); !ok || typ != "MT940" {
		t.Fatalf("Detect = %q, %v", typ, ok)
	}
	if n := testing.AllocsPerRun(50, func() { Detect(in); DetectPayment(in) }); n != 0 {
		t.Errorf("Detect and DetectPayment allocate %.0f times", n)
	}
}
