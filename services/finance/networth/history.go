package networth

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/shopspring/decimal"

	"github.com/ledgerlane/platform/services/finance"
)

// CashPosition is an investment account's cash: the part of its balance
// that its holdings do not hold. An aggregator's balance of an investment
// account values the whole account (positions and uninvested cash) on the
// day it reports it, so the cash is the balance less the holdings valued at
// that day's closes. It moves only when the balance does, not with prices;
// net worth counts the holdings at today's prices plus this cash, which on
// the balance's day is the balance itself: the account counts once.
type CashPosition struct {
	AccountID string
	Cash      finance.Money
	// AsOf is the day the balance and the holdings were valued on: the
	// balance's as-of day, today when the account never reported one.
	AsOf time.Time
}

// CashPositions returns the cash of every investment account in accts
// that has holdings in hs, by account id. prices answers a ticker's two
// latest closes on or before a day (RecentSecurityPrices). Holdings in
// another currency than the account's, or without a price that day, take
// nothing off the balance (they are not counted in net worth either way).
func CashPositions(accts []finance.Account, hs []Holding, today time.Time, prices func(tickers []string, day time.Time) ([]SecurityPrice, error)) (map[string]CashPosition, error) {
	byAccount := map[string][]Holding{}
	for _, h := range hs {
		byAccount[h.AccountID] = append(byAccount[h.AccountID], h)
	}
	out := map[string]CashPosition{}
	for _, a := range accts {
		held := byAccount[a.ID]
		if a.Type != finance.AccountInvestment || len(held) == 0 {
			continue
		}
		day := finance.Day(today)
		if a.BalanceAsOf != nil {
			day = finance.Day(*a.BalanceAsOf)
		}
		tickers := tickersOf(held)
		byTicker := map[string][]SecurityPrice{}
		if len(tickers) > 0 {
			ps, err := prices(tickers, day)
			if err != nil {
				return nil, err
			}
			for _, p := range ps {
				byTicker[p.Ticker+"|"+p.Currency] = append(byTicker[p.Ticker+"|"+p.Currency], p)
			}
		}
		cash := a.Balance.Amount
		for _, h := range held {
			ps := byTicker[h.Ticker+"|"+h.Currency]
			sortPricesNewestFirst(ps)
			if v := PriceHolding(h, ps); v.CurrentValue != nil && v.CurrentValue.Currency == a.Balance.Currency {
				cash = cash.Sub(v.CurrentValue.Amount)
			}
		}
		out[a.ID] = CashPosition{AccountID: a.ID, Cash: finance.Money{Amount: cash, Currency: a.Balance.Currency}, AsOf: day}
	}
	return out, nil
}

// BalanceFlow is the net amount of an account's posted rows dated on one
// day, in one currency. Split slices are left out (their parent carries the
// amount) and so are pending rows (a balance counts posted rows only).
type BalanceFlow struct {
	AccountID string
	Currency  string
	Date      time.Time // a date
	Net       decimal.Decimal
}

// balanceWalk walks one figure of an account back in time from its
// current value: a balance (or an investment account's cash) was the
// current one less the rows posted after that day, up to the day the
// current one is as of; what a card or loan owes was the current debt plus
// them (a purchase, negative, is debt added since). Rows dated after the
// as-of day are not in the current figure and do not move it.
type balanceWalk struct {
	current decimal.Decimal
	owed    bool
	flows   []BalanceFlow // dated on or before the as-of day, newest first
	next    int
	moved   decimal.Decimal // Σ Net of flows[:next]
}

func newBalanceWalk(a finance.Account, current decimal.Decimal, today time.Time, flows []BalanceFlow) *balanceWalk {
	asOf := finance.Day(today)
	if a.BalanceAsOf != nil {
		asOf = finance.Day(*a.BalanceAsOf)
	}
	w := &balanceWalk{current: current, owed: a.Type == finance.AccountCredit || a.Type == finance.AccountLoan}
	for _, f := range flows {
		// A row in another currency cannot have moved this balance by
		// its amount; nothing is converted.
		if f.AccountID == a.ID && f.Currency == a.Balance.Currency && !f.Date.After(asOf) {
			w.flows = append(w.flows, f)
		}
	}
	slices.SortFunc(w.flows, func(x, y BalanceFlow) int { return y.Date.Compare(x.Date) })
	return w
}

// at is the figure at the end of day; calls must come in descending days.
func (w *balanceWalk) at(day time.Time) decimal.Decimal {
	for w.next < len(w.flows) && w.flows[w.next].Date.After(day) {
		w.moved = w.moved.Add(w.flows[w.next].Net)
		w.next++
	}
	if w.owed {
		return w.current.Add(w.moved)
	}
	return w.current.Sub(w.moved)
}

