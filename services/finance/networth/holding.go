package networth

import (
	"time"

	"github.com/shopspring/decimal"

	"github.com/ledgerlane/platform/services/finance"
)

// Asset types of holdings, cost-basis methods and data sources. The spec
// leaves the values open; these are ours.
const (
	AssetEquity     = "equity"
	AssetETF        = "etf"
	AssetMutualFund = "mutual_fund"
	AssetBond       = "bond"
	AssetCash       = "cash"
	AssetCrypto     = "crypto"

	CostBasisFIFO        = "fifo"
	CostBasisAverageCost = "average_cost"
	CostBasisSpecificLot = "specific_lot"

	HoldingSourceAggregator = "aggregator"
	HoldingSourceManual     = "manual"
)

// Holding is one investment position on an investment account. Its price
// is not stored on it: the current price is the latest SecurityPrice of its
// ticker in its currency.
type Holding struct {
	ID        string
	UserID    string
	AccountID string
	AssetType string
	Ticker    string
	Name      string
	Quantity  decimal.Decimal
	// CostBasis is the total paid for the position, in Currency; nil when
	// unknown.
	CostBasis         *decimal.Decimal
	CostBasisMethod   string
	Currency          string
	DataSource        string
	RetirementSubtype string // e.g. 401k, ira, roth_ira; empty: taxable
	Notes             string
	AcquiredAt        *time.Time
	CreatedAt         time.Time
	UpdatedAt         time.Time
}

// SecurityPrice is one day's closing price of a ticker in a currency, from
// the price table the aggregator fills.
type SecurityPrice struct {
	Ticker   string
	Currency string
	Date     time.Time // a date
	Price    decimal.Decimal
	Source   string
}

// HoldingFilter narrows ListHoldings; zero values mean no filter.
type HoldingFilter struct {
	ExcludeAccountIDs []string
	AccountID         string
}

// HoldingView is a holding as answered, priced.
type HoldingView struct {
	Holding
	CurrentPrice   *decimal.Decimal
	PriceSource    string
	CurrentValue   *finance.Money
	DailyChangePct *decimal.Decimal
}

// PriceHolding prices h from its ticker's latest prices (newest first, in
// h's currency): current_price is the latest; current_value = quantity ×
// current_price, rounded half-even to the currency's minor unit;
// daily_change_pct = (latest − previous) / previous × 100, rounded
// half-even to 2 places, absent without two prices. A holding without a
// ticker price (or with no ticker) has no price and no value.
func PriceHolding(h Holding, prices []SecurityPrice) HoldingView {
	v := HoldingView{Holding: h}
	if len(prices) == 0 {
		return v
	}
	latest := prices[0]
	p := latest.Price
	v.CurrentPrice, v.PriceSource = &p, latest.Source
	v.CurrentValue = &finance.Money{Amount: h.Quantity.Mul(p).RoundBank(finance.MinorUnit(h.Currency)), Currency: h.Currency}
	if len(prices) > 1 && prices[1].Price.IsPositive() {
		prev := prices[1].Price
		pct := finance.DivRoundBank(p.Sub(prev).Mul(decimal.NewFromInt(100)), prev, 2)
		v.DailyChangePct = &pct
	}
	return v
}
