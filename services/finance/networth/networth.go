// Package networth is net worth (GET /v1/net-worth and its history),
// holdings (GET /v1/holdings) and what they are priced and converted with:
// the security price table, the FX rate table and the daily net-worth
// snapshots, with the job that takes them (RunSnapshots, which server.Run
// starts) and the recording of the aggregator's prices and rates (the
// sandbox).
//
// It owns holdings, security prices, FX rates and snapshots; it reads the
// kernel's accounts. It may import the kernel (services/finance) and
// nothing else of finance.
package networth

import (
	"cmp"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/ledgerlane/platform/services/finance"
)

// Net-worth line kinds and liquidity classes (ours; the spec leaves them
// open).
const (
	NetWorthAsset     = "asset"
	NetWorthLiability = "liability"

	LiquidityLiquid     = "liquid"
	LiquidityInvestable = "investable"
	LiquidityIlliquid   = "illiquid"
)

// FXRate is one day's rate of a currency against the US dollar: PerUSD units
// of Currency buy one USD. USD itself has no row: it is the quote currency,
// 1 by definition (that is not a 1:1 fallback between two currencies).
type FXRate struct {
	Currency string
	Date     time.Time // a date
	PerUSD   decimal.Decimal
	Source   string
}

// NetWorthLine is one part of a net-worth snapshot, in its own currency,
// never converted: a snapshot keeps native amounts so any day can be
// converted into any currency at that day's rate.
type NetWorthLine struct {
	Kind              string // asset or liability
	AssetType         string // depository, investment, a holding's asset type, credit, loan, other
	Liquidity         string // liquid, investable, illiquid (assets); liquid for credit, illiquid for loans
	RetirementSubtype string // holdings only; empty = taxable
	Currency          string
	Amount            decimal.Decimal // positive: the value of an asset, what a liability owes
}

// NetWorthSnapshot is a user's net worth on one day, as lines.
type NetWorthSnapshot struct {
	UserID   string
	Date     time.Time // a date
	Lines    []NetWorthLine
	IsManual bool // a counted account is on a manual connection
	TakenAt  time.Time
}

// ErrNoRate: no usable FX rate for a currency on a day.
var ErrNoRate = errors.New("finance: no exchange rate")

// RateTable answers "the latest rate on or before a day" per currency.
type RateTable map[string][]FXRate // by currency, ascending dates

// NewRateTable indexes rates (any order).
func NewRateTable(rs []FXRate) RateTable {
	t := RateTable{}
	for _, r := range rs {
		r.Date = finance.Day(r.Date)
		t[r.Currency] = append(t[r.Currency], r)
	}
	for _, v := range t {
		slices.SortFunc(v, func(a, b FXRate) int { return a.Date.Compare(b.Date) })
	}
	return t
}

// PerUSD is the rate of cur on day: the latest dated on or before day; USD
// is 1. ok is false when there is none.
func (t RateTable) PerUSD(cur string, day time.Time) (decimal.Decimal, bool) {
	if cur == "USD" {
		return decimal.NewFromInt(1), true
	}
	v := t[cur]
	i, found := slices.BinarySearchFunc(v, finance.Day(day), func(r FXRate, d time.Time) int { return r.Date.Compare(d) })
	if !found {
		i--
	}
	if i < 0 || i >= len(v) || !v[i].PerUSD.IsPositive() {
		return decimal.Decimal{}, false
	}
	return v[i].PerUSD, true
}

// Convert converts amount from one currency to another at day's rates:
// amount × perUSD(to) / perUSD(from), one exact division rounded half-even
// to the target's minor unit. A missing rate is ErrNoRate, never 1:1.
func (t RateTable) Convert(amount decimal.Decimal, from, to string, day time.Time) (decimal.Decimal, error) {
	places := finance.MinorUnit(to)
	if from == to {
		return amount.RoundBank(places), nil
	}
	rf, ok := t.PerUSD(from, day)
	if !ok {
		return decimal.Decimal{}, noRate(from, day)
	}
	rt, ok := t.PerUSD(to, day)
	if !ok {
		return decimal.Decimal{}, noRate(to, day)
	}
	return finance.DivRoundBank(amount.Mul(rt), rf, places), nil
}

// RateError names the currency and day without a rate.
type RateError struct {
	Currency string
	Date     time.Time
}

