package finance_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/ledgerlane/platform/pkg/cursor"
	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/services/finance"
)

func TestUpdateTransactionTags(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	tx := pick(t, e, unedited(e))
	version := tx.Version
	steps := []struct {
		name string
		tags *[]string
		want []string
		bump bool
	}{
		{"set", &[]string{"trip", "work", "trip"}, []string{"trip", "work"}, true},
		{"absent keeps", nil, []string{"trip", "work"}, false},
		{"replace", &[]string{"work"}, []string{"work"}, true},
		{"empty clears", &[]string{}, nil, true},
		{"empty again changes nothing", &[]string{}, nil, false},
	}
	for _, s := range steps {
		res, err := e.svc.UpdateTransaction(ctx, e.write, finance.TransactionUpdate{ID: tx.ID, ExpectedVersion: version, Tags: s.tags})
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if !slices.Equal(res.Data.Tags, s.want) {
			t.Errorf("%s: tags %q, want %q", s.name, res.Data.Tags, s.want)
		}
		if bumped := res.Data.Version == version+1; bumped != s.bump {
			t.Errorf("%s: version %d -> %d", s.name, version, res.Data.Version)
		}
		version = res.Data.Version
		stored, err := e.store.GetTransaction(ctx, e.demo.UserID, tx.ID)
		if err != nil || !slices.Equal(stored.Tags, s.want) {
			t.Errorf("%s: stored tags %q, %v", s.name, stored.Tags, err)
		}
	}
	_, err := e.svc.UpdateTransaction(ctx, e.write, finance.TransactionUpdate{ID: tx.ID, ExpectedVersion: version,
		Tags: &[]string{"ok", ""}})
	wantProblem(t, err, problem.InvalidInput, "tags")
}

// The bounds are 1900-01-01 and a year after today (UTC, by the service's
// clock), both inclusive.
func TestUpdateTransactionDateBounds(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name  string
		clock time.Time
		date  string
		ok    bool
	}{
		{"earliest", now, "1900-01-01", true},
		{"day before the earliest", now, "1899-12-31", false},
		{"year one", now, "0001-01-01", false},
		{"a year from today", now, "2027-05-20", true},
		{"a year and a day", now, "2027-05-21", false},
		{"year 9999", now, "9999-12-31", false},
		{"today", now, "2026-05-20", true},
		// 23:30 in New York is already the next day in UTC.
		{"today is UTC", time.Date(2026, 5, 20, 23, 30, 0, 0, time.FixedZone("EDT", -4*3600)), "2027-05-21", true},
		{"leap day ahead", time.Date(2027, 2, 28, 12, 0, 0, 0, time.UTC), "2028-02-28", true},
		{"leap day itself", time.Date(2027, 2, 28, 12, 0, 0, 0, time.UTC), "2028-02-29", false},
	}
	e := newEnv(t, nil)
	id := pick(t, e, unedited(e)).ID
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			svc := finance.NewService(finance.Config{Store: e.store, Cursors: cursor.New([]byte("test-key")), Clock: func() time.Time { return tc.clock }})
			tx, err := e.store.GetTransaction(ctx, e.demo.UserID, id)
			if err != nil {
				t.Fatal(err)
			}
			res, err := svc.UpdateTransaction(ctx, e.write, finance.TransactionUpdate{ID: id, ExpectedVersion: tx.Version,
				Date: sp(tc.date)})
			if !tc.ok {
				wantProblem(t, err, problem.InvalidInput, "date")
				return
			}
			if err != nil || res.Data.Date.Format(finance.DateLayout) != tc.date {
				t.Fatalf("date %s: %v %v", tc.date, res.Data.Date, err)
			}
		})
	}
}

// amount may come as the Money object responses carry: Amount holds its
// amount and AmountCurrency its currency.
func TestUpdateTransactionAmountObject(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	usd := pick(t, e, unedited(e))
	eur := pick(t, e, func(tx finance.Transaction) bool { return tx.Amount.Currency == "EUR" })
	upd := func(tx finance.Transaction, amount, currency *string) finance.TransactionUpdate {
		return finance.TransactionUpdate{ID: tx.ID, ExpectedVersion: tx.Version, Amount: amount, AmountCurrency: currency}
	}
	refusals := []struct {
		name  string
		upd   finance.TransactionUpdate
		typ   problem.Type
		field string
	}{
		{"another currency", upd(usd, sp("-7.25"), sp("EUR")), problem.FieldImmutable, "amount"},
		{"another currency on a EUR row", upd(eur, sp("-7.25"), sp("USD")), problem.FieldImmutable, "amount"},
		{"lower-case currency", upd(usd, sp("-7.25"), sp("usd")), problem.InvalidInput, "amount"},
		{"not a currency code", upd(usd, sp("-7.25"), sp("")), problem.InvalidInput, "amount"},
		{"suffix inside the object", upd(usd, sp("-7.25 USD"), sp("USD")), problem.InvalidInput, "amount"},
		{"currency without amount", upd(usd, nil, sp("USD")), problem.InvalidInput, "amount"},
		{"not a decimal", upd(usd, sp("seven"), sp("USD")), problem.InvalidInput, "amount"},
		{"too precise", upd(usd, sp("-7.255"), sp("USD")), problem.InvalidInput, "amount"},
	}
	for _, tc := range refusals {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.svc.UpdateTransaction(ctx, e.write, tc.upd)
			wantProblem(t, err, tc.typ, tc.field)
		})
	}
	res, err := e.svc.UpdateTransaction(ctx, e.write, upd(usd, sp("-7.25"), sp("USD")))
	if err != nil || res.Data.Amount.AmountString() != "-7.25" || res.Data.Amount.Currency != "USD" ||
		res.Data.Version != usd.Version+1 {
		t.Fatalf("object amount: %+v %v", res.Data.Amount, err)
	}
	// The same value as a string is no change.
	same, err := e.svc.UpdateTransaction(ctx, e.write, finance.TransactionUpdate{ID: usd.ID,
		ExpectedVersion: res.Data.Version, Amount: sp("-7.25")})
	if err != nil || same.Data.Version != res.Data.Version {
		t.Fatalf("same amount as a string: version %d, %v", same.Data.Version, err)
	}
	if _, err := e.svc.UpdateTransaction(ctx, e.write, upd(eur, sp("-3.10"), sp("EUR"))); err != nil {
		t.Errorf("EUR object: %v", err)
	}
}
