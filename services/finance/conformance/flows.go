package conformance

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/ledgerlane/platform/services/finance"
	"github.com/ledgerlane/platform/services/finance/banksync"
)

// testFlowTotals: the store's flow totals, last flow days, anomaly
// candidates and flow versions agree with the same figures computed from
// the user's rows (finance.SumFlowRows and friends), after every kind of
// write: inserts with split parents before and after their slices and
// transfer pairs, compare-and-swap edits of category, amount and date,
// sync deletes (a split parent's cascade among them), and a category
// delete.
func testFlowTotals(t *testing.T, s Store) {
	ctx := context.Background()
	f := setup(t, s)
	rng := rand.New(rand.NewPCG(13, 14))
	var cats []string
	for i := range 3 {
		c := finance.Category{ID: newID(), UserID: f.user, Name: fmt.Sprintf("Cat %d", i), CreatedAt: base, UpdatedAt: base}
		must(t, s.CreateCategory(ctx, c))
		cats = append(cats, c.ID)
	}
	jan := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	row := func(user, acct string) finance.Transaction {
		cat := ""
		if k := rng.IntN(len(cats) + 1); k < len(cats) {
			cat = cats[k]
		}
		cur := "USD"
		if rng.IntN(5) == 0 {
			cur = "EUR"
		}
		cents := rng.Int64N(40000) - 30000
		return finance.Transaction{ID: newID(), UserID: user, AccountID: acct, CategoryID: cat,
			Amount: finance.Money{Amount: decimal.New(cents, -2), Currency: cur}, Merchant: fmt.Sprintf("m%d", rng.IntN(4)),
			Date: jan.AddDate(0, 0, rng.IntN(180)), Source: finance.SourceManual, Version: 1, CreatedAt: base, UpdatedAt: base}
	}
	var batch []finance.Transaction
	for range 300 {
		acct := f.account
		if rng.IntN(2) == 0 {
			acct = f.account2
		}
		batch = append(batch, row(f.user, acct))
	}
	for i := 0; i < 20; i += 2 { // transfer pairs: out of one account, into the other
		pair := newID()
		batch[i].TransferPairID, batch[i+1].TransferPairID = pair, pair
		batch[i].Amount.Amount = batch[i].Amount.Amount.Abs().Neg()
		batch[i+1].Amount.Amount = batch[i].Amount.Amount.Neg()
	}
	// A split parent after its slices in one batch, and one whose slices
	// arrive in a later batch.
	parent1, parent2 := batch[30], batch[31]
	var slices1, slices2 []finance.Transaction
	for range 2 {
		a, b := row(f.user, parent1.AccountID), row(f.user, parent2.AccountID)
		a.SplitParentID, a.Date, b.SplitParentID, b.Date = parent1.ID, parent1.Date, parent2.ID, parent2.Date
		slices1, slices2 = append(slices1, a), append(slices2, b)
	}
	batch = append(slices1, batch...)
	other := []finance.Transaction{row(f.other, f.otherAccount), row(f.other, f.otherAccount)}
	must(t, s.InsertTransactions(ctx, other))
	must(t, s.InsertTransactions(ctx, batch))
	check := func(step string) {
		t.Helper()
		checkFlows(t, s, f.user, cats, step)
	}
	check("inserted")
	must(t, s.InsertTransactions(ctx, slices2))
	check("late slices")

	// Edits: category, amount and date (across a month) of 30 rows.
	for _, orig := range batch[40:70] {
		cur, err := s.GetTransaction(ctx, f.user, orig.ID)
		must(t, err)
		next := cur
		next.CategoryID = cats[rng.IntN(len(cats))]
		next.Amount.Amount = cur.Amount.Amount.Add(decimal.New(rng.Int64N(1000)-500, -2))
		next.Date = cur.Date.AddDate(0, 0, rng.IntN(40)-20)
		next.Version = cur.Version + 1
		must(t, s.UpdateTransaction(ctx, next, cur.Version))
	}
	check("edited")

	// Versions: a write in a range changes its version; one months away
	// does not.
	may, jun := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 6, 30, 0, 0, 0, 0, time.UTC)
	before, err := s.FlowVersion(ctx, f.user, may, jun)
	must(t, err)
	far := row(f.user, f.account)
	far.Date = time.Date(2026, 9, 10, 0, 0, 0, 0, time.UTC)
	must(t, s.InsertTransactions(ctx, []finance.Transaction{far}))
	after, err := s.FlowVersion(ctx, f.user, may, jun)
	must(t, err)
	if after != before {
		t.Errorf("a write in September changed May–June's version")
	}
	near := row(f.user, f.account)
	near.Date = time.Date(2026, 6, 12, 0, 0, 0, 0, time.UTC)
	must(t, s.InsertTransactions(ctx, []finance.Transaction{near}))
	if v, err := s.FlowVersion(ctx, f.user, may, jun); err != nil || v == after {
		t.Errorf("a write in June left May–June's version unchanged (%v)", err)
	}
	check("versions")

	// Deletes: the first parent (its slices go with it), a slice of the
	// second, a transfer leg and a few plain rows.
	del := []string{parent1.ID, slices2[0].ID, batch[len(slices1)+1].ID, batch[100].ID, batch[101].ID}
	must(t, s.ApplySync(ctx, banksync.Write{UserID: f.user, Deletes: del,
		Connection: banksync.ConnectionState{ID: f.conn, Status: finance.ConnectionActive, UpdatedAt: base}}))
	check("deleted")
	must(t, s.ApplySync(ctx, banksync.Write{UserID: f.user, Deletes: []string{slices2[1].ID},
		Connection: banksync.ConnectionState{ID: f.conn, Status: finance.ConnectionActive, UpdatedAt: base}}))
	check("last slice deleted")

	_, err = s.DeleteCategory(ctx, f.user, cats[0], "", base)
	must(t, err)
	check("category deleted")
}