func (e *RateError) Error() string {
	return "no exchange rate for " + e.Currency + " on or before " + e.Date.Format(finance.DateLayout)
}

// Unwrap makes errors.Is(err, ErrNoRate) true.
func (e *RateError) Unwrap() error { return ErrNoRate }

func noRate(cur string, day time.Time) error {
	return &RateError{Currency: cur, Date: finance.Day(day)}
}

// NetWorthLines builds a snapshot's lines from the user's accounts, their
// holdings (priced: HoldingView) and the rules of services/finance/README.md:
//   - depository: an asset, asset type depository, liquid;
//   - investment: with holdings, each priced holding's current value, asset
//     type the holding's, liquid for cash holdings, else investable, with
//     its retirement subtype; holdings without a price count nothing; an
//     investment account without holdings counts its balance (investable);
//   - credit: a liability (liquid: due soon); loan: a liability (illiquid);
//   - any other type: an illiquid asset of that type.
//
// An investment account with holdings also counts its cash position
// (cash, by account id: the part of its balance the holdings do not hold,
// CashPositions) as a liquid cash asset, so the account counts once: its
// positions at today's prices plus its cash, never its balance beside them.
//
// Hidden accounts (IsHidden) count nothing. Amounts of one (kind, asset
// type, liquidity, subtype, currency) are summed into one line.
func NetWorthLines(accounts []finance.Account, holdings []HoldingView, cash map[string]decimal.Decimal) (lines []NetWorthLine, manual bool) {
	byAccount := map[string][]HoldingView{}
	for _, h := range holdings {
		byAccount[h.AccountID] = append(byAccount[h.AccountID], h)
	}
	sum := map[NetWorthLine]decimal.Decimal{}
	add := func(l NetWorthLine, amt decimal.Decimal) {
		key := l
		key.Amount = decimal.Decimal{}
		// decimal.Decimal is not comparable by value; key on a zero amount.
		sum[key] = sum[key].Add(amt)
	}
	for _, a := range accounts {
		if a.IsHidden {
			continue
		}
		counted := true
		switch a.Type {
		case finance.AccountDepository:
			add(NetWorthLine{Kind: NetWorthAsset, AssetType: finance.AccountDepository, Liquidity: LiquidityLiquid, Currency: a.Balance.Currency}, a.Balance.Amount)
		case finance.AccountInvestment:
			hs := byAccount[a.ID]
			if len(hs) == 0 {
				add(NetWorthLine{Kind: NetWorthAsset, AssetType: finance.AccountInvestment, Liquidity: LiquidityInvestable, Currency: a.Balance.Currency}, a.Balance.Amount)
				break
			}
			for _, h := range hs {
				if h.CurrentValue == nil {
					continue
				}
				liq := LiquidityInvestable
				if h.AssetType == AssetCash {
					liq = LiquidityLiquid
				}
				add(NetWorthLine{Kind: NetWorthAsset, AssetType: h.AssetType, Liquidity: liq, RetirementSubtype: h.RetirementSubtype,
					Currency: h.CurrentValue.Currency}, h.CurrentValue.Amount)
			}
			if c := cash[a.ID]; !c.IsZero() {
				add(NetWorthLine{Kind: NetWorthAsset, AssetType: AssetCash, Liquidity: LiquidityLiquid, Currency: a.Balance.Currency}, c)
			}
		case finance.AccountCredit:
			add(NetWorthLine{Kind: NetWorthLiability, AssetType: finance.AccountCredit, Liquidity: LiquidityLiquid, Currency: a.Balance.Currency}, a.Balance.Amount)
		case finance.AccountLoan:
			add(NetWorthLine{Kind: NetWorthLiability, AssetType: finance.AccountLoan, Liquidity: LiquidityIlliquid, Currency: a.Balance.Currency}, a.Balance.Amount)
		default:
			if a.Type == "" {
				counted = false
				break
			}
			add(NetWorthLine{Kind: NetWorthAsset, AssetType: a.Type, Liquidity: LiquidityIlliquid, Currency: a.Balance.Currency}, a.Balance.Amount)
		}
		if counted && a.Provider == finance.ProviderManual {
			manual = true
		}
	}
	for k, v := range sum {
		k.Amount = v
		lines = append(lines, k)
	}
	sortLines(lines)
	return lines, manual
}