// DeriveNetWorthLines rebuilds the snapshot lines of past days from the
// current state, walking every account back by its posted rows: days must
// be in descending order; the answer has one snapshot per day, in that
// order, marked by nothing (the caller knows they are derived). Balances
// and investment accounts' cash walk back; holdings keep today's value
// (positions and prices are not rebuilt: only cash flows are).
func DeriveNetWorthLines(accts []finance.Account, holdings []HoldingView, cash map[string]CashPosition, flows []BalanceFlow, today time.Time, days []time.Time) []NetWorthSnapshot {
	walks := make([]*balanceWalk, len(accts))
	for i, a := range accts {
		current := a.Balance.Amount
		if c, ok := cash[a.ID]; ok {
			current = c.Cash.Amount
		}
		walks[i] = newBalanceWalk(a, current, today, flows)
	}
	out := make([]NetWorthSnapshot, 0, len(days))
	past := slices.Clone(accts)
	pastCash := map[string]decimal.Decimal{}
	for _, d := range days {
		for i, a := range accts {
			v := walks[i].at(d)
			if _, ok := cash[a.ID]; ok {
				pastCash[a.ID] = v
				continue
			}
			past[i].Balance.Amount = v
		}
		lines, manual := NetWorthLines(past, holdings, pastCash)
		out = append(out, NetWorthSnapshot{Date: finance.Day(d), Lines: lines, IsManual: manual})
	}
	return out
}

// current is the user's net worth as of now: the accounts, the holdings
// priced today, the investment accounts' cash, and the lines they give.
type current struct {
	accts   []finance.Account
	views   []HoldingView
	cash    map[string]CashPosition
	lines   []NetWorthLine
	manual  bool
	holding []Holding
}

func (s *Service) current(ctx context.Context, userID string) (current, error) {
	today := finance.Day(s.k.Now())
	var st current
	var err error
	if st.accts, err = s.store.ListAccounts(ctx, userID); err != nil {
		return st, finance.Internal("list accounts", err)
	}
	if st.holding, err = s.store.ListHoldings(ctx, userID, HoldingFilter{}, "", 0); err != nil {
		return st, finance.Internal("list holdings", err)
	}
	if st.views, err = s.priceHoldings(ctx, st.holding, today); err != nil {
		return st, err
	}
	if st.cash, err = CashPositions(st.accts, st.holding, today, func(tickers []string, day time.Time) ([]SecurityPrice, error) {
		return s.store.RecentSecurityPrices(ctx, tickers, day)
	}); err != nil {
		return st, finance.Internal("recent prices", err)
	}
	st.lines, st.manual = NetWorthLines(st.accts, st.views, cashAmounts(st.cash))
	return st, nil
}

func cashAmounts(cash map[string]CashPosition) map[string]decimal.Decimal {
	out := make(map[string]decimal.Decimal, len(cash))
	for id, c := range cash {
		out[id] = c.Cash.Amount
	}
	return out
}

// tickersOf is the distinct tickers of hs.
func tickersOf(hs []Holding) []string {
	var out []string
	for _, h := range hs {
		if h.Ticker != "" && !slices.Contains(out, h.Ticker) {
			out = append(out, h.Ticker)
		}
	}
	return out
}

// priceHoldings prices hs at the latest closes on or before day.
func (s *Service) priceHoldings(ctx context.Context, hs []Holding, day time.Time) ([]HoldingView, error) {
	tickers := tickersOf(hs)
	prices := map[string][]SecurityPrice{}
	if len(tickers) > 0 {
		ps, err := s.store.RecentSecurityPrices(ctx, tickers, day)
		if err != nil {
			return nil, finance.Internal("recent prices", err)
		}
		for _, p := range ps {
			k := p.Ticker + "|" + p.Currency
			prices[k] = append(prices[k], p)
		}
	}
	views := make([]HoldingView, 0, len(hs))
	for _, h := range hs {
		ps := prices[h.Ticker+"|"+h.Currency]
		sortPricesNewestFirst(ps)
		views = append(views, PriceHolding(h, ps))
	}
	return views, nil
}