// checkFlows compares the store's answers with the ones computed from the
// user's rows, for a set of queries.
func checkFlows(t *testing.T, s Store, user string, cats []string, step string) {
	t.Helper()
	ctx := context.Background()
	rows, err := s.ListBudgetRows(ctx, user, finance.TransactionFilter{})
	must(t, err)
	if len(rows) == 0 {
		t.Fatalf("%s: no rows", step)
	}
	date := func(m, day int) time.Time { return time.Date(2026, time.Month(m), day, 0, 0, 0, 0, time.UTC) }
	acct, f2 := rows[0].AccountID, ""
	for _, r := range rows {
		if r.AccountID != acct {
			f2 = r.AccountID
		}
	}
	queries := map[string]finance.FlowQuery{
		"everything":             {From: date(1, 1), To: date(12, 31)},
		"by month":               {From: date(1, 1), To: date(12, 31), ByMonth: true},
		"mid-month to mid-month": {From: date(2, 14), To: date(5, 9), ByMonth: true},
		"within one month":       {From: date(3, 3), To: date(3, 27)},
		"one day":                {From: date(4, 15), To: date(4, 15)},
		"month end to month end": {From: date(1, 31), To: date(4, 30)},
		"counted USD":            {From: date(1, 1), To: date(6, 30), Currency: "USD", CountedOnly: true},
		"one account":            {From: date(2, 1), To: date(6, 15), AccountIDs: []string{acct}, ByMonth: true},
		"both accounts":          {From: date(2, 1), To: date(6, 15), AccountIDs: []string{acct, f2}, ByMonth: true},
		"no such account":        {From: date(2, 1), To: date(6, 15), AccountIDs: []string{"nope"}},
		"categories":             {From: date(1, 10), To: date(6, 20), CategoryIDs: []string{cats[1], ""}},
		"exclusions": {From: date(1, 1), To: date(6, 30), ExcludeAccountIDs: []string{acct},
			ExcludeCategoryIDs: []string{cats[2]}, CountedOnly: true},
	}
	for name, q := range queries {
		got, err := s.SumFlows(ctx, user, q)
		must(t, err)
		want := finance.SumFlowRows(rows, q)
		if !sameTotals(got, want) {
			t.Errorf("%s: SumFlows %s:\n got %s\nwant %s", step, name, showTotals(got), showTotals(want))
		}
		for _, in := range []bool{true, false} {
			gotDay, err := s.LastFlowDay(ctx, user, q, in)
			must(t, err)
			wantDay := finance.LastFlowRow(rows, q, in)
			if (gotDay == nil) != (wantDay == nil) || (gotDay != nil && !gotDay.Equal(*wantDay)) {
				t.Errorf("%s: LastFlowDay %s inflow=%t: got %v, want %v", step, name, in, gotDay, wantDay)
			}
		}
	}
	floors := map[string]decimal.Decimal{cats[1]: decimal.RequireFromString("50"), cats[2]: decimal.RequireFromString("120.5")}
	f := finance.TransactionFilter{StartDate: date(2, 1), EndDate: date(4, 30), ExcludeAccountIDs: []string{"not-a-uuid"}}
	got, err := s.ListAnomalyCandidates(ctx, user, f, floors)
	must(t, err)
	sliced := finance.SlicedParents(rows)
	var want []string
	for _, r := range rows {
		floor, ok := floors[r.CategoryID]
		if ok && !sliced[r.ID] && r.Amount.Amount.Neg().GreaterThan(floor) && !r.Date.Before(f.StartDate) && !r.Date.After(f.EndDate) {
			want = append(want, r.ID)
		}
	}
	var ids []string
	for _, r := range got {
		ids = append(ids, r.ID)
	}
	slices.Sort(ids)
	slices.Sort(want)
	if !slices.Equal(ids, want) {
		t.Errorf("%s: anomaly candidates: got %d %v, want %d %v", step, len(ids), ids, len(want), want)
	}
}

