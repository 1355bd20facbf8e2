package conformance

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ledgerlane/platform/services/finance"
	"github.com/ledgerlane/platform/services/finance/recurring"
)

func bankRow(f fixture, date int) finance.Transaction {
	return finance.Transaction{ID: newID(), UserID: f.user, AccountID: f.account, Amount: money("-1.00", "USD"),
		Date: day(date), Source: finance.SourceBankSync, Version: 1, CreatedAt: base, UpdatedAt: base}
}

func testUpdateTransaction(t *testing.T, s Store) {
	ctx := context.Background()
	f := setup(t, s)
	cat := finance.Category{ID: newID(), Name: "Coffee", CreatedAt: base, UpdatedAt: base}
	must(t, s.CreateCategory(ctx, cat))
	orig := fullTransaction(f, "")
	must(t, s.InsertTransactions(ctx, []finance.Transaction{orig}))

	edited := orig
	edited.CategoryID = cat.ID
	edited.Amount = money("-40.00", "USD")
	edited.Merchant, edited.Description, edited.Memo = "Blue Bottle (team)", "", ""
	edited.Date = day(-3)
	edited.Tags = []string{"team"}
	edited.Location = &finance.Location{City: "Oakland"}
	edited.ProviderMerchantName, edited.ProviderMemo = ptr("BLUE BOTTLE 2"), nil
	edited.OwnedByUser = []string{"merchant", "location"}
	edited.IsPending, edited.PostedAt = true, nil
	edited.Version = orig.Version + 1
	edited.UpdatedAt = base.Add(time.Hour)
	// Immutable columns sent changed must be ignored.
	sent := edited
	sent.AccountID, sent.Source, sent.ExternalRef, sent.CreatedAt = f.account2, finance.SourceManual, "other", base.Add(time.Hour)

	if err := s.UpdateTransaction(ctx, sent, orig.Version+5); !errors.Is(err, finance.ErrVersionConflict) {
		t.Fatalf("stale version: want ErrVersionConflict, got %v", err)
	}
	got, err := s.GetTransaction(ctx, f.user, orig.ID)
	must(t, err)
	diff(t, "row after a refused write", orig, got)

	must(t, s.UpdateTransaction(ctx, sent, orig.Version))
	got, err = s.GetTransaction(ctx, f.user, orig.ID)
	must(t, err)
	diff(t, "updated row", edited, got)

	other := sent
	other.UserID = f.other
	tests := []struct {
		name string
		tx   finance.Transaction
		want error
	}{
		{"another user's row", other, finance.ErrNotFound},
		{"missing", finance.Transaction{ID: newID(), UserID: f.user}, finance.ErrNotFound},
		{"not a uuid", finance.Transaction{ID: "x", UserID: f.user}, finance.ErrNotFound},
		{"old version again", sent, finance.ErrVersionConflict},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := s.UpdateTransaction(ctx, tc.tx, orig.Version); !errors.Is(err, tc.want) {
				t.Fatalf("want %v, got %v", tc.want, err)
			}
		})
	}

	t.Run("concurrent writers: exactly one wins", func(t *testing.T) {
		cur, err := s.GetTransaction(ctx, f.user, orig.ID)
		must(t, err)
		var wg sync.WaitGroup
		results := make([]error, 8)
		for i := range results {
			wg.Add(1)
			go func() {
				defer wg.Done()
				next := cur
				next.Memo = fmt.Sprintf("writer %d", i)
				next.Version = cur.Version + 1
				results[i] = s.UpdateTransaction(ctx, next, cur.Version)
			}()
		}
		wg.Wait()
		wins := 0
		for _, err := range results {
			switch {
			case err == nil:
				wins++
			case !errors.Is(err, finance.ErrVersionConflict):
				t.Fatalf("unexpected error %v", err)
			}
		}
		if wins != 1 {
			t.Fatalf("%d writers won, want 1", wins)
		}
	})
}

