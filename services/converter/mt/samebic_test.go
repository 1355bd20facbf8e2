package mt

import "testing"

// TestSameBIC: a BIC8 equals its BIC11 with branch XXX, never another
// branch, and nothing equals the empty BIC.
func TestSameBIC(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"DEUTDEFF", "DEUTDEFF", true}, {"DEUTDEFF", "DEUTDEFFXXX", true}, {"DEUTDEFFXXX", "DEUTDEFF", true},
		{"DEUTDEFFXXX", "DEUTDEFFXXX", true}, {"DEUTDEFF", "DEUTDEFF500", false}, {"DEUTDEFF500", "DEUTDEFF", false},
		{"", "", false}, {"", "DEUTDEFF", false}, {"DEUTDEFF", "", false}, {"DEUTDEFF", "DEUTDEFX", false},
		{"DEUTDEFFXXX", "DEUTDEFGXXX", false}, {"ABC", "ABC", true},
	} {
		if got := sameBIC(c.a, c.b); got != c.want {
			t.Errorf("sameBIC(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}
