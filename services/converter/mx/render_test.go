package mx

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/shopspring/decimal"

	"github.com/ledgerlane/platform/services/converter/statement"
)

func amt(s, ccy string) statement.Amount {
	return statement.Amount{Value: decimal.RequireFromString(s), Currency: ccy}
}

func date(y int, m time.Month, d int) statement.Date {
	return statement.Date{Year: y, Month: m, Day: d}
}

// mtLike is a statement as the MT940 parser produces it: :20:, :25:, :28C:,
// :60F:, :61:/:86: lines, :62F:, :64:, :65:.
func mtLike() *statement.Statement {
	return &statement.Statement{
		Kind:            statement.KindStatement,
		Reference:       "STMT-2024-001",
		Account:         statement.Account{IBAN: "DE89370400440532013000", Currency: "EUR", Owner: "Müller & Söhne <GmbH>", Servicer: "COBADEFFXXX"},
		StatementNumber: "00123",
		SequenceNumber:  "1",
		LastPage:        true,
		Balances: []statement.Balance{
			{Type: statement.OpeningBooked, Mark: statement.Credit, Date: date(2024, 3, 1), Amount: amt("1000.00", "EUR")},
			{Type: statement.ClosingBooked, Mark: statement.Credit, Date: date(2024, 3, 4), Amount: amt("1265.55", "EUR")},
			{Type: statement.ClosingAvailable, Mark: statement.Credit, Date: date(2024, 3, 4), Amount: amt("1265.55", "EUR")},
			{Type: statement.ForwardAvailable, Mark: statement.Debit, Date: date(2024, 3, 5), Amount: amt("12.3", "EUR")},
		},
		Entries: []statement.Entry{
			{
				ValueDate: date(2024, 3, 1), BookingDate: date(2024, 3, 1), Mark: statement.Credit, Amount: amt("500.00", "EUR"),
				TransactionType: "NTRF", CustomerReference: "INV-4711", BankReference: "BANKREF1",
				Counterparty: statement.Counterparty{Name: "ACME Corp", IBAN: "GB29NWBK60161331926819", BIC: "NWBKGB2L"},
				Remittance:   []string{"Invoice 4711 & 4712 <paid>"},
				Info:         "SEPA credit transfer",
			},
			{
				ValueDate: date(2024, 3, 2), BookingDate: date(2024, 3, 4), Mark: statement.Debit, Amount: amt("234.45", "EUR"),
				TransactionType: "NDDT", CustomerReference: "NONREF", EndToEndID: "E2E-1", MandateID: "MNDT-9", CreditorID: "DE98ZZZ09999999999",
				Counterparty: statement.Counterparty{Name: strings.TrimSpace(strings.Repeat("Long creditor name ", 5)), Account: "12345678", BankCode: "37040044"},
				Remittance:   []string{strings.Repeat("x", 300), "second line"},
				GVC:          "105", PostingText: "LASTSCHRIFT", Primanota: "9310", TextKeyAddition: "997",
			},
			{
				// A reversed credit (RC) books as a debit.
				ValueDate: date(2024, 3, 3), BookingDate: date(2024, 3, 3), Mark: statement.Debit, Reversal: true, Amount: amt("0.01", "EUR"),
				TransactionType: "NMSC", FundsCode: "R", Supplementary: "return of 0.01",
				// A counterparty known only by a (lower-case) BIC.
				Counterparty: statement.Counterparty{BIC: "deutdeffxxx"},
			},
		},
	}
}

func report() *statement.Statement {
	s := mtLike()
	s.Kind = statement.KindReport
	s.Balances = nil
	s.DateTimeIndicator = time.Date(2024, 3, 4, 10, 15, 0, 0, time.FixedZone("CET", 3600))
	s.Summary = statement.Summary{Set: true, CreditCount: 1, CreditTotal: decimal.RequireFromString("500"), DebitCount: 2, DebitTotal: decimal.RequireFromString("234.46")}
	s.FloorLimitDebit = &statement.Amount{Value: decimal.Zero, Currency: "EUR"}
	s.Entries[1].Pending = true
	return s
}

