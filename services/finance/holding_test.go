package finance_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/services/finance"
	"github.com/ledgerlane/platform/services/finance/networth"
	"github.com/ledgerlane/platform/services/finance/seed"
)

func TestDivRoundBank(t *testing.T) {
	tests := []struct{ num, den, want string }{
		{"1", "3", "0.33"},
		{"2", "3", "0.67"},
		{"0.125", "1", "0.12"},   // tie: even
		{"0.135", "1", "0.14"},   // tie: even
		{"-0.125", "1", "-0.12"}, // tie, negative
		{"-0.135", "1", "-0.14"},
		{"1", "-8", "-0.12"}, // -0.125
		{"0.1250000001", "1", "0.13"},
		{"100", "7", "14.29"},
	}
	for _, tc := range tests {
		if got := finance.DivRoundBank(dec(tc.num), dec(tc.den), 2); !got.Equal(dec(tc.want)) {
			t.Errorf("%s / %s = %s, want %s", tc.num, tc.den, got, tc.want)
		}
	}
}

func TestPriceHolding(t *testing.T) {
	h := networth.Holding{Quantity: dec("3.333"), Currency: "USD"}
	day := func(n int) time.Time { return time.Date(2026, 5, 20+n, 0, 0, 0, 0, time.UTC) }
	p := func(n int, v string) networth.SecurityPrice {
		return networth.SecurityPrice{Ticker: "X", Currency: "USD", Date: day(n), Price: dec(v), Source: "s"}
	}
	tests := []struct {
		name              string
		prices            []networth.SecurityPrice
		price, value, pct string // "" = absent
	}{
		{"no price", nil, "", "", ""},
		{"one price", []networth.SecurityPrice{p(0, "10.00")}, "10", "33.33", ""},
		{"value rounds half-even", []networth.SecurityPrice{p(0, "1.5")}, "1.5", "5", ""}, // 4.9995
		{"two prices", []networth.SecurityPrice{p(0, "10.50"), p(-1, "10.00")}, "10.5", "35", "5"},
		{"a fall", []networth.SecurityPrice{p(0, "99"), p(-1, "100")}, "99", "329.97", "-1"},
		{"pct half-even", []networth.SecurityPrice{p(0, "100.125"), p(-1, "100")}, "100.125", "333.72", "0.12"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := networth.PriceHolding(h, tc.prices)
			check := func(what string, got *decimal.Decimal, want string) {
				if (got == nil) != (want == "") || (got != nil && !got.Equal(dec(want))) {
					t.Errorf("%s = %v, want %q", what, got, want)
				}
			}
			check("price", v.CurrentPrice, tc.price)
			var val *decimal.Decimal
			if v.CurrentValue != nil {
				val = &v.CurrentValue.Amount
			}
			check("value", val, tc.value)
			check("pct", v.DailyChangePct, tc.pct)
		})
	}
}

