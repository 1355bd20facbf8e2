package finance

import (
	"context"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

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
	sc, err := s.Scope(ctx, c, true)
	if err != nil {
		return page, err
	}
	switch {
	case strings.TrimSpace(q.Q) == "":
		return page, Invalid("q", "q is required")
	case utf8.RuneCountInString(q.Q) > MaxSearchLength:
		return page, Invalid("q", "q is longer than 256 characters")
	}
	terms := SearchTokens(q.Q)
	switch {
	case len(terms) == 0:
		return page, Invalid("q", "q has no letters or digits to search for")
	case len(terms) > MaxSearchTerms:
		return page, Invalid("q", "q has more than 16 words")
	}
	pager, err := NewPager[txCursor](s, q.PageQuery)
	if err != nil {
		return page, err
	}
	f := TransactionFilter{ExcludeAccountIDs: sc.excludedAccounts, ExcludeCategoryIDs: sc.excludedCategories}
	if f.StartDate, f.EndDate, err = dateRange(q.StartDate, q.EndDate); err != nil {
		return page, err
	}
	// Terms are letters and digits only, so a space cannot be confused with
	// the scope separator.
	after, err := pager.After(c, "/v1/transactions/search", "q="+strings.Join(terms, " "),
		"start_date="+dateOrEmpty(f.StartDate), "end_date="+dateOrEmpty(f.EndDate))
	if err != nil {
		return page, err
	}
	rows, err := s.store.SearchTransactions(ctx, c.UserID, terms, f, after.position(), pager.Size+1)
	if err != nil {
		return page, Internal("search transactions", err)
	}
	if page, err = s.txPage(ctx, sc, pager, rows); err != nil || len(page.RedactedFields) == 0 {
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