// TestRenderGenerated renders MT-shaped statements in every version, checks
// each document against the official schema and parses it back.
func TestRenderGenerated(t *testing.T) {
	paged := mtLike()
	paged.SequenceNumber = "2"
	paged.LastPage = false
	paged.Balances[0].Intermediate = true
	paged.Balances[1].Intermediate = true
	other := mtLike()
	other.Account = statement.Account{Other: "10020030/1234567", Currency: "EUR"}
	bare := &statement.Statement{Reference: "", Account: statement.Account{Other: "X"},
		Balances: []statement.Balance{{Type: statement.OpeningBooked, Mark: statement.Debit, Date: date(2024, 1, 1), Amount: amt("0", "USD")}},
		Entries:  []statement.Entry{{ValueDate: date(2024, 1, 1), Mark: statement.Credit, Amount: amt("1", "USD")}}}
	cases := []struct {
		name  string
		typ   string
		stmts []*statement.Statement
	}{
		{"statement", typeCamt3, []*statement.Statement{mtLike()}},
		{"paged", typeCamt3, []*statement.Statement{paged}},
		{"other-account", typeCamt3, []*statement.Statement{other}},
		{"two-statements", typeCamt3, []*statement.Statement{mtLike(), other}},
		{"bare", typeCamt3, []*statement.Statement{bare}},
		{"report", typeCamt2, []*statement.Statement{report()}},
		{"random", typeCamt3, randomStatements(rand.New(rand.NewPCG(1, 2)), 3)},
		{"random-report", typeCamt2, randomStatements(rand.New(rand.NewPCG(3, 4)), 2)},
	}
	for _, tc := range cases {
		for _, v := range []string{tc.typ + ".001.02", tc.typ + ".001.08"} {
			t.Run(tc.name+"/"+v, func(t *testing.T) {
				doc, warns, err := Render(tc.stmts, tc.typ, v)
				if err != nil {
					t.Fatal(err)
				}
				xmllint(t, v, doc)
				back, _, err := Parse([]byte(doc), tc.typ, statement.Options{})
				if err != nil {
					t.Fatalf("reparse: %v", err)
				}
				for _, w := range warns {
					if w.Code == "" || w.Severity == "" {
						t.Errorf("warning without code or severity: %+v", w)
					}
				}
				want := tc.stmts
				if tc.name == "bare" {
					// An empty :20: is written as NONREF.
					c := *want[0]
					c.Reference = "NONREF"
					c.Account.Currency = "USD"
					want = []*statement.Statement{&c}
				}
				assertSameRendered(t, want, back)
			})
		}
	}
}

// assertSameRendered compares after the documented normalisations of the
// renderer: NONREF customer references are dropped, the German posting
// text becomes AddtlNtryInf when there is no other entry information.
func assertSameRendered(t *testing.T, want, got []*statement.Statement) {
	t.Helper()
	norm := make([]*statement.Statement, len(want))
	for i, s := range want {
		c := *s
		c.Entries = append([]statement.Entry(nil), s.Entries...)
		for j := range c.Entries {
			e := &c.Entries[j]
			if e.CustomerReference == "NONREF" {
				e.CustomerReference = e.EndToEndID
			}
			if e.Info == "" {
				e.Info = e.PostingText
			}
			if e.BookingDate.IsZero() {
				e.BookingDate = e.ValueDate
			}
		}
		norm[i] = &c
	}
	assertSame(t, norm, got)
	for i, s := range want {
		for j, e := range s.Entries {
			g := got[i].Entries[j]
			if e.GVC != g.GVC || e.Primanota != g.Primanota || e.TextKeyAddition != g.TextKeyAddition {
				t.Errorf("entry %d GVC: want %s/%s/%s, got %s/%s/%s", j+1, e.GVC, e.Primanota, e.TextKeyAddition, g.GVC, g.Primanota, g.TextKeyAddition)
			}
			if e.CreditorID != g.CreditorID || e.Counterparty.BankCode != g.Counterparty.BankCode || e.Supplementary != g.Supplementary {
				t.Errorf("entry %d creditor id/bank code/supplementary: want %q/%q/%q, got %q/%q/%q", j+1,
					e.CreditorID, e.Counterparty.BankCode, e.Supplementary, g.CreditorID, g.Counterparty.BankCode, g.Supplementary)
			}
		}
		if s.Summary != got[i].Summary && !(s.Summary.Set && got[i].Summary.Set &&
			s.Summary.CreditTotal.Equal(got[i].Summary.CreditTotal) && s.Summary.DebitTotal.Equal(got[i].Summary.DebitTotal)) {
			t.Errorf("summary: want %+v, got %+v", s.Summary, got[i].Summary)
		}
	}
}

const textChars = "abcXYZ 0123456789/-?:().,'+&<>\"äöüßÄÖÜéñ€"

func randomText(r *rand.Rand, n int) string {
	rs := []rune(textChars)
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteRune(rs[r.IntN(len(rs))])
	}
	return strings.TrimSpace(b.String())
}

func randomAmount(r *rand.Rand, ccy string) statement.Amount {
	return statement.Amount{Value: decimal.New(r.Int64N(100_000_000), -int32(r.IntN(3))), Currency: ccy}
}

