package conformance

import (
	"context"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/ledgerlane/platform/services/finance"
)

func testFXRates(t *testing.T, s Store) {
	ctx := context.Background()
	d := func(n int) time.Time { return time.Date(2026, 3, 10+n, 0, 0, 0, 0, time.UTC) }
	r := func(cur string, n int, v string) finance.FXRate {
		return finance.FXRate{Currency: cur, Date: d(n), PerUSD: decimal.RequireFromString(v), Source: "test"}
	}
	must(t, s.PutFXRates(ctx, []finance.FXRate{r("EUR", 0, "0.9"), r("EUR", 2, "0.91"), r("GBP", 1, "0.8"), r("JPY", 0, "150")}))
	// Replace one, add one.
	must(t, s.PutFXRates(ctx, []finance.FXRate{r("EUR", 2, "0.912345"), r("EUR", 5, "0.95")}))
	got, err := s.FXRatesUpTo(ctx, []string{"EUR", "GBP", "USD"}, d(3))
	must(t, err)
	want := []finance.FXRate{r("EUR", 0, "0.9"), r("EUR", 2, "0.912345"), r("GBP", 1, "0.8")}
	if len(got) != len(want) {
		t.Fatalf("rates: got %v, want %v", got, want)
	}
	for i := range want {
		if got[i].Currency != want[i].Currency || !got[i].Date.Equal(want[i].Date) || !got[i].PerUSD.Equal(want[i].PerUSD) ||
			got[i].Source != "test" {
			t.Errorf("rate %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
	rt := finance.NewRateTable(got)
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
	line := func(kind, typ, cur, amt string) finance.NetWorthLine {
		return finance.NetWorthLine{Kind: kind, AssetType: typ, Liquidity: finance.LiquidityLiquid, Currency: cur,
			Amount: decimal.RequireFromString(amt)}
	}
	first := finance.NetWorthSnapshot{UserID: f.user, Date: d(0), IsManual: true, TakenAt: base,
		Lines: []finance.NetWorthLine{line(finance.NetWorthAsset, "depository", "USD", "1234.56"),
			{Kind: finance.NetWorthAsset, AssetType: "etf", Liquidity: finance.LiquidityInvestable, RetirementSubtype: "roth_ira",
				Currency: "EUR", Amount: decimal.RequireFromString("0.000001")},
			line(finance.NetWorthLiability, "credit", "USD", "99999999999.99")}}
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
		_, err := s.PutNetWorthSnapshot(ctx, finance.NetWorthSnapshot{UserID: f.user, Date: d(n), TakenAt: base})
		must(t, err)
	}
	_, err = s.PutNetWorthSnapshot(ctx, finance.NetWorthSnapshot{UserID: f.other, Date: d(1), TakenAt: base,
		Lines: []finance.NetWorthLine{line(finance.NetWorthAsset, "depository", "USD", "1")}})
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