func TestListHoldings(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	brokerage := e.demo.AccountIDs.Brokerage

	res, err := e.nw.ListHoldings(ctx, e.read, finance.PageQuery{}, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Data) != 5 || res.Filtered || len(res.RedactedFields) != 0 {
		t.Fatalf("%d holdings, filtered %v", len(res.Data), res.Filtered)
	}
	today := finance.Day(now)
	for _, h := range res.Data {
		var sec seed.Security
		for _, s := range seed.DemoSecurities {
			if s.Ticker == h.Ticker {
				sec = s
			}
		}
		price, prev := seed.DemoPrice(sec, today), seed.DemoPrice(sec, today.AddDate(0, 0, -1))
		value := h.Quantity.Mul(price).RoundBank(2)
		pct := finance.DivRoundBank(price.Sub(prev).Mul(decimal.NewFromInt(100)), prev, 2)
		if h.AccountID != brokerage || h.CurrentPrice == nil || !h.CurrentPrice.Equal(price) ||
			!h.CurrentValue.Amount.Equal(value) || h.CurrentValue.Currency != "USD" || !h.DailyChangePct.Equal(pct) ||
			h.PriceSource != seed.PriceSource || h.CostBasisMethod == "" || h.CostBasis == nil {
			t.Errorf("%s: price %v value %v pct %v; want %s %s %s", h.Ticker, h.CurrentPrice, h.CurrentValue, h.DailyChangePct,
				price, value, pct)
		}
	}

	t.Run("pages and the account filter", func(t *testing.T) {
		seen := map[string]bool{}
		q := finance.PageQuery{PageSize: size(2)}
		for pages := 0; ; pages++ {
			p, err := e.nw.ListHoldings(ctx, e.read, q, brokerage)
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range p.Data {
				if seen[h.ID] {
					t.Fatalf("%s served twice", h.ID)
				}
				seen[h.ID] = true
			}
			if !p.HasMore {
				break
			}
			if pages == 0 {
				_, err := e.nw.ListHoldings(ctx, e.read, finance.PageQuery{Cursor: p.NextCursor}, "")
				wantProblem(t, err, problem.InvalidInput, "cursor") // another filter
			}
			q.Cursor = p.NextCursor
		}
		if len(seen) != 5 {
			t.Errorf("%d holdings over the pages", len(seen))
		}
		p, err := e.nw.ListHoldings(ctx, e.read, finance.PageQuery{}, e.demo.AccountIDs.Checking)
		if err != nil || len(p.Data) != 0 {
			t.Errorf("checking: %v %v", p.Data, err)
		}
		_, err = e.nw.ListHoldings(ctx, e.read, finance.PageQuery{}, "brokerage")
		wantProblem(t, err, problem.InvalidInput, "account_id")
		_, err = e.nw.ListHoldings(ctx, e.read, finance.PageQuery{PageSize: size(0)}, "")
		wantProblem(t, err, problem.InvalidInput, "page_size")
	})

	t.Run("privacy", func(t *testing.T) {
		// The redacted grant excludes the brokerage: nothing, filtered.
		p, err := e.nw.ListHoldings(ctx, e.redacted, finance.PageQuery{}, brokerage)
		if err != nil || len(p.Data) != 0 || !p.Filtered {
			t.Fatalf("redacted: %d %v %v", len(p.Data), p.Filtered, err)
		}
		// Redacting institutions only: the Fidelity fund loses its name and notes.
		g := finance.Grant{ID: uuid.NewString(), UserID: e.demo.UserID, CreatedAt: now,
			RedactedFields: []string{finance.FieldConnectionInstitution}}
		if err := e.store.CreateGrant(ctx, g); err != nil {
			t.Fatal(err)
		}
		c := finance.Caller{UserID: e.demo.UserID, GrantID: g.ID, OwnerAccountID: tenant}
		p, err = e.nw.ListHoldings(ctx, c, finance.PageQuery{}, "")
		if err != nil || len(p.Data) != 5 || p.Filtered || len(p.RedactedFields) != 1 {
			t.Fatalf("institution grant: %d %v %v %v", len(p.Data), p.Filtered, p.RedactedFields, err)
		}
		for _, h := range p.Data {
			if (h.Ticker == "SPAXX") != (h.Name == "" && h.Notes == "") {
				t.Errorf("%s: name %q notes %q", h.Ticker, h.Name, h.Notes)
			}
		}
	})

	t.Run("prices as of the clock", func(t *testing.T) {
		past := today.AddDate(0, 0, -10)
		kernel := finance.NewService(finance.Config{Store: e.store, Clock: func() time.Time { return past.Add(9 * time.Hour) }})
		svc := networth.NewService(networth.Config{Kernel: kernel, Store: e.store})
		p, err := svc.ListHoldings(ctx, e.read, finance.PageQuery{}, "")
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range p.Data {
			for _, s := range seed.DemoSecurities {
				if s.Ticker == h.Ticker && !h.CurrentPrice.Equal(seed.DemoPrice(s, past)) {
					t.Errorf("%s on %s: %s", h.Ticker, past.Format(finance.DateLayout), h.CurrentPrice)
				}
			}
		}
	})

	t.Run("recording prices", func(t *testing.T) {
		good := networth.SecurityPrice{Ticker: "VTI", Currency: "USD", Date: today.AddDate(0, 0, 1), Price: dec("300"), Source: "test"}
		bad := []networth.SecurityPrice{
			{Currency: "USD", Date: today, Price: dec("1")},
			{Ticker: "VTI", Currency: "usd", Date: today, Price: dec("1")},
			{Ticker: "VTI", Currency: "USD", Price: dec("1")},
			{Ticker: "VTI", Currency: "USD", Date: today, Price: dec("0")},
			{Ticker: "V TI", Currency: "USD", Date: today, Price: dec("1")},
		}
		for _, b := range bad {
			wantProblem(t, e.nw.RecordSecurityPrices(ctx, []networth.SecurityPrice{good, b}), problem.InvalidInput, "prices[1]")
		}
		if err := e.nw.RecordSecurityPrices(ctx, []networth.SecurityPrice{good}); err != nil {
			t.Fatal(err)
		}
	})
}
