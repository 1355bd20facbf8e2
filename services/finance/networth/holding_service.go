package networth

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/ledgerlane/platform/services/finance"
)

type holdingCursor struct {
	ID string `json:"i"`
}

func (p holdingCursor) Valid() bool { return finance.IsUUID(p.ID) }

// ListHoldings answers GET /v1/holdings: the holdings on accounts the grant
// shows, by id, in cursor pages, each priced from the price table as of
// today (service clock). An account_id the grant hides, or that is not the
// user's, gives an empty page, as on transactions. Under
// connection.institution a holding's name and notes are dropped when they
// name one of the user's institutions (a fund named after its broker).
func (s *Service) ListHoldings(ctx context.Context, c finance.Caller, q finance.PageQuery, accountID string) (finance.Page[HoldingView], error) {
	var page finance.Page[HoldingView]
	var f HoldingFilter
	l, err := finance.OpenList[holdingCursor](ctx, s.k, c, q, finance.ListRoute{Path: "/v1/holdings",
		Filters: func(sc finance.Scope) ([]string, error) {
			f = HoldingFilter{ExcludeAccountIDs: sc.ExcludedAccounts()}
			var err error
			if f.AccountID, err = finance.OptionalUUID(accountID, "account_id"); err != nil {
				return nil, err
			}
			return []string{"account_id=" + f.AccountID}, nil
		}})
	if err != nil {
		return page, err
	}
	sc, pager, cur := l.Scope, l.Pager, l.After
	after := ""
	if cur != nil {
		after = cur.ID
	}
	rows, err := s.store.ListHoldings(ctx, c.UserID, f, after, pager.Size+1)
	if err != nil {
		return page, finance.Internal("list holdings", err)
	}
	if rows, page.NextCursor, err = finance.Cut(ctx, pager, rows, func(h Holding) holdingCursor { return holdingCursor{ID: h.ID} }); err != nil {
		return page, err
	}
	page.HasMore = page.NextCursor != ""
	var tickers []string
	for _, h := range rows {
		if h.Ticker != "" {
			tickers = append(tickers, h.Ticker)
		}
	}
	prices := map[string][]SecurityPrice{}
	if len(tickers) > 0 {
		ps, err := s.store.RecentSecurityPrices(ctx, tickers, finance.Day(s.k.Now()))
		if err != nil {
			return page, finance.Internal("recent prices", err)
		}
		for _, p := range ps {
			k := p.Ticker + "|" + p.Currency
			prices[k] = append(prices[k], p)
		}
	}
	redact := sc.Grant().Redacts(finance.FieldConnectionInstitution)
	page.Data = make([]HoldingView, 0, len(rows))
	for _, h := range rows {
		ps := prices[h.Ticker+"|"+h.Currency]
		sortPricesNewestFirst(ps)
		v := PriceHolding(h, ps)
		if redact {
			if sc.NamesInstitution(v.Name) {
				v.Name = ""
			}
			if sc.NamesInstitution(v.Notes) {
				v.Notes = ""
			}
		}
		page.Data = append(page.Data, v)
	}
	page.RedactedFields = sc.Redacted(finance.FieldConnectionInstitution)
	page.Filtered = len(sc.ExcludedAccounts()) > 0
	return page, nil
}

func sortPricesNewestFirst(ps []SecurityPrice) {
	slices.SortFunc(ps, func(a, b SecurityPrice) int { return b.Date.Compare(a.Date) })
}

// RecordSecurityPrices stores prices from the aggregator (internal: no
// grant). Each needs a ticker (1–32 characters, no spaces), an upper-case
// ISO currency, a date and a price above zero; anything else is 400 naming
// prices[i].
func (s *Service) RecordSecurityPrices(ctx context.Context, ps []SecurityPrice) error {
	for i, p := range ps {
		f := "prices[" + strconv.Itoa(i) + "]"
		if p.Ticker == "" || len(p.Ticker) > 32 || strings.ContainsAny(p.Ticker, " \t\n") || !finance.ValidCurrency(p.Currency) ||
			p.Date.IsZero() || !p.Price.IsPositive() {
			return finance.Invalid(f, f+" is not a valid price")
		}
		ps[i].Date = finance.Day(p.Date)
	}
	if err := s.store.PutSecurityPrices(ctx, ps); err != nil {
		return finance.Internal("put prices", err)
	}
	return nil
}
