package networth

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"time"

	"github.com/shopspring/decimal"

	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/services/finance"
)

// Config assembles a Service from the kernel, which gives it the caller's
// scope, the user's main currency, the clock and the logger, and the
// subdomain's Store.
type Config = finance.Subdomain[Store]

// Service answers the net-worth and holdings routes with the caller's
// grant applied, records the aggregator's prices and rates, and takes the
// daily snapshots.
type Service struct {
	k     *finance.Service
	store Store
}

// NewService returns a Service from cfg.
func NewService(cfg Config) *Service { return &Service{k: cfg.Kernel, store: cfg.Store} }

// NetWorthView answers GET /v1/net-worth.
type NetWorthView struct {
	NetWorthFigures
	IsManual   bool
	ComputedAt time.Time
	// Previous is yesterday's snapshot converted at yesterday's rate, for
	// the day changes; nil without one (or without yesterday's rate).
	Previous *NetWorthFigures
}

// NetWorthHistory answers GET /v1/net-worth/history.
type NetWorthHistory struct {
	Currency string
	Points   []NetWorthFigures
	// MissingRateDates are the snapshot days left out because a rate was
	// missing (ours: missing_rate_dates).
	MissingRateDates []string
}

func dataExcluded() error {
	return problem.New(problem.DataExcluded,
		"net worth comes from stored snapshots that cannot be filtered by account; this connection excludes accounts")
}

// netWorthScope checks the caller and refuses grants that exclude accounts
// (403 data-excluded); category exclusions do not matter.
func (s *Service) netWorthScope(ctx context.Context, c finance.Caller) (finance.Scope, error) {
	sc, err := s.k.Scope(ctx, c, false)
	if err != nil {
		return sc, err
	}
	if len(sc.Grant().ExcludedAccountIDs) > 0 {
		return sc, dataExcluded()
	}
	return sc, nil
}

func (s *Service) baseCurrency(ctx context.Context, c finance.Caller, sc finance.Scope, cur string) (string, error) {
	if cur == "" {
		return s.k.MainCurrency(ctx, c, sc)
	}
	if !finance.ValidCurrency(cur) {
		return "", finance.Invalid("base_currency", "base_currency must be an upper-case ISO 4217 code")
	}
	return cur, nil
}

// snapshotNow computes the user's lines from the current accounts,
// holdings and prices (today, service clock) and stores today's snapshot
// when there is none yet (first writer wins). It returns the state the
// lines came from, which the history walks back.
func (s *Service) snapshotNow(ctx context.Context, userID string) (NetWorthSnapshot, current, error) {
	now := s.k.Now()
	st, err := s.current(ctx, userID)
	if err != nil {
		return NetWorthSnapshot{}, st, err
	}
	snap := NetWorthSnapshot{UserID: userID, Date: finance.Day(now), Lines: st.lines, IsManual: st.manual, TakenAt: now}
	if _, err := s.store.PutNetWorthSnapshot(ctx, snap); err != nil {
		return NetWorthSnapshot{}, st, finance.Internal("put snapshot", err)
	}
	return snap, st, nil
}

// SnapshotNetWorth is the daily snapshot job for one user (internal: no
// grant): it stores today's snapshot unless one exists. The sandbox ticker
// runs it; a read of either route runs it too, so a day someone looked at
// always has its point.
func (s *Service) SnapshotNetWorth(ctx context.Context, userID string) error {
	_, _, err := s.snapshotNow(ctx, userID)
	return err
}

func currenciesOf(lines []NetWorthLine, base string) []string {
	out := []string{base}
	for _, l := range lines {
		if !slices.Contains(out, l.Currency) {
			out = append(out, l.Currency)
		}
	}
	return out
}

func rateProblem(err error) error {
	var re *RateError
	if errors.As(err, &re) {
		return problem.New(problem.Unprocessable, "no exchange rate for "+re.Currency+" on or before "+
			re.Date.Format(finance.DateLayout)+"; amounts are never converted 1:1").WithField("base_currency")
	}
	return err
}

