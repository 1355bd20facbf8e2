// Package bankid reads the identifiers of banks and accounts that payment
// messages carry: IBANs (ISO 13616) and BICs (ISO 9362). It knows their
// structure, the check digits and, for the countries in its table, where
// the national bank code sits in an IBAN. It does not know whom an
// identifier belongs to: there is no bank directory here.
package bankid

import "strings"

// IBANShaped reports whether s looks like an IBAN (country letters, two
// digits, 15 to 34 characters without spaces) whatever its check digits.
func IBANShaped(s string) bool {
	s = strings.ReplaceAll(s, " ", "")
	return len(s) >= 15 && len(s) <= 34 && upper(s[0]) && upper(s[1]) && digit(s[2]) && digit(s[3])
}

// ValidIBAN reports whether s, compact and upper case, is an IBAN by its
// structure and check digits: two letters, two digits, 11 to 30 letters or
// digits, and the ISO 7064 mod-97 remainder 1. The country's own length is
// not checked (ParseIBAN does, where it knows it).
func ValidIBAN(s string) bool {
	if len(s) < 15 || len(s) > 34 || !upper(s[0]) || !upper(s[1]) || !digit(s[2]) || !digit(s[3]) {
		return false
	}
	r := 0
	for i := 0; i < len(s); i++ {
		// The first four characters count last.
		switch c := s[(i+4)%len(s)]; {
		case digit(c):
			r = (r*10 + int(c-'0')) % 97
		case upper(c):
			r = (r*100 + int(c-'A'+10)) % 97
		default:
			return false
		}
	}
	return r == 1
}

// IBAN is what an IBAN's structure tells.
type IBAN struct {
	Value       string // as given, compacted and upper-cased
	CountryCode string
	// BankCode and BranchCode are the national bank and branch codes inside
	// the BBAN, for the countries in the table; empty otherwise.
	BankCode, BranchCode string
	// Valid: ValidIBAN holds and, for a country in the table, the length is
	// the country's.
	Valid bool
	// KnownCountry: the country's layout is in the table.
	KnownCountry bool
}

// layout is where a country's IBAN holds what: its length, and the bank
// and branch codes as offsets into the BBAN (the part after the check
// digits). A zero-length range means the country has no such code.
type layout struct {
	length                         int
	bankFrom, bankTo, brFrom, brTo int
}

// layouts are from the SWIFT IBAN registry (ISO 13616), for the SEPA
// countries and a few others banks commonly send.
var layouts = map[string]layout{
	"AD": {24, 0, 4, 4, 8}, "AT": {20, 0, 5, 0, 0}, "BE": {16, 0, 3, 0, 0}, "BG": {22, 0, 4, 4, 8},
	"CH": {21, 0, 5, 0, 0}, "CY": {28, 0, 3, 3, 8}, "CZ": {24, 0, 4, 0, 0}, "DE": {22, 0, 8, 0, 0},
	"DK": {18, 0, 4, 0, 0}, "EE": {20, 0, 2, 0, 0}, "ES": {24, 0, 4, 4, 8}, "FI": {18, 0, 3, 0, 0},
	"FR": {27, 0, 5, 5, 10}, "GB": {22, 0, 4, 4, 10}, "GI": {23, 0, 4, 0, 0}, "GR": {27, 0, 3, 3, 7},
	"HR": {21, 0, 7, 0, 0}, "HU": {28, 0, 3, 3, 7}, "IE": {22, 0, 4, 4, 10}, "IS": {26, 0, 4, 0, 0},
	"IT": {27, 1, 6, 6, 11}, "LI": {21, 0, 5, 0, 0}, "LT": {20, 0, 5, 0, 0}, "LU": {20, 0, 3, 0, 0},
	"LV": {21, 0, 4, 0, 0}, "MC": {27, 0, 5, 5, 10}, "MT": {31, 0, 4, 4, 9}, "NL": {18, 0, 4, 0, 0},
	"NO": {15, 0, 4, 0, 0}, "PL": {28, 0, 3, 3, 7}, "PT": {25, 0, 4, 4, 8}, "RO": {24, 0, 4, 0, 0},
	"SE": {24, 0, 3, 0, 0}, "SI": {19, 0, 2, 2, 5}, "SK": {24, 0, 4, 0, 0}, "SM": {27, 1, 6, 6, 11},
	"VA": {22, 0, 3, 0, 0},
}

// ParseIBAN reads s (spaces allowed, any case).
func ParseIBAN(s string) IBAN {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == ' ':
		case c >= 'a' && c <= 'z':
			b = append(b, c-'a'+'A')
		default:
			b = append(b, c)
		}
	}
	v := IBAN{Value: string(b), Valid: ValidIBAN(string(b))}
	if len(v.Value) >= 2 && upper(v.Value[0]) && upper(v.Value[1]) {
		v.CountryCode = v.Value[:2]
	}
	l, ok := layouts[v.CountryCode]
	if !ok {
		return v
	}
	v.KnownCountry = true
	if len(v.Value) != l.length {
		v.Valid = false
		return v
	}
	bban := v.Value[4:]
	v.BankCode = bban[l.bankFrom:l.bankTo]
	v.BranchCode = bban[l.brFrom:l.brTo]
	return v
}

// BIC is what a BIC's structure tells.
type BIC struct {
	Value string // upper case
	// Institution, CountryCode, Location and Branch are its four parts;
	// Branch is empty for an eight-character BIC (the head office, XXX).
	Institution, CountryCode, Location, Branch string
	// Test: the location's second character is 0, which marks a BIC that
	// is not connected to the SWIFT network (test and training).
	Test  bool
	Valid bool
}

// ParseBIC reads s (any case): 4 letters or digits for the institution,
// 2 letters for the country, 2 letters or digits for the location and
// optionally 3 for the branch (ISO 9362:2014).
func ParseBIC(s string) BIC {
	b := []byte(s)
	for i, c := range b {
		if c >= 'a' && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
	}
	v := BIC{Value: string(b)}
	if len(b) != 8 && len(b) != 11 {
		return v
	}
	for i, c := range b {
		if !(upper(c) || digit(c)) || (i == 4 || i == 5) && !upper(c) {
			return v
		}
	}
	v.Valid = true
	v.Institution, v.CountryCode, v.Location = v.Value[:4], v.Value[4:6], v.Value[6:8]
	if len(b) == 11 && v.Value[8:] != "XXX" {
		v.Branch = v.Value[8:]
	}
	v.Test = v.Location[1] == '0'
	return v
}

func upper(c byte) bool { return c >= 'A' && c <= 'Z' }
func digit(c byte) bool { return c >= '0' && c <= '9' }
