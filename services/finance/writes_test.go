package finance_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/services/finance"
)

func sp(s string) *string { return &s }

// pick returns the first demo row (as the write grant sees it) matching ok.
func pick(t *testing.T, e env, ok func(finance.Transaction) bool) finance.Transaction {
	t.Helper()
	for _, tx := range all(t, e, e.write, finance.TransactionQuery{}) {
		if ok(tx) {
			return tx
		}
	}
	t.Fatal("no demo row fits")
	return finance.Transaction{}
}

// unedited is a posted bank-synced row nobody edited, with a location, on an
// account the redacted grant shows.
func unedited(e env) func(finance.Transaction) bool {
	return func(tx finance.Transaction) bool {
		return tx.Source == finance.SourceBankSync && !tx.IsPending && len(tx.OwnedByUser) == 0 &&
			tx.Location != nil && tx.AccountID != e.demo.ExcludedAccountID && tx.Memo == "" &&
			tx.CategoryID != e.demo.CategoryIDs["Pharmacy"] && tx.CategoryID != e.demo.CategoryIDs["Fitness"] &&
			tx.CategoryID != e.demo.ExcludedCategoryID
	}
}

func TestUpdateTransactionProviderOwnership(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	tx := pick(t, e, unedited(e))
	bankMerchant, bankAmount := tx.Merchant, tx.Amount

	res, err := e.svc.UpdateTransaction(ctx, e.write, finance.TransactionUpdate{ID: tx.ID, ExpectedVersion: tx.Version,
		Merchant: sp("Coffee with Sam"), Amount: sp("-7.25"), Memo: sp("team")})
	if err != nil {
		t.Fatal(err)
	}
	got := res.Data
	if got.Version != tx.Version+1 || got.Merchant != "Coffee with Sam" || got.Amount.AmountString() != "-7.25" ||
		got.Amount.Currency != bankAmount.Currency || got.Memo != "team" {
		t.Fatalf("edited row: %+v", got)
	}
	if got.ProviderMerchantName == nil || *got.ProviderMerchantName != bankMerchant ||
		got.ProviderAmount == nil || !got.ProviderAmount.Amount.Equal(bankAmount.Amount) ||
		got.ProviderMemo == nil || *got.ProviderMemo != "" {
		t.Fatalf("bank values not captured: %+v", got)
	}
	if !slices.Equal(got.OwnedByUser, []string{"amount", "merchant", "memo"}) {
		t.Errorf("owned = %v", got.OwnedByUser)
	}

	// A second edit keeps the first captured bank value.
	res, err = e.svc.UpdateTransaction(ctx, e.write, finance.TransactionUpdate{ID: tx.ID, ExpectedVersion: got.Version,
		Merchant: sp("Coffee with Alex")})
	if err != nil {
		t.Fatal(err)
	}
	if *res.Data.ProviderMerchantName != bankMerchant || res.Data.Version != tx.Version+2 {
		t.Fatalf("second edit: %+v", res.Data)
	}

	// Revert hands merchant back: bank value restored, twin cleared.
	res, err = e.svc.UpdateTransaction(ctx, e.write, finance.TransactionUpdate{ID: tx.ID, ExpectedVersion: res.Data.Version,
		RevertToProvider: []string{"merchant"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Data.Merchant != bankMerchant || res.Data.ProviderMerchantName != nil || res.Data.Owns("merchant") ||
		!res.Data.Owns("amount") || res.Data.Version != tx.Version+3 {
		t.Fatalf("after revert: %+v", res.Data)
	}
	// Nothing captured any more: a second revert is 409.
	_, err = e.svc.UpdateTransaction(ctx, e.write, finance.TransactionUpdate{ID: tx.ID, ExpectedVersion: res.Data.Version,
		RevertToProvider: []string{"merchant"}})
	wantProblem(t, err, problem.NoProviderValue, "revert_to_provider")

	// A PATCH that changes nothing keeps the version.
	same, err := e.svc.UpdateTransaction(ctx, e.write, finance.TransactionUpdate{ID: tx.ID, ExpectedVersion: res.Data.Version,
		Merchant: sp(bankMerchant)})
	if err != nil || same.Data.Version != res.Data.Version {
		t.Fatalf("no-op edit: version %d, %v", same.Data.Version, err)
	}
}

func TestUpdateTransactionFields(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	tx := pick(t, e, unedited(e))
	cat := e.demo.CategoryIDs["Travel"]
	res, err := e.svc.UpdateTransaction(ctx, e.write, finance.TransactionUpdate{ID: tx.ID, ExpectedVersion: tx.Version,
		Date: sp("2026-01-02"), Description: sp(""), CategoryID: sp(strings.ToUpper(cat)), Tags: &[]string{"trip", "trip", "work"},
		Location: &finance.Location{City: "Lisbon", Country: "PT"}})
	if err != nil {
		t.Fatal(err)
	}
	got := res.Data
	if got.Date.Format(finance.DateLayout) != "2026-01-02" || got.Description != "" || got.CategoryID != cat ||
		!slices.Equal(got.Tags, []string{"trip", "work"}) ||
		*got.Location != (finance.Location{City: "Lisbon", Country: "PT"}) {
		t.Fatalf("edited: %+v", got)
	}
	if got.ProviderTransactionDate == nil || !got.ProviderTransactionDate.Equal(tx.Date) ||
		got.ProviderDescription == nil || *got.ProviderDescription != tx.Description || !got.Owns("location") {
		t.Fatalf("captures: %+v", got)
	}
	// clear_location removes it; memo "" on a row without memo is no change.
	res, err = e.svc.UpdateTransaction(ctx, e.write, finance.TransactionUpdate{ID: tx.ID, ExpectedVersion: got.Version,
		ClearLocation: true, CategoryID: sp("")})
	if err != nil {
		t.Fatal(err)
	}
	if res.Data.Location != nil || res.Data.CategoryID != "" || res.Data.Version != got.Version+1 {
		t.Fatalf("cleared: %+v", res.Data)
	}
}

func TestUpdateTransactionRefusals(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	bank := pick(t, e, unedited(e))
	manual := pick(t, e, func(tx finance.Transaction) bool { return tx.Source == finance.SourceManual })
	eur := pick(t, e, func(tx finance.Transaction) bool { return tx.Amount.Currency == "EUR" })
	hidden := pick(t, e, func(tx finance.Transaction) bool { return tx.AccountID == e.demo.ExcludedAccountID })

	// A split parent with one slice.
	parent := finance.Transaction{ID: uuid.NewString(), UserID: e.demo.UserID, AccountID: e.demo.AccountIDs.Checking,
		Amount: finance.Money{Amount: bank.Amount.Amount, Currency: "USD"}, Date: now, Source: finance.SourceManual,
		Version: 1, CreatedAt: now, UpdatedAt: now}
	slice := parent
	slice.ID, slice.SplitParentID = uuid.NewString(), parent.ID
	if err := e.store.InsertTransactions(ctx, []finance.Transaction{parent, slice}); err != nil {
		t.Fatal(err)
	}
	u := func(tx finance.Transaction, mod func(*finance.TransactionUpdate)) finance.TransactionUpdate {
		up := finance.TransactionUpdate{ID: tx.ID, ExpectedVersion: tx.Version}
		mod(&up)
		return up
	}
	tests := []struct {
		name   string
		caller finance.Caller
		upd    finance.TransactionUpdate
		typ    problem.Type
		field  string
	}{
		{"writes disabled", e.read, u(bank, func(u *finance.TransactionUpdate) { u.Memo = sp("x") }), problem.WritesDisabled, ""},
		{"id not a uuid", e.write, finance.TransactionUpdate{ID: "x", ExpectedVersion: 1}, problem.InvalidInput, "id"},
		{"expected_version missing", e.write, u(bank, func(u *finance.TransactionUpdate) { u.ExpectedVersion = 0 }), problem.InvalidInput, "expected_version"},
		{"stale version", e.write, u(bank, func(u *finance.TransactionUpdate) { u.ExpectedVersion++; u.Memo = sp("x") }), problem.VersionConflict, "expected_version"},
		{"missing row", e.write, finance.TransactionUpdate{ID: uuid.NewString(), ExpectedVersion: 1}, problem.NotFound, ""},
		{"hidden row looks missing", e.redacted, u(hidden, func(u *finance.TransactionUpdate) { u.Memo = sp("x") }), problem.NotFound, ""},
		{"amount not a decimal", e.write, u(bank, func(u *finance.TransactionUpdate) { u.Amount = sp("1e3") }), problem.InvalidInput, "amount"},
		{"amount as an object", e.write, u(bank, func(u *finance.TransactionUpdate) { u.Amount = sp(`{"amount":"1"}`) }), problem.InvalidInput, "amount"},
		{"amount too precise", e.write, u(bank, func(u *finance.TransactionUpdate) { u.Amount = sp("1.234") }), problem.InvalidInput, "amount"},
		{"currency change", e.write, u(bank, func(u *finance.TransactionUpdate) { u.Amount = sp("-12.00 EUR") }), problem.FieldImmutable, "amount"},
		{"currency change on a EUR row", e.write, u(eur, func(u *finance.TransactionUpdate) { u.Amount = sp("-12.00 USD") }), problem.FieldImmutable, "amount"},
		{"date", e.write, u(bank, func(u *finance.TransactionUpdate) { u.Date = sp("2026-02-30") }), problem.InvalidInput, "date"},
		{"empty merchant", e.write, u(bank, func(u *finance.TransactionUpdate) { u.Merchant = sp("") }), problem.InvalidInput, "merchant"},
		{"long memo", e.write, u(bank, func(u *finance.TransactionUpdate) { u.Memo = sp(strings.Repeat("m", 1001)) }), problem.InvalidInput, "memo"},
		{"control character", e.write, u(bank, func(u *finance.TransactionUpdate) { u.Description = sp("a\x00b") }), problem.InvalidInput, "description"},
		{"category not a uuid", e.write, u(bank, func(u *finance.TransactionUpdate) { u.CategoryID = sp("food") }), problem.InvalidInput, "category_id"},
		{"unknown category", e.write, u(bank, func(u *finance.TransactionUpdate) { u.CategoryID = sp(uuid.NewString()) }), problem.InvalidInput, "category_id"},
		{"hidden category looks unknown", e.redacted, u(bank, func(u *finance.TransactionUpdate) { u.CategoryID = sp(e.demo.ExcludedCategoryID) }), problem.InvalidInput, "category_id"},
		{"empty tag", e.write, u(bank, func(u *finance.TransactionUpdate) { u.Tags = &[]string{""} }), problem.InvalidInput, "tags"},
		{"location and clear", e.write, u(bank, func(u *finance.TransactionUpdate) {
			u.Location, u.ClearLocation = &finance.Location{City: "x"}, true
		}), problem.InvalidInput, "clear_location"},
		{"unknown revert name", e.write, u(bank, func(u *finance.TransactionUpdate) { u.RevertToProvider = []string{"location"} }), problem.InvalidInput, "revert_to_provider"},
		{"set and reverted", e.write, u(bank, func(u *finance.TransactionUpdate) {
			u.Merchant, u.RevertToProvider = sp("x"), []string{"merchant"}
		}), problem.InvalidInput, "revert_to_provider"},
		{"revert unedited field", e.write, u(bank, func(u *finance.TransactionUpdate) { u.RevertToProvider = []string{"amount"} }), problem.NoProviderValue, "revert_to_provider"},
		{"revert on a manual row", e.write, u(manual, func(u *finance.TransactionUpdate) { u.RevertToProvider = []string{"merchant"} }), problem.NoProviderValue, "revert_to_provider"},
		{"location hidden", e.redacted, u(bank, func(u *finance.TransactionUpdate) { u.Location = &finance.Location{City: "x"} }), problem.FieldHidden, "location"},
		{"clear_location hidden", e.redacted, u(bank, func(u *finance.TransactionUpdate) { u.ClearLocation = true }), problem.FieldHidden, "location"},
		{"split parent category", e.write, u(parent, func(u *finance.TransactionUpdate) { u.CategoryID = sp(e.demo.CategoryIDs["Travel"]) }), problem.SplitTransaction, "category_id"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.svc.UpdateTransaction(ctx, tc.caller, tc.upd)
			wantProblem(t, err, tc.typ, tc.field)
		})
	}
	// None of the refusals wrote anything.
	for _, tx := range []finance.Transaction{bank, manual, eur, parent} {
		got, err := e.store.GetTransaction(ctx, e.demo.UserID, tx.ID)
		if err != nil || got.Version != tx.Version {
			t.Errorf("row %s: version %d, %v", tx.ID, got.Version, err)
		}
	}
	// A split slice and a split parent's other fields stay editable.
	if _, err := e.svc.UpdateTransaction(ctx, e.write, finance.TransactionUpdate{ID: slice.ID, ExpectedVersion: 1,
		CategoryID: sp(e.demo.CategoryIDs["Travel"])}); err != nil {
		t.Errorf("slice category: %v", err)
	}
	if _, err := e.svc.UpdateTransaction(ctx, e.write, finance.TransactionUpdate{ID: parent.ID, ExpectedVersion: 1,
		Memo: sp("dinner")}); err != nil {
		t.Errorf("parent memo: %v", err)
	}
	// The redacted grant may edit other fields; location stays stripped.
	res, err := e.svc.UpdateTransaction(ctx, e.redacted, finance.TransactionUpdate{ID: bank.ID, ExpectedVersion: bank.Version,
		Memo: sp("ok")})
	if err != nil {
		t.Fatal(err)
	}
	if res.Data.Location != nil || !slices.Equal(res.RedactedFields, []string{finance.FieldTransactionLocation, finance.FieldConnectionInstitution}) || !res.Filtered {
		t.Errorf("redacted response: %+v %v", res.Data.Location, res.RedactedFields)
	}
	// A matching currency suffix is accepted.
	if _, err := e.svc.UpdateTransaction(ctx, e.write, finance.TransactionUpdate{ID: eur.ID, ExpectedVersion: eur.Version,
		Amount: sp("-3.10 EUR")}); err != nil {
		t.Errorf("same-currency amount: %v", err)
	}
}

func TestCategoryWrites(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	shopping := e.demo.CategoryIDs["Shopping"]
	res, err := e.svc.CreateCategory(ctx, e.write, finance.NewCategory{Name: "  Board games ", ParentID: shopping,
		Icon: "emoji:🎲", Color: "#a1b2c3"})
	if err != nil {
		t.Fatal(err)
	}
	c := res.Data
	if c.Name != "Board games" || c.ParentID != shopping || c.Color != "#A1B2C3" || c.IsSystem() || c.UserID != e.demo.UserID {
		t.Fatalf("created %+v", c)
	}
	tests := []struct {
		name   string
		caller finance.Caller
		in     finance.NewCategory
		typ    problem.Type
		field  string
	}{
		{"writes disabled", e.read, finance.NewCategory{Name: "x"}, problem.WritesDisabled, ""},
		{"no name", e.write, finance.NewCategory{Name: "  "}, problem.InvalidInput, "name"},
		{"long name", e.write, finance.NewCategory{Name: strings.Repeat("n", 65)}, problem.InvalidInput, "name"},
		{"parent is a subcategory", e.write, finance.NewCategory{Name: "x", ParentID: e.demo.CategoryIDs["Coffee Shops"]}, problem.InvalidInput, "parent_id"},
		{"parent unknown", e.write, finance.NewCategory{Name: "x", ParentID: uuid.NewString()}, problem.InvalidInput, "parent_id"},
		{"parent hidden", e.redacted, finance.NewCategory{Name: "x", ParentID: e.demo.ExcludedCategoryID}, problem.InvalidInput, "parent_id"},
		{"parent not a uuid", e.write, finance.NewCategory{Name: "x", ParentID: "food"}, problem.InvalidInput, "parent_id"},
		{"icon with capitals", e.write, finance.NewCategory{Name: "x", Icon: "Home"}, problem.InvalidInput, "icon"},
		{"two emoji", e.write, finance.NewCategory{Name: "x", Icon: "emoji:🎲🎲"}, problem.InvalidInput, "icon"},
		{"emoji text", e.write, finance.NewCategory{Name: "x", Icon: "emoji:a"}, problem.InvalidInput, "icon"},
		{"empty emoji", e.write, finance.NewCategory{Name: "x", Icon: "emoji:"}, problem.InvalidInput, "icon"},
		{"short color", e.write, finance.NewCategory{Name: "x", Color: "#FFF"}, problem.InvalidInput, "color"},
		{"named color", e.write, finance.NewCategory{Name: "x", Color: "red"}, problem.InvalidInput, "color"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.svc.CreateCategory(ctx, tc.caller, tc.in)
			wantProblem(t, err, tc.typ, tc.field)
		})
	}

	// Patch.
	up, err := e.svc.UpdateCategory(ctx, e.write, finance.CategoryPatch{ID: c.ID, Name: sp("Games"), ParentID: sp(""),
		Icon: sp("casino")})
	if err != nil {
		t.Fatal(err)
	}
	if up.Data.Name != "Games" || up.Data.ParentID != "" || up.Data.Icon != "casino" || up.Data.Color != "#A1B2C3" {
		t.Fatalf("patched %+v", up.Data)
	}
	child, err := e.svc.CreateCategory(ctx, e.write, finance.NewCategory{Name: "Chess", ParentID: c.ID})
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.svc.UpdateCategory(ctx, e.write, finance.CategoryPatch{ID: e.demo.CategoryIDs["Travel"], Name: sp("x")})
	wantProblem(t, err, problem.SystemCategory, "")
	_, err = e.svc.UpdateCategory(ctx, e.write, finance.CategoryPatch{ID: c.ID, ParentID: sp(shopping)})
	wantProblem(t, err, problem.CategoryHasChildren, "")
	_, err = e.svc.UpdateCategory(ctx, e.write, finance.CategoryPatch{ID: c.ID, Color: sp("blue")})
	wantProblem(t, err, problem.InvalidInput, "color")
	_, err = e.svc.UpdateCategory(ctx, e.write, finance.CategoryPatch{ID: uuid.NewString(), Name: sp("x")})
	wantProblem(t, err, problem.NotFound, "")
	// A category the grant hides is not found, not a system category.
	_, err = e.svc.UpdateCategory(ctx, e.redacted, finance.CategoryPatch{ID: e.demo.ExcludedCategoryID, Name: sp("x")})
	wantProblem(t, err, problem.NotFound, "")
	_, err = e.svc.UpdateCategory(ctx, e.redacted, finance.CategoryPatch{ID: c.ID, ParentID: sp(e.demo.ExcludedCategoryID)})
	wantProblem(t, err, problem.InvalidInput, "parent_id")

	// Delete: system 409, with children 409, then merge.
	_, err = e.svc.DeleteCategory(ctx, e.write, e.demo.CategoryIDs["Travel"], nil)
	wantProblem(t, err, problem.SystemCategory, "")
	_, err = e.svc.DeleteCategory(ctx, e.write, c.ID, nil)
	wantProblem(t, err, problem.CategoryHasChildren, "")
	_, err = e.svc.DeleteCategory(ctx, e.write, child.Data.ID, sp(child.Data.ID))
	wantProblem(t, err, problem.InvalidInput, "merge_into_category_id")
	_, err = e.svc.DeleteCategory(ctx, e.redacted, child.Data.ID, sp(e.demo.ExcludedCategoryID))
	wantProblem(t, err, problem.InvalidInput, "merge_into_category_id")
	_, err = e.svc.DeleteCategory(ctx, e.redacted, e.demo.ExcludedCategoryID, nil)
	wantProblem(t, err, problem.NotFound, "")

	// Put two rows in the child (one on the account the redacted grant
	// hides), then delete the child into Travel.
	rows := []finance.Transaction{
		pick(t, e, unedited(e)),
		pick(t, e, func(tx finance.Transaction) bool { return tx.AccountID == e.demo.ExcludedAccountID }),
	}
	for _, r := range rows {
		if _, err := e.svc.UpdateTransaction(ctx, e.write, finance.TransactionUpdate{ID: r.ID, ExpectedVersion: r.Version,
			CategoryID: sp(child.Data.ID)}); err != nil {
			t.Fatal(err)
		}
	}
	del, err := e.svc.DeleteCategory(ctx, e.redacted, child.Data.ID, sp(e.demo.CategoryIDs["Travel"]))
	if err != nil {
		t.Fatal(err)
	}
	// The row on the hidden account moved too, but is not counted.
	if !del.Data.Deleted || del.Data.TransactionsMerged != 1 {
		t.Fatalf("delete result %+v", del.Data)
	}
	for _, r := range rows {
		got, _ := e.store.GetTransaction(ctx, e.demo.UserID, r.ID)
		if got.CategoryID != e.demo.CategoryIDs["Travel"] || got.Version != r.Version+2 {
			t.Errorf("row %s: category %s version %d", r.ID, got.CategoryID, got.Version)
		}
	}
	if _, err := e.svc.DeleteCategory(ctx, e.write, c.ID, nil); err != nil {
		t.Fatalf("delete emptied parent: %v", err)
	}
}

func TestCategoryLimit(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	cats, _ := e.store.ListCategories(ctx, e.demo.UserID)
	custom := 0
	for _, c := range cats {
		if !c.IsSystem() {
			custom++
		}
	}
	for i := custom; i < finance.MaxCustomCategories; i++ {
		if _, err := e.svc.CreateCategory(ctx, e.write, finance.NewCategory{Name: fmt.Sprintf("c%d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	_, err := e.svc.CreateCategory(ctx, e.write, finance.NewCategory{Name: "one too many"})
	wantProblem(t, err, problem.CategoryLimit, "")
}

func TestBulkCategorize(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	rows := all(t, e, e.write, finance.TransactionQuery{Source: finance.SourceBankSync})
	var plain []finance.Transaction
	for _, r := range rows {
		if unedited(e)(r) {
			plain = append(plain, r)
		}
	}
	hidden := pick(t, e, func(tx finance.Transaction) bool { return tx.AccountID == e.demo.ExcludedAccountID })
	parent := finance.Transaction{ID: uuid.NewString(), UserID: e.demo.UserID, AccountID: e.demo.AccountIDs.Checking,
		Amount: plain[0].Amount, Date: now, Source: finance.SourceManual, Version: 1, CreatedAt: now, UpdatedAt: now}
	slice := parent
	slice.ID, slice.SplitParentID = uuid.NewString(), parent.ID
	if err := e.store.InsertTransactions(ctx, []finance.Transaction{parent, slice}); err != nil {
		t.Fatal(err)
	}
	travel := e.demo.CategoryIDs["Travel"]
	items := []finance.BulkItem{
		{plain[0].ID, travel, plain[0].Version},
		{plain[1].ID, travel, plain[1].Version + 1},
		{uuid.NewString(), travel, 1},
		{"nope", travel, 1},
		{hidden.ID, travel, hidden.Version},
		{plain[2].ID, uuid.NewString(), plain[2].Version},
		{plain[3].ID, e.demo.ExcludedCategoryID, plain[3].Version},
		{parent.ID, travel, 1},
		{plain[4].ID, travel, plain[4].Version},
		{plain[4].ID, travel, plain[4].Version}, // same row again: its version moved on
	}
	res, err := e.svc.BulkCategorize(ctx, e.redacted, items)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"applied", "version_conflict", "not_found", "not_found", "not_found", "invalid_category",
		"invalid_category", "split", "applied", "version_conflict"}
	var got []string
	for i, r := range res.Data.Results {
		got = append(got, r.Status)
		if r.TransactionID != items[i].TransactionID {
			t.Errorf("row %d names %s", i, r.TransactionID)
		}
	}
	if !slices.Equal(got, want) || res.Data.AppliedCount != 2 {
		t.Fatalf("statuses %v (applied %d), want %v", got, res.Data.AppliedCount, want)
	}
	after, _ := e.store.GetTransaction(ctx, e.demo.UserID, plain[0].ID)
	if after.CategoryID != travel || after.Version != plain[0].Version+1 {
		t.Errorf("applied row: %+v", after)
	}
	for _, tc := range []struct {
		name   string
		caller finance.Caller
		items  []finance.BulkItem
		typ    problem.Type
	}{
		{"writes disabled", e.read, items[:1], problem.WritesDisabled},
		{"no items", e.write, nil, problem.InvalidInput},
		{"too many", e.write, make([]finance.BulkItem, finance.MaxBulkItems+1), problem.InvalidInput},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.svc.BulkCategorize(ctx, tc.caller, tc.items)
			field := ""
			if tc.typ == problem.InvalidInput {
				field = "items"
			}
			wantProblem(t, err, tc.typ, field)
		})
	}
}

func TestSearchTransactions(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	everything := all(t, e, e.read, finance.TransactionQuery{})
	// The service's answer is the store's semantics over the demo rows.
	for _, q := range []string{"starbucks", "Whole Foods", "net", "trader jo", "zzz"} {
		t.Run(q, func(t *testing.T) {
			terms := finance.SearchTokens(q)
			var want []string
			for _, tx := range everything {
				tokens := finance.SearchTokens(tx.Merchant + " " + tx.DisplayName + " " + tx.Description + " " + tx.Memo)
				ok := true
				for _, term := range terms {
					ok = ok && slices.ContainsFunc(tokens, func(tok string) bool { return strings.HasPrefix(tok, term) })
				}
				if ok {
					want = append(want, tx.ID)
				}
			}
			if q != "zzz" && len(want) == 0 {
				t.Fatalf("the demo has no row for %q", q)
			}
			var got []string
			sq := finance.SearchQuery{Q: q, PageQuery: finance.PageQuery{PageSize: size(7)}}
			for range 1000 {
				page, err := e.svc.SearchTransactions(ctx, e.read, sq)
				if err != nil {
					t.Fatal(err)
				}
				for _, tx := range page.Data {
					got = append(got, tx.ID)
				}
				if !page.HasMore {
					break
				}
				sq.Cursor = page.NextCursor
			}
			if !slices.Equal(got, want) {
				t.Fatalf("%d rows, want %d", len(got), len(want))
			}
		})
	}
	page, err := e.svc.SearchTransactions(ctx, e.redacted, finance.SearchQuery{Q: "a", PageQuery: finance.PageQuery{PageSize: size(200)}})
	if err != nil {
		t.Fatal(err)
	}
	if !page.Filtered || !slices.Equal(page.RedactedFields, []string{finance.FieldTransactionLocation, finance.FieldConnectionInstitution}) {
		t.Errorf("envelope %v %v", page.Filtered, page.RedactedFields)
	}
	for _, tx := range page.Data {
		if tx.AccountID == e.demo.ExcludedAccountID || tx.Location != nil {
			t.Fatalf("row %s leaks", tx.ID)
		}
	}
	first, _ := e.svc.SearchTransactions(ctx, e.read, finance.SearchQuery{Q: "a", PageQuery: finance.PageQuery{PageSize: size(2)}})
	for _, tc := range []struct {
		name  string
		q     finance.SearchQuery
		field string
	}{
		{"empty", finance.SearchQuery{}, "q"},
		{"blank", finance.SearchQuery{Q: "   "}, "q"},
		{"punctuation only", finance.SearchQuery{Q: "&|!:*"}, "q"},
		{"too long", finance.SearchQuery{Q: strings.Repeat("a", 257)}, "q"},
		{"too many words", finance.SearchQuery{Q: strings.Repeat("a ", 17)}, "q"},
		{"bad date", finance.SearchQuery{Q: "a", StartDate: "x"}, "start_date"},
		{"cursor of another query", finance.SearchQuery{Q: "b", PageQuery: finance.PageQuery{Cursor: first.NextCursor}}, "cursor"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.svc.SearchTransactions(ctx, e.read, tc.q)
			wantProblem(t, err, problem.InvalidInput, tc.field)
		})
	}
}
