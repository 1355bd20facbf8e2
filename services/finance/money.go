package finance

import (
	"fmt"
	"regexp"

	"github.com/shopspring/decimal"
)

// Money: amounts with their currency's minor unit, and the one parser of
// the amounts clients write.

// Money is an exact amount in one currency. Amount is never a float: rounding
// money through binary floating point loses cents.
type Money struct {
	Amount   decimal.Decimal
	Currency string // ISO 4217
}

// minorUnits holds the currencies whose minor unit is not cents.
var minorUnits = map[string]int32{
	"BHD": 3, "CLP": 0, "IQD": 3, "ISK": 0, "JOD": 3, "JPY": 0,
	"KRW": 0, "KWD": 3, "LYD": 3, "OMR": 3, "TND": 3, "VND": 0,
}

// AmountString formats the amount with at least the currency's minor-unit
// digits ("-12.50", not "-12.5"), keeping any extra precision it carries.
func (m Money) AmountString() string {
	places := MinorUnit(m.Currency)
	if exp := -m.Amount.Exponent(); exp > places {
		places = exp
	}
	return m.Amount.StringFixed(places)
}

// MinorUnit is the number of decimal places of currency cur's minor unit.
func MinorUnit(cur string) int32 {
	if p, ok := minorUnits[cur]; ok {
		return p
	}
	return 2
}

// maxAmount bounds every amount a client writes (goal and budget amounts):
// far above any real figure, it keeps numerics bounded.
var maxAmount = decimal.New(1, 12)

// unsignedDecimal is a non-negative plain decimal: no sign, exponent or
// separators.
var unsignedDecimal = regexp.MustCompile(`^[0-9]{1,13}(\.[0-9]{1,6})?$`)

// ParseAmount reads a non-negative amount of the currency: a plain decimal
// with at most the currency's minor-unit places, below 10^12.
func ParseAmount(s, field, currency string) (decimal.Decimal, error) {
	if !unsignedDecimal.MatchString(s) {
		return decimal.Zero, Invalid(field, field+` must be a non-negative decimal string such as "250.00"`)
	}
	d, err := decimal.NewFromString(s)
	if err != nil {
		return d, Invalid(field, field+" must be a decimal string")
	}
	if places := MinorUnit(currency); -d.Exponent() > places {
		return d, Invalid(field, fmt.Sprintf("%s amounts have at most %d decimal places", currency, places))
	}
	if !d.LessThan(maxAmount) {
		return d, Invalid(field, field+" must be below 1000000000000")
	}
	return d, nil
}

// plainDecimal is a signed exact decimal as providers and statement files
// write amounts.
var plainDecimal = regexp.MustCompile(`^-?[0-9]{1,15}(\.[0-9]{1,6})?$`)

// PlainDecimal reports whether s is an exact decimal as providers and
// statement files write amounts: an optional minus, 1 to 15 integer digits
// and at most 6 decimals (bank sync and statement import).
func PlainDecimal(s string) bool { return plainDecimal.MatchString(s) }

// currencyCode is an ISO 4217 code as the API takes it: three upper-case
// letters.
var currencyCode = regexp.MustCompile(`^[A-Z]{3}$`)

// ValidCurrency reports whether code is an ISO 4217 code as the API takes
// it.
func ValidCurrency(code string) bool { return currencyCode.MatchString(code) }

// DivRoundBank is num / den rounded half-even to places, exactly (one
// rounding, no intermediate precision). den must not be zero.
func DivRoundBank(num, den decimal.Decimal, places int32) decimal.Decimal {
	q, r := num.QuoRem(den, places)
	if r.IsZero() {
		return q
	}
	// |r| against half a unit of the last place of |den|.
	twice := r.Abs().Mul(decimal.NewFromInt(2))
	unit := den.Abs().Shift(-places)
	step := decimal.New(1, -places)
	if num.Sign()*den.Sign() < 0 {
		step = step.Neg()
	}
	switch c := twice.Cmp(unit); {
	case c > 0:
		q = q.Add(step)
	case c == 0 && q.Shift(places).BigInt().Bit(0) == 1:
		q = q.Add(step)
	}
	return q
}
