package seed

import (
	"context"
	"fmt"
	"time"

	"github.com/ledgerlane/platform/services/finance/debt"

	"github.com/shopspring/decimal"

	"github.com/ledgerlane/platform/services/finance"
)

// DemoDebts names the demo user's debts. Every credit and loan account has
// liability terms: the two cards, the mortgage, a car loan and a student
// loan (the last two on the manual connection, paid from an account outside
// the app, with a monthly interest charge in Loan Interest, like the
// mortgage).
type DemoDebts struct {
	CarLoan     string
	StudentLoan string
}

// demoDebt is what builder keeps for debts.
type demoDebt struct {
	loans       []*account
	liabilities []debt.Liability
}

type loanSpec struct {
	key, name, subtype, institution string
	opening, apr, payment           string
	dom                             int
}

var demoLoans = []loanSpec{
	{"car-loan", "Auto loan", "auto", "Toyota Financial Services", "-24500.00", "6.9", "485.00", 15},
	{"student-loan", "Student loan", "student", "Nelnet", "-31200.00", "4.99", "331.00", 20},
}

// loans adds the car and student loans with their monthly interest and
// payment rows, and every debt's terms. It draws nothing from the random
// stream, so the other rows do not change.
func (b *builder) loans() {
	manual := b.connections[2]
	for i, s := range demoLoans {
		a := &account{Account: finance.Account{ID: b.id("account/" + s.key), UserID: b.user.ID,
			ConnectionID: manual.ID, Provider: manual.Provider, Name: s.name, Type: finance.AccountLoan,
			Subtype: s.subtype, Currency: "USD", InstitutionName: s.institution,
			CreatedAt: manual.CreatedAt.Add(time.Duration(3+i) * time.Minute)},
			source: finance.SourceManual, cutoff: b.today, balance: decimal.RequireFromString(s.opening)}
		apr := decimal.RequireFromString(s.apr)
		pay := decimal.RequireFromString(s.payment)
		for d := b.start; !d.After(b.today); d = d.AddDate(0, 0, 1) {
			if d.Day() != s.dom || !a.balance.IsNegative() {
				continue
			}
			interest := debt.MonthlyInterest(a.balance.Neg(), apr, "USD")
			b.add(txSpec{acct: a, date: d, amount: interest.Neg(),
				m:        merchant{name: s.institution, display: s.name + " interest", descriptor: "INTEREST CHARGED"},
				category: debt.InterestChargeCategoryName})
			b.add(txSpec{acct: a, date: d, amount: decimal.Min(pay, a.balance.Neg()),
				m:        merchant{name: s.institution, display: s.name + " payment", descriptor: "PAYMENT RECEIVED - THANK YOU", channel: "other"},
				category: "Transfers"})
		}
		b.debt.loans = append(b.debt.loans, a)
	}
	b.demo.Debts = DemoDebts{CarLoan: b.debt.loans[0].ID, StudentLoan: b.debt.loans[1].ID}

	at := b.start.AddDate(0, 0, -5)
	promoEnds := b.today.AddDate(0, 4, 0)
	terms := func(a *account, apr, promo string, floor, pct string) debt.Liability {
		l := debt.Liability{AccountID: a.ID, UserID: b.user.ID, MinPaymentFloor: decimal.RequireFromString(floor),
			MinPaymentPercent: decimal.RequireFromString(pct), CreatedAt: at, UpdatedAt: at}
		r := decimal.RequireFromString(apr)
		l.APR = &r
		if promo != "" {
			p := decimal.RequireFromString(promo)
			l.PromoAPR, l.PromoEndsOn = &p, &promoEnds
		}
		return l
	}
	b.debt.liabilities = []debt.Liability{
		terms(b.card, "24.99", "", "35.00", "2"),
		terms(b.rewards, "21.49", "0", "25.00", "1"),
		terms(b.mortgage, "5.25", "", "2145.67", "0"),
	}
	for i, s := range demoLoans {
		b.debt.liabilities = append(b.debt.liabilities, terms(b.debt.loans[i], s.apr, "", s.payment, "0"))
	}
}

func (b *builder) writeDebts(ctx context.Context, s Store) error {
	for _, l := range b.debt.liabilities {
		if err := s.PutLiability(ctx, l); err != nil {
			return fmt.Errorf("seed: liability: %w", err)
		}
	}
	return nil
}
