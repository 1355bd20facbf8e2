package mt

import (
	"math/rand"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/ledgerlane/platform/services/converter/statement"
)

func TestAppendDecimal(t *testing.T) {
	for _, s := range []string{"0", "1", "100", "0.5", "0.05", "1234567.89", "500.00", "0.001", "999999999999999", "123456789012345678901234.5"} {
		v := decimal.RequireFromString(s)
		want := v.String()
		want = replaceDot(want)
		if got := string(appendDecimal(nil, v)); got != want {
			t.Errorf("%s: got %q, want %q", s, got, want)
		}
		if got := string(appendDecimal(nil, v.Neg())); got != want {
			t.Errorf("-%s: got %q, want %q", s, got, want)
		}
	}
}

func replaceDot(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] == '.' {
			return s[:i] + "," + s[i+1:]
		}
	}
	return s + ","
}

// TestSum: the int64 fast path agrees with decimal arithmetic, including
// when it overflows and falls back.
func TestSum(t *testing.T) {
	rng := rand.New(rand.NewSource(9))
	for k := 0; k < 500; k++ {
		acc := sum{}
		want := decimal.Zero
		for i := 0; i < 20; i++ {
			v := decimal.New(rng.Int63n(1<<62), -int32(rng.Intn(4)))
			if k%7 == 0 {
				v = v.Mul(decimal.New(1, int32(rng.Intn(30)))) // large: forces the fallback
			}
			m := statement.Credit
			if rng.Intn(2) == 0 {
				m = statement.Debit
			}
			acc.add(m, v)
			want = want.Add(signed(m, v))
		}
		if got := acc.value(); !got.Equal(want) {
			t.Fatalf("case %d: %s, want %s", k, got, want)
		}
	}
}
