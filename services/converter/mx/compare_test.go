package mx

import (
	"strings"
	"testing"
	"unicode"

	"github.com/ledgerlane/platform/services/converter/statement"
)

// assertSame checks that a round trip kept what matters: amounts, dates,
// balances, references and remittance text (line breaks may move when a
// line is split to fit Max140Text).
func assertSame(t *testing.T, want, got []*statement.Statement) {
	t.Helper()
	if len(want) != len(got) {
		t.Fatalf("statements: want %d, got %d", len(want), len(got))
	}
	for i := range want {
		w, g := want[i], got[i]
		eq := func(field, a, b string) {
			t.Helper()
			if a != b {
				t.Errorf("statement %d %s: want %q, got %q", i+1, field, a, b)
			}
		}
		eq("Reference", w.Reference, g.Reference)
		eq("Account.IBAN", w.Account.IBAN, g.Account.IBAN)
		eq("Account.Other", w.Account.Other, g.Account.Other)
		eq("Account.Currency", w.Account.Currency, g.Account.Currency)
		eq("Account.Owner", w.Account.Owner, g.Account.Owner)
		eq("Account.OwnerBIC", w.Account.OwnerBIC, g.Account.OwnerBIC)
		eq("StatementNumber", w.StatementNumber, g.StatementNumber)
		if len(want) == 1 {
			eq("SequenceNumber", w.SequenceNumber, g.SequenceNumber)
			if w.SequenceNumber != "" && w.LastPage != g.LastPage {
				t.Errorf("statement %d LastPage: want %v, got %v", i+1, w.LastPage, g.LastPage)
			}
		}
		if len(w.Balances) != len(g.Balances) {
			t.Fatalf("statement %d balances: want %d, got %d", i+1, len(w.Balances), len(g.Balances))
		}
		for j, wb := range w.Balances {
			gb := g.Balances[j]
			if wb.Type != gb.Type || wb.Mark != gb.Mark || wb.Date != gb.Date || !wb.Value.Equal(gb.Value) || wb.Currency != gb.Currency {
				t.Errorf("statement %d balance %d: want %+v, got %+v", i+1, j+1, wb, gb)
			}
			if len(want) == 1 && wb.Intermediate != gb.Intermediate {
				t.Errorf("statement %d balance %d intermediate: want %v, got %v", i+1, j+1, wb.Intermediate, gb.Intermediate)
			}
		}
		if len(w.Entries) != len(g.Entries) {
			t.Fatalf("statement %d entries: want %d, got %d", i+1, len(w.Entries), len(g.Entries))
		}
		for j := range w.Entries {
			we, ge := &w.Entries[j], &g.Entries[j]
			eq := func(field, a, b string) {
				t.Helper()
				if a != b {
					t.Errorf("statement %d entry %d %s: want %q, got %q", i+1, j+1, field, a, b)
				}
			}
			if !we.Value.Equal(ge.Value) {
				t.Errorf("statement %d entry %d amount: want %s, got %s", i+1, j+1, we.Value, ge.Value)
			}
			eq("Currency", we.Currency, ge.Currency)
			eq("Mark", string(we.Mark), string(ge.Mark))
			eq("ValueDate", we.ValueDate.String(), ge.ValueDate.String())
			eq("BookingDate", we.BookingDate.String(), ge.BookingDate.String())
			eq("BankReference", we.BankReference, ge.BankReference)
			eq("CustomerReference", we.CustomerReference, ge.CustomerReference)
			eq("EndToEndID", we.EndToEndID, ge.EndToEndID)
			eq("MandateID", we.MandateID, ge.MandateID)
			eq("TransactionType", we.TransactionType, ge.TransactionType)
			eq("Remittance", squash(strings.Join(we.Remittance, "")), squash(strings.Join(ge.Remittance, "")))
			eq("Info", we.Info, ge.Info)
			eq("Counterparty.Name", we.Counterparty.Name, ge.Counterparty.Name)
			eq("Counterparty.IBAN", we.Counterparty.IBAN, ge.Counterparty.IBAN)
			if we.Reversal != ge.Reversal || we.Pending != ge.Pending {
				t.Errorf("statement %d entry %d reversal/pending: want %v/%v, got %v/%v", i+1, j+1, we.Reversal, we.Pending, ge.Reversal, ge.Pending)
			}
		}
	}
}

func squash(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return -1
		}
		return r
	}, s)
}
