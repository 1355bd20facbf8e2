package finance

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ledgerlane/platform/pkg/problem"
)

// TransactionQuery is GET /v1/transactions. Ids and dates arrive as the
// client sent them and are validated here.
type TransactionQuery struct {
	PageQuery
	AccountID     string
	CategoryID    string
	StartDate     string // YYYY-MM-DD, inclusive
	EndDate       string // YYYY-MM-DD, inclusive
	Pending       *bool
	Source        string
	Uncategorized bool
}

// ListTransactions answers GET /v1/transactions, newest first.
func (s *Service) ListTransactions(ctx context.Context, c Caller, q TransactionQuery) (Page[Transaction], error) {
	var f TransactionFilter
	l, err := OpenList[txCursor](ctx, s, c, q.PageQuery, ListRoute{Path: "/v1/transactions", WithCategories: true,
		Filters: func(sc Scope) ([]string, error) {
			f = TransactionFilter{
				ExcludeAccountIDs:  sc.excludedAccounts,
				ExcludeCategoryIDs: sc.excludedCategories,
				Pending:            q.Pending,
				Uncategorized:      q.Uncategorized,
			}
			var err error
			if f.AccountID, err = OptionalUUID(q.AccountID, "account_id"); err != nil {
				return nil, err
			}
			if f.CategoryID, err = OptionalUUID(q.CategoryID, "category_id"); err != nil {
				return nil, err
			}
			if f.StartDate, f.EndDate, err = dateRange(q.StartDate, q.EndDate); err != nil {
				return nil, err
			}
			if q.Source != "" && !ValidSource(q.Source) {
				return nil, Invalid("source", "source must be one of bank_sync, manual, import")
			}
			f.Source = q.Source
			pending := ""
			if q.Pending != nil {
				pending = strconv.FormatBool(*q.Pending)
			}
			return []string{"account_id=" + f.AccountID, "category_id=" + f.CategoryID,
				"start_date=" + dateOrEmpty(f.StartDate), "end_date=" + dateOrEmpty(f.EndDate),
				"pending=" + pending, "source=" + f.Source, "uncategorized=" + strconv.FormatBool(f.Uncategorized)}, nil
		}})
	if err != nil {
		return Page[Transaction]{}, err
	}
	rows, err := s.store.ListTransactions(ctx, c.UserID, f, l.After.position(), l.Pager.Size+1)
	if err != nil {
		return Page[Transaction]{}, Internal("list transactions", err)
	}
	return s.txPage(ctx, l.Scope, l.Pager, rows)
}

// txPage makes a page of rows, read one over the page size to learn
// whether more follow, with the grant's redactions applied.
func (s *Service) txPage(ctx context.Context, sc Scope, pager *Pager[txCursor], rows []Transaction) (Page[Transaction], error) {
	var page Page[Transaction]
	var err error
	if rows, page.NextCursor, err = Cut(ctx, pager, rows, func(t Transaction) txCursor {
		return txCursor{Date: t.Date.Format(DateLayout), ID: t.ID}
	}); err != nil {
		return page, err
	}
	page.HasMore = page.NextCursor != ""
	page.RedactedFields = sc.redactTransactions(rows)
	page.Data = rows
	page.Filtered = sc.grant.Filtered()
	return page, nil
}

// GetTransaction answers GET /v1/transactions/{id}. A row the grant hides is
// not found, exactly like one that does not exist.
func (s *Service) GetTransaction(ctx context.Context, c Caller, id string) (Result[Transaction], error) {
	var res Result[Transaction]
	sc, err := s.Scope(ctx, c, true)
	if err != nil {
		return res, err
	}
	if id, err = RequiredUUID(id, "id"); err != nil {
		return res, err
	}
	t, err := s.store.GetTransaction(ctx, c.UserID, id)
	if errors.Is(err, ErrNotFound) || (err == nil && (sc.HidesAccount(t.AccountID) || sc.HidesCategory(t.CategoryID))) {
		return res, problem.New(problem.NotFound, "transaction not found")
	}
	if err != nil {
		return res, Internal("get transaction", err)
	}
	rows := []Transaction{t}
	res.RedactedFields = sc.redactTransactions(rows)
	res.Data = rows[0]
	res.Filtered = sc.grant.Filtered()
	return res, nil
}

