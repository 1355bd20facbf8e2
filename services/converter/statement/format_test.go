package statement

import (
	"testing"
	"time"
)

func TestDateAppendISO(t *testing.T) {
	for _, y := range []int{-10000, -1, 0, 1, 999, 2024, 9999, 10000, 123456} {
		for _, m := range []int{-1, 0, 1, 9, 10, 12, 99, 100} {
			for _, day := range []int{-5, 0, 1, 9, 10, 31, 99, 100} {
				d := Date{Year: y, Month: time.Month(m), Day: day}
				if got := string(d.AppendISO([]byte("x"))); got != "x"+d.String() {
					t.Errorf("%#v: AppendISO %q, String %q", d, got, d.String())
				}
			}
		}
	}
}

func BenchmarkDateAppendISO(b *testing.B) {
	d := Date{2024, time.March, 7}
	var buf []byte
	for b.Loop() {
		buf = d.AppendISO(buf[:0])
	}
}
