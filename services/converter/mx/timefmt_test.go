package mx

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestAppendOffsetTime: the hand-written format is AppendFormat's, for any
// instant and zone offset (also odd ones: seconds, over a day, negative).
func TestAppendOffsetTime(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	offsets := []int{0, 1, -1, 30, -30, 59, -61, 3600, -3600, 19800, -34200, 50400, -43200, 86399, -90061, 360000}
	times := []time.Time{time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(0, 6, 1, 0, 0, 0, 0, time.UTC), time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(-5, 1, 1, 0, 0, 0, 0, time.UTC)}
	for range 2000 {
		times = append(times, time.Unix(rng.Int64N(400e9)-200e9, rng.Int64N(1e9)))
	}
	for _, tm := range times {
		for _, off := range offsets {
			in := tm.In(time.FixedZone("z", off))
			want := in.Truncate(time.Second).AppendFormat(nil, offsetTimeLayout)
			if got := appendOffsetTime(nil, in); string(got) != string(want) {
				t.Fatalf("%v: %s, want %s", in, got, want)
			}
		}
	}
}
