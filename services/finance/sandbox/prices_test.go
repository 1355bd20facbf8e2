package sandbox_test

import (
	"context"
	"testing"
	"time"

	"github.com/ledgerlane/platform/services/finance"
	"github.com/ledgerlane/platform/services/finance/seed"
)

// TestPricesDaily: the first sync of a new date writes that day's closing
// prices into the price table, which GET /v1/holdings then reads.
func TestPricesDaily(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.clk.advance(24 * time.Hour)
	tomorrow := finance.Day(e.clk.now())
	before, err := e.store.RecentSecurityPrices(ctx, []string{"VTI"}, tomorrow)
	if err != nil || len(before) == 0 || before[0].Date.Equal(tomorrow) {
		t.Fatalf("before the sync: %v %v", before, err)
	}
	e.sync(t)
	e.sync(t) // a second sync on the same date writes nothing new
	after, err := e.store.RecentSecurityPrices(ctx, []string{"VTI"}, tomorrow)
	if err != nil {
		t.Fatal(err)
	}
	var vti seed.Security
	for _, s := range seed.DemoSecurities {
		if s.Ticker == "VTI" {
			vti = s
		}
	}
	latest := after[0]
	if after[1].Date.After(latest.Date) {
		latest = after[1]
	}
	if !latest.Date.Equal(tomorrow) || !latest.Price.Equal(seed.DemoPrice(vti, tomorrow)) || latest.Source != seed.PriceSource {
		t.Fatalf("after the sync: %+v", after)
	}
	page, err := e.nw.ListHoldings(ctx, e.write, finance.PageQuery{}, e.demo.AccountIDs.Brokerage)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range page.Data {
		if h.Ticker == "VTI" && !h.CurrentPrice.Equal(latest.Price) {
			t.Errorf("holding priced %s, want %s", h.CurrentPrice, latest.Price)
		}
	}
}
