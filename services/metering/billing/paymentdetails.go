package billing

import (
	"math/big"
	"strings"

	"github.com/ledgerlane/platform/pkg/problem"
)

// Parsers of the bank and card details a person types. Each accepts the
// usual separators (spaces, and dashes where people write them), answers
// the canonical form, and refuses anything else with an invalid-input
// problem naming the field. Only the last four characters and a brand are
// ever stored (PaymentMethod); the full details go to the processor once.

// digitsOf removes the separators in seps from s and answers the rest when
// it is only ASCII digits, between min and max of them.
func digitsOf(s, seps string, minLen, maxLen int) (string, bool) {
	var b strings.Builder
	for _, r := range strings.TrimSpace(s) {
		switch {
		case r >= '0' && r <= '9':
			b.WriteRune(r)
		case strings.ContainsRune(seps, r):
		default:
			return "", false
		}
		if b.Len() > maxLen {
			return "", false
		}
	}
	d := b.String()
	return d, len(d) >= minLen && len(d) <= maxLen
}

// ParseCardNumber answers a card number's digits (12 to 19, spaces and
// dashes allowed) when its Luhn check digit is right, and its brand from
// the leading digits ("visa", "mastercard", "amex" or "card").
func ParseCardNumber(s string) (digits, brand string, err error) {
	d, ok := digitsOf(s, " -", 12, 19)
	if !ok || !luhn(d) {
		return "", "", problem.New(problem.InvalidInput, "card_number must be a card number of 12 to 19 digits with a valid check digit").WithField("card_number")
	}
	return d, cardBrand(d), nil
}

func luhn(d string) bool {
	sum := 0
	for i := range len(d) {
		n := int(d[len(d)-1-i] - '0')
		if i%2 == 1 {
			if n *= 2; n > 9 {
				n -= 9
			}
		}
		sum += n
	}
	return sum%10 == 0
}

func cardBrand(d string) string {
	switch {
	case d[0] == '4':
		return "visa"
	case d[:2] >= "51" && d[:2] <= "55", len(d) >= 4 && d[:4] >= "2221" && d[:4] <= "2720":
		return "mastercard"
	case d[:2] == "34" || d[:2] == "37":
		return "amex"
	}
	return "card"
}

// ParseIBAN answers an IBAN in its electronic form (uppercase, no spaces)
// when its length (15 to 34) and ISO 13616 check digits (mod 97) are right.
// It does not check the country's own length or that it is in SEPA: the
// processor's mandate set-up refuses what its scheme does not reach.
func ParseIBAN(s string) (string, error) {
	bad := problem.New(problem.InvalidInput, "iban must be an IBAN, such as DE89 3704 0044 0532 0130 00, with valid check digits").WithField("iban")
	var b strings.Builder
	for _, r := range strings.TrimSpace(s) {
		switch {
		case r == ' ':
		case r >= '0' && r <= '9', r >= 'A' && r <= 'Z':
			b.WriteRune(r)
		case r >= 'a' && r <= 'z':
			b.WriteRune(r - 'a' + 'A')
		default:
			return "", bad
		}
		if b.Len() > 34 {
			return "", bad
		}
	}
	iban := b.String()
	if len(iban) < 15 || !isUpper(iban[0]) || !isUpper(iban[1]) || !isDigit(iban[2]) || !isDigit(iban[3]) {
		return "", bad
	}
	// Move the country and check digits to the end, letters to 10..35,
	// and the whole must be 1 mod 97.
	var num strings.Builder
	for _, c := range iban[4:] + iban[:4] {
		if c >= 'A' {
			num.WriteString(itoa2(int(c-'A') + 10))
		} else {
			num.WriteRune(c)
		}
	}
	n, ok := new(big.Int).SetString(num.String(), 10)
	if !ok || new(big.Int).Mod(n, big.NewInt(97)).Int64() != 1 {
		return "", bad
	}
	return iban, nil
}

func isUpper(c byte) bool { return c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func itoa2(n int) string  { return string([]byte{byte('0' + n/10), byte('0' + n%10)}) }

// ParseRoutingNumber answers a US ABA routing number (9 digits) when its
// check digit (weights 3, 7, 1) is right.
func ParseRoutingNumber(s string) (string, error) {
	d, ok := digitsOf(s, " ", 9, 9)
	if ok {
		sum := 0
		for i := range 9 {
			sum += int(d[i]-'0') * [3]int{3, 7, 1}[i%3]
		}
		ok = sum%10 == 0
	}
	if !ok {
		return "", problem.New(problem.InvalidInput, "routing_number must be a 9-digit ABA routing number with a valid check digit").WithField("routing_number")
	}
	return d, nil
}

// ParseUSAccountNumber answers a US bank account number: 4 to 17 digits.
func ParseUSAccountNumber(s string) (string, error) {
	d, ok := digitsOf(s, " -", 4, 17)
	if !ok {
		return "", problem.New(problem.InvalidInput, "account_number must be 4 to 17 digits").WithField("account_number")
	}
	return d, nil
}

// ParseSortCode answers a UK sort code's 6 digits ("12-34-56" or "123456").
func ParseSortCode(s string) (string, error) {
	d, ok := digitsOf(s, " -", 6, 6)
	if !ok {
		return "", problem.New(problem.InvalidInput, "sort_code must be 6 digits, such as 12-34-56").WithField("sort_code")
	}
	return d, nil
}

// ParseUKAccountNumber answers a UK account number: 8 digits (Bacs pads
// shorter ones with leading zeros, which the person types).
func ParseUKAccountNumber(s string) (string, error) {
	d, ok := digitsOf(s, " ", 8, 8)
	if !ok {
		return "", problem.New(problem.InvalidInput, "account_number must be 8 digits").WithField("account_number")
	}
	return d, nil
}
