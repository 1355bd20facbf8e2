package finance

import (
	"context"
	"slices"
	"strconv"
	"strings"
)

type holdingCursor struct {
	ID string `json:"i"`
}

func (p holdingCursor) Valid() bool { return IsUUID(p.ID) }

// ListHoldings answers GET /v1/holdings: the holdings on accounts the grant
// shows, by id, in cursor pages, each priced from the price table as of
// today (service clock). An account_id the grant hides, or that is not the
// user's, gives an empty page, as on transactions. Under
// connection.institution a holding's name and notes are dropped when they
// name one of the user's institutions (a fund named after its broker).
func (s *Service) ListHoldings(ctx context.Context, c Caller, q PageQuery, accountID string) (Page[HoldingView], error) {
	var page Page[HoldingView]
	sc, err := s.Scope(ctx, c, false)
	if err != nil {
		return page, err
	}
	pager, err := NewPager[holdingCursor](s, q)
	if err != nil {
		return page, err
	}
	f := HoldingFilter{ExcludeAccountIDs: sc.excludedAccounts}
	if f.AccountID, err = OptionalUUID(accountID, "account_id"); err != nil {
		return page, err
	}
	cur, err := pager.After(c, "/v1/holdings", "account_id="+f.AccountID)
	if err != nil {
		return page, err
	}
	after := ""
	if cur != nil {
		after = cur.ID
	}
	rows, err := s.store.ListHoldings(ctx, c.UserID, f, after, pager.Size+1)
	if err != nil {
		return page, Internal("list holdings", err)
	}
	if rows, page.NextCursor, err = Cut(ctx, pager, rows, func(h Holding) holdingCursor { return holdingCursor{ID: h.ID} }); err != nil {
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
		ps, err := s.store.RecentSecurityPrices(ctx, tickers, Day(s.now()))
		if err != nil {
			return page, Internal("recent prices", err)
		}
		for _, p := range ps {
			k := p.Ticker + "|" + p.Currency
			prices[k] = append(prices[k], p)
		}
	}
	redact := sc.grant.Redacts(FieldConnectionInstitution)
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
	page.RedactedFields = sc.Redacted(FieldConnectionInstitution)
	page.Filtered = len(sc.excludedAccounts) > 0
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
		if p.Ticker == "" || len(p.Ticker) > 32 || strings.ContainsAny(p.Ticker, " \t\n") || !currencyCode.MatchString(p.Currency) ||
			p.Date.IsZero() || !p.Price.IsPositive() {
			return Invalid(f, f+" is not a valid price")
		}
		ps[i].Date = Day(p.Date)
	}
	if err := s.store.PutSecurityPrices(ctx, ps); err != nil {
		return Internal("put prices", err)
	}
	return nil
}
