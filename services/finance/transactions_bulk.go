package finance

import (
	"context"
	"errors"
	"strings"
)

// MaxBulkItems caps one bulk-categorize request. The spec sets no number;
// 500 rows is a long screen of selections and bounds the request's work.
const MaxBulkItems = 500

// Bulk-categorize row statuses, the spec's values.
const (
	BulkApplied         = "applied"
	BulkNotFound        = "not_found"
	BulkInvalidCategory = "invalid_category"
	BulkVersionConflict = "version_conflict"
	BulkSplit           = "split"
)

// BulkItem assigns one category to one transaction.
type BulkItem struct {
	TransactionID   string
	CategoryID      string
	ExpectedVersion int64
}

// BulkRow is one item's outcome.
type BulkRow struct {
	TransactionID string
	Status        string
}

// BulkResult is the answer of a bulk categorize.
type BulkResult struct {
	AppliedCount int
	Results      []BulkRow
}

// BulkCategorize answers POST /v1/transactions/bulk-categorize. It is
// partial by design: each item is checked and written on its own
// (compare-and-swap on its expected_version), and reports its own status;
// a mixed outcome is still a success. Statuses are checked in the order
// not_found, invalid_category, version_conflict, split. A row or category
// the grant hides reports exactly what a missing one does. An item whose
// row already has the category is applied without a new version.
func (s *Service) BulkCategorize(ctx context.Context, c Caller, items []BulkItem) (Result[BulkResult], error) {
	var res Result[BulkResult]
	sc, err := s.WriteScope(ctx, c)
	if err != nil {
		return res, err
	}
	switch {
	case len(items) == 0:
		return res, Invalid("items", "items is required: at least one {transaction_id, category_id, expected_version}")
	case len(items) > MaxBulkItems:
		return res, Invalid("items", "at most 500 items per request")
	}
	cats, err := s.store.ListCategories(ctx, c.UserID)
	if err != nil {
		return res, Internal("list categories", err)
	}
	usable := map[string]bool{}
	for _, cat := range cats {
		usable[cat.ID] = !sc.HidesCategory(cat.ID)
	}
	out := BulkResult{Results: make([]BulkRow, 0, len(items))}
	for _, it := range items {
		status, err := s.categorizeOne(ctx, c, sc, usable, it)
		if err != nil {
			return res, err
		}
		if status == BulkApplied {
			out.AppliedCount++
		}
		out.Results = append(out.Results, BulkRow{TransactionID: it.TransactionID, Status: status})
	}
	res.Data = out
	res.Filtered = sc.grant.Filtered()
	return res, nil
}

func (s *Service) categorizeOne(ctx context.Context, c Caller, sc Scope, usable map[string]bool, it BulkItem) (string, error) {
	if !IsUUID(it.TransactionID) {
		return BulkNotFound, nil
	}
	t, err := s.store.GetTransaction(ctx, c.UserID, strings.ToLower(it.TransactionID))
	if errors.Is(err, ErrNotFound) || (err == nil && (sc.HidesAccount(t.AccountID) || sc.HidesCategory(t.CategoryID))) {
		return BulkNotFound, nil
	}
	if err != nil {
		return "", Internal("get transaction", err)
	}
	category := strings.ToLower(it.CategoryID)
	if !IsUUID(category) || !usable[category] {
		return BulkInvalidCategory, nil
	}
	if t.Version != it.ExpectedVersion {
		return BulkVersionConflict, nil
	}
	if t.CategoryID == category {
		return BulkApplied, nil
	}
	split, err := s.store.IsSplitParent(ctx, c.UserID, t.ID)
	if err != nil {
		return "", Internal("is split parent", err)
	}
	if split {
		return BulkSplit, nil
	}
	t.CategoryID = category
	t.Version++
	t.UpdatedAt = s.now()
	switch err := s.store.UpdateTransaction(ctx, t, it.ExpectedVersion); {
	case errors.Is(err, ErrVersionConflict):
		return BulkVersionConflict, nil
	case errors.Is(err, ErrNotFound):
		return BulkNotFound, nil
	case err != nil:
		return "", Internal("update transaction", err)
	}
	return BulkApplied, nil
}
