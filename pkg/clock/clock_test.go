package clock_test

import (
	"testing"
	"time"

	"github.com/ledgerlane/platform/pkg/clock"
)

type named func() time.Time

func TestOr(t *testing.T) {
	fixed := time.Date(2026, 2, 28, 23, 59, 0, 0, time.UTC)
	if got := clock.Or(named(func() time.Time { return fixed }))(); !got.Equal(fixed) {
		t.Fatalf("a given clock was replaced: %v", got)
	}
	var none named
	before := time.Now()
	if got := clock.Or(none)(); got.Before(before) {
		t.Fatalf("the default is not the wall clock: %v before %v", got, before)
	}
}