// GetNetWorth answers GET /v1/net-worth?base_currency=: today's figures,
// live from the accounts and holdings (and stored as today's snapshot when
// there is none), converted into base_currency (default: the user's main
// currency) at today's rates. A currency without a rate on or before today
// is 422 unprocessable naming base_currency.
func (s *Service) GetNetWorth(ctx context.Context, c finance.Caller, baseCurrency string) (NetWorthView, error) {
	sc, err := s.netWorthScope(ctx, c)
	if err != nil {
		return NetWorthView{}, err
	}
	cur, err := s.baseCurrency(ctx, c, sc, baseCurrency)
	if err != nil {
		return NetWorthView{}, err
	}
	now := s.k.Now()
	today := finance.Day(now)
	live, _, err := s.snapshotNow(ctx, c.UserID)
	if err != nil {
		return NetWorthView{}, err
	}
	yesterday := today.AddDate(0, 0, -1)
	prev, err := s.store.ListNetWorthSnapshots(ctx, c.UserID, yesterday, yesterday)
	if err != nil {
		return NetWorthView{}, finance.Internal("list snapshots", err)
	}
	curs := currenciesOf(live.Lines, cur)
	for _, p := range prev {
		curs = append(curs, currenciesOf(p.Lines, cur)...)
	}
	rs, err := s.store.FXRatesUpTo(ctx, curs, today)
	if err != nil {
		return NetWorthView{}, finance.Internal("fx rates", err)
	}
	rt := NewRateTable(rs)
	fig, err := ConvertNetWorth(live.Lines, rt, cur, today)
	if err != nil {
		return NetWorthView{}, rateProblem(err)
	}
	v := NetWorthView{NetWorthFigures: fig, IsManual: live.IsManual, ComputedAt: now}
	if len(prev) == 1 {
		if pf, err := ConvertNetWorth(prev[0].Lines, rt, cur, yesterday); err == nil {
			v.Previous = &pf
		}
	}
	return v, nil
}

// GetNetWorthHistory answers GET /v1/net-worth/history?period=&base_currency=:
// one point per day of the period, each converted at its own day's rate. A
// day with a stored snapshot answers it (today's is taken first when
// missing); every other day from the user's oldest posted row on is
// derived: its lines rebuilt from today's by walking each account back by
// its posted rows (DeriveNetWorthLines) and marked Derived. A day with a
// currency without a rate on or before it is left out and listed in
// MissingRateDates; nothing is converted 1:1.
func (s *Service) GetNetWorthHistory(ctx context.Context, c finance.Caller, period, baseCurrency string) (NetWorthHistory, error) {
	sc, err := s.netWorthScope(ctx, c)
	if err != nil {
		return NetWorthHistory{}, err
	}
	today := finance.Day(s.k.Now())
	from, err := periodStart(period, today)
	if err != nil {
		return NetWorthHistory{}, err
	}
	cur, err := s.baseCurrency(ctx, c, sc, baseCurrency)
	if err != nil {
		return NetWorthHistory{}, err
	}
	_, st, err := s.snapshotNow(ctx, c.UserID)
	if err != nil {
		return NetWorthHistory{}, err
	}
	snaps, err := s.store.ListNetWorthSnapshots(ctx, c.UserID, from, today)
	if err != nil {
		return NetWorthHistory{}, finance.Internal("list snapshots", err)
	}
	stored := map[time.Time]bool{}
	for _, sn := range snaps {
		stored[sn.Date] = true
	}
	lo := from
	if lo.IsZero() { // "all": back to the oldest posted row
		start, ok, err := s.historyStart(ctx, c.UserID, from)
		if err != nil {
			return NetWorthHistory{}, err
		}
		lo = today
		if ok {
			lo = start
		}
	}
	var missing []time.Time
	for _, d := range daysDown(lo, today) {
		if !stored[d] {
			missing = append(missing, d)
		}
	}
	derived, err := s.derive(ctx, c.UserID, st, missing)
	if err != nil {
		return NetWorthHistory{}, err
	}
	isDerived := map[time.Time]bool{}
	for _, d := range derived {
		isDerived[d.Date] = true
	}
	snaps = append(snaps, derived...)
	slices.SortFunc(snaps, func(a, b NetWorthSnapshot) int { return a.Date.Compare(b.Date) })
	curs := []string{cur}
	for _, sn := range snaps {
		for _, x := range currenciesOf(sn.Lines, cur) {
			if !slices.Contains(curs, x) {
				curs = append(curs, x)
			}
		}
	}
	rs, err := s.store.FXRatesUpTo(ctx, curs, today)
	if err != nil {
		return NetWorthHistory{}, finance.Internal("fx rates", err)
	}
	rt := NewRateTable(rs)
	h := NetWorthHistory{Currency: cur, Points: []NetWorthFigures{}}
	for _, sn := range snaps {
		f, err := ConvertNetWorthTotals(sn.Lines, rt, cur, sn.Date)
		if errors.Is(err, ErrNoRate) {
			h.MissingRateDates = append(h.MissingRateDates, sn.Date.Format(finance.DateLayout))
			continue
		}
		if err != nil {
			return NetWorthHistory{}, err
		}
		f.Derived = isDerived[sn.Date]
		h.Points = append(h.Points, f)
	}
	return h, nil
}

