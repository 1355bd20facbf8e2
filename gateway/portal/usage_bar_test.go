package portal

import (
	"testing"
	"testing/quick"
)

func TestBarWidths(t *testing.T) {
	for _, tc := range []struct {
		used, quota int64
		in, over    float64
	}{
		{0, 1000, 0, 0},
		{12, 250_000, 0.5, 0},
		{500, 1000, 50, 0},
		{1000, 1000, 100, 0},
		{1500, 1000, 66.67, 33.33},
		{1001, 1000, 99.5, 0.5},
		{5, 0, 0, 100},
	} {
		if in, over := barWidths(tc.used, tc.quota); in != tc.in || over != tc.over {
			t.Errorf("barWidths(%d, %d) = %v, %v; want %v, %v", tc.used, tc.quota, in, over, tc.in, tc.over)
		}
	}
}

// The bar's parts never overflow it, never vanish when not empty, and the
// included part is full exactly when overage began.
func TestBarWidthsProperties(t *testing.T) {
	f := func(u, q uint32) bool {
		used, quota := int64(u%2_000_000), int64(q%2_000_000)
		in, over := barWidths(used, quota)
		if in < 0 || over < 0 || in+over > 100.0001 {
			return false
		}
		if used > 0 && min(used, quota) > 0 && in < minSliver {
			return false
		}
		if used > quota && over < minSliver {
			return false
		}
		return used > 0 || in+over == 0
	}
	if err := quick.Check(f, &quick.Config{MaxCount: 20_000}); err != nil {
		t.Error(err)
	}
}
