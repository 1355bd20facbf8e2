package networth

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ledgerlane/platform/services/finance"
)

type holdingCursor struct {
	ID string `json:"i"`
}

func (p holdingCursor) Valid() bool { return finance.IsUUID(p.ID) }

// HoldingsPage is a page of GET /v1/holdings with the cash of the
// investment accounts it covers.
type HoldingsPage struct {
	finance.Page[HoldingView]
	// Cash is the cash position of every investment account with holdings
	// the listing covers (all the grant shows, or account_id's), by account
	// id, on every page: holdings plus cash is what net worth counts for
	// the account.
	Cash []CashPosition
}

// ListHoldings answers GET /v1/holdings: the holdings on accounts the grant
// shows, by id, in cursor pages, each priced from the price table as of
// today (service clock), with the accounts' cash positions. An account_id
// the grant hides, or that is not the user's, gives an empty page, as on
// transactions. Under connection.institution a holding's name and notes are
// dropped when they name one of the user's institutions (a fund named after
// its broker).
func (s *Service) ListHoldings(ctx context.Context, c finance.Caller, q finance.PageQuery, accountID string) (HoldingsPage, error) {
	var res HoldingsPage
	page := &res.Page
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
		return res, err
	}
	sc, pager, cur := l.Scope, l.Pager, l.After
	after := ""
	if cur != nil {
		after = cur.ID
	}
	rows, err := s.store.ListHoldings(ctx, c.UserID, f, after, pager.Size+1)
	if err != nil {
		return res, finance.Internal("list holdings", err)
	}
	if rows, page.NextCursor, err = finance.Cut(ctx, pager, rows, func(h Holding) holdingCursor { return holdingCursor{ID: h.ID} }); err != nil {
		return res, err
	}
	page.HasMore = page.NextCursor != ""
	today := finance.Day(s.k.Now())
	views, err := s.priceHoldings(ctx, rows, today)
	if err != nil {
		return res, err
	}
	if res.Cash, err = s.cashOf(ctx, c.UserID, f, today); err != nil {
		return res, err
	}
	redact := sc.Grant().Redacts(finance.FieldConnectionInstitution)
	page.Data = make([]HoldingView, 0, len(views))
	for _, v := range views {
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
	return res, nil
}

// cashOf is the cash of the investment accounts f covers (the grant's
// exclusions and account_id applied), by account id.
func (s *Service) cashOf(ctx context.Context, userID string, f HoldingFilter, today time.Time) ([]CashPosition, error) {
	hs, err := s.store.ListHoldings(ctx, userID, f, "", 0)
	if err != nil {
		return nil, finance.Internal("list holdings", err)
	}
	if len(hs) == 0 {
		return []CashPosition{}, nil
	}
	accts, err := s.store.ListAccounts(ctx, userID)
	if err != nil {
		return nil, finance.Internal("list accounts", err)
	}
	cash, err := CashPositions(accts, hs, today, func(tickers []string, day time.Time) ([]SecurityPrice, error) {
		return s.store.RecentSecurityPrices(ctx, tickers, day)
	})
	if err != nil {
		return nil, finance.Internal("recent prices", err)
	}
	out := make([]CashPosition, 0, len(cash))
	for _, c := range cash {
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b CashPosition) int { return strings.Compare(a.AccountID, b.AccountID) })
	return out, nil
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
