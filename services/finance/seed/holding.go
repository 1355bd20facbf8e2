package seed

import (
	"context"
	"fmt"
	"hash/fnv"
	"time"

	"github.com/shopspring/decimal"

	"github.com/ledgerlane/platform/services/finance"
	"github.com/ledgerlane/platform/services/finance/networth"
)

// Security is a ticker of the demo's price table.
type Security struct {
	Ticker, Name, AssetType, Currency string
	Base                              string // the price on PriceEpoch
	TrendCentiBP                      int64  // drift per day, in hundredths of a basis point
	Fixed                             bool   // a money-market fund: always Base
}

// DemoSecurities are the tickers the demo holds and the sandbox prices.
var DemoSecurities = []Security{
	{"VTI", "Vanguard Total Stock Market ETF", networth.AssetETF, "USD", "205.40", 4, false},
	{"VXUS", "Vanguard Total International Stock ETF", networth.AssetETF, "USD", "55.10", 2, false},
	{"BND", "Vanguard Total Bond Market ETF", networth.AssetETF, "USD", "74.80", 0, false},
	{"AAPL", "Apple Inc.", networth.AssetEquity, "USD", "150.25", 5, false},
	{"SPAXX", "Fidelity Investments Money Market Government Portfolio", networth.AssetCash, "USD", "1.00", 0, true},
}

// PriceEpoch anchors DemoPrice's drift.
var PriceEpoch = time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)

// PriceSource names where demo prices come from.
const PriceSource = "sandbox"

// DemoPrice is the deterministic close of s on day: Base × (1 + drift ×
// days since PriceEpoch + a daily wiggle of up to ±1.5 % from a hash of
// ticker and day), rounded half-even to cents. Exact decimals throughout.
func DemoPrice(s Security, day time.Time) decimal.Decimal {
	base := decimal.RequireFromString(s.Base)
	if s.Fixed {
		return base
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(s.Ticker + "|" + finance.Day(day).Format(finance.DateLayout)))
	wiggle := int64(h.Sum32()%301) - 150 // basis points
	days := int64(finance.Day(day).Sub(PriceEpoch).Hours() / 24)
	factor := decimal.NewFromInt(1_000_000 + days*s.TrendCentiBP + wiggle*100).Shift(-6)
	return base.Mul(factor).RoundBank(2)
}

// DemoPrices returns every demo security's price on day.
func DemoPrices(day time.Time) []networth.SecurityPrice {
	out := make([]networth.SecurityPrice, 0, len(DemoSecurities))
	for _, s := range DemoSecurities {
		out = append(out, networth.SecurityPrice{Ticker: s.Ticker, Currency: s.Currency, Date: finance.Day(day),
			Price: DemoPrice(s, day), Source: PriceSource})
	}
	return out
}

// holdings puts the demo positions on the brokerage account.
func (b *builder) holdingRows() []networth.Holding {
	type pos struct {
		ticker, qty, basis, method string
		acquiredDaysAgo            int
	}
	positions := []pos{
		{"VTI", "120.5", "24100.00", networth.CostBasisFIFO, 700},
		{"VXUS", "210", "11800.00", networth.CostBasisFIFO, 650},
		{"BND", "95.25", "7300.00", networth.CostBasisAverageCost, 500},
		{"AAPL", "40", "6200.00", networth.CostBasisSpecificLot, 300},
		{"SPAXX", "1523.17", "1523.17", networth.CostBasisAverageCost, 30},
	}
	var out []networth.Holding
	for _, p := range positions {
		var sec Security
		for _, s := range DemoSecurities {
			if s.Ticker == p.ticker {
				sec = s
			}
		}
		acquired := b.today.AddDate(0, 0, -p.acquiredDaysAgo).Add(15 * time.Hour)
		basis := decimal.RequireFromString(p.basis)
		h := networth.Holding{ID: b.id("holding/" + p.ticker), UserID: b.user.ID, AccountID: b.brokerage.ID,
			AssetType: sec.AssetType, Ticker: sec.Ticker, Name: sec.Name, Quantity: decimal.RequireFromString(p.qty),
			CostBasis: &basis, CostBasisMethod: p.method, Currency: sec.Currency,
			DataSource: networth.HoldingSourceAggregator, AcquiredAt: &acquired,
			CreatedAt: b.brokerage.CreatedAt, UpdatedAt: b.now}
		if p.ticker == "SPAXX" {
			h.Notes = "Core position: the cash sweep at Fidelity Investments"
		}
		out = append(out, h)
	}
	return out
}

func (b *builder) writeHoldings(ctx context.Context, s Store) error {
	for _, h := range b.holdingRows() {
		if err := s.CreateHolding(ctx, h); err != nil {
			return fmt.Errorf("seed: holding: %w", err)
		}
	}
	var prices []networth.SecurityPrice
	for d := b.start; !d.After(b.today); d = d.AddDate(0, 0, 1) {
		prices = append(prices, DemoPrices(d)...)
	}
	if err := s.PutSecurityPrices(ctx, prices); err != nil {
		return fmt.Errorf("seed: prices: %w", err)
	}
	var rates []networth.FXRate
	for d := b.start; !d.After(b.today); d = d.AddDate(0, 0, 1) {
		rates = append(rates, DemoFXRates(d)...)
	}
	if err := s.PutFXRates(ctx, rates); err != nil {
		return fmt.Errorf("seed: fx rates: %w", err)
	}
	return nil
}

// DemoFXCurrencies are the demo's currencies with a rate against USD and
// their base rate (units per USD).
var DemoFXCurrencies = []struct{ Currency, PerUSD string }{{"EUR", "0.92"}, {"GBP", "0.79"}}

// DemoFXRates returns the demo rates of day: the base rate with a daily
// wiggle of up to ±0.5 % from a hash of currency and day, 6 places, exact.
func DemoFXRates(day time.Time) []networth.FXRate {
	out := make([]networth.FXRate, 0, len(DemoFXCurrencies))
	for _, c := range DemoFXCurrencies {
		h := fnv.New32a()
		_, _ = h.Write([]byte(c.Currency + "|" + finance.Day(day).Format(finance.DateLayout)))
		wiggle := int64(h.Sum32()%101) - 50 // hundredths of a percent
		rate := decimal.RequireFromString(c.PerUSD).Mul(decimal.NewFromInt(10_000 + wiggle).Shift(-4)).RoundBank(6)
		out = append(out, networth.FXRate{Currency: c.Currency, Date: finance.Day(day), PerUSD: rate, Source: PriceSource})
	}
	return out
}
