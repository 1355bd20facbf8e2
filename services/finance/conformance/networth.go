package conformance

import (
	"context"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/ledgerlane/platform/services/finance/networth"
)

func testFXRates(t *testing.T, s Store) {
	ctx := context.Background()
	d := func(n int) time.Time { return time.Date(2026, 3, 10+n, 0, 0, 0, 0, time.UTC) }
	r := func(cur string, n int, v string) networth.FXRate {
		return networth.FXRate{Currency: cur, Date: d(n), PerUSD: decimal.RequireFromString(v), Source: "test"}
	}
	must(t, s.PutFXRates(ctx, []networth.FXRate{r("EUR", 0, "0.9"), r("EUR", 2, "0.91"), r("GBP", 1, "0.8"), r("JPY", 0, "150")}))
	// Replace one, add one.
	must(t, s.PutFXRates(ctx, []networth.FXRate{r("EUR", 2, "0.912345"), r("EUR", 5, "0.95")}))
	got, err := s.FXRatesUpTo(ctx, []string{"EUR", "GBP", "USD"}, d(3))
	must(t, err)
	want := []networth.FXRate{r("EUR", 0, "0.9"), r("EUR", 2, "0.912345"), r("GBP", 1, "0.8")}
	if len(got) != len(want) {
		t.Fatalf("rates: got %v, want %v", got, want)
	}
	for i := range want {
		if got[i].Currency != want[i].Currency || !got[i].Date.Equal(want[i].Date) || !got[i].PerUSD.Equal(want[i].PerUSD) ||
			got[i].Source != "test" {
			t.Errorf("rate %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
	rt := networth.NewRateTable(got)
	if v, ok := rt.PerUSD("EUR", d(1)); !ok || !v.Equal(decimal.RequireFromString("0.9")) {
		t.Errorf("EUR on day 1 = %v %v", v, ok)
	}
	if _, ok := rt.PerUSD("GBP", d(0)); ok {
		t.Error("GBP before its first rate has a rate")
	}
}

func testNetWorthSnapshots(t *testing.T, s Store) {
	ctx := context.Background()
	f := setup(t, s)
	d := func(n int) time.Time { return time.Date(2026, 3, 10+n, 0, 0, 0, 0, time.UTC) }
	line := func(kind, typ, cur, amt string) networth.NetWorthLine {
		return networth.NetWorthLine{Kind: kind, AssetType: typ, Liquidity: networth.LiquidityLiquid, Currency: cur,
			Amount: decimal.RequireFromString(amt)}
	}
	first := networth.NetWorthSnapshot{UserID: f.user, Date: d(0), IsManual: true, TakenAt: base,
		Lines: []networth.NetWorthLine{line(networth.NetWorthAsset, "depository", "USD", "1234.56"),
			{Kind: networth.NetWorthAsset, AssetType: "etf", Liquidity: networth.LiquidityInvestable, RetirementSubtype: "roth_ira",
				Currency: "EUR", Amount: decimal.RequireFromString("0.000001")},
			line(networth.NetWorthLiability, "credit", "USD", "99999999999.99")}}
	ok, err := s.PutNetWorthSnapshot(ctx, first)
	must(t, err)
	if !ok {
		t.Fatal("first snapshot not stored")
	}
	again := first
	again.Lines = nil
	if ok, err := s.PutNetWorthSnapshot(ctx, again); err != nil || ok {
		t.Fatalf("second snapshot of a day: stored=%v err=%v, want first writer wins", ok, err)
	}
	for _, n := range []int{2, 1} {
		_, err := s.PutNetWorthSnapshot(ctx, networth.NetWorthSnapshot{UserID: f.user, Date: d(n), TakenAt: base})
		must(t, err)
	}
	_, err = s.PutNetWorthSnapshot(ctx, networth.NetWorthSnapshot{UserID: f.other, Date: d(1), TakenAt: base,
		Lines: []networth.NetWorthLine{line(networth.NetWorthAsset, "depository", "USD", "1")}})
	must(t, err)

	got, err := s.ListNetWorthSnapshots(ctx, f.user, time.Time{}, d(1))
	must(t, err)
	if len(got) != 2 || !got[0].Date.Equal(d(0)) || !got[1].Date.Equal(d(1)) {
		t.Fatalf("snapshots: %+v", got)
	}
	g := got[0]
	if !g.IsManual || !g.TakenAt.Equal(base) || len(g.Lines) != 3 || len(got[1].Lines) != 0 {
		t.Fatalf("first snapshot: %+v", g)
	}
	for i, l := range first.Lines {
		if g.Lines[i].Kind != l.Kind || g.Lines[i].AssetType != l.AssetType || g.Lines[i].Liquidity != l.Liquidity ||
			g.Lines[i].RetirementSubtype != l.RetirementSubtype || g.Lines[i].Currency != l.Currency || !g.Lines[i].Amount.Equal(l.Amount) {
			t.Errorf("line %d: got %+v, want %+v", i, g.Lines[i], l)
		}
	}
	if got, _ := s.ListNetWorthSnapshots(ctx, f.user, d(2), d(9)); len(got) != 1 {
		t.Errorf("from day 2: %d snapshots", len(got))
	}
	if got, _ := s.ListNetWorthSnapshots(ctx, "not-a-uuid", time.Time{}, d(9)); len(got) != 0 {
		t.Errorf("bad user id: %d snapshots", len(got))
	}
}

// testUsersWithoutSnapshot: users lacking a snapshot on a day, by id,
// paged with after and limit.
func testUsersWithoutSnapshot(t *testing.T, s Store) {
	ctx := context.Background()
	f := setup(t, s)
	d := time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC)
	all, err := s.UsersWithoutSnapshot(ctx, d, "", 0)
	must(t, err)
	want := []string{f.user, f.other}
	if want[0] > want[1] {
		want[0], want[1] = want[1], want[0]
	}
	diff(t, "without", want, all)
	page, err := s.UsersWithoutSnapshot(ctx, d, "", 1)
	must(t, err)
	next, err := s.UsersWithoutSnapshot(ctx, d, page[0], 1)
	must(t, err)
	diff(t, "pages", want, append(page, next...))
	_, err = s.PutNetWorthSnapshot(ctx, networth.NetWorthSnapshot{UserID: f.user, Date: d, TakenAt: base})
	must(t, err)
	left, err := s.UsersWithoutSnapshot(ctx, d, "", 0)
	must(t, err)
	diff(t, "after a snapshot", []string{f.other}, left)
	other, err := s.UsersWithoutSnapshot(ctx, d.AddDate(0, 0, 1), "", 0)
	must(t, err)
	diff(t, "the next day", want, other)
}