func sameTotals(a, b []finance.FlowTotal) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		x.Net, y.Net = decimal.Zero, decimal.Zero
		if x != y || !a[i].Net.Equal(b[i].Net) {
			return false
		}
	}
	return true
}

func showTotals(ts []finance.FlowTotal) string {
	var b strings.Builder
	for _, t := range ts {
		fmt.Fprintf(&b, "\n  %s %.8s %.8s %s %t %s n=%d in=%d out=%d", t.Month.Format("2006-01"), t.AccountID, t.CategoryID,
			t.Currency, t.Counted, t.Net, t.Rows, t.Inflows, t.Outflows)
	}
	return b.String()
}

func testBudgetRows(t *testing.T, s Store) {
	ctx := context.Background()
	f := setup(t, s)
	cat := newID()
	must(t, s.CreateCategory(ctx, finance.Category{ID: cat, Name: "Food", TypeTag: finance.CategoryExpense, CreatedAt: base, UpdatedAt: base}))
	mk := func(acct string, d int, amount, category, pair string) finance.Transaction {
		tx := finance.Transaction{ID: newID(), UserID: f.user, AccountID: acct, CategoryID: category, Merchant: "Shop",
			Amount: money(amount, "USD"), Date: day(d), Source: finance.SourceManual, TransferPairID: pair,
			Version: 1, CreatedAt: base, UpdatedAt: base}
		return tx
	}
	pair := newID()
	rows := []finance.Transaction{
		mk(f.account, 0, "-10.50", cat, ""),
		mk(f.account, 5, "-1.25", "", ""),
		mk(f.account2, 2, "300.00", "", pair),
		mk(f.account, 40, "-7.00", cat, ""),
	}
	// A bank row the user renamed: the bank's name comes along.
	rows[1].Source, rows[1].Merchant, rows[1].ProviderMerchantName = finance.SourceBankSync, "Shop (gift)", ptr("Shop")
	rows[1].OwnedByUser = []string{finance.OwnMerchant}
	must(t, s.InsertTransactions(ctx, rows))
	other := mk(f.otherAccount, 0, "-3", "", "")
	other.UserID = f.other
	must(t, s.InsertTransactions(ctx, []finance.Transaction{other}))

	ids := func(f finance.TransactionFilter) []string {
		got, err := s.ListBudgetRows(ctx, rows[0].UserID, f)
		must(t, err)
		var out []string
		for _, r := range got {
			out = append(out, r.ID)
		}
		slices.Sort(out)
		return out
	}
	want := func(rs ...finance.Transaction) []string {
		var out []string
		for _, r := range rs {
			out = append(out, r.ID)
		}
		slices.Sort(out)
		return out
	}
	diff(t, "all", want(rows...), ids(finance.TransactionFilter{}))
	diff(t, "dates", want(rows[0], rows[1], rows[2]), ids(finance.TransactionFilter{StartDate: day(0), EndDate: day(30)}))
	diff(t, "account", want(rows[0], rows[1], rows[3]), ids(finance.TransactionFilter{AccountID: f.account}))
	diff(t, "excluded account", want(rows[0], rows[1], rows[3]), ids(finance.TransactionFilter{ExcludeAccountIDs: []string{f.account2}}))
	diff(t, "excluded category keeps uncategorized", want(rows[1], rows[2]), ids(finance.TransactionFilter{ExcludeCategoryIDs: []string{cat}}))

	got, err := s.ListBudgetRows(ctx, f.user, finance.TransactionFilter{AccountID: f.account2})
	must(t, err)
	if len(got) != 1 || got[0].TransferPairID != pair || got[0].Amount.Amount.String() != "300" ||
		got[0].Amount.Currency != "USD" || !got[0].Date.Equal(day(2)) || got[0].Merchant != "Shop" || got[0].CategoryID != "" {
		t.Errorf("row: %+v", got)
	}
	got, err = s.ListBudgetRows(ctx, f.user, finance.TransactionFilter{StartDate: day(5), EndDate: day(5)})
	must(t, err)
	if len(got) != 1 || got[0].Merchant != "Shop (gift)" || got[0].BankMerchant != "Shop" || got[0].Counterparty() != "Shop" {
		t.Errorf("renamed row: %+v", got)
	}
	if got, err = s.ListBudgetRows(ctx, f.user, finance.TransactionFilter{StartDate: day(0), EndDate: day(0)}); err != nil ||
		len(got) != 1 || got[0].BankMerchant != "" || got[0].Counterparty() != "Shop" {
		t.Errorf("row never renamed: %+v %v", got, err)
	}
}
