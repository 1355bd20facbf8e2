package mt

import (
	"strings"
	"testing"
)

// TestFinText: one copy reads line ends as the two replacements did (CR LF,
// then a lone CR, as LF) and drops a leading byte-order mark only.
func TestFinText(t *testing.T) {
	want := func(s string) string {
		s = strings.TrimPrefix(s, "\ufeff")
		return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
	}
	for _, in := range []string{"", "\r", "\n", "\r\n", "\r\r\n", "\n\r", "a\r\nb\rc\n\r\nd\r", "\ufeff{1:F01}\r\n:20:X\r\n-}",
		"\ufeff\ufeffx\r", "x\ufeff\r\n", "\r\n\r\n\r\n", "no line end"} {
		if got := finText([]byte(in)); got != want(in) {
			t.Errorf("finText(%q) = %q, want %q", in, got, want(in))
		}
	}
}
