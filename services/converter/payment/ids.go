package payment

import (
	"crypto/rand"
	"encoding/hex"
	"strings"
)

// minorUnits are the ISO 4217 currencies whose number of decimals is not 2
// (ISO 4217 list one, 2024). Every other well-formed code has 2.
var minorUnits = map[string]int{
	"BIF": 0, "CLP": 0, "DJF": 0, "GNF": 0, "ISK": 0, "JPY": 0, "KMF": 0, "KRW": 0, "PYG": 0,
	"RWF": 0, "UGX": 0, "UYI": 0, "VND": 0, "VUV": 0, "XAF": 0, "XOF": 0, "XPF": 0,
	"BHD": 3, "IQD": 3, "JOD": 3, "KWD": 3, "LYD": 3, "OMR": 3, "TND": 3,
	"CLF": 4, "UYW": 4,
}

// MinorUnits is the number of decimals an amount in currency ccy may have
// (ISO 4217).
func MinorUnits(ccy string) int {
	if n, ok := minorUnits[ccy]; ok {
		return n
	}
	return 2
}

// IsCurrency reports whether s has the shape of an ISO 4217 code.
func IsCurrency(s string) bool {
	return len(s) == 3 && upper(s[0]) && upper(s[1]) && upper(s[2])
}

// countries are the ISO 3166-1 alpha-2 codes, plus XK (Kosovo), which SWIFT uses.
const countries = "AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS BT BV BW BY BZ " +
	"CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ DK DM DO DZ EC EE EG EH ER ES ET FI FJ FK FM FO FR " +
	"GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY HK HM HN HR HT HU ID IE IL IM IN IO IQ IR IS IT JE JM JO JP " +
	"KE KG KH KI KM KN KP KR KW KY KZ LA LB LC LI LK LR LS LT LU LV LY MA MC MD ME MF MG MH MK ML MM MN MO MP MQ MR MS MT " +
	"MU MV MW MX MY MZ NA NC NE NF NG NI NL NO NP NR NU NZ OM PA PE PF PG PH PK PL PM PN PR PS PT PW PY QA RE RO RS RU RW " +
	"SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ TC TD TF TG TH TJ TK TL TM TN TO TR TT TV TW TZ UA UG " +
	"UM US UY UZ VA VC VE VG VI VN VU WF WS XK YE YT ZA ZM ZW"

// IsCountry reports whether s is an ISO 3166 alpha-2 country code.
func IsCountry(s string) bool {
	if len(s) != 2 || !upper(s[0]) || !upper(s[1]) {
		return false
	}
	return strings.Contains(countries, s)
}

// IsBIC reports whether s has the ISO 9362 shape the pacs and head schemas
// require: 4 letters or digits, a country of 2 letters, 2 letters or digits,
// and an optional branch of 3.
func IsBIC(s string) bool {
	if len(s) != 8 && len(s) != 11 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case i == 4 || i == 5:
			if !upper(c) {
				return false
			}
		case !upper(c) && !digit(c):
			return false
		}
	}
	return true
}

// IsUETR reports whether s is a UUID v4 in the lower-case form the schemas
// require.
func IsUETR(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < 36; i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		case 14:
			if c != '4' {
				return false
			}
		case 19:
			if c != '8' && c != '9' && c != 'a' && c != 'b' {
				return false
			}
		default:
			if !digit(c) && (c < 'a' || c > 'f') {
				return false
			}
		}
	}
	return true
}

// NewUETR returns a random UUID v4.
func NewUETR() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

func upper(c byte) bool { return c >= 'A' && c <= 'Z' }
func digit(c byte) bool { return c >= '0' && c <= '9' }