// randomStatements are MT-shaped statements with random amounts, dates,
// references and text, including XML-special and non-ASCII characters.
func randomStatements(r *rand.Rand, n int) []*statement.Statement {
	var out []*statement.Statement
	for i := 0; i < n; i++ {
		ccy := []string{"EUR", "USD", "CHF", "JPY"}[r.IntN(4)]
		day := date(2020+r.IntN(6), time.Month(1+r.IntN(12)), 1+r.IntN(28))
		s := &statement.Statement{
			Kind:            statement.KindStatement,
			Reference:       fmt.Sprintf("REF%d-%d", i, r.IntN(1000)),
			Account:         statement.Account{Other: fmt.Sprintf("%d", r.Int64N(1e12)), Currency: ccy},
			StatementNumber: fmt.Sprintf("%d", 1+r.IntN(999)),
			SequenceNumber:  "1",
			LastPage:        true,
			Balances: []statement.Balance{
				{Type: statement.OpeningBooked, Mark: randomMark(r), Date: day, Amount: randomAmount(r, ccy)},
				{Type: statement.ClosingBooked, Mark: statement.Credit, Date: day, Amount: randomAmount(r, ccy)},
			},
		}
		if i%2 == 1 {
			// Not drawn from r, so the other values stay as they were.
			s.Account.OwnerBIC = "DEUTDEFF500"
		}
		for j := 0; j < 1+r.IntN(20); j++ {
			e := statement.Entry{
				ValueDate: day, BookingDate: day, Mark: randomMark(r), Amount: randomAmount(r, ccy),
				TransactionType: []string{"NTRF", "NMSC", "NCHK", "FTRF"}[r.IntN(4)],
				Reversal:        r.IntN(10) == 0,
				Pending:         r.IntN(10) == 0,
			}
			if r.IntN(2) == 0 {
				e.CustomerReference = randomText(r, 1+r.IntN(16))
			}
			if r.IntN(2) == 0 {
				e.BankReference = randomText(r, 1+r.IntN(16))
			}
			for k := 0; k < r.IntN(4); k++ {
				if l := randomText(r, 1+r.IntN(65)); l != "" {
					e.Remittance = append(e.Remittance, l)
				}
			}
			if r.IntN(2) == 0 {
				e.Info = randomText(r, 1+r.IntN(390))
			}
			if r.IntN(3) == 0 {
				e.Counterparty.Name = randomText(r, 1+r.IntN(70))
			}
			s.Entries = append(s.Entries, e)
		}
		out = append(out, s)
	}
	return out
}

// TestRenderEscaping checks that markup in text cannot break out of its
// element and that CreDtTm is a real timestamp.
func TestRenderEscaping(t *testing.T) {
	s := mtLike()
	s.Entries[0].Info = "</AddtlNtryInf><Evil>&amp;\x01"
	doc, _, err := Render([]*statement.Statement{s}, typeCamt3, "camt.053.001.08")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(doc, "<Evil>") || strings.Contains(doc, "\x01") {
		t.Fatalf("unescaped markup in output")
	}
	if !strings.Contains(doc, "&lt;/AddtlNtryInf&gt;&lt;Evil&gt;&amp;amp;") {
		t.Fatalf("escaped text not found")
	}
	if strings.Contains(doc, "CURRENT_TIME") {
		t.Fatal("placeholder timestamp")
	}
	i := strings.Index(doc, "<CreDtTm>")
	ts := doc[i+9 : i+9+strings.Index(doc[i+9:], "<")]
	if _, err := time.Parse(time.RFC3339, ts); err != nil {
		t.Fatalf("CreDtTm %q: %v", ts, err)
	}
}

// TestRenderWarnings: what camt cannot carry is reported with stable codes.
func TestRenderWarnings(t *testing.T) {
	s := mtLike()
	s.RelatedReference = "REL"
	s.Entries[0].Info = strings.Repeat("i", 600)
	s.Account.Servicer = "not a bic"
	_, warns, err := Render([]*statement.Statement{s}, typeCamt3, "camt.053.001.08")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, w := range warns {
		got[w.Code] = true
		if !w.Lossy || w.Severity != statement.SeverityWarning {
			t.Errorf("%s should be a lossy warning", w.Code)
		}
	}
	for _, c := range []string{CodeRelatedRefDropped, CodeTruncated, CodeBICDropped, CodeFundsCodeDropped} {
		if !got[c] {
			t.Errorf("missing warning %s (got %v)", c, got)
		}
	}
}

func TestRenderRejects(t *testing.T) {
	if _, _, err := Render(nil, typeCamt3, "camt.053.001.08"); err == nil {
		t.Error("empty input rendered")
	}
	if _, _, err := Render([]*statement.Statement{mtLike()}, typeCamt3, "camt.053.001.05"); err == nil {
		t.Error("unsupported version rendered")
	}
	s := mtLike()
	s.Balances = nil
	if _, _, err := Render([]*statement.Statement{s}, typeCamt3, "camt.053.001.08"); err == nil {
		t.Error("camt.053 without balances rendered")
	}
}

func randomMark(r *rand.Rand) statement.Mark {
	if r.IntN(2) == 0 {
		return statement.Credit
	}
	return statement.Debit
}

// TestRenderInvalidUTF8: bytes that are not UTF-8 cannot reach the document.
func TestRenderInvalidUTF8(t *testing.T) {
	s := mtLike()
	s.Entries[0].Info = "ok \xff\xfe end \uFFFD"
	doc, _, err := Render([]*statement.Statement{s}, typeCamt3, "camt.053.001.08")
	if err != nil {
		t.Fatal(err)
	}
	if !utf8.ValidString(doc) {
		t.Fatal("document is not valid UTF-8")
	}
	xmllint(t, "camt.053.001.08", doc)
}