func sortLines(ls []NetWorthLine) {
	slices.SortFunc(ls, func(a, b NetWorthLine) int {
		return strings.Compare(a.Kind+"|"+a.AssetType+"|"+a.Liquidity+"|"+a.RetirementSubtype+"|"+a.Currency,
			b.Kind+"|"+b.AssetType+"|"+b.Liquidity+"|"+b.RetirementSubtype+"|"+b.Currency)
	})
}

// NetWorthFigures are a snapshot converted into one currency.
type NetWorthFigures struct {
	Currency           string
	Date               time.Time
	TotalAssets        decimal.Decimal
	TotalLiabilities   decimal.Decimal
	NetWorth           decimal.Decimal
	LiquidNetWorth     decimal.Decimal
	InvestableNetWorth decimal.Decimal
	// Liquidity holds the converted assets per liquidity class.
	Liquidity map[string]decimal.Decimal
	// ByAssetType, ByCurrency, ByRetirementSubtype: converted assets per
	// label (retirement: holdings only, "taxable" when no subtype).
	ByAssetType         map[string]decimal.Decimal
	ByCurrency          map[string]decimal.Decimal
	ByRetirementSubtype map[string]decimal.Decimal
	// Derived (history points only): rebuilt from the transactions, as no
	// snapshot was stored that day.
	Derived bool
}

// ConvertNetWorth converts lines into cur at day's rates. The rounding
// rule: the lines of one currency are summed exactly per figure first, and
// each (figure, currency) sum is converted once (Convert: one half-even
// rounding to cur's minor unit); a figure is the sum of its converted
// per-currency parts. So total_assets = Σ over currencies of convert(Σ
// assets in that currency), likewise total_liabilities, and net_worth =
// total_assets − total_liabilities exactly. Breakdown lines are converted
// the same way per label and may differ from the totals by a minor unit per
// currency. A currency without a rate is a *RateError.
func ConvertNetWorth(lines []NetWorthLine, t RateTable, cur string, day time.Time) (NetWorthFigures, error) {
	f := NetWorthFigures{Currency: cur, Date: finance.Day(day), Liquidity: map[string]decimal.Decimal{},
		ByAssetType: map[string]decimal.Decimal{}, ByCurrency: map[string]decimal.Decimal{}, ByRetirementSubtype: map[string]decimal.Decimal{}}
	// native sums per (figure, currency)
	type key struct{ fig, label, currency string }
	native := map[key]decimal.Decimal{}
	for _, l := range lines {
		add := func(fig, label string) {
			k := key{fig, label, l.Currency}
			native[k] = native[k].Add(l.Amount)
		}
		if l.Kind == NetWorthLiability {
			add("liabilities", "")
			if l.Liquidity == LiquidityLiquid {
				add("liquid_liabilities", "")
			}
			continue
		}
		add("assets", "")
		add("liquidity", l.Liquidity)
		add("type", l.AssetType)
		add("currency", l.Currency)
		if l.AssetType != finance.AccountDepository && l.AssetType != finance.AccountInvestment && l.Liquidity != LiquidityIlliquid {
			sub := l.RetirementSubtype
			if sub == "" {
				sub = "taxable"
			}
			add("retirement", sub)
		}
	}
	keys := make([]key, 0, len(native))
	for k := range native {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b key) int {
		return cmp.Or(strings.Compare(a.fig, b.fig), strings.Compare(a.label, b.label), strings.Compare(a.currency, b.currency))
	})
	var liquidLiab decimal.Decimal
	for _, k := range keys {
		v, err := t.Convert(native[k], k.currency, cur, day)
		if err != nil {
			return NetWorthFigures{}, err
		}
		switch k.fig {
		case "assets":
			f.TotalAssets = f.TotalAssets.Add(v)
		case "liabilities":
			f.TotalLiabilities = f.TotalLiabilities.Add(v)
		case "liquid_liabilities":
			liquidLiab = liquidLiab.Add(v)
		case "liquidity":
			f.Liquidity[k.label] = f.Liquidity[k.label].Add(v)
		case "type":
			f.ByAssetType[k.label] = f.ByAssetType[k.label].Add(v)
		case "currency":
			f.ByCurrency[k.label] = f.ByCurrency[k.label].Add(v)
		case "retirement":
			f.ByRetirementSubtype[k.label] = f.ByRetirementSubtype[k.label].Add(v)
		}
	}
	places := finance.MinorUnit(cur)
	f.TotalAssets = f.TotalAssets.RoundBank(places)
	f.TotalLiabilities = f.TotalLiabilities.RoundBank(places)
	f.NetWorth = f.TotalAssets.Sub(f.TotalLiabilities)
	f.LiquidNetWorth = f.Liquidity[LiquidityLiquid].Sub(liquidLiab)
	f.InvestableNetWorth = f.Liquidity[LiquidityLiquid].Add(f.Liquidity[LiquidityInvestable]).Sub(liquidLiab)
	return f, nil
}