func testSplitParent(t *testing.T, s Store) {
	ctx := context.Background()
	f := setup(t, s)
	parent, plain := bankRow(f, 0), bankRow(f, 0)
	slice := bankRow(f, 0)
	slice.SplitParentID = parent.ID
	must(t, s.InsertTransactions(ctx, []finance.Transaction{parent, plain, slice}))
	for _, tc := range []struct {
		name, user, id string
		want           bool
	}{
		{"parent", f.user, parent.ID, true},
		{"plain row", f.user, plain.ID, false},
		{"slice", f.user, slice.ID, false},
		{"another user", f.other, parent.ID, false},
		{"not a uuid", f.user, "x", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := s.IsSplitParent(ctx, tc.user, tc.id)
			must(t, err)
			if got != tc.want {
				t.Fatalf("IsSplitParent = %v, want %v", got, tc.want)
			}
		})
	}
}

func testCustomCategories(t *testing.T, s Store) {
	ctx := context.Background()
	f := setup(t, s)
	system := finance.Category{ID: newID(), Name: "Food", CreatedAt: base, UpdatedAt: base}
	must(t, s.CreateCategory(ctx, system))
	mk := func(user, name string) finance.Category {
		return finance.Category{ID: newID(), UserID: user, ParentID: system.ID, Name: name, Icon: "emoji:🥐",
			Color: "#AABBCC", TypeTag: finance.CategoryExpense, SortOrder: 1000, CreatedAt: base, UpdatedAt: base}
	}
	a, b := mk(f.user, "Bakery"), mk(f.user, "Deli")
	must(t, s.CreateCustomCategory(ctx, a, 2))
	must(t, s.CreateCustomCategory(ctx, b, 2))
	if err := s.CreateCustomCategory(ctx, mk(f.user, "Third"), 2); !errors.Is(err, finance.ErrLimitReached) {
		t.Fatalf("over the limit: want ErrLimitReached, got %v", err)
	}
	// The limit is per user.
	must(t, s.CreateCustomCategory(ctx, mk(f.other, "Theirs"), 2))

	t.Run("concurrent creates never overshoot", func(t *testing.T) {
		var wg sync.WaitGroup
		errs := make([]error, 10)
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = s.CreateCustomCategory(ctx, mk(f.other, fmt.Sprintf("c%d", i)), 5)
			}()
		}
		wg.Wait()
		ok := 0
		for _, err := range errs {
			if err == nil {
				ok++
			} else if !errors.Is(err, finance.ErrLimitReached) {
				t.Fatal(err)
			}
		}
		if ok != 4 { // one existed
			t.Fatalf("%d creates succeeded, want 4", ok)
		}
	})

	for _, tc := range []struct {
		name, user, id string
		want           *finance.Category
	}{
		{"own", f.user, a.ID, &a},
		{"system", f.user, system.ID, &system},
		{"another user's", f.other, a.ID, nil},
		{"missing", f.user, newID(), nil},
		{"not a uuid", f.user, "x", nil},
	} {
		t.Run("get "+tc.name, func(t *testing.T) {
			got, err := s.GetCategory(ctx, tc.user, tc.id)
			if tc.want == nil {
				if !errors.Is(err, finance.ErrNotFound) {
					t.Fatalf("want ErrNotFound, got %v", err)
				}
				return
			}
			must(t, err)
			diff(t, "category", *tc.want, got)
		})
	}

	upd := a
	upd.Name, upd.Icon, upd.Color, upd.ParentID, upd.SortOrder = "Patisserie", "bakery_dining", "#112233", "", 7
	upd.UpdatedAt = base.Add(time.Hour)
	must(t, s.UpdateCategory(ctx, upd))
	got, err := s.GetCategory(ctx, f.user, a.ID)
	must(t, err)
	diff(t, "updated category", upd, got)
	for name, c := range map[string]finance.Category{
		"system":         func() finance.Category { c := system; c.UserID = f.user; return c }(),
		"another user's": func() finance.Category { c := upd; c.UserID = f.other; return c }(),
	} {
		if err := s.UpdateCategory(ctx, c); !errors.Is(err, finance.ErrNotFound) {
			t.Errorf("update %s: want ErrNotFound, got %v", name, err)
		}
	}
}