// txCursor and connCursor are the signed positions inside cursors.
type txCursor struct {
	Date string `json:"d"`
	ID   string `json:"i"`
}

func (p txCursor) Valid() bool {
	_, err := ParseDate(p.Date)
	return err == nil && IsUUID(p.ID)
}

// position is the store's form of p; nil stays nil (the first page).
func (p *txCursor) position() *TxPosition {
	if p == nil {
		return nil
	}
	d, _ := ParseDate(p.Date)
	return &TxPosition{Date: d, ID: p.ID}
}

// Search limits: a query is a few words typed into a box. The caps bound the
// tsquery PostgreSQL has to evaluate.
const (
	MaxSearchLength = 256 // characters of q
	MaxSearchTerms  = 16
)

// SearchTokens splits s the way search reads text: lower-cased runs of
// letters and digits, everything else separating them. It approximates
// PostgreSQL's default parser under the 'simple' configuration closely
// enough for words and numbers; where the parser keeps compound tokens
// (hyphenated words also as a whole, host names, decimals like 12.50,
// e-mail addresses) the two can differ, and the README says how.
func SearchTokens(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

// SearchQuery is GET /v1/transactions/search.
type SearchQuery struct {
	PageQuery
	Q         string
	StartDate string // YYYY-MM-DD, inclusive
	EndDate   string // YYYY-MM-DD, inclusive
}

// SearchTransactions answers GET /v1/transactions/search: rows whose
// merchant, display name, description or memo has, for every word of q, a
// word starting with it (so "blue bot" finds "Blue Bottle"). Results come in
// the listing order (date descending, then id), not by rank, so keyset
// pages stay stable while rows arrive.
func (s *Service) SearchTransactions(ctx context.Context, c Caller, q SearchQuery) (Page[Transaction], error) {
	var page Page[Transaction]
	var terms []string
	var f TransactionFilter
	l, err := OpenList[txCursor](ctx, s, c, q.PageQuery, ListRoute{Path: "/v1/transactions/search", WithCategories: true,
		Check: func(Scope) error {
			switch {
			case strings.TrimSpace(q.Q) == "":
				return Invalid("q", "q is required")
			case utf8.RuneCountInString(q.Q) > MaxSearchLength:
				return Invalid("q", "q is longer than 256 characters")
			}
			terms = SearchTokens(q.Q)
			switch {
			case len(terms) == 0:
				return Invalid("q", "q has no letters or digits to search for")
			case len(terms) > MaxSearchTerms:
				return Invalid("q", "q has more than 16 words")
			}
			return nil
		},
		Filters: func(sc Scope) ([]string, error) {
			f = TransactionFilter{ExcludeAccountIDs: sc.excludedAccounts, ExcludeCategoryIDs: sc.excludedCategories}
			var err error
			if f.StartDate, f.EndDate, err = dateRange(q.StartDate, q.EndDate); err != nil {
				return nil, err
			}
			// Terms are letters and digits only, so a space cannot be
			// confused with the scope separator.
			return []string{"q=" + strings.Join(terms, " "),
				"start_date=" + dateOrEmpty(f.StartDate), "end_date=" + dateOrEmpty(f.EndDate)}, nil
		}})
	if err != nil {
		return page, err
	}
	rows, err := s.store.SearchTransactions(ctx, c.UserID, terms, f, l.After.position(), l.Pager.Size+1)
	if err != nil {
		return page, Internal("search transactions", err)
	}
	if page, err = s.txPage(ctx, l.Scope, l.Pager, rows); err != nil || len(page.RedactedFields) == 0 {
		return page, err
	}
	// A row found through text the grant stripped would tell that the text
	// names the hidden value: keep only rows that still match as served.
	// The page can then hold fewer rows than page_size; the cursor still
	// follows the last row read.
	page.Data = slices.DeleteFunc(page.Data, func(t Transaction) bool { return !matchesSearch(t, terms) })
	return page, nil
}

// matchesSearch reports whether every term is the prefix of a word of t's
// searchable text, the way the in-memory store matches.
func matchesSearch(t Transaction, terms []string) bool {
	tokens := SearchTokens(t.Merchant + " " + t.DisplayName + " " + t.Description + " " + t.Memo)
	for _, term := range terms {
		if !slices.ContainsFunc(tokens, func(tok string) bool { return strings.HasPrefix(tok, term) }) {
			return false
		}
	}
	return true
}