// RecordFXRates stores rates from the aggregator (internal: no grant). Each
// needs an upper-case ISO currency other than USD, a date and a rate above
// zero; anything else is 400 naming rates[i].
func (s *Service) RecordFXRates(ctx context.Context, rs []FXRate) error {
	for i, r := range rs {
		f := "rates[" + strconv.Itoa(i) + "]"
		if !finance.ValidCurrency(r.Currency) || r.Currency == "USD" || r.Date.IsZero() || !r.PerUSD.IsPositive() {
			return finance.Invalid(f, f+" is not a valid rate")
		}
		rs[i].Date = finance.Day(r.Date)
	}
	if err := s.store.PutFXRates(ctx, rs); err != nil {
		return finance.Internal("put rates", err)
	}
	return nil
}

// AllocationEntries turns a breakdown map into entries sorted by value
// (largest first, then label), each with its percentage of total (2
// places, half-even; absent when total is not above zero) and its day
// change against prev (absent without a previous figure).
type AllocationEntry struct {
	Label        string
	Value        decimal.Decimal
	Percentage   *decimal.Decimal
	DayChange    *decimal.Decimal
	DayChangePct *decimal.Decimal
}

// Allocation builds one entry.
func Allocation(label string, v decimal.Decimal, total decimal.Decimal, prev map[string]decimal.Decimal, hasPrev bool) AllocationEntry {
	e := AllocationEntry{Label: label, Value: v}
	if total.IsPositive() {
		p := finance.DivRoundBank(v.Mul(decimal.NewFromInt(100)), total, 2)
		e.Percentage = &p
	}
	if hasPrev {
		pv := prev[label]
		d := v.Sub(pv)
		e.DayChange = &d
		if !pv.IsZero() {
			p := finance.DivRoundBank(d.Mul(decimal.NewFromInt(100)), pv.Abs(), 2)
			e.DayChangePct = &p
		}
	}
	return e
}

// Allocations is Allocation over a map, largest value first, then label.
func Allocations(m map[string]decimal.Decimal, total decimal.Decimal, prev map[string]decimal.Decimal, hasPrev bool) []AllocationEntry {
	out := make([]AllocationEntry, 0, len(m))
	for k, v := range m {
		out = append(out, Allocation(k, v, total, prev, hasPrev))
	}
	slices.SortFunc(out, func(a, b AllocationEntry) int {
		if c := b.Value.Cmp(a.Value); c != 0 {
			return c
		}
		if a.Label < b.Label {
			return -1
		}
		if a.Label > b.Label {
			return 1
		}
		return 0
	})
	return out
}