func testDeleteCategory(t *testing.T, s Store) {
	ctx := context.Background()
	f := setup(t, s)
	system := finance.Category{ID: newID(), Name: "Food", CreatedAt: base, UpdatedAt: base}
	must(t, s.CreateCategory(ctx, system))
	custom := func(parent string) finance.Category {
		c := finance.Category{ID: newID(), UserID: f.user, ParentID: parent, Name: "C", CreatedAt: base, UpdatedAt: base}
		must(t, s.CreateCategory(ctx, c))
		return c
	}
	top, child, gone, target := custom(""), finance.Category{}, custom(""), custom("")
	child = custom(top.ID)
	_ = child
	rule := recurring.Rule{ID: newID(), UserID: f.user, CategoryID: gone.ID, ExpectedAmount: money("-5", "USD"),
		Frequency: finance.FrequencyMonthly, StreamType: recurring.StreamOutflow, NextExpectedDate: day(3),
		CreatedAt: base, UpdatedAt: base}
	must(t, s.CreateRecurringRule(ctx, rule))
	r1, r2, keep := bankRow(f, 0), bankRow(f, -1), bankRow(f, -2)
	r1.CategoryID, r2.CategoryID, keep.CategoryID = gone.ID, gone.ID, target.ID
	r2.AccountID = f.account2
	must(t, s.InsertTransactions(ctx, []finance.Transaction{r1, r2, keep}))

	for _, tc := range []struct {
		name, id, merge string
		want            error
	}{
		{"system", system.ID, "", finance.ErrNotFound},
		{"has subcategories", top.ID, "", finance.ErrHasChildren},
		{"missing target", gone.ID, newID(), finance.ErrNotFound},
		{"missing", newID(), "", finance.ErrNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := s.DeleteCategory(ctx, f.user, tc.id, tc.merge, base); !errors.Is(err, tc.want) {
				t.Fatalf("want %v, got %v", tc.want, err)
			}
		})
	}
	if _, err := s.DeleteCategory(ctx, f.other, gone.ID, "", base); !errors.Is(err, finance.ErrNotFound) {
		t.Fatalf("another user's delete: %v", err)
	}
	// Nothing moved by the refused deletes.
	got, err := s.GetTransaction(ctx, f.user, r1.ID)
	must(t, err)
	diff(t, "row after refused deletes", r1, got)

	at := base.Add(2 * time.Hour)
	moved, err := s.DeleteCategory(ctx, f.user, gone.ID, target.ID, at)
	must(t, err)
	slices.Sort(moved)
	want := []string{f.account, f.account2}
	slices.Sort(want)
	diff(t, "moved account ids", want, moved)
	for _, r := range []finance.Transaction{r1, r2} {
		got, err := s.GetTransaction(ctx, f.user, r.ID)
		must(t, err)
		r.CategoryID, r.Version, r.UpdatedAt = target.ID, r.Version+1, at
		diff(t, "merged row", r, got)
	}
	got, err = s.GetTransaction(ctx, f.user, keep.ID)
	must(t, err)
	diff(t, "row already in the target", keep, got)
	rules, err := s.ListRecurringRules(ctx, f.user)
	must(t, err)
	if len(rules) != 1 || rules[0].CategoryID != target.ID {
		t.Errorf("rule category = %q, want %q", rules[0].CategoryID, target.ID)
	}
	if _, err := s.GetCategory(ctx, f.user, gone.ID); !errors.Is(err, finance.ErrNotFound) {
		t.Errorf("deleted category still readable: %v", err)
	}

	// Without a target the rows become uncategorized.
	moved, err = s.DeleteCategory(ctx, f.user, target.ID, "", at)
	must(t, err)
	if len(moved) != 3 {
		t.Fatalf("moved %d rows, want 3", len(moved))
	}
	got, err = s.GetTransaction(ctx, f.user, keep.ID)
	must(t, err)
	if got.CategoryID != "" || got.Version != keep.Version+1 {
		t.Errorf("uncategorized row: category %q version %d", got.CategoryID, got.Version)
	}
}

