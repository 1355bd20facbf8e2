package seed_test

import (
	"context"
	"errors"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/ledgerlane/platform/pkg/pgtest"
	"github.com/ledgerlane/platform/services/finance"
	"github.com/ledgerlane/platform/services/finance/memory"
	"github.com/ledgerlane/platform/services/finance/postgres"
	"github.com/ledgerlane/platform/services/finance/seed"
)

var now = time.Date(2026, 5, 20, 14, 30, 0, 0, time.UTC)

// owner is the metering account of the demo user.
const owner = "5b0e7c1a-2d3f-4a5b-8c6d-7e8f9a0b1c2d"

func load(t *testing.T, s seed.Store) (seed.DemoData, []finance.Transaction) {
	t.Helper()
	return loadFor(t, s, owner)
}

func loadFor(t *testing.T, s seed.Store, account string) (seed.DemoData, []finance.Transaction) {
	t.Helper()
	ctx := context.Background()
	d, err := seed.Demo(ctx, s, account, now)
	if err != nil {
		t.Fatal(err)
	}
	txs, err := s.ListTransactions(ctx, d.UserID, finance.TransactionFilter{}, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	return d, txs
}

func TestDemo(t *testing.T) {
	ctx := context.Background()
	s := memory.New()
	d, txs := load(t, s)

	if len(txs) != d.Transactions {
		t.Fatalf("stored %d transactions, Demo reports %d", len(txs), d.Transactions)
	}
	if len(txs) < 1000 || len(txs) > 3000 {
		t.Errorf("%d transactions: want roughly two years of activity", len(txs))
	}
	newest, oldest := txs[0].Date, txs[len(txs)-1].Date
	if newest.After(finance.Day(now)) {
		t.Errorf("newest row dated %s, after now", newest.Format(finance.DateLayout))
	}
	if span := newest.Sub(oldest).Hours() / 24; span < 700 || span > 731 {
		t.Errorf("rows span %.0f days (%s to %s), want about two years", span,
			oldest.Format(finance.DateLayout), newest.Format(finance.DateLayout))
	}

	counts := map[string]int{}
	for _, tx := range txs {
		counts["currency:"+tx.Amount.Currency]++
		counts["source:"+tx.Source]++
		counts["account:"+tx.AccountID]++
		if tx.IsPending {
			counts["pending"]++
			if finance.Day(now).Sub(tx.Date) > 3*24*time.Hour {
				t.Errorf("pending row %s is dated %s, long before now", tx.ID, tx.Date.Format(finance.DateLayout))
			}
		}
		if tx.Location != nil {
			counts["located"]++
		}
		if tx.CategoryID == "" {
			counts["uncategorized"]++
		}
		if tx.TransferPairID != "" {
			counts["transfer"]++
		}
		if tx.RecurringRuleID != "" {
			counts["recurring"]++
		}
		if len(tx.OwnedByUser) > 0 {
			counts["edited"]++
		}
		if tx.CreatedAt.After(now) || tx.UpdatedAt.After(now) {
			t.Errorf("row %s has a timestamp after now", tx.ID)
		}
	}
	t.Logf("%d rows: %v", len(txs), counts)
	atLeast := map[string]int{
		"currency:USD": 900, "currency:EUR": 20, "source:bank_sync": 900, "source:manual": 20, "source:import": 20,
		"pending": 2, "located": 100, "uncategorized": 5, "transfer": 100, "recurring": 150, "edited": 5,
	}
	for k, n := range atLeast {
		if counts[k] < n {
			t.Errorf("%s: %d rows, want at least %d", k, counts[k], n)
		}
	}
	a := d.AccountIDs
	for name, id := range map[string]string{"checking": a.Checking, "savings": a.Savings, "card": a.CreditCard,
		"rewards": a.RewardsCard, "brokerage": a.Brokerage, "mortgage": a.Mortgage, "eur": a.EuroChecking,
		"car loan": d.Debts.CarLoan, "student loan": d.Debts.StudentLoan} {
		if counts["account:"+id] < 8 {
			t.Errorf("account %s has %d rows", name, counts["account:"+id])
		}
	}

	accounts, err := s.ListAccounts(ctx, d.UserID)
	if err != nil {
		t.Fatal(err)
	}
	currencies := map[string]bool{}
	for _, acct := range accounts {
		currencies[acct.Currency] = true
		if acct.Balance.Amount.IsNegative() {
			t.Errorf("account %s has a negative balance %s", acct.Name, acct.Balance.Amount)
		}
		if acct.Balance.Currency != acct.Currency {
			t.Errorf("account %s balance in %s", acct.Name, acct.Balance.Currency)
		}
	}
	if len(accounts) != 9 || !currencies["USD"] || !currencies["EUR"] {
		t.Errorf("accounts: %d, currencies %v", len(accounts), currencies)
	}

	conns, err := s.ListConnections(ctx, d.UserID, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	providers := map[string]int{}
	for _, c := range conns {
		providers[c.Provider]++
	}
	if len(conns) != 3 || providers[finance.ProviderPlaid] != 1 || providers[finance.ProviderQuiltt] != 1 || providers[finance.ProviderManual] != 1 {
		t.Errorf("connections by provider: %v", providers)
	}

	cats, err := s.ListCategories(ctx, d.UserID)
	if err != nil {
		t.Fatal(err)
	}
	var system, custom, sub int
	for _, c := range cats {
		if c.IsSystem() {
			system++
		} else {
			custom++
		}
		if c.ParentID != "" {
			sub++
		}
	}
	if system < 10 || custom < 2 || sub < 5 {
		t.Errorf("categories: %d system, %d custom, %d subcategories", system, custom, sub)
	}
	rules, err := s.ListRecurringRules(ctx, d.UserID)
	if err != nil || len(rules) < 5 {
		t.Errorf("recurring rules: %d, %v", len(rules), err)
	}

	for _, gid := range []string{d.GrantReadID, d.GrantWriteID, d.GrantRedactedID} {
		g, err := s.GetGrant(ctx, gid)
		if err != nil || g.UserID != d.UserID {
			t.Fatalf("grant %s: %+v %v", gid, g, err)
		}
	}
	red, _ := s.GetGrant(ctx, d.GrantRedactedID)
	if !red.WritesEnabled || !red.Redacts(finance.FieldTransactionLocation) || !red.Redacts(finance.FieldConnectionInstitution) ||
		len(red.ExcludedAccountIDs) != 1 || len(red.ExcludedCategoryIDs) != 1 {
		t.Errorf("redacted grant: %+v", red)
	}
	if read, _ := s.GetGrant(ctx, d.GrantReadID); read.WritesEnabled || read.Filtered() || len(read.RedactedFields) > 0 {
		t.Errorf("read grant: %+v", read)
	}
}

func TestDemoIsDeterministic(t *testing.T) {
	d1, txs1 := load(t, memory.New())
	d2, txs2 := load(t, memory.New())
	if diff := gocmp.Diff(d1, d2); diff != "" {
		t.Fatalf("Demo result differs between runs:\n%s", diff)
	}
	if diff := gocmp.Diff(txs1, txs2); diff != "" {
		t.Fatalf("transactions differ between runs:\n%s", diff)
	}
	var sum decimal.Decimal
	for _, tx := range txs1 {
		sum = sum.Add(tx.Amount.Amount)
	}
	t.Logf("sum of amounts: %s", sum)
}

// TestDemosBesideEachOther: one store holds the demos of several accounts
// (the local stack on PostgreSQL seeds one per start), each user owned by its
// account, with the system categories written once and shared.
func TestDemosBesideEachOther(t *testing.T) {
	stores := map[string]func(t *testing.T) seed.Store{
		"memory":   func(*testing.T) seed.Store { return memory.New() },
		"postgres": func(t *testing.T) seed.Store { return postgres.New(pgtest.Pool(t, "finance", postgres.Migrations)) },
	}
	for name, newStore := range stores {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := newStore(t)
			second := "8d7c6b5a-4f3e-4d2c-9b1a-0f9e8d7c6b5a"
			d1, txs1 := loadFor(t, s, owner)
			d2, txs2 := loadFor(t, s, second)
			if d1.UserID == d2.UserID || d1.GrantReadID == d2.GrantReadID || d1.AccountIDs.Checking == d2.AccountIDs.Checking {
				t.Fatalf("the second demo reuses ids of the first: %+v", d2)
			}
			if len(txs1) != len(txs2) || len(txs2) != d2.Transactions {
				t.Errorf("second demo has %d transactions, the first %d", len(txs2), len(txs1))
			}
			for _, d := range []seed.DemoData{d1, d2} {
				u, err := s.GetUser(ctx, d.UserID)
				if err != nil || u.OwnerAccountID != d.OwnerAccountID {
					t.Errorf("user %s: owner %q, %v; want %q", d.UserID, u.OwnerAccountID, err, d.OwnerAccountID)
				}
			}
			if d2.OwnerAccountID != second || d2.CategoryIDs["Groceries"] != d1.CategoryIDs["Groceries"] {
				t.Errorf("second demo: owner %q, Groceries %q; want %q and the shared %q",
					d2.OwnerAccountID, d2.CategoryIDs["Groceries"], second, d1.CategoryIDs["Groceries"])
			}
			cats, err := s.ListCategories(ctx, d2.UserID)
			if err != nil {
				t.Fatal(err)
			}
			if len(cats) != len(d2.CategoryIDs) {
				t.Errorf("second user sees %d categories, want %d (system ones once, and its own)", len(cats), len(d2.CategoryIDs))
			}
			if _, err := seed.Demo(ctx, s, second, now); !errors.Is(err, finance.ErrAlreadyExists) {
				t.Errorf("a second demo of the same account: %v, want ErrAlreadyExists", err)
			}
			if _, err := seed.Demo(ctx, s, "acct-1", now); err == nil {
				t.Error("a demo for an owner that is not a uuid was written")
			}
		})
	}
}

func TestDemoIntoPostgres(t *testing.T) {
	pool := pgtest.Pool(t, "finance", postgres.Migrations)
	_, fromPG := load(t, postgres.New(pool))
	_, fromMemory := load(t, memory.New())
	if diff := gocmp.Diff(fromMemory, fromPG); diff != "" {
		t.Fatalf("PostgreSQL holds other rows than memory:\n%s", diff)
	}
}
