package finance

import (
	"context"
	"errors"
	"strconv"

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
	var page Page[Transaction]
	sc, err := s.Scope(ctx, c, true)
	if err != nil {
		return page, err
	}
	pager, err := NewPager[txCursor](s, q.PageQuery)
	if err != nil {
		return page, err
	}
	f := TransactionFilter{
		ExcludeAccountIDs:  sc.excludedAccounts,
		ExcludeCategoryIDs: sc.excludedCategories,
		Pending:            q.Pending,
		Uncategorized:      q.Uncategorized,
	}
	if f.AccountID, err = OptionalUUID(q.AccountID, "account_id"); err != nil {
		return page, err
	}
	if f.CategoryID, err = OptionalUUID(q.CategoryID, "category_id"); err != nil {
		return page, err
	}
	if f.StartDate, f.EndDate, err = dateRange(q.StartDate, q.EndDate); err != nil {
		return page, err
	}
	if q.Source != "" && !ValidSource(q.Source) {
		return page, Invalid("source", "source must be one of bank_sync, manual, import")
	}
	f.Source = q.Source

	pending := ""
	if q.Pending != nil {
		pending = strconv.FormatBool(*q.Pending)
	}
	after, err := pager.After(c, "/v1/transactions",
		"account_id="+f.AccountID, "category_id="+f.CategoryID,
		"start_date="+dateOrEmpty(f.StartDate), "end_date="+dateOrEmpty(f.EndDate),
		"pending="+pending, "source="+f.Source, "uncategorized="+strconv.FormatBool(f.Uncategorized))
	if err != nil {
		return page, err
	}
	rows, err := s.store.ListTransactions(ctx, c.UserID, f, after.position(), pager.Size+1)
	if err != nil {
		return page, Internal("list transactions", err)
	}
	return s.txPage(ctx, sc, pager, rows)
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