// testSearch is the table both stores must answer alike: prefix matching per
// term, every term required, over merchant, display name, description and
// memo, case-insensitive, with the listing's filters and order.
func testSearch(t *testing.T, s Store) {
	ctx := context.Background()
	f := setup(t, s)
	type text struct{ key, merchant, display, description, memo string }
	texts := []text{
		{"coffee", "Blue Bottle Coffee", "Blue Bottle", "SQ *BLUE BOTTLE COFFE OAKLAND CA", ""},
		{"bakery", "Tartine", "Tartine Bakery", "TST* TARTINE BAKERY", "birthday cake for Sam"},
		{"cola", "Coca-Cola Vending", "", "COCA-COLA VENDING #42", ""},
		{"joes", "Trader Joe's", "Trader Joe's", "TRADER JOE'S #123", "weekly shop"},
		{"uber", "UBER", "Uber", "UBER *TRIP", "airport run, reimbursable"},
		{"blank", "", "", "", ""},
	}
	ids := map[string]string{}
	var batch []finance.Transaction
	for i, x := range texts {
		tx := bankRow(f, -i)
		tx.Merchant, tx.DisplayName, tx.Description, tx.Memo = x.merchant, x.display, x.description, x.memo
		ids[x.key] = tx.ID
		batch = append(batch, tx)
	}
	theirs := finance.Transaction{ID: newID(), UserID: f.other, AccountID: f.otherAccount, Merchant: "Blue Bottle Coffee",
		Amount: money("-1", "USD"), Date: day(0), Source: finance.SourceManual, Version: 1, CreatedAt: base, UpdatedAt: base}
	must(t, s.InsertTransactions(ctx, append(batch, theirs)))

	tests := []struct {
		name   string
		q      string
		filter finance.TransactionFilter
		want   []string
	}{
		{"whole word", "tartine", finance.TransactionFilter{}, []string{"bakery"}},
		{"prefix", "bot", finance.TransactionFilter{}, []string{"coffee"}},
		{"case-insensitive", "BLUE", finance.TransactionFilter{}, []string{"coffee"}},
		{"every term must match", "blue cake", finance.TransactionFilter{}, nil},
		{"terms across fields", "tartine cake", finance.TransactionFilter{}, []string{"bakery"}},
		{"memo", "reimb", finance.TransactionFilter{}, []string{"uber"}},
		{"hyphenated word by part", "cola", finance.TransactionFilter{}, []string{"cola"}},
		{"hyphenated word whole", "coca-cola", finance.TransactionFilter{}, []string{"cola"}},
		{"apostrophe splits", "joe s", finance.TransactionFilter{}, []string{"joes"}},
		{"number", "42", finance.TransactionFilter{}, []string{"cola"}},
		{"several rows", "t", finance.TransactionFilter{}, []string{"bakery", "joes", "uber"}},
		{"no match", "zebra", finance.TransactionFilter{}, nil},
		{"mid-word is not a prefix", "ottle", finance.TransactionFilter{}, nil},
		{"with a date filter", "t", finance.TransactionFilter{StartDate: day(-3)}, []string{"bakery", "joes"}},
		{"with an exclusion", "blue", finance.TransactionFilter{ExcludeAccountIDs: []string{f.account}}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var want []string
			for _, k := range tc.want {
				want = append(want, ids[k])
			}
			got, err := s.SearchTransactions(ctx, f.user, finance.SearchTokens(tc.q), tc.filter, nil, 0)
			must(t, err)
			diff(t, "ids", want, txIDs(got)) // texts are dated newest first
			// Paged two at a time, the same answer.
			var paged []string
			var after *finance.TxPosition
			for range 10 {
				page, err := s.SearchTransactions(ctx, f.user, finance.SearchTokens(tc.q), tc.filter, after, 2)
				must(t, err)
				paged = append(paged, txIDs(page)...)
				if len(page) < 2 {
					break
				}
				after = &finance.TxPosition{Date: page[1].Date, ID: page[1].ID}
			}
			diff(t, "paged ids", want, paged)
		})
	}
	if got, err := s.SearchTransactions(ctx, f.user, nil, finance.TransactionFilter{}, nil, 0); err != nil || len(got) != 0 {
		t.Errorf("no terms: %d rows, %v", len(got), err)
	}
	// An edit is searchable at once: the stored search text follows the row.
	tx, err := s.GetTransaction(ctx, f.user, ids["blank"])
	must(t, err)
	tx.Memo, tx.Version = "quarterly zebra feed", tx.Version+1
	must(t, s.UpdateTransaction(ctx, tx, tx.Version-1))
	got, err := s.SearchTransactions(ctx, f.user, []string{"zebra"}, finance.TransactionFilter{}, nil, 0)
	must(t, err)
	diff(t, "after edit", []string{tx.ID}, txIDs(got))
}
