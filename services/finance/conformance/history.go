package conformance

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/ledgerlane/platform/pkg/cursor"
	"github.com/ledgerlane/platform/services/finance"
	"github.com/ledgerlane/platform/services/finance/networth"
)

// testDerivedHistoryProperty: net worth rebuilt from the transactions
// (networth.Service.DeriveNetWorth, over the store's BalanceFlows and
// FirstPostedDay) equals the snapshot taken on that day, on random
// histories: every account type (a EUR account among them, an investment
// account with holdings whose cash walks back), balances as of a random
// day (or never reported), rows after that day, pending rows, split
// slices, rows in another currency than their account's. The snapshots are
// what the state was on each day; the history then answers them as stored
// and every other day as derived.
func testDerivedHistoryProperty(t *testing.T, s Store) {
	for seed := range uint64(4) {
		t.Run(fmt.Sprintf("seed %d", seed), func(t *testing.T) { derivedHistoryRun(t, s, seed) })
	}
}

func derivedHistoryRun(t *testing.T, s Store, seed uint64) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(seed, 33))
	const days = 40
	day0 := time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)
	on := func(n int) time.Time { return day0.AddDate(0, 0, n) }
	today := on(days)
	user, conn, grant, owner := newID(), newID(), newID(), newID()
	must(t, s.CreateUser(ctx, finance.User{ID: user, OwnerAccountID: owner, CreatedAt: base}))
	must(t, s.CreateGrant(ctx, finance.Grant{ID: grant, UserID: user, CreatedAt: base}))
	must(t, s.CreateConnection(ctx, finance.Connection{ID: conn, UserID: user, Provider: finance.ProviderPlaid,
		Status: finance.ConnectionActive, CreatedAt: base, UpdatedAt: base}))

	// A ticker of this run only (prices are shared by every user), priced
	// once: its close holds every day.
	ticker := fmt.Sprintf("H%08X", rng.Uint32())
	must(t, s.PutSecurityPrices(ctx, []networth.SecurityPrice{{Ticker: ticker, Currency: "USD", Date: on(-5),
		Price: decimal.RequireFromString("12.34"), Source: "test"}}))
	must(t, s.PutFXRates(ctx, []networth.FXRate{{Currency: "EUR", Date: on(-5), PerUSD: decimal.RequireFromString("0.9"), Source: "test"}}))

	type acct struct {
		finance.Account
		opening decimal.Decimal // the balance (or debt) before day 0
		asOf    int             // the day the stored balance is as of
		held    decimal.Decimal // the holdings' value (fixed price)
	}
	var accts []*acct
	for i, spec := range []struct{ typ, cur string }{
		{finance.AccountDepository, "USD"}, {finance.AccountDepository, "EUR"}, {finance.AccountCredit, "USD"},
		{finance.AccountLoan, "USD"}, {finance.AccountInvestment, "USD"}, {finance.AccountInvestment, "USD"}, {"property", "USD"},
	} {
		a := &acct{Account: finance.Account{ID: newID(), UserID: user, ConnectionID: conn, Name: fmt.Sprintf("A%d", i),
			Type: spec.typ, Currency: spec.cur, CreatedAt: base, UpdatedAt: base},
			opening: decimal.New(rng.Int64N(5_000_000), -2), asOf: 10 + rng.IntN(days-10)}
		if rng.IntN(4) == 0 {
			a.asOf = days // never reported: as of today
		}
		accts = append(accts, a)
	}
	invested := accts[5]
	invested.held = decimal.RequireFromString("12.34").Mul(decimal.RequireFromString("7.5")).RoundBank(2)

	// Rows: a posted one on day 0 (the walk's start), then random ones.
	var rows []finance.Transaction
	add := func(a *acct, d int, cents int64, pending bool, cur string) finance.Transaction {
		tx := finance.Transaction{ID: newID(), UserID: user, AccountID: a.ID, Amount: finance.Money{Amount: decimal.New(cents, -2), Currency: cur},
			Merchant: "m", Date: on(d), IsPending: pending, Source: finance.SourceManual, Version: 1, CreatedAt: base, UpdatedAt: base}
		rows = append(rows, tx)
		return tx
	}
	add(accts[0], 0, -100, false, "USD")
	for range 250 {
		a := accts[rng.IntN(len(accts))]
		cur := a.Currency
		if rng.IntN(25) == 0 {
			cur = map[string]string{"USD": "EUR", "EUR": "USD"}[cur] // never moves this balance
		}
		parent := add(a, rng.IntN(days+5), rng.Int64N(200_000)-120_000, rng.IntN(10) == 0, cur)
		if rng.IntN(12) == 0 { // split into two slices: only the parent moves the balance
			half := parent.Amount.Amount.Div(decimal.NewFromInt(2)).Round(2)
			for _, amt := range []decimal.Decimal{half, parent.Amount.Amount.Sub(half)} {
				add(a, 0, 0, false, cur)
				sl := &rows[len(rows)-1]
				sl.Amount.Amount, sl.SplitParentID, sl.Date = amt, parent.ID, parent.Date
			}
		}
	}
	// The truth: an account's figure at the end of day d, from its opening
	// and its posted rows in its own currency (slices aside) dated up to d.
	figure := func(a *acct, d int) decimal.Decimal {
		v := a.opening
		for _, r := range rows {
			if r.AccountID != a.ID || r.IsPending || r.SplitParentID != "" || r.Amount.Currency != a.Currency || r.Date.After(on(d)) {
				continue
			}
			if a.Type == finance.AccountCredit || a.Type == finance.AccountLoan {
				v = v.Sub(r.Amount.Amount) // a purchase (negative) adds debt
			} else {
				v = v.Add(r.Amount.Amount)
			}
		}
		return v
	}
	for _, a := range accts {
		asOf := on(a.asOf).Add(17 * time.Hour)
		if a.asOf < days {
			a.BalanceAsOf = &asOf
		}
		// The stored balance is as of its day: later rows are not in it.
		a.Balance = finance.Money{Amount: figure(a, a.asOf).Add(a.held), Currency: a.Currency}
		must(t, s.CreateAccount(ctx, a.Account))
	}
	must(t, s.CreateHolding(ctx, networth.Holding{ID: newID(), UserID: user, AccountID: invested.ID, AssetType: networth.AssetETF,
		Ticker: ticker, Quantity: decimal.RequireFromString("7.5"), CostBasisMethod: networth.CostBasisFIFO, Currency: "USD",
		DataSource: networth.HoldingSourceAggregator, CreatedAt: base, UpdatedAt: base}))
	slices.SortFunc(rows, func(a, b finance.Transaction) int { // slices after their parents
		return len(a.SplitParentID) - len(b.SplitParentID)
	})
	must(t, s.InsertTransactions(ctx, rows))

	// Snapshots of what the state was on random days.
	priced := networth.PriceHolding(networth.Holding{AccountID: invested.ID, AssetType: networth.AssetETF, Ticker: ticker,
		Quantity: decimal.RequireFromString("7.5"), Currency: "USD"},
		[]networth.SecurityPrice{{Ticker: ticker, Currency: "USD", Price: decimal.RequireFromString("12.34")}})
	stored := map[string]networth.NetWorthSnapshot{}
	for range 8 {
		d := rng.IntN(days)
		var state []finance.Account
		cash := map[string]decimal.Decimal{}
		for _, a := range accts {
			x := a.Account
			x.Balance.Amount = figure(a, min(d, a.asOf))
			if a == invested {
				cash[a.ID] = x.Balance.Amount // the holdings are not in figure
			}
			state = append(state, x)
		}
		lines, manual := networth.NetWorthLines(state, []networth.HoldingView{priced}, cash)
		sn := networth.NetWorthSnapshot{UserID: user, Date: on(d), Lines: lines, IsManual: manual, TakenAt: base}
		if ok, err := s.PutNetWorthSnapshot(ctx, sn); err != nil {
			t.Fatal(err)
		} else if ok {
			stored[on(d).Format(finance.DateLayout)] = sn
		}
	}

	k := finance.NewService(finance.Config{Store: s, Cursors: cursor.New([]byte("history-key")), Clock: func() time.Time { return today.Add(9 * time.Hour) }})
	svc := networth.NewService(networth.Config{Kernel: k, Store: s})
	derived, err := svc.DeriveNetWorth(ctx, user, on(-10), today)
	must(t, err)
	if len(derived) != days+1 || !derived[len(derived)-1].Date.Equal(on(0)) {
		t.Fatalf("%d derived days (last %v), want days 0..%d: none before the oldest row", len(derived), derived[len(derived)-1].Date, days)
	}
	rates := networth.NewRateTable([]networth.FXRate{{Currency: "EUR", Date: on(-5), PerUSD: decimal.RequireFromString("0.9")}})
	totals := func(sn networth.NetWorthSnapshot) networth.NetWorthFigures {
		f, err := networth.ConvertNetWorthTotals(sn.Lines, rates, "USD", sn.Date)
		must(t, err)
		return f
	}
	same := func(a, b networth.NetWorthFigures) bool {
		return a.TotalAssets.Equal(b.TotalAssets) && a.TotalLiabilities.Equal(b.TotalLiabilities) && a.NetWorth.Equal(b.NetWorth) &&
			a.LiquidNetWorth.Equal(b.LiquidNetWorth) && a.InvestableNetWorth.Equal(b.InvestableNetWorth)
	}
	for _, d := range derived {
		sn, ok := stored[d.Date.Format(finance.DateLayout)]
		if !ok {
			continue
		}
		if got, want := totals(d), totals(sn); !same(got, want) {
			t.Errorf("%s: derived %+v, snapshot %+v", d.Date.Format(finance.DateLayout), got, want)
		}
		if !sameLines(d.Lines, sn.Lines) {
			t.Errorf("%s: derived lines %+v, snapshot lines %+v", d.Date.Format(finance.DateLayout), d.Lines, sn.Lines)
		}
	}

	// The history answers the stored days as stored and every other day
	// derived, each equal to the rebuilt figure.
	h, err := svc.GetNetWorthHistory(ctx, finance.Caller{UserID: user, GrantID: grant, OwnerAccountID: owner}, "all", "USD")
	must(t, err)
	byDay := map[string]networth.NetWorthSnapshot{}
	for _, d := range derived {
		byDay[d.Date.Format(finance.DateLayout)] = d
	}
	for _, p := range h.Points {
		key := p.Date.Format(finance.DateLayout)
		_, isStored := stored[key]
		if p.Date.Equal(today) {
			isStored = true // taken by the read
		}
		if p.Derived == isStored {
			t.Errorf("%s: derived %v, stored %v", key, p.Derived, isStored)
		}
		if d, ok := byDay[key]; ok && !same(p, totals(d)) {
			t.Errorf("%s: history %+v, rebuilt %+v", key, p, totals(d))
		}
	}
	if len(h.Points) != days+1 {
		t.Errorf("history has %d points, want %d", len(h.Points), days+1)
	}
}

// sameLines compares lines by their key and amount, zero lines aside.
func sameLines(a, b []networth.NetWorthLine) bool {
	norm := func(ls []networth.NetWorthLine) map[string]decimal.Decimal {
		out := map[string]decimal.Decimal{}
		for _, l := range ls {
			if l.Amount.IsZero() {
				continue
			}
			k := l.Kind + "|" + l.AssetType + "|" + l.Liquidity + "|" + l.RetirementSubtype + "|" + l.Currency
			out[k] = out[k].Add(l.Amount)
		}
		return out
	}
	x, y := norm(a), norm(b)
	if len(x) != len(y) {
		return false
	}
	for k, v := range x {
		if w, ok := y[k]; !ok || !v.Equal(w) {
			return false
		}
	}
	return true
}
