package mx

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/shopspring/decimal"
)

// refAmount is the plain decimal formulation appendAmount must match.
func refAmount(v decimal.Decimal) (string, bool) {
	v = v.Abs()
	rounded := false
	if v.Exponent() < -5 && !v.Equal(v.Truncate(5)) {
		rounded = true
		v = v.Round(5)
	}
	return v.String(), rounded
}

func TestAppendAmount(t *testing.T) {
	var values []decimal.Decimal
	for _, s := range []string{"0", "0.00", "-0.5", "1", "10", "1.50000", "0.000001", "0.000005", "0.0000049",
		"1.123455", "1.123445", "-1.123455", "99999999999999999.99", "999999999999999999", "1234567890123456789",
		"0.1234567890123456789", "0.999995", "9.999999999999999999", "1e3", "12e-20", "-0.000000000000000001"} {
		values = append(values, decimal.RequireFromString(s))
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		c := r.Int64N(1 << uint(r.IntN(62)+1))
		if r.IntN(10) == 0 {
			c = r.Int64()
		}
		if r.IntN(2) == 0 {
			c = -c
		}
		values = append(values, decimal.New(c, int32(r.IntN(26)-22)))
	}
	for _, trim := range []bool{true, false} {
		decimal.TrimTrailingZeros = trim
		for _, v := range values {
			want, wantRounded := refAmount(v)
			got, rounded := appendAmount([]byte("x"), v)
			if string(got) != "x"+want || rounded != wantRounded {
				t.Fatalf("TrimTrailingZeros=%v %s (coefficient %s, exponent %d): got %q %v, want %q %v",
					trim, v, v.Coefficient(), v.Exponent(), got[1:], rounded, want, wantRounded)
			}
		}
	}
	decimal.TrimTrailingZeros = true
}

// refEscape is the byte-by-byte formulation appendEscaped must match.
func refEscape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '&':
			b.WriteString("&amp;")
		case c == '<':
			b.WriteString("&lt;")
		case c == '>':
			b.WriteString("&gt;")
		case c == '"':
			b.WriteString("&quot;")
		case c == '\'':
			b.WriteString("&apos;")
		case c == '\r':
			b.WriteString("&#xD;")
		case c == '\t' || c == '\n' || c >= 0x20 && c < 0x80:
			b.WriteByte(c)
		case c < 0x20:
			b.WriteString("\uFFFD")
		default:
			r, n := utf8.DecodeRuneInString(s[i:])
			if xmlChar(r) && !(r == utf8.RuneError && n == 1) {
				b.WriteString(s[i : i+n])
			} else {
				b.WriteString("\uFFFD")
			}
			i += n
			continue
		}
		i++
	}
	return b.String()
}

func TestAppendEscaped(t *testing.T) {
	inputs := []string{"", "plain", "a&b<c>d\"e'f\rg\th\ni", "\x00\x01\x1f\x7f", "\xff\xfe", "ok\xc3", "\xc3(", "\xc0\x80",
		"\xed\xa0\x80", "\uFFFE\uFFFF\uFFFD", "äöüß€𝄞", "\xf4\x90\x80\x80", "\xdf\xbf\xc2\x80"}
	r := rand.New(rand.NewPCG(3, 4))
	alphabet := []string{"a", " ", "&", "<", "'", "\r", "\x01", "\x7f", "ä", "€", "𝄞", "\xc3", "\xbf", "\xed\xa0\x80", "\uFFFE", "\xdf", "\x80"}
	for range 20000 {
		var b strings.Builder
		for range r.IntN(12) {
			b.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		inputs = append(inputs, b.String())
	}
	for _, s := range inputs {
		if got, want := string(appendEscaped([]byte("x"), s)), "x"+refEscape(s); got != want {
			t.Fatalf("%q: got %q, want %q", s, got, want)
		}
	}
}