// NetWorthPeriodStart is the first day a period token covers, ending today
// (inclusive): 30d and 90d are that many days including today; 6mo, 1y and
// 5y go back that many calendar months or years and start the day after
// (so 1y from 2026-11-23 starts 2025-11-24); all has a zero start. ok is
// false for any other token.
func NetWorthPeriodStart(period string, today time.Time) (time.Time, bool) {
	today = finance.Day(today)
	switch period {
	case "30d":
		return today.AddDate(0, 0, -29), true
	case "90d":
		return today.AddDate(0, 0, -89), true
	case "6mo":
		return today.AddDate(0, -6, 1), true
	case "1y":
		return today.AddDate(-1, 0, 1), true
	case "5y":
		return today.AddDate(-5, 0, 1), true
	case "all":
		return time.Time{}, true
	}
	return time.Time{}, false
}

// ConvertNetWorthTotals is ConvertNetWorth without the breakdowns: total
// assets and liabilities, net worth, liquid and investable net worth, which
// is all a history point carries. It follows the same rounding rule (each
// figure's per-currency sum converted once), so those figures equal
// ConvertNetWorth's (TestConvertNetWorthTotalsMatches), at a fraction of the
// cost: a five-year history converts 1,826 snapshots.
func ConvertNetWorthTotals(lines []NetWorthLine, t RateTable, cur string, day time.Time) (NetWorthFigures, error) {
	type sums struct {
		currency                                     string
		assets, liab, liquidLiab, liquid, investable decimal.Decimal
	}
	var by []sums // a user has a few currencies: a scan beats a map
	for _, l := range lines {
		i := slices.IndexFunc(by, func(s sums) bool { return s.currency == l.Currency })
		if i < 0 {
			by = append(by, sums{currency: l.Currency})
			i = len(by) - 1
		}
		s := &by[i]
		if l.Kind == NetWorthLiability {
			s.liab = s.liab.Add(l.Amount)
			if l.Liquidity == LiquidityLiquid {
				s.liquidLiab = s.liquidLiab.Add(l.Amount)
			}
			continue
		}
		s.assets = s.assets.Add(l.Amount)
		switch l.Liquidity {
		case LiquidityLiquid:
			s.liquid = s.liquid.Add(l.Amount)
		case LiquidityInvestable:
			s.investable = s.investable.Add(l.Amount)
		}
	}
	// The first currency without a rate, in order, is the one reported.
	slices.SortFunc(by, func(a, b sums) int { return strings.Compare(a.currency, b.currency) })
	f := NetWorthFigures{Currency: cur, Date: finance.Day(day)}
	var liquid, investable, liquidLiab decimal.Decimal
	for _, s := range by {
		for _, p := range []struct {
			into *decimal.Decimal
			v    decimal.Decimal
		}{{&f.TotalAssets, s.assets}, {&f.TotalLiabilities, s.liab}, {&liquidLiab, s.liquidLiab},
			{&liquid, s.liquid}, {&investable, s.investable}} {
			v, err := t.Convert(p.v, s.currency, cur, day)
			if err != nil {
				return NetWorthFigures{}, err
			}
			*p.into = p.into.Add(v)
		}
	}
	places := finance.MinorUnit(cur)
	f.TotalAssets = f.TotalAssets.RoundBank(places)
	f.TotalLiabilities = f.TotalLiabilities.RoundBank(places)
	f.NetWorth = f.TotalAssets.Sub(f.TotalLiabilities)
	f.LiquidNetWorth = liquid.Sub(liquidLiab)
	f.InvestableNetWorth = liquid.Add(investable).Sub(liquidLiab)
	return f, nil
}
