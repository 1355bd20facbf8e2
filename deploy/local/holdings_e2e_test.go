package local_test

import (
	"math/big"
	"net/url"
	"testing"

	"github.com/ledgerlane/platform/deploy/local"
)

func TestHoldingsEndToEnd(t *testing.T) {
	for _, withDB := range []bool{false, true} {
		name := "memory"
		if withDB {
			name = "postgres"
		}
		t.Run(name, func(t *testing.T) { holdingsEndToEnd(t, financeStack(t, withDB)) })
	}
}

func holdingsEndToEnd(t *testing.T, st *local.Stack) {
	keys := map[string]string{}
	for _, k := range st.Keys {
		keys[k.Name] = k.Key
	}
	f := &fin{client: client{t: t, base: st.URL, keys: keys}}
	brokerage := st.Demo.AccountIDs.Brokerage

	t.Run("pages, priced", func(t *testing.T) {
		f.t = t
		q := url.Values{"page_size": {"2"}}
		rows := pagesE2E(t, f, "finance-read", "/v1/holdings", url.Values{"account_id": {brokerage}})
		if len(rows) != 5 {
			t.Fatalf("%d holdings", len(rows))
		}
		first := f.call("GET", "/v1/holdings?"+q.Encode(), "finance-read", "")
		if first.status != 200 || len(first.json["data"].([]any)) != 2 || first.json["filtered"] != false {
			t.Fatalf("first page: %s", first.body)
		}
		for _, h := range rows {
			// current_value = quantity × current_price, rounded half-even to cents.
			v := new(big.Rat).Mul(rat(t, h["quantity"]), rat(t, h["current_price"]))
			want := roundHalfEven(v, 2)
			cv := h["current_value"].(map[string]any)
			if rat(t, cv["amount"]).Cmp(want) != 0 || cv["currency"] != h["currency"] || h["account_id"] != brokerage ||
				h["daily_change_pct"] == nil || h["cost_basis_method"] == nil || h["price_source"] != "sandbox" {
				t.Errorf("holding %v (want value %s)", h, want.FloatString(2))
			}
		}
		f.call("GET", "/v1/holdings?account_id=nope", "finance-read", "").wantProblem(t, 400, "invalid-input")
		f.call("GET", "/v1/holdings?page_size=0", "finance-read", "").wantProblem(t, 400, "invalid-input")
	})

	t.Run("privacy", func(t *testing.T) {
		f.t = t
		r := f.call("GET", "/v1/holdings", "finance-redacted", "")
		if r.status != 200 || len(r.json["data"].([]any)) != 0 || r.json["filtered"] != true {
			t.Fatalf("redacted: %s", r.body)
		}
	})
}

// roundHalfEven rounds r to places decimal places, ties to even.
func roundHalfEven(r *big.Rat, places int) *big.Rat {
	scale := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(places)), nil)
	x := new(big.Rat).Mul(r, new(big.Rat).SetInt(scale))
	q, m := new(big.Int).QuoRem(x.Num(), x.Denom(), new(big.Int))
	twice := new(big.Int).Mul(new(big.Int).Abs(m), big.NewInt(2))
	if c := twice.Cmp(x.Denom()); c > 0 || (c == 0 && q.Bit(0) == 1) {
		if x.Sign() < 0 {
			q.Sub(q, big.NewInt(1))
		} else {
			q.Add(q, big.NewInt(1))
		}
	}
	return new(big.Rat).SetFrac(q, scale)
}