// historyStart is the first day a derived point can have: the user's
// oldest posted row. Before it nothing supports a walk back, so a period
// reaching further starts there. ok is false when the user has no rows.
func (s *Service) historyStart(ctx context.Context, userID string, from time.Time) (time.Time, bool, error) {
	first, err := s.store.FirstPostedDay(ctx, userID)
	if err != nil {
		return time.Time{}, false, finance.Internal("first posted day", err)
	}
	if first == nil {
		return time.Time{}, false, nil
	}
	return finance.Day(maxTime(from, *first)), true, nil
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// DeriveNetWorth returns the user's net-worth lines rebuilt from the
// transactions for every day from..to (both inclusive, newest first),
// ignoring stored snapshots: the history uses it for the days that have
// none, and the conformance suite checks it against the snapshots
// (internal: no grant). Days before the user's oldest posted row are left
// out.
func (s *Service) DeriveNetWorth(ctx context.Context, userID string, from, to time.Time) ([]NetWorthSnapshot, error) {
	st, err := s.current(ctx, userID)
	if err != nil {
		return nil, err
	}
	return s.derive(ctx, userID, st, daysDown(from, to))
}

// daysDown lists the days from to down to from.
func daysDown(from, to time.Time) []time.Time {
	var days []time.Time
	for d := finance.Day(to); !d.Before(finance.Day(from)); d = d.AddDate(0, 0, -1) {
		days = append(days, d)
	}
	return days
}

// derive rebuilds the lines of days (descending) from st, leaving out days
// before the user's oldest posted row.
func (s *Service) derive(ctx context.Context, userID string, st current, days []time.Time) ([]NetWorthSnapshot, error) {
	if len(days) == 0 {
		return nil, nil
	}
	start, ok, err := s.historyStart(ctx, userID, days[len(days)-1])
	if err != nil || !ok {
		return nil, err
	}
	days = slices.DeleteFunc(days, func(d time.Time) bool { return d.Before(start) })
	if len(days) == 0 {
		return nil, nil
	}
	flows, err := s.store.BalanceFlows(ctx, userID, start)
	if err != nil {
		return nil, finance.Internal("balance flows", err)
	}
	snaps := DeriveNetWorthLines(st.accts, st.views, st.cash, flows, s.k.Now(), days)
	for i := range snaps {
		snaps[i].UserID = userID
	}
	return snaps, nil
}

// BalancePoint is one day of an account's balance history.
type BalancePoint struct {
	Date    time.Time
	Balance finance.Money
	// Derived: rebuilt from the transactions (every past day); false for
	// today's point, which is the stored balance.
	Derived bool
}

// BalanceHistory answers GET /v1/accounts/{id}/balance-history?period=:
// the account's balance on every day of the period (the net-worth
// history's tokens; default 30d) from its oldest posted row on, oldest
// first. Today's is the stored balance; every earlier day is derived by
// walking the balance back by the account's posted rows (BalanceFlow), so
// a day's balance is the stored one less what was posted after it, up to
// the day the stored one is as of. An account the grant excludes, or not
// the user's, is 404 like the balances route; a malformed id 400.
func (s *Service) BalanceHistory(ctx context.Context, c finance.Caller, accountID, period string) (finance.Result[[]BalancePoint], error) {
	var res finance.Result[[]BalancePoint]
	a, err := s.k.VisibleAccount(ctx, c, accountID)
	if err != nil {
		return res, err
	}
	today := finance.Day(s.k.Now())
	from, err := periodStart(period, today)
	if err != nil {
		return res, err
	}
	res.Data = []BalancePoint{}
	start, ok, err := s.historyStart(ctx, c.UserID, from)
	if err != nil {
		return res, err
	}
	if !ok {
		start = today
	}
	var flows []BalanceFlow
	if start.Before(today) {
		if flows, err = s.store.BalanceFlows(ctx, c.UserID, start); err != nil {
			return res, finance.Internal("balance flows", err)
		}
	}
	w := newBalanceWalk(a, a.Balance.Amount, today, flows)
	for _, d := range daysDown(start, today) {
		res.Data = append(res.Data, BalancePoint{Date: d, Balance: finance.Money{Amount: w.at(d), Currency: a.Balance.Currency},
			Derived: !d.Equal(today)})
	}
	slices.SortFunc(res.Data, func(x, y BalancePoint) int { return cmp.Compare(x.Date.Unix(), y.Date.Unix()) })
	return res, nil
}

// periodStart is NetWorthPeriodStart with the default (30d) and the 400.
func periodStart(period string, today time.Time) (time.Time, error) {
	if period == "" {
		period = "30d"
	}
	from, ok := NetWorthPeriodStart(period, today)
	if !ok {
		return time.Time{}, finance.Invalid("period", "period must be one of 30d, 90d, 6mo, 1y, 5y, all")
	}
	return from, nil
}
