package mt

import (
	"math"

	"github.com/shopspring/decimal"

	"github.com/ledgerlane/platform/services/converter/statement"
)

// Real amounts have at most 15 digits, so their coefficient fits an int64.
// These helpers keep sums and formatting on int64 in that case and fall back
// to decimal (math/big) otherwise: same results, a fraction of the cost.

func small(d decimal.Decimal) (coef int64, exp int32, ok bool) {
	if d.NumDigits() > 18 {
		return 0, 0, false
	}
	return d.CoefficientInt64(), d.Exponent(), true
}

// sum accumulates signed amounts exactly.
type sum struct {
	coef int64
	exp  int32
	big  *decimal.Decimal // set once the int64 path cannot hold the value
}

func newSum(m statement.Mark, v decimal.Decimal) sum {
	var s sum
	s.add(m, v)
	return s
}

func (s *sum) add(m statement.Mark, v decimal.Decimal) {
	if s.big == nil {
		if c, e, ok := small(v); ok && e <= 0 && e >= -18 {
			if m == statement.Debit {
				c = -c
			}
			if s.addSmall(c, e) {
				return
			}
		}
		d := decimal.New(s.coef, s.exp)
		s.big = &d
	}
	d := s.big.Add(signed(m, v))
	s.big = &d
}

// addSmall adds c*10^e, rescaling to the smaller exponent; it reports false
// on overflow, leaving s unchanged.
func (s *sum) addSmall(c int64, e int32) bool {
	a, ae := s.coef, s.exp
	if s.coef == 0 && s.exp == 0 {
		ae = e
	}
	a, c, ae, ok := align(a, ae, c, e)
	if !ok {
		return false
	}
	r := a + c
	if (c > 0 && r < a) || (c < 0 && r > a) {
		return false
	}
	s.coef, s.exp = r, ae
	return true
}

// equalSmall reports whether s and t both fit in int64 and are equal in
// value; false means only "not known to be equal".
func (s *sum) equalSmall(t sum) bool {
	if s.big != nil || t.big != nil {
		return false
	}
	a, b, _, ok := align(s.coef, s.exp, t.coef, t.exp)
	return ok && a == b
}

// align scales a*10^ae and b*10^be to their smaller exponent; ok is false
// when a coefficient would overflow int64.
func align(a int64, ae int32, b int64, be int32) (int64, int64, int32, bool) {
	for ae > be {
		if a > math.MaxInt64/10 || a < math.MinInt64/10 {
			return 0, 0, 0, false
		}
		a *= 10
		ae--
	}
	for be > ae {
		if b > math.MaxInt64/10 || b < math.MinInt64/10 {
			return 0, 0, 0, false
		}
		b *= 10
		be--
	}
	return a, b, ae, true
}

func (s *sum) value() decimal.Decimal {
	if s.big != nil {
		return *s.big
	}
	return decimal.New(s.coef, s.exp)
}

// appendDecimal writes |v| as digits with a decimal comma (trailing
// fractional zeros dropped, as decimal.String does).
func appendDecimal(b []byte, v decimal.Decimal) []byte {
	c, e, ok := small(v)
	if !ok || e > 0 || e < -18 {
		s := v.Abs().String()
		for i := 0; i < len(s); i++ {
			if s[i] == '.' {
				return append(append(append(b, s[:i]...), ','), s[i+1:]...)
			}
		}
		return append(append(b, s...), ',')
	}
	if c < 0 {
		c = -c
	}
	for e < 0 && c%10 == 0 {
		c /= 10
		e++
	}
	var digits [24]byte
	i := len(digits)
	for c > 0 || i == len(digits) {
		i--
		digits[i] = byte('0' + c%10)
		c /= 10
	}
	ds := digits[i:]
	frac := int(-e)
	if frac == 0 {
		return append(append(b, ds...), ',')
	}
	if len(ds) <= frac {
		b = append(b, '0', ',')
		for k := len(ds); k < frac; k++ {
			b = append(b, '0')
		}
		return append(b, ds...)
	}
	b = append(b, ds[:len(ds)-frac]...)
	b = append(b, ',')
	return append(b, ds[len(ds)-frac:]...)
}
