package conformance

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/ledgerlane/platform/services/finance"
	"github.com/ledgerlane/platform/services/finance/networth"
)

func testHoldings(t *testing.T, s Store) {
	ctx := context.Background()
	f := setup(t, s)
	acquired := base.Add(-400 * 24 * time.Hour)
	full := networth.Holding{ID: "00000000-0000-4000-8000-000000000002", UserID: f.user, AccountID: f.account,
		AssetType: networth.AssetETF, Ticker: "VTI", Name: "Vanguard Total Stock Market ETF",
		Quantity: decimal.RequireFromString("12.345678"), CostBasis: dec("2500.10"), CostBasisMethod: networth.CostBasisFIFO,
		Currency: "USD", DataSource: networth.HoldingSourceAggregator, RetirementSubtype: "roth_ira", Notes: "core",
		AcquiredAt: &acquired, CreatedAt: base, UpdatedAt: base.Add(time.Hour)}
	bare := networth.Holding{ID: "00000000-0000-4000-8000-000000000001", UserID: f.user, AccountID: f.account2,
		AssetType: networth.AssetCash, Quantity: decimal.RequireFromString("100"), CostBasisMethod: networth.CostBasisAverageCost,
		Currency: "USD", DataSource: networth.HoldingSourceManual, CreatedAt: base, UpdatedAt: base}
	must(t, s.CreateHolding(ctx, full))
	must(t, s.CreateHolding(ctx, bare))
	if err := s.CreateHolding(ctx, full); !errors.Is(err, finance.ErrAlreadyExists) {
		t.Fatalf("duplicate holding: want ErrAlreadyExists, got %v", err)
	}
	other := bare
	other.ID, other.AccountID = newID(), f.otherAccount
	if err := s.CreateHolding(ctx, other); !errors.Is(err, finance.ErrNotFound) {
		t.Fatalf("holding on another user's account: want ErrNotFound, got %v", err)
	}

	ids := func(hs []networth.Holding) []string {
		var out []string
		for _, h := range hs {
			out = append(out, h.ID)
		}
		return out
	}
	tests := []struct {
		name  string
		f     networth.HoldingFilter
		after string
		limit int
		want  []string
	}{
		{"all by id", networth.HoldingFilter{}, "", 0, []string{bare.ID, full.ID}},
		{"limit", networth.HoldingFilter{}, "", 1, []string{bare.ID}},
		{"after", networth.HoldingFilter{}, bare.ID, 0, []string{full.ID}},
		{"account", networth.HoldingFilter{AccountID: f.account}, "", 0, []string{full.ID}},
		{"excluded account", networth.HoldingFilter{ExcludeAccountIDs: []string{f.account}}, "", 0, []string{bare.ID}},
		{"unknown account", networth.HoldingFilter{AccountID: newID()}, "", 0, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := s.ListHoldings(ctx, f.user, tc.f, tc.after, tc.limit)
			must(t, err)
			diff(t, "holding ids", tc.want, ids(got))
		})
	}
	got, err := s.ListHoldings(ctx, f.user, networth.HoldingFilter{AccountID: f.account}, "", 0)
	must(t, err)
	h := got[0]
	if h.Quantity.String() != full.Quantity.String() || h.CostBasis == nil || !h.CostBasis.Equal(*full.CostBasis) ||
		h.AcquiredAt == nil || !h.AcquiredAt.Equal(acquired) || !h.CreatedAt.Equal(full.CreatedAt) ||
		!h.UpdatedAt.Equal(full.UpdatedAt) || h.Name != full.Name || h.Notes != full.Notes ||
		h.RetirementSubtype != full.RetirementSubtype || h.Ticker != "VTI" || h.AssetType != networth.AssetETF ||
		h.CostBasisMethod != full.CostBasisMethod || h.DataSource != full.DataSource {
		t.Errorf("holding read back\n got %+v\nwant %+v", h, full)
	}
	if none, err := s.ListHoldings(ctx, f.other, networth.HoldingFilter{}, "", 0); err != nil || len(none) != 0 {
		t.Errorf("other user sees %v %v", none, err)
	}

	price := func(ticker, cur string, d int, p string) networth.SecurityPrice {
		return networth.SecurityPrice{Ticker: ticker, Currency: cur, Date: day(d), Price: decimal.RequireFromString(p), Source: "test"}
	}
	must(t, s.PutSecurityPrices(ctx, []networth.SecurityPrice{price("VTI", "USD", -2, "250.00"),
		price("VTI", "USD", -1, "251.00"), price("VTI", "USD", 0, "249.5"), price("VTI", "USD", 1, "260"),
		price("VTI", "EUR", -1, "230.10"), price("AAPL", "USD", -5, "190.123456")}))
	// Replacing a day's price.
	must(t, s.PutSecurityPrices(ctx, []networth.SecurityPrice{price("VTI", "USD", 0, "249.75")}))
	ps, err := s.RecentSecurityPrices(ctx, []string{"VTI", "AAPL", "MSFT"}, day(0))
	must(t, err)
	gotPrices := map[string]string{}
	for _, p := range ps {
		gotPrices[p.Ticker+"|"+p.Currency+"|"+p.Date.Format(finance.DateLayout)] = p.Price.String()
	}
	want := map[string]string{
		"VTI|USD|" + day(0).Format(finance.DateLayout):   "249.75",
		"VTI|USD|" + day(-1).Format(finance.DateLayout):  "251",
		"VTI|EUR|" + day(-1).Format(finance.DateLayout):  "230.1",
		"AAPL|USD|" + day(-5).Format(finance.DateLayout): "190.123456",
	}
	diff(t, "recent prices", want, gotPrices)
	if ps, err := s.RecentSecurityPrices(ctx, []string{"MSFT"}, day(0)); err != nil || len(ps) != 0 {
		t.Errorf("unknown ticker: %v %v", ps, err)
	}
}
